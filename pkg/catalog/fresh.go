package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/intermem/intermem/pkg/redact"
	"github.com/intermem/intermem/pkg/source"
)

// sourceState is what Build keeps of a source as a whole after bringing it
// up to date: a key summing the stats that decided it (the listing and
// every file's fingerprint, or for a Whole source the stats of every path
// its scan depended on) and what SourceInfo says of it. A Build whose key
// for the source comes out the same takes SourceInfo from here and reads
// no file record, no cached blob and no entry: nothing it would have read
// could have changed.
//
// The key is trusted only when no stat in it could hide a change (none
// taken within RacyWindow of the file's modification or status change),
// no file carried a problem of its own from the listing (such a file is
// parsed at every Build), and, for a Whole source, every path its scan
// depended on was stat'd before the scan. Otherwise Key is empty and the
// next Build scans the source in full.
type sourceState struct {
	Key string `json:"key,omitempty"`
	// Touched are a Whole source's paths (relative to its base) whose
	// state its scan depended on: what the next Build stats.
	Touched  []string         `json:"touched,omitempty"`
	Files    []string         `json:"files"`
	Entries  int              `json:"entries"`
	Problems []source.Problem `json:"problems,omitempty"`
	// Dirs are the directories a per-file source's walk read, for the
	// next walk to take the unchanged ones' listings from (source.Dirs).
	Dirs source.Dirs `json:"dirs,omitempty"`
	// filesAt are Files as decodeState found them, encoded, when they
	// were not decoded (see files).
	filesAt []byte
}

// loadState returns the stored state of source src (zero when none or
// unreadable: a source never trusted). A state is stored in the binary
// form of statecodec.go; one an older intermem stored as JSON is read as
// JSON.
func (c *Catalog) loadState(src string) sourceState {
	return readState(c.tx.State(src))
}

// readState decodes b, a stored state (see loadState).
func readState(b []byte) sourceState {
	if len(b) == 0 {
		return sourceState{}
	}
	var st sourceState
	var err error
	if oldState(b) {
		err = json.Unmarshal(b, &st)
	} else {
		st, err = decodeState(b)
	}
	if err != nil {
		return sourceState{}
	}
	return st
}

// oldState reports whether b is a state as an older intermem stored it:
// JSON.
func oldState(b []byte) bool { return len(b) > 0 && b[0] == '{' }

// saveState stores st for src unless the store holds it already. A state
// that would name a secret (a memory file called after a key, a problem
// quoting one) is stored empty instead: the store never holds a secret,
// and names cannot be redacted here, since Touched must name the real
// paths to stat them. Such a source is then scanned in full at every
// Build, as before states were kept.
func (c *Catalog) saveState(src string, st *sourceState) error {
	if namesSecret(st) {
		st = &sourceState{}
	}
	b := encodeState(st)
	if string(c.tx.State(src)) == string(b) {
		return nil
	}
	return c.tx.PutState(src, b)
}

// namesSecret reports whether a text of st (its key aside: a sum
// intermem made) holds a secret. The texts are judged as they are, one a
// line, not as JSON, whose escapes could split a secret's pattern.
func namesSecret(st *sourceState) bool {
	texts := slices.Concat(st.Touched, st.files(), st.Dirs.Names())
	for _, p := range st.Problems {
		texts = append(texts, p.Path, p.Message)
	}
	return redact.Has(strings.Join(texts, "\n"))
}

// stamp is a running key over stats; trusted is false once one of them
// could hide a change. Its key is the SHA-256 of its parts, each followed
// by a NUL byte. The parts are appended to buf, which is summed into the
// hash whenever it grows past stampChunk: a key over thousands of files
// would otherwise be thousands of strings, or one buffer of megabytes
// grown by copying (the same bytes are summed either way, so stored keys
// hold).
type stamp struct {
	h       hash.Hash
	buf     []byte
	trusted bool
}

// stampChunk is how many bytes a stamp holds before summing them: its
// buffer (the chunk and room for a part past it) fits in a page, which a
// fresh process faults in for each stamp it makes — a Build makes one a
// source.
const stampChunk = 2 << 10

