// Package store is intermem's per-project database: one bbolt file,
// .intermem/intermem.db.
//
// Open policy:
//
//   - The file is created atomically: a temporary database is initialised
//     with the current schema and then hard-linked into place (renamed,
//     on a filesystem without hard links), so no process ever sees a
//     half-initialised store.
//   - Every open has a timeout. bbolt holds an flock for as long as the
//     database is open (shared for readers, exclusive for writers), so
//     processes keep it open only for the duration of one unit of work.
//     A hook that cannot get the lock in time spools its record instead
//     (see package snapshot); readers fail open.
//   - A file that is not a valid bbolt database, or is one that another
//     program wrote, is moved aside (intermem.db.corrupt-<time>) and
//     rebuilt by the next writer, with a log line, never a crash; so is a
//     store whose pages a writer's transaction finds damaged, when it is
//     closed (damage.go). Its journal and id, as far as they can be read,
//     are carried into the new store: an operation in flight stays
//     recoverable, still bound to its store id. The
//     store holds derived data: auto-memory and the markers in the target
//     documents remain the source of truth, so a rebuild loses history
//     (session counts, rejections) but never a memory.
//   - The schema carries a version; older stores are migrated in place by
//     the functions in migrations, in order, inside one transaction. A
//     store from a newer intermem is refused with ErrNewerSchema rather
//     than guessed at.
//   - Every store has a random id (meta "id"), made with the store or by
//     the migration on the first read-write open of an older one. Journal
//     operations are bound to it (package journal), so an operation is
//     replayed only by the store that recorded it.
//
// Values are JSON, so records can grow fields without a migration.
package store

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// SchemaVersion is the version this build writes. Version 2 added the
// store id and the backups bucket; version 3 the catalog's buckets;
// version 4 session continuity's (checkpoints, phases, phase decisions,
// the head); version 5 the entries' sightings, their counts moved out of
// their records (sightings.go).
const SchemaVersion = 5

// Bucket names.
var (
	BucketMeta      = []byte("meta")      // "schema" → version, "created" and "last_sweep" → RFC 3339, "id" → store id
	BucketSessions  = []byte("sessions")  // session id → Session
	BucketEntries   = []byte("entries")   // entry id → Entry, its description (its count: BucketSightings)
	BucketSeen      = []byte("seen")      // session id → bucket of entry ids seen in it
	BucketFiles     = []byte("files")     // memory file name → []string ids at its last observation
	BucketPlans     = []byte("plans")     // "current" → plan
	BucketDecisions = []byte("decisions") // entry id → Decision (rejections)
	BucketPromoted  = []byte("promoted")  // entry id → Promoted
	BucketJournal   = []byte("journal")   // op id → journal record
	BucketChecks    = []byte("checks")    // time/id → validation record (audit trail)
	BucketFacts     = []byte("facts")     // entry id → Fact: latest validated confidence of a memory entry
	BucketBackups   = []byte("backups")   // 8-byte big-endian sequence → op id whose backup directory it made
)

// allBuckets are every bucket of a current store (a function: a package-level
// slice of the bucket variables is copied at every process's start).
func allBuckets() [][]byte {
	return [][]byte{
		BucketMeta, BucketSessions, BucketEntries, BucketSeen, BucketFiles, BucketPlans,
		BucketDecisions, BucketPromoted, BucketJournal, BucketChecks, BucketFacts, BucketBackups,
		BucketCatFiles, BucketCatBlobs, BucketCatEntries, BucketCatMeta, BucketOverlay,
		BucketCheckpoints, BucketPhases, BucketDecided, BucketHead, BucketProjects, BucketMemories,
		BucketSightings,
	}
}

// Errors returned by Open.
var (
	// ErrLocked is returned when another process holds the store past the
	// open timeout.
	ErrLocked = errors.New("store is busy (locked by another intermem process)")
	// ErrNewerSchema is returned for a store written by a newer intermem.
	ErrNewerSchema = errors.New("store was written by a newer intermem")
	// ErrNotExist is returned by a read-only open when there is no store yet.
	ErrNotExist = errors.New("no store yet")
	// ErrCorrupt is returned by a read-only open of a damaged or foreign
	// file, and by transactions that hit damage.
	ErrCorrupt = errors.New("store is damaged")
	// ErrPanicked is returned by View and Update when their callback (or
	// code it called) panicked for a reason other than damage: the store
	// is not damaged, and nothing is moved aside.
	ErrPanicked = errors.New("a store transaction panicked")
)

