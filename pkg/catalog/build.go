package catalog

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"time"

	"github.com/intermem/intermem/pkg/redact"
	"github.com/intermem/intermem/pkg/screen"
	"github.com/intermem/intermem/pkg/source"
	"github.com/intermem/intermem/pkg/store"
)

// builder brings one source up to date.
type builder struct {
	c    *Catalog
	s    source.Source
	info *SourceInfo

	// live maps every id the source's files hold now to its file's key.
	live map[string]string
	// dropped are ids that changed or vanished files held before.
	dropped map[string]bool
	// entries are the prepared entries of changed files, to store.
	entries []store.CatalogEntry
	changed bool
	// racy is set when a file record is stored to be read again.
	racy bool
	// listed is the listing the freshness check took, when it took one.
	listed *listing
	// whole is set for a Whole source.
	whole bool
	// parsed counts the changed files parsed (Config.MaxFiles); partial
	// is set when one was left for another Build.
	parsed  int
	partial bool
	// writes counts the entries of a Whole source's changed files that
	// store will write (Config.MaxWrites), as each file's are made.
	writes int
	// made are the keys of a Whole source's files whose entries this
	// Build made (the others' stand as stored); paths maps a Whole
	// source's file key to its path.
	made, paths map[string]string
	// stored are the records file stored of a per-file source's changed
	// files, with what their records said before, when Config.MaxWrites
	// or MaxFileWrites bounds the Build (leave).
	stored map[string]*storedFile
	// left are the keys of the files whose entries store left unwritten
	// (leave).
	left map[string]bool
}

// storedFile is the record file stored of a changed file, and the ids
// and log cursor of its record before.
type storedFile struct {
	rec       store.CatalogFile
	oldIDs    []string
	oldCursor *source.Cursor
}

// Memo carries, from one bounded Build (Config.MaxFiles) of a refresh to
// the next, the records of per-file sources' files it read and did not
// write, with whether each one's blob is of its source's RecordVersion,
// and the listing of each source it left partial: a refresh that goes on
// in N transactions lists the files once and decodes each unchanged
// file's record about once, instead of N times (2,600 documents changed
// at 20,000 entries: 82 transactions of 32 files, each of which listed
// and decoded all 2,600 to learn the ids every file holds, which tell a
// dropped id another file still holds from one to tombstone). The
// refresh is then the one an unbounded Build makes, which also lists the
// files once, before it reads them: a file changed after the listing is
// the next refresh's (its fingerprint is not the one stored). It carries
// too the parse of each file a Build bounded by Config.MaxFileWrites left
// partly written, with the entries of it written so far (fileParse).
//
// What it holds of the store is what the store holds only while nothing
// else wrote it: it stands for the write transaction right after the one
// of the Build that filled it, once that one committed
// (store.CatalogTx.Committed); after a rollback, a commit in between, a
// Build that failed, or in a read-only Build, it is started afresh. The
// transactions must write per-file sources' file records only through
// Build. The zero Memo is ready for use; one Memo is for Builds in turn,
// never at once.
type Memo struct {
	files map[string]memoFile
	// lists are the per-file sources' listings, by source name.
	lists map[string]*listing
	// parses are the parses of the files a bounded Build
	// (Config.MaxFileWrites) left to be parsed again, by file key.
	parses map[string]*fileParse
	// built is the id of the transaction of the Build that filled files;
	// committed the id of the last such transaction that committed.
	built, committed int
}

// memoFile is a file record as the store holds it, and whether its blob
// is of the source's RecordVersion (0: not looked at, 1: yes, 2: no).
type memoFile struct {
	rec  store.CatalogFile
	blob int8
}

// start returns the records and listings m holds for a Build in tx, nil
// for none: m's when tx is the write transaction right after the
// committed one that filled them, else none (started afresh).
func (m *Memo) start(tx *store.CatalogTx) (map[string]memoFile, map[string]*listing, map[string]*fileParse) {
	if m == nil {
		return nil, nil, nil
	}
	if tx == nil || !tx.Persistent() || tx.ID() == 0 {
		m.drop()
		return nil, nil, nil
	}
	id := tx.ID()
	if m.files == nil || m.committed != m.built || id != m.built+1 {
		m.files, m.lists, m.parses = map[string]memoFile{}, map[string]*listing{}, map[string]*fileParse{}
	}
	m.built = id
	tx.Committed(func(id int) { m.committed = id })
	return m.files, m.lists, m.parses
}

// drop forgets what m holds.
func (m *Memo) drop() {
	if m != nil {
		m.files, m.lists, m.parses, m.built, m.committed = nil, nil, nil, 0, 0
	}
}