func newStamp(kind string, env source.Env) *stamp {
	s := &stamp{h: sha256.New(), buf: make([]byte, 0, stampChunk+1<<10+512), trusted: true}
	for _, p := range []string{kind, env.Root, env.MemoryDir} {
		s.buf = append(append(s.buf, p...), 0)
	}
	return s
}

// spill sums what buf holds once it is past stampChunk.
func (s *stamp) spill() {
	if len(s.buf) >= stampChunk {
		s.h.Write(s.buf)
		s.buf = s.buf[:0]
	}
}

// add records one part; at is when its fingerprint fp was taken (zero
// fp: nothing to judge).
func (s *stamp) add(part string, fp source.Fingerprint, at time.Time) {
	s.buf = append(append(s.buf, part...), 0)
	s.spill()
	s.judge(fp, at)
}

// judge distrusts the stamp when fp, taken at at, could hide a change
// (zero fp: nothing to judge).
func (s *stamp) judge(fp source.Fingerprint, at time.Time) {
	if fp == (source.Fingerprint{}) {
		return
	}
	if at.Sub(fp.Modified()) < RacyWindow {
		s.trusted = false
	}
}

// key is the stamp's sum, "" when it is not trusted.
func (s *stamp) key() string {
	if !s.trusted {
		return ""
	}
	s.h.Write(s.buf)
	s.buf = s.buf[:0]
	var sum [sha256.Size]byte
	return hex.EncodeToString(s.h.Sum(sum[:0])[:16])
}

// listingKey is the key of a per-file source's listing: every file's path,
// real path and fingerprint and the listing's problems.
func listingKey(env source.Env, files []source.File, probs []source.Problem, at time.Time) string {
	s := newStamp("files", env)
	for i := range files {
		f := &files[i]
		s.buf = append(append(append(append(s.buf, f.Path...), 0), f.Real()...), 0)
		s.buf = append(appendFP(s.buf, f.FP), 0)
		s.spill()
		s.judge(f.FP, at)
	}
	for _, p := range probs {
		s.add(fmt.Sprintf("%+v", p), source.Fingerprint{}, at)
	}
	return s.key()
}

// sumKey is listingKey of the files source.FindWalk would list for
// per-file source s, summed as source.SumWalk finds them (no File made),
// with the listings a next walk may use; false when the walk could not be
// summed (a Locator's files are not walked; a problem would be part of
// the key): the caller lists the files instead. The key is list's.
func sumKey(env source.Env, s source.Source, prev source.Dirs) (string, source.Dirs, bool) {
	if _, ok := s.(source.Locator); ok {
		return "", nil, false
	}
	at := time.Now()
	st := newStamp("files", env)
	dirs, ok := source.SumWalk(env.Root, s, &source.Walk{Prev: prev, Window: RacyWindow}, func(path, real []byte, fp source.Fingerprint) {
		st.buf = append(append(append(append(st.buf, path...), 0), real...), 0)
		st.buf = append(appendFP(st.buf, fp), 0)
		st.spill()
		st.judge(fp, at)
	})
	if !ok {
		return "", nil, false
	}
	key := st.key()
	if r, ok := s.(source.Recorder); ok && key != "" {
		key += "+" + hex.EncodeToString([]byte(r.RecordVersion()))
	}
	return key, dirs, true
}

// appendFP appends fp to b as fmt's %+v writes it ("{Size:1 ModTime:2
// Inode:3 Change:4}"), which keys were made of, at a fraction of the
// cost: a listing key takes one per file.
func appendFP(b []byte, fp source.Fingerprint) []byte {
	b = strconv.AppendInt(append(b, "{Size:"...), fp.Size, 10)
	b = strconv.AppendInt(append(b, " ModTime:"...), fp.ModTime, 10)
	b = strconv.AppendUint(append(b, " Inode:"...), fp.Inode, 10)
	b = strconv.AppendInt(append(b, " Change:"...), fp.Change, 10)
	return append(b, '}')
}

// witness holds the stats of a Whole source's base directory, the paths
// its scan depended on and each one's parent directories up to the base
// (or, for a path out of it, up to the file system's root): a file
// created, removed or renamed anywhere a scan looked changes one of those
// directories, and a file's content changes its own stat. Each path is
// stat'd both as a link and followed.
type witness struct {
	stats map[string]string
	racy  map[string]bool // judged when stat'd
	st    *statter
	buf   []byte // a stat's text, built
}