// Options configure Open.
type Options struct {
	ReadOnly bool
	// Timeout bounds the wait for the file lock. Zero means 1 s.
	Timeout time.Duration
	// Logf receives notable events (a corrupt store moved aside). May be nil.
	Logf func(format string, args ...any)
	// Now stamps creation and move-aside names. Zero means time.Now.
	Now time.Time
	// NoSync skips fsync on commit. Only benchmarks and tests that measure
	// something else, and a scratch store removed after one read
	// (continuity.ReadRebuilt), should set it.
	NoSync bool
	// Yield is for hooks: while a command waits for the store (wait.go),
	// Open returns ErrLocked at once instead of competing with it. A
	// writable Open without Yield announces its own wait.
	Yield bool
}

// Store is an open database.
type Store struct {
	DB   *bolt.DB
	Path string
	ro   bool
	// logf and now are Options' (Logf, Now), for the move-aside of a
	// store found damaged in a transaction (damage.go).
	logf func(format string, args ...any)
	now  time.Time
	// damaged holds the first ErrCorrupt a transaction met (transactions
	// may run in several goroutines); a writer's Close then moves the
	// store aside and rebuilds it (damage.go).
	damaged atomic.Pointer[error]
	// confirmed is set when the consistency check (Check) found the
	// damage, so Close does not check the whole file again.
	confirmed atomic.Bool
	// rebuilt is what Close's move-aside did (Rebuilt), nil before.
	rebuilt *rebuilt
	// fi is the file opened (checkSize's stat), to tell whether the path
	// still leads to it.
	fi os.FileInfo
}

// Open opens (creating if needed, unless read-only) the store at path.
func Open(path string, o Options) (*Store, error) {
	if o.Timeout <= 0 {
		o.Timeout = time.Second
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	logf := o.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		if o.ReadOnly {
			return nil, ErrNotExist
		}
		if err := create(path, o.Now); err != nil {
			return nil, err
		}
		fi = nil
	}
	if o.Yield && commandWaiting(path) {
		return nil, ErrLocked
	}
	if !o.ReadOnly && !o.Yield {
		release := announceWait(path)
		defer release()
	}
	s, err := open(path, o)
	if err == nil {
		return s, nil
	}
	if errors.Is(err, ErrLocked) || errors.Is(err, ErrNewerSchema) || o.ReadOnly {
		return nil, err
	}
	if !errors.Is(err, ErrCorrupt) {
		return nil, err
	}
	// What of its journal (and id) can still be read is carried into the
	// new store, as when a transaction finds the damage (damage.go).
	kept := salvageFile(path, o.Timeout)
	if _, rerr := rebuild(path, o.Now, kept, fi, err, logf); rerr != nil {
		return nil, fmt.Errorf("%w; moving it aside failed: %v", err, rerr)
	}
	return open(path, o)
}