// fileParse is what a per-file source's Build read of a changed file: its
// entries prepared (redacted, screened), the problems its parse found,
// and a log's cursors. A bounded Build (Config.MaxFileWrites) that leaves
// some of the entries unwritten keeps it in the Memo, and the Builds
// that go on with the file take it instead of reading and preparing the
// file again, while the file's fingerprint is the one it had when it was
// read: an edit log of 2,000 observations taken in at a first install
// was read, parsed and prepared whole by each of the ~16 transactions
// that wrote 128 of its entries (three quarters of each one's time, and
// most of what it allocated, with the collector held to the hook's
// memory limit). The refresh is then the one an unbounded Build makes,
// which reads each file once; a file changed since is read again.
type fileParse struct {
	// fp is the file's fingerprint before it was read; prev the cursor
	// a log's parse resumed from (its stored record's).
	fp   source.Fingerprint
	prev source.Cursor
	// err is why the file could not be read (nil: it was).
	err error
	es  []prepared
	// probs are the parse's own problems (the listing's apart).
	probs []source.Problem
	// from and next are a log's cursors (source.ParseLog).
	from, next source.Cursor
	// stored are the ids of the entries the store holds as es has them,
	// of this file, written or found so by a Build that took the parse:
	// the Builds after it need not look them up (what the Memo holds
	// stands only while nothing else wrote the store).
	stored map[string]bool
}

// storedAs records that the store holds the entry id as p has it; p may
// be nil (a parse not kept).
func (p *fileParse) storedAs(id string) {
	if p == nil {
		return
	}
	if p.stored == nil {
		p.stored = map[string]bool{}
	}
	p.stored[id] = true
}

// record returns the stored record of a per-file source's file key: the
// memo's, else decoded from the store (and kept in the memo).
func (b *builder) record(key string) (store.CatalogFile, bool) {
	if m, ok := b.c.memo[key]; ok {
		return m.rec, true
	}
	b.c.reads++
	f, ok := b.c.tx.File(key)
	if ok && b.c.memo != nil {
		b.c.memo[key] = memoFile{rec: f}
	}
	return f, ok
}

// recordCurrent reports whether the stored blob of file key, which has a
// record, is of r's RecordVersion.
func (b *builder) recordCurrent(key string, r source.Recorder) bool {
	m, ok := b.c.memo[key]
	if ok && m.blob != 0 {
		return m.blob == 1
	}
	cur := bytes.HasPrefix(b.c.tx.Blob(key), []byte(r.RecordVersion()))
	if ok {
		m.blob = 2
		if cur {
			m.blob = 1
		}
		b.c.memo[key] = m
	}
	return cur
}

// listing is a per-file source's files as source.Files found them, with
// its key (see sourceState) and the directories the walk read (nil for a
// Locator).
type listing struct {
	files []source.File
	probs []source.Problem
	key   string
	dirs  source.Dirs
}

// list lists the files of per-file source s and keys the listing. The
// listings of directories unchanged since prev was taken are taken from
// it (source.FindWalk); a Locator finds its files itself.
func list(env source.Env, s source.Source, prev source.Dirs) *listing {
	at := time.Now()
	l := &listing{}
	if _, ok := s.(source.Locator); ok {
		l.files, l.probs = source.Files(env, s)
	} else {
		l.files, l.probs, l.dirs = source.FindWalk(env.Root, s, &source.Walk{Prev: prev, Window: RacyWindow})
	}
	l.key = listingKey(env, l.files, l.probs, at)
	if r, ok := s.(source.Recorder); ok && l.key != "" {
		// A new form of the files' records is a change: stored at once.
		l.key += "+" + hex.EncodeToString([]byte(r.RecordVersion()))
	}
	return l
}

// dirPath is the path of the pseudo-file that holds a source's problems
// that belong to no file (a link out of the project, too many files).
const dirPath = ""

