package source

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bmatcuk/doublestar/v4"
)

// Dirs is what a walk read of each directory, for the next walk: a
// directory whose fingerprint is unchanged holds the same names, so its
// listing is taken from here instead of read again. Keys are real paths
// relative to the walk's real root, slash-separated ("." for the root).
// A listing keeps only the names the source's walk looks at: the files
// its patterns match and the subdirectories it descends into (the store
// holds no other name of the project).
//
// A directory's fingerprint says nothing of what happens inside its files
// (each candidate file is still stat'd) nor inside its subdirectories
// (each is a Dirs entry of its own, stat'd in turn). A directory is kept
// only when it was read whole and its stat was not taken within the racy
// window of its last modification: a name added in the same clock tick as the
// stat would leave the fingerprint as it was.
type Dirs map[string]DirList

// DirList is one directory as a walk read it.
type DirList struct {
	// FP is the directory's own fingerprint, taken before it was read.
	FP Fingerprint `json:"fp"`
	// Path is the directory's path relative to the project root as the
	// walk saw it (through a linked pattern base, it differs from its
	// key): what the names were judged against.
	Path string `json:"path"`
	// Entries are the names the walk looks at, in name order.
	Entries []DirEntry `json:"entries"`
}

// DirEntry is one name in a directory.
type DirEntry struct {
	Name string `json:"n"`
	Dir  bool   `json:"d,omitempty"`
	Link bool   `json:"l,omitempty"`
}

// Names returns every name dirs holds (directory keys and entry names),
// for a caller that must judge them before storing them.
func (d Dirs) Names() []string {
	var out []string
	for k, l := range d {
		out = append(out, k)
		for _, e := range l.Entries {
			out = append(out, e.Name)
		}
	}
	return out
}

// Walk is a walk of one source's files under a root, remembering what it
// read of each directory (see Dirs).
type Walk struct {
	// Prev holds the directories of an earlier walk (nil: none).
	Prev Dirs
	// Window is how recently before its stat a directory may have been
	// modified for its listing to be kept.
	Window time.Duration

	// Reads counts the directories read from the file system, for tests.
	Reads int

	next Dirs
	// sum, set by SumWalk, takes each file found instead of a File.
	sum *summer
}

// FindWalk is Find, taking listings of unchanged directories from w.Prev;
// it returns the files, the problems and the listings a next walk may use.
// Files and problems are those Find would return.
func FindWalk(root string, s Source, w *Walk) ([]File, []Problem, Dirs) {
	w.next = Dirs{}
	files, probs := findUnder(root, s, w)
	return files, probs, w.next
}

// SumWalk walks s's files as FindWalk does, for a caller that only sums
// what the walk finds (the catalog's key of an unchanged source): no File
// is made, nor a path string per file. sum receives each file's path
// relative to root, its real path and its fingerprint, in the order of
// FindWalk's files (by path), in buffers the walk reuses: valid only
// during the call. It returns the listings a next walk may use, and false
// when the walk met anything FindWalk would report or could not give the
// files in that order without making them — a problem (an unreadable
// directory, a link, a file that is not regular, more than MaxFiles
// files), two patterns whose walks could meet the same path, a path out
// of order: the caller then takes FindWalk's listing instead. What sum
// was given by then is to be discarded.
func SumWalk(root string, s Source, w *Walk, sum func(path, real []byte, fp Fingerprint)) (Dirs, bool) {
	if !apart(s.Patterns()) {
		return nil, false
	}
	w.next = Dirs{}
	w.sum = &summer{fn: sum}
	defer func() { w.sum = nil }()
	_, probs := findUnder(root, s, w)
	return w.next, len(probs) == 0 && !w.sum.failed
}

// errUnsummed stops a SumWalk that cannot go on (summer.failed).
var errUnsummed = errors.New("walk: cannot be summed")

// summer is what a SumWalk keeps between the files it gives its caller.
type summer struct {
	fn         func(path, real []byte, fp Fingerprint)
	path, last []byte // the file's path; the previous file's
	real       []byte
	n          int
	failed     bool
}

// file gives the caller the file name in the directory at realDir,
// relDir relative to the root ("." for the root itself), with
// fingerprint fp; false when it comes out of order or past MaxFiles.
func (m *summer) file(relDir, realDir, name string, fp Fingerprint) bool {
	p := m.path[:0]
	if relDir != "." {
		p = append(append(p, relDir...), '/')
	}
	p = append(p, name...)
	r := append(append(append(m.real[:0], realDir...), filepath.Separator), name...)
	m.path, m.real = p, r
	return m.give(fp)
}

// whole gives the caller a file whose path and real path are made.
func (m *summer) whole(path, real string, fp Fingerprint) bool {
	m.path = append(m.path[:0], path...)
	m.real = append(m.real[:0], real...)
	return m.give(fp)
}

