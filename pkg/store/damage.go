package store

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// A store can be damaged inside its pages while its meta pages and schema
// still open (a disk error, a stray write): Open succeeds, and a
// transaction reaching a bad page panics in bbolt ("assertion failed: Page
// expected to be…"), which View and Update return as ErrCorrupt. Left in
// place, such a store fails every hook's transaction for good, and nothing
// is recorded again. So a transaction's ErrCorrupt is noted on the Store
// (noteDamage), and a writer's Close moves the file aside and rebuilds it,
// as Open does with a file it cannot open:
//
//   - only damage: a panic is ErrCorrupt only when raised in bbolt's code
//     or as a memory fault (panicIsDamage); a callback's own panic is an
//     ordinary error. And Close rebuilds only when bbolt's consistency
//     check over the file finds a problem too (confirmDamage), so a
//     misuse that panics in bbolt never wipes a sound store;
//   - the damaged file is kept: hard-linked to
//     intermem.db.corrupt-<time> before the new store replaces it, so
//     there is no moment without a store at the path (renamed there on a
//     filesystem without hard links, keepAside). Only the newest KeepAside
//     kept files stay (pruneAside): damage that recurs (a failing disk)
//     must not fill it with a full copy at every rebuild;
//   - the new store is made whole beside it and renamed into place;
//   - what can still be read of the store id and of the journal (and the
//     backups' creation order) is carried into it: an operation in flight
//     is still listed and replayed by intermem-recover, its MAC still
//     binding it to the same store id. What cannot be read is said in the
//     log line (the operations then stay in the kept file only);
//   - a store already replaced at the path (another process rebuilt it
//     first) is left alone.
//
// The rest of the store is derived data (auto-memory, the documents and
// .intermem's logs are the sources of truth), rebuilt by the next hooks.

// noteDamage records, after a transaction, that it met damage.
func (s *Store) noteDamage(err *error) {
	if *err != nil && errors.Is(*err, ErrCorrupt) {
		e := *err
		s.damaged.CompareAndSwap(nil, &e)
	}
}

// confirmDamage tells whether the damage a transaction met is real: a
// panic raised in bbolt's code can also come from a misuse on a sound
// store, and rebuilding a sound store loses its history (session counts,
// rejections, promotions). So before Close moves a store aside, bbolt's
// consistency check over the whole file must find a problem too (unless
// Check already did). A store it finds sound stays in place, with a log
// line. The check reads every page, but only after a transaction met what
// looked like damage.
func (s *Store) confirmDamage() bool {
	if s.confirmed.Load() {
		return true
	}
	if err := s.check(); err != nil {
		return true
	}
	if s.logf != nil {
		s.logf("store %s: a transaction failed (%v), but the consistency check finds the store sound; kept in place", s.Path, s.Damaged())
	}
	return false
}

// Damaged reports the damage a transaction of s met, or nil.
func (s *Store) Damaged() error {
	if p := s.damaged.Load(); p != nil {
		return *p
	}
	return nil
}

// salvage is what a damaged store still yields to be carried over.
type salvage struct {
	id      []byte
	journal [][2][]byte // key, value
	backups [][2][]byte
	// lost says what could not be read ("" when everything was).
	lost string
}

// salvageTx reads from a damaged store's transaction what rebuild
// carries over. A panic on a bad page is recovered and noted in lost.
func salvageTx(db *bolt.DB) (sv salvage) {
	read := func(what string, fn func(tx *bolt.Tx) error) {
		err := func() (err error) {
			defer faultsAsPanics()()
			defer recoverCorrupt(&err)
			return db.View(fn)
		}()
		if err != nil {
			sv.lost += fmt.Sprintf("; its %s could not be read (%v)", what, err)
		}
	}
	var intermem bool
	read("id", func(tx *bolt.Tx) error {
		meta := tx.Bucket(BucketMeta)
		if meta == nil {
			return nil
		}
		if _, err := strconv.Atoi(string(meta.Get([]byte("schema")))); err != nil {
			return nil // not an intermem store: nothing of it is carried
		}
		intermem = true
		sv.id = bytes.Clone(meta.Get(keyID))
		return nil
	})
	if !intermem {
		if sv.lost != "" {
			// Not told from another program's file: nothing is carried,
			// and an operation in flight is only in the kept file.
			sv.lost += ", nor then its journal (it stays in the kept file)"
		}
		return sv
	}
	each := func(name []byte, out *[][2][]byte) func(tx *bolt.Tx) error {
		return func(tx *bolt.Tx) error {
			b := tx.Bucket(name)
			if b == nil {
				return nil
			}
			var kv [][2][]byte
			err := b.ForEach(func(k, v []byte) error {
				if v == nil {
					return nil // a nested bucket: none in these
				}
				kv = append(kv, [2][]byte{bytes.Clone(k), bytes.Clone(v)})
				return nil
			})
			*out = kv
			return err
		}
	}
	read("journal", each(BucketJournal, &sv.journal))
	read("backups' order", each(BucketBackups, &sv.backups))
	return sv
}