func (b *builder) run() error {
	b.live, b.dropped = map[string]string{}, map[string]bool{}
	b.made, b.paths = map[string]string{}, map[string]string{}
	b.stored, b.left = map[string]*storedFile{}, map[string]bool{}
	var (
		files []source.File
		probs []source.Problem
		// whole returns a Whole source's entries of one file; resolved
		// its key (source.ByFile), nil when the source has none.
		whole    func(path string) []source.Entry
		resolved func(path string) string
		wc       *wholeCache
		key      string
		dir      = base(b.c.cfg.Env, b.s)
		pre      *witness
	)
	if w, ok := b.s.(source.Whole); ok {
		b.whole = true
		wc = &wholeCache{tx: b.c.tx, src: b.s.Name(), kept: map[string]source.Fingerprint{}, loaded: map[string]bool{}}
		if dir != "" {
			pre = preWitness(dir, b.c.loadState(b.s.Name()).Touched)
		}
		if wf, ok := w.(source.WholeByFile); ok {
			bf := wf.ScanFiles(b.c.cfg.Env, wc)
			files, probs, whole, resolved = bf.Files, bf.Problems, bf.Entries, bf.Resolved
		} else {
			var es []source.Entry
			es, files, probs = w.ScanAll(b.c.cfg.Env, wc)
			byPath := map[string][]source.Entry{}
			for _, e := range es {
				byPath[e.Path] = append(byPath[e.Path], e)
			}
			whole = func(p string) []source.Entry { return byPath[p] }
		}
		if pre != nil && wc.touched != nil {
			key = racyKey(wholeKey(b.c.cfg.Env, dir, wc.touched, pre, false), dir, wc.touched, pre, wc.sums)
		}
	} else {
		if b.listed == nil {
			// A Build going on from a bounded one takes its listing: the
			// refresh is then the one an unbounded Build makes, which
			// lists the files once, before it reads them.
			b.listed = b.c.lists[b.s.Name()]
		}
		if b.listed == nil {
			b.listed = list(b.c.cfg.Env, b.s, b.c.loadState(b.s.Name()).Dirs)
		}
		files, probs, key = b.listed.files, b.listed.probs, b.listed.key
	}
	byPath := map[string][]source.Problem{}
	for _, p := range probs {
		p.Message = redact.String(p.Message) // see redactProblems
		byPath[p.Path] = append(byPath[p.Path], p)
	}
	listed := map[string]bool{dirPath: true}
	for i := range files {
		f := &files[i]
		listed[f.Path] = true
		if len(byPath[f.Path]) > 0 {
			key = "" // parsed at every Build
		}
		b.info.Files = append(b.info.Files, f.Path)
		var err error
		if whole != nil {
			res := ""
			if resolved != nil {
				res = resolved(f.Path)
			}
			err = b.wholeFile(f, whole, res, byPath[f.Path], wc)
		} else {
			err = b.file(f, byPath[f.Path])
		}
		if err != nil {
			return err
		}
		delete(byPath, f.Path)
	}
	// What is left belongs to no file read: the source's own problems.
	var rest []source.Problem
	for _, ps := range byPath {
		rest = append(rest, ps...)
	}
	if err := b.dirProblems(rest); err != nil {
		return err
	}
	// Files read before and not found now are gone (their records found
	// by key: only theirs are decoded, for their ids).
	var gone []string
	if err := b.c.tx.FilePaths(b.s.Name(), func(p string) error {
		if !listed[p] {
			gone = append(gone, p)
		}
		return nil
	}); err != nil {
		return err
	}
	for _, p := range gone {
		if f, ok := b.c.tx.File(store.FileKey(b.s.Name(), p)); ok {
			for _, id := range f.IDs {
				b.dropped[id] = true
			}
		}
	}
	for _, p := range gone {
		key := store.FileKey(b.s.Name(), p)
		delete(b.c.memo, key)
		if err := b.c.tx.DeleteFile(key); err != nil {
			return err
		}
		b.changed = true
	}
	if b.whole {
		b.rehome(whole)
	}
	if err := b.store(); err != nil {
		return err
	}
	for key := range b.stored {
		if !b.left[key] {
			delete(b.c.parses, key) // its entries are all written
		}
	}
	b.info.Entries = len(b.live)
	if b.changed {
		b.c.changed = true
		if err := b.c.tx.SetScanned(b.s.Name(), b.c.cfg.Now); err != nil {
			return err
		}
	}
	if b.c.lists != nil && !b.whole {
		// Kept for the Build that goes on from this one alone.
		if b.partial {
			b.c.lists[b.s.Name()] = b.listed
		} else {
			delete(b.c.lists, b.s.Name())
		}
	}
	if b.partial || b.racy && !b.whole {
		// (A Whole source's racy files are in its key, by content:
		// racyKey.)
		key = ""
	}
	st := sourceState{Key: key, Files: b.info.Files, Entries: b.info.Entries, Problems: b.info.Problems}
	if wc != nil {
		st.Touched = wc.touched
	}
	if b.listed != nil {
		st.Dirs = b.listed.dirs
	}
	return b.c.saveState(b.s.Name(), &st)
}

// dirProblems keeps the source's problems that belong to no file.
func (b *builder) dirProblems(probs []source.Problem) error {
	sortProblems(probs)
	key := store.FileKey(b.s.Name(), dirPath)
	old, had := b.c.tx.File(key)
	b.info.Problems = append(probs, b.info.Problems...)
	if had && sameProblems(old.Problems, probs) {
		return nil
	}
	b.c.fresh = append(b.c.fresh, probs...)
	if len(probs) == 0 {
		if had {
			return b.c.tx.DeleteFile(key)
		}
		return nil
	}
	return b.c.tx.PutFile(&store.CatalogFile{Source: b.s.Name(), Path: dirPath, IDs: []string{}, Problems: probs, Parsed: b.c.cfg.Now})
}