func open(path string, o Options) (s *Store, err error) {
	var db *bolt.DB
	var file *os.File
	defer faultsAsPanics()()
	defer func() {
		// bbolt can panic on some kinds of damage while reading meta pages.
		// The file is let go of, or its lock would stay held for the rest
		// of the process: the salvage of its journal, and a writer's open
		// after a reader's, would wait for it in vain.
		if r := recover(); r != nil {
			abandon(db, file)
			s, err = nil, fmt.Errorf("%w: %v", ErrCorrupt, r)
		}
	}()
	db, file, err = boltOpen(path, &bolt.Options{Timeout: o.Timeout, ReadOnly: o.ReadOnly, NoSync: o.NoSync})
	if err != nil {
		if errors.Is(err, berrors.ErrTimeout) {
			return nil, ErrLocked
		}
		if errors.Is(err, fs.ErrPermission) {
			return nil, fmt.Errorf("open store: %w", err)
		}
		if errors.Is(err, ErrCorrupt) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	s = &Store{DB: db, Path: path, ro: o.ReadOnly, logf: o.Logf, now: o.Now}
	if err := s.checkSize(); err != nil {
		db.Close()
		return nil, err
	}
	if err := s.checkSchema(o.Now); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// boltOpen is bolt.Open (mode 0600) that lets go of the file when bolt.Open
// panics, as it does on some damage (a read-write open loads the freelist
// page and panics on a damaged one): the panic is returned as ErrCorrupt,
// and the file bbolt opened and locked is unlocked and closed, which bbolt
// does only when it returns an error. What bbolt had mapped of the file by
// then stays mapped (nothing names the mapping): address space, not the
// lock, and only once per damaged file met. It also returns the file, for
// abandon.
func boltOpen(path string, o *bolt.Options) (db *bolt.DB, file *os.File, err error) {
	opts := *o
	opts.OpenFile = func(name string, flag int, perm os.FileMode) (*os.File, error) {
		f, err := os.OpenFile(name, flag, perm)
		file = f
		return f, err
	}
	defer faultsAsPanics()()
	defer func() {
		if r := recover(); r != nil {
			abandon(nil, file)
			db, file, err = nil, nil, fmt.Errorf("%w: %v", ErrCorrupt, r)
		}
	}()
	db, err = bolt.Open(path, 0o600, &opts)
	return db, file, err
}

// abandon lets go of a store file given up on after a panic: it closes db
// when there is one, and if there is none or its Close panics too, unlocks
// and closes file (the file db was opened on; nil: none).
func abandon(db *bolt.DB, file *os.File) {
	if db != nil {
		closed := func() (ok bool) {
			defer func() {
				if recover() != nil {
					ok = false
				}
			}()
			_ = db.Close()
			return true
		}()
		if closed {
			return
		}
	}
	if file != nil {
		unlockFile(file)
		_ = file.Close()
	}
}

// create initialises a new store beside path and links it into place.
// If another process won the race, its file is kept.
func create(path string, now time.Time) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create store dir: %w", err)
	}
	tmp := fmt.Sprintf("%s.new-%d", path, os.Getpid())
	_ = os.Remove(tmp)
	db, err := bolt.Open(tmp, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		return fmt.Errorf("create store: %w", err)
	}
	err = db.Update(func(tx *bolt.Tx) error { return initSchema(tx, now) })
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("create store: %w", err)
	}
	defer os.Remove(tmp)
	err = link(tmp, path)
	if err == nil || errors.Is(err, fs.ErrExist) {
		return nil
	}
	// No hard links on this filesystem (vfat, exFAT, some network and
	// FUSE mounts): rename, unless a store appeared meanwhile. Two
	// processes creating at once may both rename; the last one's empty
	// store stays.
	if _, serr := os.Lstat(path); serr == nil {
		return nil
	}
	if rerr := os.Rename(tmp, path); rerr != nil {
		return fmt.Errorf("create store: %w (and %v)", err, rerr)
	}
	return nil
}

func initSchema(tx *bolt.Tx, now time.Time) error {
	for _, b := range allBuckets() {
		if _, err := tx.CreateBucketIfNotExists(b); err != nil {
			return err
		}
	}
	meta := tx.Bucket(BucketMeta)
	if err := meta.Put([]byte("schema"), []byte(strconv.Itoa(SchemaVersion))); err != nil {
		return err
	}
	if err := assignID(tx); err != nil {
		return err
	}
	return meta.Put([]byte("created"), []byte(now.UTC().Format(time.RFC3339)))
}

// keyID is the meta key of the store id.
var keyID = []byte("id")

// assignID gives the store a random id unless it has one.
func assignID(tx *bolt.Tx) error {
	meta, err := tx.CreateBucketIfNotExists(BucketMeta)
	if err != nil {
		return err
	}
	if len(meta.Get(keyID)) > 0 {
		return nil
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return fmt.Errorf("store id: %w", err)
	}
	return meta.Put(keyID, []byte(hex.EncodeToString(b[:])))
}