// salvageFile opens the file at path read-only, as Open could not use
// it, and salvages what it can; a file bbolt cannot open yields nothing.
// Open's failed open has let go of the file (boltOpen, abandon): a lock
// this process still held would make this open wait out its timeout and
// read nothing.
func salvageFile(path string, timeout time.Duration) (sv salvage) {
	db, file, err := boltOpen(path, &bolt.Options{Timeout: timeout, ReadOnly: true})
	if err != nil {
		return salvage{lost: fmt.Sprintf("; nothing of it could be read (%v)", err)}
	}
	defer func() {
		if r := recover(); r != nil {
			abandon(db, file)
			sv = salvage{lost: fmt.Sprintf("; nothing of it could be read (%v)", r)}
			return
		}
		db.Close()
	}()
	return salvageTx(db)
}

// moveAside moves s's damaged file aside and rebuilds the store, with
// what its journal and id still yield; s stays open on the kept file until
// Close closes it. Failures are logged, and the outcome kept for Rebuilt:
// Close is not the place to fail.
func (s *Store) moveAside() {
	logf := s.logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	now := s.now
	if now.IsZero() {
		now = time.Now()
	}
	sv := salvageTx(s.DB)
	aside, err := rebuild(s.Path, now, sv, s.fi, s.Damaged(), logf)
	if err != nil {
		logf("store %s is damaged (%v) and could not be moved aside: %v", s.Path, s.Damaged(), err)
		err = fmt.Errorf("moving the damaged store aside failed: %w", err)
	}
	s.rebuilt = &rebuilt{aside: aside, err: err}
}

// rebuilt is what a Close's move-aside did.
type rebuilt struct {
	aside string
	err   error
}

// Rebuilt tells, after Close, whether Close moved the store aside and
// rebuilt it: the name of the kept file (its base name) when it did, the
// failure when it tried and could not, and "", nil when it did not try (no
// damage, a reader, a store the consistency check found sound) or left the
// path alone because another process had rebuilt it first. A command that
// says the store was rebuilt says it from this, not from having closed it.
func (s *Store) Rebuilt() (aside string, err error) {
	if s == nil || s.rebuilt == nil {
		return "", nil
	}
	return s.rebuilt.aside, s.rebuilt.err
}

// rebuild keeps the file at path as intermem.db.corrupt-<time> and puts a
// new store, holding sv, in its place. When held is the damaged file as it
// was opened, a path that no longer leads to it (rebuilt by another
// process meanwhile) is left alone. why is the damage, for the log line.
// It returns the kept file's base name, "" when it left the path alone.
func rebuild(path string, now time.Time, sv salvage, held os.FileInfo, why error, logf func(string, ...any)) (string, error) {
	if held != nil {
		pi, err := os.Stat(path)
		if err != nil || !os.SameFile(held, pi) {
			return "", nil // already moved aside and rebuilt
		}
	}
	tmp := fmt.Sprintf("%s.new-%d", path, os.Getpid())
	_ = os.Remove(tmp)
	if err := createWith(tmp, now, sv); err != nil {
		os.Remove(tmp)
		return "", err
	}
	aside, err := keepAside(path, now)
	if err != nil {
		os.Remove(tmp)
		return "", err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		pi, perr := os.Stat(path)
		ai, aerr := os.Stat(aside)
		if perr == nil && aerr == nil && os.SameFile(pi, ai) {
			os.Remove(aside) // linked: the damaged file is still at path
		}
		return "", err
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync()
		d.Close()
	}
	carried := ""
	if n := len(sv.journal); n > 0 {
		carried = fmt.Sprintf("; its journal's %d operation(s) carried over", n)
	}
	pruned := ""
	if gone := pruneAside(path, aside); len(gone) > 0 {
		pruned = fmt.Sprintf("; the older kept %s removed (the newest %d stay)", strings.Join(gone, ", "), KeepAside)
	}
	logf("store %s unusable (%v); moved aside to %s and rebuilt%s%s%s", path, why, filepath.Base(aside), carried, sv.lost, pruned)
	return filepath.Base(aside), nil
}

// KeepAside is how many kept damaged stores (intermem.db.corrupt-<time>)
// a rebuild leaves, the one it just made among them.
const KeepAside = 4

// pruneAside removes all but the newest KeepAside kept files of the store
// at path, and returns the base names it removed. made is the kept file
// the rebuild just made (its path): it is never removed, whatever its
// name, so Rebuilt never names a file that is gone — a clock set back
// stamps it older than those kept before. The others are ordered by
// their stamp, then their number (keepAside: -N, the next after the
// highest of that stamp), not by name: -10 is newer than -9. Nothing else
// beside the store is touched.
func pruneAside(path, made string) []string {
	// Listed, not globbed: the path may hold a pattern's characters.
	dir, prefix := filepath.Dir(path), filepath.Base(path)+".corrupt-"
	ents, _ := os.ReadDir(dir)
	type kept struct {
		name  string
		stamp string
		n     int
	}
	var others []kept
	for _, e := range ents {
		n := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(n, prefix) || n == filepath.Base(made) {
			continue
		}
		if stamp, num, ok := parseAside(n[len(prefix):]); ok {
			others = append(others, kept{filepath.Join(dir, n), stamp, num})
		}
	}
	if len(others) <= KeepAside-1 {
		return nil
	}
	sort.Slice(others, func(i, j int) bool {
		if others[i].stamp != others[j].stamp {
			return others[i].stamp < others[j].stamp
		}
		return others[i].n < others[j].n
	})
	var gone []string
	for _, k := range others[:len(others)-(KeepAside-1)] {
		if err := os.Remove(k.name); err == nil {
			gone = append(gone, filepath.Base(k.name))
		}
	}
	return gone
}