// unchanged reports whether the stored record of a file can stand for it.
func unchanged(old *store.CatalogFile, fp source.Fingerprint) bool {
	return old.FP == fp && !old.Racy
}

// racy reports whether a file with fingerprint fp, parsed now, could
// change without changing its fingerprint.
func racy(fp source.Fingerprint) bool {
	return time.Since(fp.Modified()) < RacyWindow
}

// keep records that the file's stored ids stand.
func (b *builder) keep(old *store.CatalogFile) {
	for _, id := range old.IDs {
		if _, ok := b.live[id]; !ok {
			b.live[id] = store.FileKey(old.Source, old.Path)
		}
	}
	b.info.Problems = append(b.info.Problems, old.Problems...)
}

// file brings one file of a per-file source up to date.
func (b *builder) file(f *source.File, findProbs []source.Problem) error {
	key := store.FileKey(b.s.Name(), f.Path)
	old, had := b.record(key)
	recorder, records := b.s.(source.Recorder)
	if had && unchanged(&old, f.FP) && sameProblems(findProbs, nil) &&
		(!records || b.recordCurrent(key, recorder)) {
		b.keep(&old)
		return nil
	}
	if max := b.c.cfg.MaxFiles; max > 0 && b.parsed >= max {
		// Left as stored, for another Build.
		b.partial, b.c.partial = true, true
		if had {
			b.keep(&old)
		}
		return nil
	}
	b.parsed++
	delete(b.c.memo, key) // its record and blob are written now
	rec := store.CatalogFile{Source: b.s.Name(), Path: f.Path, FP: f.FP, Racy: racy(f.FP), Parsed: b.c.cfg.Now}
	var (
		probs = append([]source.Problem(nil), findProbs...)
		kept  []string // ids before a resumed log's cursor, which stand
	)
	var prev source.Cursor
	if had && old.Cursor != nil {
		prev = *old.Cursor
	}
	p, err := b.parse(f, key, prev)
	if err != nil {
		return err
	}
	if _, log := b.s.(source.Appender); log {
		if p.err != nil {
			probs = append(probs, source.Problem{Path: f.Path, Message: fmt.Sprintf("cannot be read: %v", p.err)})
		} else {
			next := p.next
			rec.Cursor = &next
			if p.from.Offset > 0 && had {
				// The log only grew: what came before the cursor stands.
				for _, id := range old.IDs {
					if e, ok := b.c.tx.Entry(id, b.s.Name()); ok && e.Line < p.from.Line {
						kept = append(kept, id)
					}
				}
				for _, op := range old.Problems {
					if op.Line > 0 && op.Line < p.from.Line {
						probs = append(probs, op)
					}
				}
			}
			probs = append(probs, p.probs...)
		}
	} else if p.err != nil {
		probs = append(probs, source.Problem{Path: f.Path, Message: fmt.Sprintf("cannot be read: %v", p.err)})
	} else {
		probs = append(probs, p.probs...)
	}
	if had {
		for _, id := range old.IDs {
			b.dropped[id] = true
		}
	}
	rec.IDs = kept
	for _, id := range kept {
		b.live[id] = key
	}
	probs = redactProblems(probs)
	b.fresh(probs, had, &old)
	rec.Problems = probs
	b.info.Problems = append(b.info.Problems, probs...)
	seen := map[string]bool{}
	for _, id := range kept {
		seen[id] = true
	}
	for i := range p.es {
		e := &p.es[i]
		if seen[e.ID] {
			continue // the same record twice: one observation
		}
		seen[e.ID] = true
		rec.IDs = append(rec.IDs, e.ID)
		if _, ok := b.live[e.ID]; !ok {
			b.live[e.ID] = key
		}
		if p.stored[e.ID] {
			continue // stored as it is by a Build before this one: not looked up
		}
		b.entries = append(b.entries, store.CatalogEntry{Entry: e.Entry, Flags: e.Flags, File: key})
	}
	if rec.IDs == nil {
		rec.IDs = []string{}
	}
	b.changed = true
	b.racy = b.racy || rec.Racy
	if b.c.cfg.fileWrites() > 0 {
		sf := &storedFile{rec: rec}
		if had {
			sf.oldIDs, sf.oldCursor = old.IDs, old.Cursor
		}
		b.stored[key] = sf
	}
	return b.c.tx.PutFile(&rec)
}