func (m *summer) give(fp Fingerprint) bool {
	m.n++
	if m.n > MaxFiles || m.n > 1 && string(m.path) <= string(m.last) {
		m.failed = true
		return false
	}
	m.fn(m.path, m.real, fp)
	m.path, m.last = m.last, m.path
	return true
}

// apart reports whether no two of pats can match the same path in a
// walk: their static bases are distinct directories neither of which
// holds another (a walk takes a path once, by the first pattern that
// matches it, which a SumWalk does not track).
func apart(pats []string) bool {
	if len(pats) < 2 {
		return true
	}
	bases := make([]string, len(pats))
	for i, p := range pats {
		bases[i] = staticBase(p)
		if bases[i] == "." {
			return false
		}
		for _, b := range bases[:i] {
			a := bases[i]
			if a == b || strings.HasPrefix(a, b+"/") || strings.HasPrefix(b, a+"/") {
				return false
			}
		}
	}
	return true
}

// walker is one pattern's walk below realBase.
type walker struct {
	w             *Walk
	realRoot, pat string
	pats          []string // every pattern of the source
	// seen holds the paths the source's earlier patterns matched, which
	// this walk skips; nil for the first pattern, whose walk meets each
	// path once, and which records its matches in matched instead (a
	// map of thousands of paths built for nothing, most sources having
	// one pattern or patterns that never meet) — when a pattern follows
	// it (nil matched: none does).
	seen    map[string]bool
	matched *[]string
	// run is the candidates' buffer, which every directory of the walk
	// uses in turn (a directory's run is judged and visited before the
	// walk goes into a subdirectory).
	run []candidate
	// visit takes each file pat matches, in walk order, as judge judged
	// it.
	visit            func(f File, relPath, prob string) error
	probs            *[]Problem
	realBase, base   string
	realRootPrefixed string
}

// errFull stops a walk that has found MaxFiles files.
var errFull = errors.New("walk: full")

// walk walks the tree at realBase (a real path within realRoot) as
// filepath.WalkDir would, in lexical order, calling visit for every
// non-directory whose path pat matches, except that it never descends
// into a directory that cannot hold a match of pat or lies deeper than
// MaxDepth, and takes unchanged directories' listings from w.Prev.
func (k *walker) walk() error {
	fi, err := os.Lstat(k.realBase)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		if ok, _ := doublestar.Match(k.pat, k.base); ok {
			f, prob := judge(k.realRoot, k.realBase, k.base, fi.Mode()&fs.ModeSymlink != 0)
			if m := k.w.sum; m != nil && prob == "" {
				if !m.whole(f.Path, f.real, f.FP) {
					return errUnsummed
				}
				return nil
			}
			return k.visit(f, k.base, prob)
		}
		return nil
	}
	entries, err := k.list(k.realBase, k.base, fi)
	if err != nil {
		return err
	}
	return k.dir(k.realBase, k.base, entries)
}