func newWitness(st *statter, n int) *witness {
	return &witness{stats: make(map[string]string, n), racy: map[string]bool{}, st: st}
}

// stat stats abs unless w holds it.
func (w *witness) stat(abs string) {
	if _, ok := w.stats[abs]; ok {
		return
	}
	b, racy := w.text(abs)
	if racy {
		w.racy[abs] = true
	}
	w.stats[abs] = string(b)
}

// text stats abs and returns its stats' text, in w's buffer (valid until
// the next call), and whether one could hide a change.
func (w *witness) text(abs string) (b []byte, racy bool) {
	// As fmt's "%v\x00%+v" of the mode and fp wrote each stat, joined
	// by NULs, which keys were made of.
	b = w.buf[:0]
	now := time.Now()
	for i, follow := range []bool{false, true} {
		if i > 0 {
			b = append(b, 0)
		}
		mode, fp, ok := w.st.stat(abs, follow)
		if !ok {
			b = append(b, "absent"...)
			continue
		}
		b = appendFP(append(append(b, mode.String()...), 0), fp)
		s := stamp{trusted: true}
		s.judge(fp, now)
		racy = racy || !s.trusted
		if i == 0 && mode&fs.ModeSymlink == 0 {
			// Not a link: followed, it is the same stat.
			b = append(append(b, 0), b...)
			break
		}
	}
	w.buf = b
	return b, racy
}

// covered returns base and, for each touched path, the path and its
// parents: what a key over touched covers.
func covered(base string, touched []string) []string {
	seen := make(map[string]bool, len(touched)+1)
	seen[base] = true
	out := make([]string, 1, len(touched)+1)
	out[0] = base
	for _, t := range touched {
		p := filepath.Join(base, filepath.FromSlash(t))
		for !seen[p] {
			seen[p] = true
			out = append(out, p)
			parent := filepath.Dir(p)
			if parent == p {
				break
			}
			p = parent
		}
	}
	sort.Strings(out)
	return out
}

// wholeKey is the key of a Whole source whose scan touched touched, from
// the stats in w; "" when w lacks one or, judging, when one could hide a
// change.
func wholeKey(env source.Env, base string, touched []string, w *witness, judge bool) string {
	s := newStamp("whole", env)
	for _, p := range covered(base, touched) {
		v, ok := w.stats[p]
		if !ok || judge && w.racy[p] {
			return ""
		}
		s.buf = append(append(append(append(s.buf, p...), 0), v...), 0)
		s.spill()
	}
	return s.key()
}

// wholeKeyNow is wholeKey, not judging, of the stats of what touched
// covers taken now, each summed as it is taken: the key statNow's
// witness gives, without the witness (a string per path).
func wholeKeyNow(env source.Env, base string, touched []string) string {
	st := openStatter(base)
	defer st.close()
	w := witness{st: st}
	s := newStamp("whole", env)
	for _, p := range covered(base, touched) {
		b, _ := w.text(p)
		s.buf = append(append(append(append(s.buf, p...), 0), b...), 0)
		s.spill()
	}
	return s.key()
}

// statNow returns a witness of what touched covers, stat'd now.
func statNow(base string, touched []string) *witness {
	st := openStatter(base)
	defer st.close()
	paths := covered(base, touched)
	w := newWitness(st, len(paths))
	for _, p := range paths {
		w.stat(p)
	}
	w.st = nil
	return w
}

// A Whole source's racy files
//
// A scan whose witness (stat'd before it read anything) holds a file
// modified within RacyWindow cannot key the source by stats alone: the
// file may be written again within the clock's tick and keep its stat.
// Such a key was stored empty, and every Build after it scanned the source
// again — every read-only search, after a memory file was edited less
// than RacyWindow before a session's end, until the next session's end.
// racyKey keys such a file by its content as well: the SHA-256 of the
// bytes the scan read of it (source.ContentKeeper). A Build after it that
// finds every stat as the witness took it reads those files alone and
// trusts the source when each holds what the scan read: what the scan
// made of the file is what it would make of it now, and every other path
// is as its trusted stat says. (A change after the witness's stat and
// before the scan's read is in what the scan read; one after the read is
// in the content.) A racy path that is not a file the scan read — a
// directory, a file not read — leaves the key empty, as before.