// ID returns the store's id, or "" for an older store opened read-only
// (its migration, which assigns one, has not run yet).
func ID(tx *bolt.Tx) string {
	meta := tx.Bucket(BucketMeta)
	if meta == nil {
		return ""
	}
	return string(meta.Get(keyID))
}

// migrations[v] upgrades a store from version v to v+1. Version 0 is a
// store whose meta bucket lacks a schema key (written before versioning).
var migrations = []func(tx *bolt.Tx) error{
	0: createBuckets,
	// 1→2: the backups bucket, and the store id journal operations are
	// bound to.
	1: func(tx *bolt.Tx) error {
		if err := createBuckets(tx); err != nil {
			return err
		}
		return assignID(tx)
	},
	// 2→3: the catalog's buckets (catalog_files, catalog_blobs,
	// catalog_entries, catalog) and the overlay. The catalog fills them at
	// its first scan; nothing older is converted (the overlay joins the
	// older buckets, facts, checks, entries and promoted, as they are).
	2: createBuckets,
	// 3→4: session continuity's buckets (checkpoints, phases, decided,
	// head, and projects, used by the per-user store). Nothing older holds
	// continuity: they start empty.
	3: createBuckets,
	// 4→5: each entry's count (sessions, first and last seen) moved from
	// its record into BucketSightings (sightings.go).
	4: migrateSightings,
}

func createBuckets(tx *bolt.Tx) error {
	for _, b := range allBuckets() {
		if _, err := tx.CreateBucketIfNotExists(b); err != nil {
			return err
		}
	}
	return nil
}

// checkSize tells a store file cut short (a copy or a disk that lost its
// end) from a whole one: its meta page claims the pages up to a high-water
// mark, which bbolt grows the file to before it writes a page and commits
// the meta page after, so a whole file is never shorter than the mark. A
// shorter one is damaged whatever its first pages say: reading past its end
// faults (faultsAsPanics turns that into ErrCorrupt for one transaction),
// and without this check a store whose meta and schema pages survived would
// be opened, fail every transaction, and never be moved aside and rebuilt.
func (s *Store) checkSize() error {
	var claimed int64
	if err := s.DB.View(func(tx *bolt.Tx) error {
		claimed = tx.Size()
		return nil
	}); err != nil {
		return fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	fi, err := os.Stat(s.Path)
	if err != nil {
		return fmt.Errorf("stat store: %w", err)
	}
	s.fi = fi
	if fi.Size() < claimed {
		return fmt.Errorf("%w: cut short: its pages reach %d bytes, the file holds %d", ErrCorrupt, claimed, fi.Size())
	}
	return nil
}

func (s *Store) checkSchema(now time.Time) error {
	var version int
	var foreign bool
	err := s.DB.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket(BucketMeta)
		if meta == nil {
			// A valid bbolt file with buckets that are not ours is some
			// other program's database.
			c := tx.Cursor()
			if k, _ := c.First(); k != nil {
				foreign = true
			}
			return nil
		}
		v := meta.Get([]byte("schema"))
		if v == nil {
			return nil
		}
		n, err := strconv.Atoi(string(v))
		if err != nil {
			foreign = true
			return nil
		}
		version = n
		return nil
	})
	if err != nil {
		return fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if foreign {
		return fmt.Errorf("%w: not an intermem store", ErrCorrupt)
	}
	if version > SchemaVersion {
		return fmt.Errorf("%w (schema %d, this build understands %d)", ErrNewerSchema, version, SchemaVersion)
	}
	if version == SchemaVersion {
		return nil
	}
	if s.ro {
		// A reader can still use an old store's existing buckets.
		return nil
	}
	return s.DB.Update(func(tx *bolt.Tx) error {
		for v := version; v < SchemaVersion; v++ {
			if v < 0 || v >= len(migrations) {
				return fmt.Errorf("no migration from schema %d", v)
			}
			m := migrations[v]
			if err := m(tx); err != nil {
				return fmt.Errorf("migrate schema %d→%d: %w", v, v+1, err)
			}
		}
		meta, err := tx.CreateBucketIfNotExists(BucketMeta)
		if err != nil {
			return err
		}
		if meta.Get([]byte("created")) == nil {
			if err := meta.Put([]byte("created"), []byte(now.UTC().Format(time.RFC3339))); err != nil {
				return err
			}
		}
		return meta.Put([]byte("schema"), []byte(strconv.Itoa(SchemaVersion)))
	})
}