// asideLayout is the time stamp of a kept file's name.
const asideLayout = "20060102T150405Z"

// parseAside reads a keepAside suffix, <time> (n 0) or <time>-N (N a
// number from 1, without leading zeros).
func parseAside(suffix string) (stamp string, n int, ok bool) {
	stamp, num, numbered := strings.Cut(suffix, "-")
	if len(stamp) != len(asideLayout) {
		return "", 0, false
	}
	if _, err := time.Parse(asideLayout, stamp); err != nil {
		return "", 0, false
	}
	if !numbered {
		return stamp, 0, true
	}
	if num == "" || num[0] < '1' || num[0] > '9' || len(num) > 6 {
		return "", 0, false
	}
	n, err := strconv.Atoi(num)
	if err != nil {
		return "", 0, false
	}
	return stamp, n, true
}

// nextAside is the number the next file kept of the store at path with
// stamp takes: one past the highest of those kept with it (0, the bare
// stamp, when there are none). A number freed by pruneAside is not taken
// again, so a later copy never sorts before an earlier one.
func nextAside(path, stamp string) int {
	prefix := filepath.Base(path) + ".corrupt-"
	ents, _ := os.ReadDir(filepath.Dir(path))
	next := 0
	for _, e := range ents {
		if n, ok := strings.CutPrefix(e.Name(), prefix); ok {
			if st, num, ok := parseAside(n); ok && st == stamp && num >= next {
				next = num + 1
			}
		}
	}
	return next
}

// asideName is the kept file's path of number n with stamp.
func asideName(path, stamp string, n int) string {
	name := path + ".corrupt-" + stamp
	if n > 0 {
		name += "-" + strconv.Itoa(n)
	}
	return name
}

// link is os.Link; a test replaces it to play a filesystem without hard
// links.
var link = os.Link

// asideTries bounds the names keepAside tries after the first: another
// process keeping the same store at the same second takes one each.
const asideTries = 10

// keepAside keeps the file at path as path.corrupt-<time>, or
// -<time>-N when files were kept with that stamp before (nextAside), and
// returns that name. It hard-links the file, so that path still holds it
// until the new store is renamed over it. On a filesystem without hard
// links (vfat, exFAT, some network and FUSE mounts: link fails with
// anything but ErrExist) it renames it instead, as intermem did before it
// linked: until the caller's rename puts the new store in place the path
// is empty, and another process's Open may create a store there
// meanwhile, which that rename replaces (a new, empty store either way).
func keepAside(path string, now time.Time) (string, error) {
	stamp := now.UTC().Format(asideLayout)
	first := nextAside(path, stamp)
	for n := first; ; n++ {
		aside := asideName(path, stamp, n)
		err := link(path, aside)
		if err == nil {
			return aside, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return renameAside(path, stamp, first)
		}
		if n >= first+asideTries {
			return "", err
		}
	}
}

// renameAside is keepAside without hard links: the first name from
// number first that does not exist is where path is renamed.
func renameAside(path, stamp string, first int) (string, error) {
	for n := first; ; n++ {
		aside := asideName(path, stamp, n)
		if _, err := os.Lstat(aside); errors.Is(err, fs.ErrNotExist) {
			if err := os.Rename(path, aside); err != nil {
				return "", err
			}
			return aside, nil
		}
		if n >= first+asideTries {
			return "", fmt.Errorf("%s: %w", aside, fs.ErrExist)
		}
	}
}

// createWith makes a new store at path (which must not exist) holding
// sv: the schema, sv's id when it has one (else a new one), its journal
// records and backups' order, byte for byte.
func createWith(path string, now time.Time, sv salvage) error {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		return fmt.Errorf("create store: %w", err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		if len(sv.id) > 0 {
			meta, err := tx.CreateBucketIfNotExists(BucketMeta)
			if err != nil {
				return err
			}
			if err := meta.Put(keyID, sv.id); err != nil {
				return err
			}
		}
		if err := initSchema(tx, now); err != nil {
			return err
		}
		for _, c := range []struct {
			name []byte
			kv   [][2][]byte
		}{{BucketJournal, sv.journal}, {BucketBackups, sv.backups}} {
			b := tx.Bucket(c.name)
			for _, kv := range c.kv {
				if err := b.Put(kv[0], kv[1]); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("create store: %w", err)
	}
	return nil
}