// racyFile is a file of a Whole source's key known by its content: its
// path relative to the source's base and the sum of what the scan read.
type racyFile struct {
	path string
	sum  [32]byte
}

// racyKey returns key, the unjudged key of a Whole source over its
// witness w, with the content of every racy path it covers, from sums
// (what the scan read, by path relative to base); "" when a racy path is
// not a file the scan read, or key is "".
func racyKey(key, base string, touched []string, w *witness, sums map[string][32]byte) string {
	if key == "" {
		return ""
	}
	var racy []racyFile
	for _, p := range covered(base, touched) {
		if !w.racy[p] {
			continue
		}
		rel, err := filepath.Rel(base, p)
		sum, ok := sums[filepath.ToSlash(rel)]
		if err != nil || !ok || !filepath.IsLocal(rel) {
			return ""
		}
		racy = append(racy, racyFile{path: filepath.ToSlash(rel), sum: sum})
	}
	b := []byte(key)
	for _, f := range racy {
		b = append(append(append(append(b, 0), f.path...), 0), hex.EncodeToString(f.sum[:])...)
	}
	return string(b)
}

// splitRacyKey splits a key racyKey made into the stats' key and the
// files known by their content.
func splitRacyKey(key string) (string, []racyFile) {
	parts := strings.Split(key, "\x00")
	if len(parts)%2 == 0 {
		return "\x00", nil // not racyKey's: matches no key
	}
	var racy []racyFile
	for i := 1; i < len(parts); i += 2 {
		var f racyFile
		if n, err := hex.Decode(f.sum[:], []byte(parts[i+1])); err != nil || n != len(f.sum) || !filepath.IsLocal(parts[i]) {
			return "\x00", nil
		}
		f.path = parts[i]
		racy = append(racy, f)
	}
	return parts[0], racy
}

// maxRacyBytes bounds what sameContent reads of one file.
const maxRacyBytes = 4 << 20

// sameContent reports whether every file of racy holds what its sum says,
// read now under base.
func sameContent(base string, racy []racyFile) bool {
	for _, f := range racy {
		sum, ok := readSum(filepath.Join(base, filepath.FromSlash(f.path)))
		if !ok || sum != f.sum {
			return false
		}
	}
	return true
}

// readSum returns the SHA-256 of the regular file at path, up to
// maxRacyBytes; false when it cannot be read, is not a regular file (a
// FIFO put in its place is not waited on) or is larger.
func readSum(path string) ([32]byte, bool) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return [32]byte{}, false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() > maxRacyBytes {
		return [32]byte{}, false
	}
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, maxRacyBytes+1))
	if err != nil || n > maxRacyBytes {
		return [32]byte{}, false
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return sum, true
}

// preWitness stats, before a Whole source's scan, what its previous scan
// touched and every name in its base directory: what the new scan most
// likely touches, stat'd before it reads anything, so that a change during
// the scan shows in the next Build's stats.
func preWitness(base string, prev []string) *witness {
	touched := slices.Clone(prev)
	if des, err := os.ReadDir(base); err == nil {
		for _, de := range des {
			touched = append(touched, de.Name())
		}
	}
	return statNow(base, touched)
}