// Close closes the store, releasing its lock. A writer's store that a
// transaction found damaged is first moved aside and rebuilt (damage.go).
func (s *Store) Close() error {
	if s == nil || s.DB == nil {
		return nil
	}
	if s.Damaged() != nil && !s.ro && s.confirmDamage() {
		s.moveAside()
	}
	return s.DB.Close()
}

// View runs fn in a read transaction, turning a panic from damaged pages
// into ErrCorrupt and any other panic into an error (recoverCorrupt).
func (s *Store) View(fn func(tx *bolt.Tx) error) (err error) {
	defer s.noteDamage(&err)
	defer faultsAsPanics()()
	defer recoverCorrupt(&err)
	return s.DB.View(fn)
}

// Update runs fn in a write transaction, turning a panic from damaged
// pages into ErrCorrupt and any other panic into an error (recoverCorrupt).
func (s *Store) Update(fn func(tx *bolt.Tx) error) (err error) {
	defer s.noteDamage(&err)
	defer faultsAsPanics()()
	defer recoverCorrupt(&err)
	return s.DB.Update(fn)
}

// faultsAsPanics makes a memory fault in this goroutine a recoverable
// panic until the returned function runs. bbolt reads the database through
// mmap: a file truncated below the size its pages claim makes a read fault
// (SIGBUS), which Go otherwise treats as a fatal error that no recover can
// catch — a hook would die with exit status 2 on every turn, and the store
// would never be moved aside.
func faultsAsPanics() func() {
	old := debug.SetPanicOnFault(true)
	return func() { debug.SetPanicOnFault(old) }
}

// recoverCorrupt, deferred, recovers a panic in a transaction as an
// error. Only a panic that damage can cause is ErrCorrupt (panicIsDamage):
// a callback's own panic — a nil map written, an index out of range, a
// parser giving up on hostile text — is an ordinary error, so that it is
// not taken for damage and the store rebuilt empty at Close.
func recoverCorrupt(err *error) {
	r := recover()
	if r == nil {
		return
	}
	damage, at := panicIsDamage(r)
	if damage {
		*err = fmt.Errorf("%w: %v", ErrCorrupt, r)
		return
	}
	*err = fmt.Errorf("%w%s: %v", ErrPanicked, at, r)
}

// panicIsDamage tells a panic that a damaged file can cause from any
// other, and says where it was raised (" in F (file:line)", or ""). It
// must be called from the function recoverCorrupt defers, while the
// panicking frames are still on the stack. Damage is:
//
//   - a memory fault at an address (debug.SetPanicOnFault: a read of the
//     mapped file past its end, SIGBUS), wherever it happened — a
//     callback reading a value in the mapped file faults in its own frame;
//   - a panic raised in bbolt's code, directly or in a runtime check it
//     failed (its assertions, "Page expected to be…", or an index taken
//     from a damaged page).
//
// A misuse of bbolt can panic in its code too; Close therefore moves a
// store aside only when the consistency check agrees (confirmDamage).
func panicIsDamage(r any) (bool, string) {
	if f, ok := r.(interface{ Addr() uintptr }); ok && f != nil {
		return true, ""
	}
	pcs := make([]uintptr, 64)
	n := runtime.Callers(2, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	panicking := false
	for {
		f, more := frames.Next()
		switch {
		case f.Function == "runtime.gopanic":
			panicking = true
		case panicking && !strings.HasPrefix(f.Function, "runtime."):
			at := fmt.Sprintf(" in %s (%s:%d)", f.Function, filepath.Base(f.File), f.Line)
			return strings.HasPrefix(f.Function, "go.etcd.io/bbolt"), at
		}
		if !more {
			return false, ""
		}
	}
}

// Check runs bbolt's consistency check and returns the first problem.
//
// A problem is ErrCorrupt and noted as damage a transaction met: a
// writer's Close then keeps the file aside and rebuilds the store
// (damage.go), which is how intermem-recover --resume repairs a store
// damaged where no transaction has looked yet.
func (s *Store) Check() error {
	err := s.check()
	if err != nil {
		s.confirmed.Store(true)
		s.noteDamage(&err)
	}
	return err
}

// check runs bbolt's consistency check over the whole file; any problem,
// or a panic or memory fault while checking, is ErrCorrupt.
func (s *Store) check() (err error) {
	defer faultsAsPanics()()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrCorrupt, r)
		}
	}()
	err = s.DB.View(func(tx *bolt.Tx) error {
		var first error
		for err := range tx.Check() { // drain: the checker blocks on an unread channel
			if first == nil {
				first = err
			}
		}
		return first
	})
	if err != nil && !errors.Is(err, ErrCorrupt) {
		err = fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return err
}