// parse reads and parses a per-file source's changed file (a log from
// the cursor prev) and prepares its entries, or takes the parse that the
// Build before this one in the Memo kept of it, when the file's
// fingerprint is still the one it had when it was read (fileParse). It
// keeps the parse for the next Build while the Build may leave the file
// to be parsed again (Config.MaxFileWrites; run forgets it once the
// file's entries are all written), unless the file was modified within
// RacyWindow of its reading: its fingerprint could then stay the same
// through a change. A record of the bytes parsed is stored with the one
// reading them (a Recorder's); the Build that takes the parse finds it
// stored.
func (b *builder) parse(f *source.File, key string, prev source.Cursor) (*fileParse, error) {
	var (
		fp      source.Fingerprint
		statted bool
	)
	if real := f.Real(); real != "" {
		if fi, err := os.Stat(real); err == nil {
			fp, statted = source.FingerprintOf(fi), true
		}
	}
	if p, ok := b.c.parses[key]; ok {
		if statted && p.fp == fp && sameCursor(p.prev, prev) {
			return p, nil
		}
		delete(b.c.parses, key)
	}
	b.c.read++
	p := &fileParse{fp: fp, prev: prev}
	var es []source.Entry
	if a, ok := b.s.(source.Appender); ok {
		es, p.probs, p.from, p.next, p.err = source.ParseLog(a, *f, prev)
	} else {
		recorder, records := b.s.(source.Recorder)
		data, err := source.ReadFile(*f, 0)
		switch {
		case err != nil:
			p.err = err
			if records {
				// No record: an older one must not stand for the file
				// at its new fingerprint.
				if err := b.c.tx.DeleteBlob(key); err != nil {
					return nil, err
				}
			}
		default:
			es, p.probs = b.s.Parse(f.Path, data)
			if records {
				// The record of the bytes parsed, at the fingerprint
				// stored with them (racy: used by nobody).
				if err := b.c.tx.PutBlob(key, recorder.Record(data)); err != nil {
					return nil, err
				}
			}
		}
	}
	p.es = make([]prepared, len(es))
	for i := range es {
		p.es[i] = prepare(es[i])
	}
	if b.c.parses != nil && b.c.cfg.fileWrites() > 0 && statted && !racy(fp) {
		b.c.parses[key] = p
	}
	return p, nil
}

// sameCursor reports whether two cursors are the same place of the same
// log.
func sameCursor(a, b source.Cursor) bool {
	return a.Offset == b.Offset && a.Line == b.Line && bytes.Equal(a.Sum, b.Sum)
}

// fresh adds the problems of a file just parsed to those Build reports,
// unless the stored record already reported the same.
func (b *builder) fresh(probs []source.Problem, had bool, old *store.CatalogFile) {
	if had && sameProblems(old.Problems, probs) {
		return
	}
	b.c.fresh = append(b.c.fresh, probs...)
}

// wholeFile brings one file of a Whole source up to date: its entries
// come from the scan (entries), made only when the file's stored ones
// cannot stand. They stand without being made when the file's content is
// the one its entries were stored from (the cache loaded it at the stored
// fingerprint, and a writer that stores a parse without the entries
// clears Resolved: store.CatalogTx.PutParse) and what the rest of the
// directory decides of them, res, is as it was (source.ByFile.Resolved):
// a session's end after one memory file changed makes that file's entries
// alone, not every file's (screened, cited and summed).
func (b *builder) wholeFile(f *source.File, entries func(string) []source.Entry, res string, probs []source.Problem, wc *wholeCache) error {
	key := store.FileKey(b.s.Name(), f.Path)
	b.paths[key] = f.Path
	old, had := b.c.tx.File(key)
	fp := f.FP
	if k, ok := wc.kept[f.Path]; ok {
		fp = k // the fingerprint the file had when it was read
	} else if wc.loaded[f.Path] && had {
		fp = old.FP
	}
	sortProblems(probs)
	if res != "" && had && wc.loaded[f.Path] && old.Resolved == res && sameProblems(old.Problems, probs) {
		b.keep(&old)
		return nil
	}
	if max := b.c.cfg.MaxWrites; max > 0 && b.writes >= max {
		// The files before it hold the bound's entries to write: left
		// as stored, for another Build (see countWrites).
		b.partial, b.c.partial = true, true
		if had {
			b.keep(&old)
		}
		return nil
	}
	es := entries(f.Path)
	b.made[key] = f.Path
	var ids []string
	var prepared []store.CatalogEntry
	seen := map[string]bool{}
	for i := range es {
		e := prepare(es[i])
		if seen[e.ID] {
			continue
		}
		seen[e.ID] = true
		ids = append(ids, e.ID)
		prepared = append(prepared, store.CatalogEntry{Entry: e.Entry, Flags: e.Flags, File: key})
	}
	sum := entriesSum(prepared)
	if had && old.FP == fp && old.Sum == sum && sameProblems(old.Problems, probs) {
		b.keep(&old)
		was := old
		old.Racy = old.Racy && racy(fp) // settled since: trusted from now on
		// Its key is stored (an older intermem stored none), with the
		// parse it holds for, for the next scan to keep the entries
		// without making them.
		var err error
		if old.Resolved, err = b.putParse(key, f.Path, res, wc); err != nil {
			return err
		}
		b.racy = b.racy || old.Racy
		if old.Racy != was.Racy || old.Resolved != was.Resolved {
			return b.c.tx.PutFile(&old)
		}
		return nil
	}
	if had {
		for _, id := range old.IDs {
			b.dropped[id] = true
		}
	}
	for _, id := range ids {
		if _, ok := b.live[id]; !ok {
			b.live[id] = key
		}
	}
	b.countWrites(key, prepared)
	if !wc.loaded[f.Path] {
		b.fresh(probs, had, &old)
	}
	b.info.Problems = append(b.info.Problems, probs...)
	b.entries = append(b.entries, prepared...)
	if ids == nil {
		ids = []string{}
	}
	res, err := b.putParse(key, f.Path, res, wc)
	if err != nil {
		return err
	}
	b.changed = true
	b.racy = b.racy || racy(fp)
	rec := store.CatalogFile{Source: b.s.Name(), Path: f.Path, FP: fp, Racy: racy(fp),
		IDs: ids, Sum: sum, Resolved: res, Problems: probs, Parsed: b.c.cfg.Now}
	if b.c.cfg.MaxWrites > 0 {
		sf := &storedFile{rec: rec}
		if had {
			sf.oldIDs = old.IDs
		}
		b.stored[key] = sf
	}
	return b.c.tx.PutFile(&rec)
}