// unchanged reports whether source s is as its stored state says, at the
// cost of a stat per file, and if so fills b's SourceInfo from it. A
// per-file source's listing is left in b for the scan when it is not.
func (c *Catalog) unchanged(s source.Source, b *builder) bool {
	var (
		st     sourceState
		key    string
		dirs   source.Dirs
		walked bool // a per-file source's listing taken (dirs)
	)
	if a := c.ahead[s.Name()]; a != nil {
		<-a.done
		st, key, dirs, walked, b.listed = a.st, a.key, a.dirs, true, a.listed
	} else {
		st = c.loadState(s.Name())
	}
	if st.Key == "" {
		return false
	}
	env := c.cfg.Env
	if walked {
		// Taken ahead.
	} else if _, ok := s.(source.Whole); ok {
		dir := base(env, s)
		if dir == "" {
			return false
		}
		var racy []racyFile
		key, racy = splitRacyKey(st.Key)
		if now := wholeKeyNow(env, dir, st.Touched); now != key || !sameContent(dir, racy) {
			return false
		}
		key = st.Key
	} else {
		var ok bool
		if key, dirs, ok = sumKey(env, s, st.Dirs); !ok || key != st.Key {
			// Changed (or not to be summed): the listing, for the scan.
			b.listed = list(env, s, st.Dirs)
			key, dirs = b.listed.key, b.listed.dirs
		}
		walked = true
	}
	if key != st.Key {
		return false
	}
	b.info.Files, b.info.Entries, b.info.Problems = st.Files, st.Entries, st.Problems
	b.info.filesAt = st.filesAt // (decoded by Sources alone)
	resave := c.tx.Persistent() && oldState(c.tx.State(s.Name()))
	if walked && c.tx.Persistent() && !sameDirs(dirs, st.Dirs) {
		// A directory read again (racy at the last walk, or changed and
		// back to the same files): a writer keeps its listing for the
		// next walk. (A reader would hold it for nothing, after judging
		// its names for secrets.)
		st.Dirs = dirs
		resave = true
	}
	if resave {
		// (Or a state an older intermem stored as JSON: a writer stores
		// it in the binary form, which every reader decodes faster.)
		if err := c.saveState(s.Name(), &st); err != nil {
			return false
		}
	}
	return true
}

// ahead is what a goroutine of walkAhead found of one per-file source:
// its stored state and, once done is closed, its key as the files are
// now, the listings its walk took, and its listing when the key is not
// the stored one (for the scan).
type ahead struct {
	done   chan struct{}
	st     sourceState
	key    string
	dirs   source.Dirs
	listed *listing
}

// walkAhead starts, for every per-file source of srcs when there are
// several, a goroutine that decodes its stored state and walks its files
// (what unchanged would do in turn), so that the walks — a stat per file,
// most of what a search of unchanged sources costs — run on every CPU
// while Build goes through the sources in order; unchanged takes each
// result as it comes to the source. The key, the listing and everything
// derived are those of the walk in turn: the same walk, only sooner.
// A goroutine reads nothing of the transaction: the state's bytes are
// taken here (they stay valid while the transaction is open, and Build
// waits for every goroutine, walked, before it returns).
func (c *Catalog) walkAhead(srcs []source.Source) {
	var perFile []source.Source
	for _, s := range srcs {
		if _, ok := s.(source.Whole); !ok && c.lists[s.Name()] == nil {
			// (A listing carried from a bounded Build is not taken again.)
			perFile = append(perFile, s)
		}
	}
	if len(perFile) < aheadMin {
		return
	}
	env := c.cfg.Env
	c.ahead = make(map[string]*ahead, len(perFile))
	for _, s := range perFile {
		a := &ahead{done: make(chan struct{})}
		c.ahead[s.Name()] = a
		raw := c.tx.State(s.Name())
		go func() {
			defer close(a.done)
			a.st = readState(raw)
			if a.st.Key == "" {
				a.listed = list(env, s, a.st.Dirs) // for the scan
				a.key, a.dirs = a.listed.key, a.listed.dirs
				return
			}
			var ok bool
			if a.key, a.dirs, ok = sumKey(env, s, a.st.Dirs); !ok || a.key != a.st.Key {
				a.listed = list(env, s, a.st.Dirs)
				a.key, a.dirs = a.listed.key, a.listed.dirs
			}
		}()
	}
}

// aheadMin is the fewest per-file sources walkAhead walks ahead: one is
// walked in turn (a goroutine would only be waited for).
var aheadMin = 2

// walked waits for walkAhead's goroutines.
func (c *Catalog) walked() {
	for _, a := range c.ahead {
		<-a.done
	}
}

// sameDirs reports whether a and b hold the same directories at the same
// fingerprints: a walk takes an unchanged directory's listing from the
// previous walk, so equal fingerprints mean equal listings.
func sameDirs(a, b source.Dirs) bool {
	if len(a) != len(b) {
		return false
	}
	for k, d := range a {
		if e, ok := b[k]; !ok || e.FP != d.FP {
			return false
		}
	}
	return true
}