// Get decodes the JSON value at key in bucket into v; ok is false when
// the key (or bucket) is absent.
func Get(tx *bolt.Tx, bucket []byte, key string, v any) (ok bool, err error) {
	b := tx.Bucket(bucket)
	if b == nil {
		return false, nil
	}
	touched(tx)
	raw := b.Get([]byte(key))
	if raw == nil {
		return false, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return false, fmt.Errorf("decode %s/%s: %w", bucket, key, err)
	}
	return true, nil
}

// Put encodes v as JSON at key in bucket, creating the bucket if needed.
func Put(tx *bolt.Tx, bucket []byte, key string, v any) error {
	b, err := tx.CreateBucketIfNotExists(bucket)
	if err != nil {
		return err
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s/%s: %w", bucket, key, err)
	}
	touched(tx)
	return b.Put([]byte(key), raw)
}

// Delete removes key from bucket.
func Delete(tx *bolt.Tx, bucket []byte, key string) error {
	b := tx.Bucket(bucket)
	if b == nil {
		return nil
	}
	return b.Delete([]byte(key))
}

// Each decodes every value of bucket into a fresh T and calls fn with its
// key. Undecodable values are skipped (JSON records from a future build
// with incompatible fields must not break older readers). Where a skipped
// record matters (the journal), use EachRaw and report it.
func Each[T any](tx *bolt.Tx, bucket []byte, fn func(key string, v *T) error) error {
	b := tx.Bucket(bucket)
	if b == nil {
		return nil
	}
	return b.ForEach(func(k, raw []byte) error {
		if raw == nil { // nested bucket
			return nil
		}
		touched(tx)
		v := new(T)
		if err := json.Unmarshal(raw, v); err != nil {
			return nil
		}
		return fn(string(k), v)
	})
}

// EachRaw calls fn with every key and raw value of bucket, in key order,
// for readers that must account for every record, including those that no
// longer decode.
func EachRaw(tx *bolt.Tx, bucket []byte, fn func(key string, raw []byte) error) error {
	b := tx.Bucket(bucket)
	if b == nil {
		return nil
	}
	return b.ForEach(func(k, raw []byte) error {
		if raw == nil { // nested bucket
			return nil
		}
		touched(tx)
		return fn(string(k), raw)
	})
}

// MetaLastSweep is the meta key holding when "intermem sweep" last ran
// (not a dry run), RFC 3339: SessionStart suggests a sweep when it is old.
const MetaLastSweep = "last_sweep"

// LastSweep returns when the last sweep ran; zero when none has.
func LastSweep(tx *bolt.Tx) time.Time {
	b := tx.Bucket(BucketMeta)
	if b == nil {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339, string(b.Get([]byte(MetaLastSweep))))
	if err != nil {
		return time.Time{}
	}
	return t
}

// SetLastSweep records that a sweep ran at t.
func SetLastSweep(tx *bolt.Tx, t time.Time) error {
	b, err := tx.CreateBucketIfNotExists(BucketMeta)
	if err != nil {
		return err
	}
	return b.Put([]byte(MetaLastSweep), []byte(t.UTC().Format(time.RFC3339)))
}