// countWrites counts, of the entries a Whole source's changed file (key)
// holds, those store will write — the ones this file holds first
// (b.live) whose stored record is missing, tombstoned, another file's or
// other. Once they reach a bounded build's Config.MaxWrites, the changed
// files after it are left as stored (wholeFile) and the Build is
// partial; store writes the bound's entries and leaves the rest of the
// file that reached it to be parsed again (leave). A session's end after
// a whole memory of thousands of entries came in (a first install, a
// directory replaced) so makes and holds about the bound's entries a
// transaction, and brings the memory in over several, where it made them
// all, then refused to write any: every session end after refused again,
// and every read-only search scanned the memory whole until a command
// that writes ran.
func (b *builder) countWrites(key string, prepared []store.CatalogEntry) {
	if b.c.cfg.MaxWrites <= 0 {
		return
	}
	for i := range prepared {
		e := &prepared[i]
		if b.live[e.ID] != key {
			continue // another file holds it first
		}
		if old, had := b.c.tx.Entry(e.ID, e.Source); had && old.Gone.IsZero() && old.File == key && sameEntry(&old, e) {
			continue
		}
		b.writes++
	}
}

// putParse stores the blob of a Whole source's file that was read this
// scan, and returns the Resolved key to store with the file's entries:
// res when the stored blob is the parse they were made from (read and
// stored now, or loaded from the store), else "" (no parse to store: the
// one stored before is deleted, for no later scan to take it for the
// file as it is now).
func (b *builder) putParse(key, path, res string, wc *wholeCache) (string, error) {
	if blob, ok := wc.blobs[path]; ok {
		return res, b.c.tx.PutBlob(key, blob)
	}
	if wc.loaded[path] {
		return res, nil
	}
	return "", b.c.tx.DeleteBlob(key)
}

// rehome makes again, from a Whole source's scan (entries), the entries
// that a file whose entries stand holds after the file their stored
// record names dropped them (edited, renamed or removed: the same fact
// in two files, the first in file order holds it): their record must
// name the file that holds them now, as a whole refresh would store it.
func (b *builder) rehome(entries func(string) []source.Entry) {
	need := map[string]map[string]bool{} // file key → ids to make
	for id := range b.dropped {
		k, ok := b.live[id]
		if _, made := b.made[k]; !ok || made {
			continue
		}
		if e, had := b.c.tx.Entry(id, b.s.Name()); had && e.Gone.IsZero() && e.File == k {
			continue
		}
		if need[k] == nil {
			need[k] = map[string]bool{}
		}
		need[k][id] = true
	}
	keys := make([]string, 0, len(need))
	for k := range need {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, e := range entries(b.paths[k]) {
			if need[k][e.ID] {
				p := prepare(e)
				b.entries = append(b.entries, store.CatalogEntry{Entry: p.Entry, Flags: p.Flags, File: k})
				delete(need[k], e.ID)
			}
		}
	}
}