// dir visits the entries of the directory at real, whose path relative to
// the project root is relPath.
func (k *walker) dir(real, relPath string, entries []DirEntry) error {
	// The files of a run of entries (at most maxRun) are judged together
	// (judgeAll) and visited in order before the next run and before the
	// walk goes into a subdirectory.
	if n := min(len(entries), maxRun); cap(k.run) < n {
		k.run = make([]candidate, 0, n)
	}
	run := k.run[:0]
	defer func() { k.run = run[:0] }()
	sum := k.w.sum
	flush := func() error {
		judgeAll(k.realRoot, real, relPath, run, sum != nil)
		for i := range run {
			c := &run[i]
			if sum == nil {
				if err := k.visit(c.f, c.rel, c.prob); err != nil {
					return err
				}
				continue
			}
			switch {
			case c.prob != "":
				sum.failed = true
			case c.judged:
				sum.whole(c.f.Path, c.f.real, c.f.FP)
			default:
				sum.file(relPath, real, c.name, c.fp)
			}
			if sum.failed {
				return errUnsummed
			}
		}
		run = run[:0]
		return nil
	}
	// Below the root's real path, a name's path relative to the root is
	// the tail of its real path (a separator is "/" there): one string
	// for both.
	tail := filepath.Separator == '/' && relPath != "." && len(real) == len(k.realRootPrefixed)+len(relPath) &&
		strings.HasPrefix(real, k.realRootPrefixed) && real[len(k.realRootPrefixed):] == relPath
	var names nameMatcher
	if sum != nil {
		names = newNameMatcher(k.pat, relPath)
	}
	for _, e := range entries {
		if sum != nil && !e.Dir {
			// A sum makes no path: the name decides.
			if names.match(relPath, e.Name) {
				run = append(run, candidate{name: e.Name, link: e.Link})
			}
			if len(run) == maxRun {
				if err := flush(); err != nil {
					return err
				}
			}
			continue
		}
		childReal := real + string(filepath.Separator) + e.Name
		childRel := e.Name
		if tail {
			childRel = childReal[len(k.realRootPrefixed):]
		} else if relPath != "." {
			childRel = relPath + "/" + e.Name
		}
		if e.Dir {
			if strings.Count(childRel, "/")+1 > MaxDepth || !mayHold(k.pat, childRel) {
				continue
			}
			if err := flush(); err != nil {
				return err
			}
			k.run = run // empty: the subdirectory's walk uses it
			fi, err := os.Lstat(childReal)
			var sub []DirEntry
			if err == nil && fi.IsDir() {
				sub, err = k.list(childReal, childRel, fi)
			} else if err == nil {
				err = fmt.Errorf("open %s: %w", childReal, errors.New("not a directory"))
			}
			if err != nil {
				*k.probs = append(*k.probs, Problem{Path: childRel, Message: fmt.Sprintf("cannot be read: %v", err)})
			}
			if err := k.dir(childReal, childRel, sub); err != nil {
				return err
			}
			run = k.run[:0]
			continue
		}
		if k.seen != nil && k.seen[childRel] {
			continue
		}
		if ok, _ := doublestar.Match(k.pat, childRel); !ok {
			continue
		}
		if k.seen != nil {
			k.seen[childRel] = true
		} else if k.matched != nil {
			*k.matched = append(*k.matched, childRel)
		}
		run = append(run, candidate{name: e.Name, real: childReal, rel: childRel, link: e.Link})
		if len(run) == maxRun {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// nameMatcher decides whether a walk's pattern matches the path of a
// file of one directory from the file's name, without making the path
// (SumWalk): below the root, a pattern whose last segment has no "**"
// matches dir/name exactly when its segments before the last match dir
// and its last matches name, so the directory is matched once and each
// name alone. A pattern with braces, classes or escapes (whose meta
// characters could span a "/"), or a "**" in its last segment, is
// matched against the path, made.
type nameMatcher struct {
	how  int    // one of the match* constants
	last string // what a name is matched against (matchName)
	pat  string // the whole pattern (matchPath)
}

// How a nameMatcher matches.
const (
	matchNone = iota // no name of the directory
	matchName        // last against the name
	matchPath        // the pattern against the path, made
)

func newNameMatcher(pat, dir string) nameMatcher {
	if dir == "." {
		return nameMatcher{how: matchName, last: pat} // the path is the name
	}
	i := strings.LastIndexByte(pat, '/')
	if strings.ContainsAny(pat, "{[\\") || strings.Contains(pat[i+1:], "**") {
		return nameMatcher{how: matchPath, pat: pat}
	}
	if i < 0 {
		return nameMatcher{how: matchNone} // one segment: never a path below the root
	}
	if ok, _ := doublestar.Match(pat[:i], dir); ok {
		return nameMatcher{how: matchName, last: pat[i+1:]}
	}
	return nameMatcher{how: matchNone}
}

// match reports whether the pattern matches dir/name (name alone when
// dir is the root).
func (m nameMatcher) match(dir, name string) bool {
	switch m.how {
	case matchName:
		ok, _ := doublestar.Match(m.last, name)
		return ok
	case matchPath:
		ok, _ := doublestar.Match(m.pat, dir+"/"+name)
		return ok
	}
	return false
}

// maxRun is the most candidates judged together: a directory of
// thousands of files is judged in runs of this many, so the buffer they
// are judged in stays small (a fresh process pays a page fault for every
// page of heap it first touches).
const maxRun = 256

// candidate is a name a pattern matched, to judge. A SumWalk's has no
// real or rel path unless judge made them (a link: judged).
type candidate struct {
	name      string
	real, rel string
	link      bool
	f         File
	fp        Fingerprint // its fingerprint, stat'd for a SumWalk
	judged    bool        // f is judge's
	prob      string
}

// parallelJudge is the fewest candidates judged by more than one
// goroutine: a stat per file is most of what an unchanged source costs,
// and the stats of a large directory are independent.
const parallelJudge = 64

// judgeAll judges every candidate of cs, files of the directory at dir
// (relDir relative to the root), on every CPU when there are many. A
// SumWalk's (summing) are stat'd and no File made, unless judge judges
// them.
func judgeAll(realRoot, dir, relDir string, cs []candidate, summing bool) {
	if len(cs) == 0 {
		return
	}
	fd := dirFD(dir)
	if fd >= 0 {
		defer closeFD(fd)
	}
	one := func(c *candidate, buf *[]byte) {
		if fd < 0 || c.link {
			if summing { // (no paths made yet)
				c.real = dir + string(filepath.Separator) + c.name
				c.rel = c.name
				if relDir != "." {
					c.rel = relDir + "/" + c.name
				}
			}
			c.f, c.prob = judge(realRoot, c.real, c.rel, c.link)
			c.judged = true
			return
		}
		regular, fp, err := statAt(fd, c.name, buf)
		switch {
		case err != nil:
			c.prob = fmt.Sprintf("cannot be read: %v", &fs.PathError{Op: "stat", Path: dir + string(filepath.Separator) + c.name, Err: err})
		case !regular:
			c.prob = "is not a regular file; not read"
		case summing:
			c.fp = fp
		default:
			c.f = File{Path: c.rel, Size: fp.Size, ModTime: time.Unix(0, fp.ModTime), FP: fp, real: c.real}
		}
	}
	n := min(runtime.GOMAXPROCS(0), len(cs)/parallelJudge)
	if n <= 1 {
		var buf []byte
		for i := range cs {
			one(&cs[i], &buf)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			var buf []byte
			for {
				i := int(next.Add(1)) - 1
				if i >= len(cs) {
					return
				}
				one(&cs[i], &buf)
			}
		})
	}
	wg.Wait()
}

// list returns the names in the directory at real (relPath, as the walk
// sees it), whose stat is fi: from w.Prev when its fingerprint is the one
// stored, else read (and kept for the next walk when whole and not racy).
// On a read error it returns what was read with the error, as os.ReadDir
// does.
func (k *walker) list(real, relPath string, fi fs.FileInfo) ([]DirEntry, error) {
	at := time.Now()
	fp := FingerprintOf(fi)
	key := k.key(real)
	if prev, ok := k.w.Prev[key]; ok && prev.FP == fp && prev.Path == relPath && plainNames(prev.Entries) {
		k.w.next[key] = prev
		return prev.Entries, nil
	}
	k.w.Reads++
	des, err := os.ReadDir(real)
	entries := make([]DirEntry, 0, len(des))
	for _, de := range des {
		e := DirEntry{Name: de.Name(), Dir: de.IsDir(), Link: de.Type()&fs.ModeSymlink != 0}
		if k.looks(relPath, e) {
			entries = append(entries, e)
		}
	}
	if err == nil && !racy(fp, at, k.w.Window) {
		k.w.next[key] = DirList{FP: fp, Path: relPath, Entries: entries}
	}
	return entries, err
}

// plainNames reports whether every name of a stored listing (read as
// hostile) names an entry of its directory: not empty, "." or "..", and
// no separator or NUL in it. A listing that does not is read again.
func plainNames(es []DirEntry) bool {
	for _, e := range es {
		if e.Name == "" || e.Name == "." || e.Name == ".." || strings.ContainsAny(e.Name, "/\x00"+string(filepath.Separator)) {
			return false
		}
	}
	return true
}

// looks reports whether a walk of any of the source's patterns looks at
// e in the directory relPath: a subdirectory it may descend into, or a
// name one matches.
func (k *walker) looks(relPath string, e DirEntry) bool {
	p := e.Name
	if relPath != "." {
		p = relPath + "/" + e.Name
	}
	for _, pat := range k.pats {
		if e.Dir && mayHold(pat, p) {
			return true
		}
		if ok, _ := doublestar.Match(pat, p); ok {
			return true
		}
	}
	return false
}

// key is real's key in Dirs.
func (k *walker) key(real string) string {
	if real == k.realRoot {
		return "."
	}
	if strings.HasPrefix(real, k.realRootPrefixed) {
		return filepath.ToSlash(real[len(k.realRootPrefixed):])
	}
	return filepath.ToSlash(real)
}

// racy reports whether a stat taken at at could miss a change to the
// names in fp's directory: it was modified within window before (a name
// added or removed in the same clock tick would leave its modification
// time as it was).
func racy(fp Fingerprint, at time.Time, window time.Duration) bool {
	return at.Sub(fp.Modified()) < window
}

// mayHold reports whether the directory dir (slash-separated, relative to
// the project root) may hold a path that pat matches: each of its names
// matches the pattern's name at the same depth, up to a "**", and the
// pattern names a file below it. A pattern with braces, escapes or
// classes (which could span a "/") is taken to hold anything.
func mayHold(pat, dir string) bool {
	if strings.ContainsAny(pat, "{[\\") {
		return true
	}
	ps := strings.Split(pat, "/")
	for i, name := range strings.Split(dir, "/") {
		if ps[i] == "**" {
			return true
		}
		if i >= len(ps)-1 {
			return false
		}
		ok, err := doublestar.Match(ps[i], name)
		if err != nil {
			return true
		}
		if !ok {
			return false
		}
	}
	return true
}