// store writes the entries of changed files, tombstones the ids no file
// holds any more, and revives those that came back. A per-file source's
// Build bounded by Config.MaxFileWrites (else MaxWrites) writes every
// tombstone, then entries in the order of their files up to the bound in
// all, and leaves the rest (leave); it looks up no entry past the bound.
func (b *builder) store() error {
	now := b.c.cfg.Now
	// What to write, worked out first, so that a bounded build writes
	// nothing past its bound. Tombstones first: a file gone has no
	// record left to name its ids for another Build.
	var tombs, ents []*store.CatalogEntry
	var gone []string
	for id := range b.dropped {
		if _, ok := b.live[id]; !ok {
			gone = append(gone, id)
		}
	}
	sort.Strings(gone)
	for _, id := range gone {
		old, ok := b.c.tx.Entry(id, b.s.Name())
		if !ok || !old.Gone.IsZero() {
			continue
		}
		old.Gone = now
		tombs = append(tombs, &old)
	}
	room := -1 // entries this Build may write; -1: any
	limit := b.c.cfg.fileWrites()
	if b.whole {
		limit = b.c.cfg.MaxWrites
	}
	if limit > 0 {
		room = max(limit-len(tombs), 0)
	}
	var left []string // the files of entries left unwritten
	written := map[string]bool{}
	for i := range b.entries {
		e := &b.entries[i]
		if written[e.ID] || b.live[e.ID] != e.File {
			continue // another file holds it first
		}
		p := b.c.parses[e.File] // (file left out the entries it holds stored)
		if room >= 0 && len(ents) >= room && b.stored[e.File] != nil {
			// Past the bound: not looked up. (An entry rehome made
			// again, of a file whose record stands, is written.)
			left = append(left, e.File)
			continue
		}
		written[e.ID] = true
		old, had := b.c.tx.Entry(e.ID, e.Source)
		e.FirstSeen, e.Changed = now, now
		if had {
			e.FirstSeen, e.Changed = old.FirstSeen, old.Changed
			if old.Gone.IsZero() && old.File == e.File && sameEntry(&old, e) {
				p.storedAs(e.ID)
				continue
			}
			if !sameEntry(&old, e) {
				e.Changed = now
			}
		}
		ents = append(ents, e)
	}
	if len(left) > 0 {
		if err := b.leave(left); err != nil {
			return err
		}
	}
	for _, e := range ents {
		if err := b.c.tx.PutEntry(e); err != nil {
			return err
		}
		b.restored(e)
	}
	for _, e := range tombs {
		if err := b.c.tx.PutEntry(e); err != nil {
			return err
		}
		b.restored(e)
	}
	if len(ents)+len(tombs) > 0 {
		b.changed = true
		return b.c.tx.Bump()
	}
	return nil
}

// restored records that e was written: the carried parse of its file
// (fileParse) has it stored, and the parses of the others no more (the id
// is now another file's, or tombstoned): should a file whose parse had it
// stored hold it first again in a later Build (a file before it in the
// listing rewritten meanwhile), it is looked up, not taken as stored.
func (b *builder) restored(e *store.CatalogEntry) {
	for key, p := range b.c.parses {
		if key == e.File && e.Gone.IsZero() {
			p.storedAs(e.ID)
		} else {
			delete(p.stored, e.ID)
		}
	}
}

// leave stores the files (keys, in any order, repeated) of a per-file
// source's entries that a bounded Build (store) leaves unwritten to be
// parsed again: a record's fingerprint cleared (it is never unchanged), a
// log's cursor as it was before (the log is read again from there, or
// its parse taken from the Memo: fileParse), and its ids those of its
// record before as well as now, so that an entry written now and gone
// from the file by the next Build is tombstoned then, never left live and
// named by no file. The Build is then partial; the next one writes the
// entries this one did not (those it wrote are skipped as unchanged), and
// so on until the file's record is stored as any other's. One file of
// thousands of entries — a long CLAUDE.md, an edit log taken in whole at
// a first install — is so brought in over several transactions, each of
// whose commits maps and writes the pages of about the bound's entries,
// where one transaction took a session's end to 46 MB at 20,000 entries.
func (b *builder) leave(keys []string) error {
	slices.Sort(keys)
	for _, key := range slices.Compact(keys) {
		b.left[key] = true
		sf, ok := b.stored[key]
		if !ok {
			return fmt.Errorf("catalog: %s: an entry of %q to write, whose file this build did not store", b.s.Name(), key)
		}
		rec := sf.rec
		rec.FP = source.Fingerprint{}
		rec.Cursor = sf.oldCursor
		rec.Resolved = "" // a Whole source's: its entries do not stand
		ids := slices.Clone(rec.IDs)
		now := map[string]bool{}
		for _, id := range rec.IDs {
			now[id] = true
		}
		for _, id := range sf.oldIDs {
			if !now[id] {
				ids = append(ids, id)
			}
		}
		rec.IDs = ids
		if err := b.c.tx.PutFile(&rec); err != nil {
			return err
		}
	}
	b.partial, b.c.partial = true, true
	return nil
}

// prepared is an entry ready to store: redacted, screened.
type prepared struct {
	source.Entry
	Flags []string
}

// prepare redacts e (unless its source did) and screens it.
func prepare(e source.Entry) prepared {
	if !e.Redacted {
		e = redactEntry(e)
	}
	e.Redacted = false // as stored, every entry is redacted; the mark is the source's
	var flags []string
	for _, f := range screen.Check(e.Title + "\n" + e.Text) {
		// A title is often the text's first line: one finding, once.
		if !slices.Contains(flags, f.Detail) {
			flags = append(flags, f.Detail)
		}
	}
	return prepared{Entry: e, Flags: flags}
}

// redactEntry redacts every text of e and sets Secret when anything was.
func redactEntry(e source.Entry) source.Entry {
	secret := false
	r := func(s string) string {
		out := redact.String(s)
		if out != s {
			secret = true
		}
		return out
	}
	rs := func(ss []string) []string {
		if ss == nil {
			return nil
		}
		out := make([]string, len(ss))
		for i, s := range ss {
			out[i] = r(s)
		}
		return out
	}
	e.Title, e.Text = r(e.Title), r(e.Text)
	e.Tags, e.Symptoms, e.Citations = rs(e.Tags), rs(e.Symptoms), rs(e.Citations)
	if e.Sections != nil {
		secs := make([]source.Section, len(e.Sections))
		for i, s := range e.Sections {
			secs[i] = source.Section{Name: r(s.Name), Line: s.Line, Text: r(s.Text)}
		}
		e.Sections = secs
	}
	if e.Fields != nil {
		fs := make(map[string]string, len(e.Fields))
		for k, v := range e.Fields {
			fs[k] = r(v)
		}
		e.Fields = fs
	}
	e.Secret = e.Secret || secret
	return e
}

// redactProblems returns ps with every message redacted. A problem's
// message may quote what the file holds (a value that is not a date, a
// line that does not parse, an error naming a path), and it goes where an
// entry's text goes — the store, the log, `sources`, a session end's
// report — so it is redacted here, in the one place every source's
// problems pass, as prepare redacts every entry: a source that quotes
// its file in a new message needs no rule of its own. The path is left as
// it is: it is the file's identity, and a path that is itself a secret is
// judged where it is printed.
func redactProblems(ps []source.Problem) []source.Problem {
	var out []source.Problem
	for i, p := range ps {
		m := redact.String(p.Message)
		if m == p.Message {
			continue
		}
		if out == nil {
			out = append([]source.Problem(nil), ps...)
		}
		out[i].Message = m
	}
	if out == nil {
		return ps
	}
	return out
}

// sameEntry reports whether two stored forms say the same.
func sameEntry(a, b *store.CatalogEntry) bool {
	ja, _ := json.Marshal(struct {
		E source.Entry
		F []string
	}{a.Entry, a.Flags})
	jb, _ := json.Marshal(struct {
		E source.Entry
		F []string
	}{b.Entry, b.Flags})
	return string(ja) == string(jb)
}

// entriesSum hashes a file's prepared entries.
func entriesSum(es []store.CatalogEntry) string {
	h := sha256.New()
	for i := range es {
		b, _ := json.Marshal(struct {
			E source.Entry
			F []string
		}{es[i].Entry, es[i].Flags})
		h.Write(b)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

func sortProblems(ps []source.Problem) {
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].Path != ps[j].Path {
			return ps[i].Path < ps[j].Path
		}
		return ps[i].Line < ps[j].Line
	})
}

func sameProblems(a, b []source.Problem) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// wholeCache is the source.Cache a Whole source gets: the blobs stored
// with each file record, valid while the file's fingerprint is the one
// stored and was not racy.
type wholeCache struct {
	tx     *store.CatalogTx
	src    string
	kept   map[string]source.Fingerprint // files read this scan, at the fingerprint they were read
	blobs  map[string][]byte
	loaded map[string]bool // files decoded from the cache
	// touched are the paths the scan depended on (source.Toucher); nil
	// when the source did not say.
	touched []string
	// sums are what the scan read of each file it read
	// (source.ContentKeeper), by path relative to the source's base.
	sums map[string][32]byte
}

// KeepContent implements source.ContentKeeper.
func (w *wholeCache) KeepContent(path string, sum [32]byte) {
	if w.sums == nil {
		w.sums = map[string][32]byte{}
	}
	w.sums[path] = sum
}

// Touched implements source.Toucher.
func (w *wholeCache) Touched(paths []string) { w.touched = append([]string{}, paths...) }

func (w *wholeCache) Load(path string, fp source.Fingerprint) ([]byte, bool) {
	key := store.FileKey(w.src, path)
	old, ok := w.tx.File(key)
	if !ok || !unchanged(&old, fp) {
		return nil, false
	}
	b := w.tx.Blob(key)
	if b == nil {
		return nil, false
	}
	w.loaded[path] = true
	return b, true
}

func (w *wholeCache) Keep(path string, fp source.Fingerprint, data []byte) {
	if w.blobs == nil {
		w.blobs = map[string][]byte{}
	}
	w.kept[path] = fp
	w.blobs[path] = data
}
