// Package memlist lists the memory directory as a Stop hook sees it,
// without reading a file: each memory file's name and fingerprint (one
// lstat, a stat for a link), the sub-folder files pointers name, and a
// whole listing's fingerprint — the "nothing changed" check of a quiet
// turn. Turn lists one turn of a session's sweep over a directory too
// large for one turn (package snapshot's sweep.go states the algorithm and
// its bounds); List lists a directory whole.
//
// Chunked and SumChunk (chunk.go) record a large directory's listing in
// parts and sum it from one part read afresh and the others as recorded:
// the hook front's quiet turn, whose work then does not grow with the
// directory (chunk.go states what that trades and what it keeps).
//
// It is the one definition of a listing, used by the full Stop hook
// (package snapshot) and the hook front (package hookfront), and so links
// nothing heavy: no store, no automem, no redaction.
package memlist

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// MaxFileBytes is the largest memory file read (automem.Scan's too).
// Claude Code writes files of a few kilobytes; anything this large is not
// a memory and would only cost time in every hook.
const MaxFileBytes = 4 << 20

// File is one memory file as a Stop hook lists it: its name relative to
// the memory directory and its fingerprint, or why it is not read.
type File struct {
	// Name is the file's name relative to the memory directory, slash
	// separated ("notes/debugging.md" for a file a pointer brings in from
	// a sub-folder), as automem.Scan names it.
	Name string `json:"name"`
	// FP is the fingerprint: size, modification time, inode and mode of
	// the file (of the file a link leads to), from one lstat or stat.
	FP string `json:"fp"`
	// Skip says why the file is not read ("" when it is): not a regular
	// file, over MaxFileBytes. A skipped file is logged once per
	// fingerprint, never silently ignored.
	Skip string `json:"skip,omitempty"`

	Mod time.Time `json:"-"` // modification time, for snapshot's RacyWindow
	At  int       `json:"-"` // what Pos is (AtNone, AtDirent, AtSub)
	Pos int64     `json:"-"` // where a sweep resumes after this file
}

// Listing is the memory directory as one Stop hook sees it, without
// reading a file.
type Listing struct {
	Dir   string
	Files []File // sorted by name
	// FP sums every file's name, fingerprint and skip: equal listings
	// mean no file changed (see Fingerprint). Set only for a Whole
	// listing.
	FP string
	// Whole is set when the listing holds every memory file: List's, or a
	// Turn that began and ended a sweep (sweep.go).
	Whole bool

	Start, End Sweep // the sweep before this turn, and after it when every file is done
	Last       bool  // the sweep ends with this listing
}

// List lists the memory files the way automem.Scan reads them — top-level
// *.md names without a leading dot, regular files or links to regular
// files — plus the sub-folder files that pointers name (subs, slash
// separated, relative to dir), with one lstat each (a stat for a link). A
// missing directory is an empty listing with fingerprint "none".
func List(dir string, subs []string) (*Listing, error) {
	l := &Listing{Dir: dir, Whole: true, Last: true}
	des, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			l.FP = "none"
			return l, nil
		}
		return nil, listErr(dir, err)
	}
	have := make(map[string]bool, len(des))
	for _, de := range des { // ReadDir sorts by name
		name := de.Name()
		if !strings.HasSuffix(name, ".md") || strings.HasPrefix(name, ".") {
			continue
		}
		have[name] = true
		p := filepath.Join(dir, name)
		l.Files = append(l.Files, FileOf(name, de.Type(), func() (fs.FileInfo, error) {
			if de.Type()&fs.ModeSymlink != 0 {
				return os.Stat(p)
			}
			return de.Info()
		}))
	}
	var extra []File
	for _, s := range subs {
		f, ok := SubFile(dir, s)
		if !ok || have[f.Name] {
			continue
		}
		have[f.Name] = true
		extra = append(extra, f)
	}
	if len(extra) > 0 {
		l.Files = append(l.Files, extra...)
		SortFiles(l.Files)
	}
	l.FP = ListingFP(l.Files)
	return l, nil
}

// SubFile is the sub-folder file s (slash separated, relative to dir) that
// a pointer names, fingerprinted; ok is false for a name that is not in a
// sub-folder of dir, or no file.
func SubFile(dir, s string) (File, bool) {
	s = path.Clean(s)
	if !SubName(s) {
		return File{}, false
	}
	p := filepath.Join(dir, filepath.FromSlash(s))
	fi, err := os.Lstat(p)
	if err != nil {
		return File{}, false // a pointer to no file: nothing to read
	}
	return FileOf(s, fi.Mode().Type(), StatOf(p, fi)), true
}

// StatOf returns fi, the lstat of p, or the stat of p when it is a link.
func StatOf(p string, fi fs.FileInfo) func() (fs.FileInfo, error) {
	return func() (fs.FileInfo, error) {
		if fi.Mode()&fs.ModeSymlink != 0 {
			return os.Stat(p)
		}
		return fi, nil
	}
}

// SubName reports whether s, clean, names a file in a sub-folder of the
// memory directory.
func SubName(s string) bool {
	return strings.Contains(s, "/") && !strings.HasPrefix(s, "../") && !path.IsAbs(s) && !strings.ContainsRune(s, 0)
}

// FileOf fingerprints one directory entry of type typ: info returns its
// lstat, or its stat when it is a link.
func FileOf(name string, typ fs.FileMode, info func() (fs.FileInfo, error)) File {
	if !typ.IsRegular() && typ&fs.ModeSymlink == 0 {
		return File{Name: name, Skip: "not a regular file"}
	}
	fi, err := info()
	if err != nil {
		return File{Name: name, Skip: "cannot be read: " + ErrText(err)}
	}
	size, mod, mode := fi.Size(), fi.ModTime(), fi.Mode()
	return fileFrom(name, fingerprint(size, mod, inode(fi), mode), size, mod, mode)
}

// fileFrom is the one place a File is made from what a stat says of it
// (FileOf's, and dir_linux.go's without an fs.FileInfo): fp is the
// fingerprint of those facts (appendFingerprint).
func fileFrom(name, fp string, size int64, mod time.Time, mode fs.FileMode) File {
	return File{Name: name, FP: fp, Mod: mod, Skip: skipOf(size, mode)}
}

// skipOf says why a file of that size and mode is not read, "" when it
// is.
func skipOf(size int64, mode fs.FileMode) string {
	switch {
	case !mode.IsRegular():
		return "not a regular file"
	case size > MaxFileBytes:
		return fmt.Sprintf("%d bytes, over the %d-byte limit", size, MaxFileBytes)
	}
	return ""
}

// facts is what Dir.look learns of a directory entry: what its
// fingerprint is made of (ok), or why it is skipped without one.
type facts struct {
	ok   bool
	skip string
	size int64
	mod  time.Time
	ino  uint64
	mode fs.FileMode
}

// fingerprint appends the entry's fingerprint to b.
func (f *facts) fingerprint(b []byte) []byte {
	return appendFingerprint(b, f.size, f.mod, f.ino, f.mode)
}

// ParallelMin is the fewest directory entries a getdents batch must hold
// for a second goroutine to stat part of them (on Linux,
// dir_linux.go's sumRecords; a variable for tests).
// Below it, the wake-up of a second thread costs more than the stats it
// would take over.
var ParallelMin = 96

// ParallelBytes is the directory size (st_size) from which a sum starts
// its helper before reading the directory (on Linux, dir_linux.go): on
// ext4 a block of 4 KiB holds about a hundred memory files' entries, on
// tmpfs each entry counts 20 bytes, on btrfs twice its name (a variable
// for tests).
var ParallelBytes int64 = 8 << 10

// part is what summing some of a directory's entries says (Dir.sumScan):
// the sum of the memory files among them, how many entries there were
// besides "." and "..", and whether the index was one of them.
type part struct {
	sum   fpSum
	met   int
	index bool
}

// ErrText is an error without the path it names (the file is named apart,
// redacted).
func ErrText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// Fingerprint is what must stay equal for a file's derived state to
// stand: size, modification time, inode and mode ("size:mtime-ns:inode:mode
// in octal").
func Fingerprint(fi fs.FileInfo) string {
	return fingerprint(fi.Size(), fi.ModTime(), inode(fi), fi.Mode())
}

func inode(fi fs.FileInfo) uint64 {
	switch st := fi.Sys().(type) {
	case *syscall.Stat_t:
		return uint64(st.Ino)
	case uint64: // statInfo's
		return st
	}
	return 0
}

// fingerprint is Fingerprint's string, built without fmt: a sweep takes
// 4,096 a turn.
func fingerprint(size int64, mod time.Time, ino uint64, mode fs.FileMode) string {
	var buf [64]byte
	return string(appendFingerprint(buf[:0], size, mod, ino, mode))
}

// appendFingerprint appends the fingerprint of those facts to b.
func appendFingerprint(b []byte, size int64, mod time.Time, ino uint64, mode fs.FileMode) []byte {
	b = strconv.AppendInt(b, size, 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, mod.UnixNano(), 10)
	b = append(b, ':')
	b = strconv.AppendUint(b, ino, 10)
	b = append(b, ':')
	return strconv.AppendUint(b, uint64(uint32(mode)), 8)
}

func SortFiles(fs []File) {
	slices.SortFunc(fs, func(a, b File) int { return strings.Compare(a.Name, b.Name) })
}

// Sweep is a session's pass over the memory files spread over turns
// (package snapshot's sweep.go; Turn lists one turn of it): each turn reads a bounded number of
// directory entries from Cookie on, then the sub-folder files pointers
// name from Sub on.
type Sweep struct {
	// Start is the time of the turn that began the sweep.
	Start time.Time `json:"start"`
	// Dir is the memory directory's fingerprint (inode, modification and
	// change time) when the sweep began.
	Dir string `json:"dir"`
	// Dirty is set once a turn finds Dir changed: an entry was added,
	// removed or renamed during the sweep, which then proves nothing about
	// files it did not meet.
	Dirty bool `json:"dirty,omitempty"`
	// Cookie resumes the directory read (the filesystem's offset of the
	// next entry; an index where there is none); DirDone is set once the
	// directory's end was reached.
	Cookie  int64 `json:"cookie"`
	DirDone bool  `json:"dir_done,omitempty"`
	// Sub counts the sub-folder files done; Subs sums the list they are
	// counted in (it changed: the sweep is dirty).
	Sub  int    `json:"sub,omitempty"`
	Subs string `json:"subs,omitempty"`
	// Resubs is set when a file read during the sweep named other
	// sub-folder files than before: the list is rebuilt at its end.
	Resubs bool `json:"resubs,omitempty"`
}

// ChunkEntries bounds the directory entries one turn reads (a variable
// for tests).
var ChunkEntries = 4096

// File positions: where the sweep resumes after a file.
const (
	AtNone   = iota // MEMORY.md or a file a pointer read this turn named
	AtDirent        // pos is the directory cookie after it
	AtSub           // pos is the count of sub-folder files done with it
)

// Turn lists what one turn of session sweep prev (nil: a new sweep)
// looks at, without reading a file. subs are the sub-folder files
// pointers named (Subs).
func Turn(dir string, subs []string, prev *Sweep) (*Listing, error) {
	return turn(dir, subs, prev, true)
}

// Sum is what a whole listing of dir says, taken as Turn takes a new
// sweep's first turn (Turn(dir, subs, nil): the same function): its
// fingerprint, and whether the listing is whole (the fingerprint is ""
// when it is not). No File is kept — each file's fingerprint is summed
// as it is stat'ed —, so a quiet turn over hundreds of memory files
// allocates nothing per file.
func Sum(dir string, subs []string) (fp string, whole bool, err error) {
	l, err := turn(dir, subs, nil, false)
	if err != nil {
		return "", false, err
	}
	return l.FP, l.Whole, nil
}

// turn is Turn; keep is unset for Sum, which needs the listing's sum
// alone: l.Files stays empty.
func turn(dir string, subs []string, prev *Sweep, keep bool) (*Listing, error) {
	l := &Listing{Dir: dir}
	d, err := OpenDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			l.FP, l.Whole, l.Last = "none", true, true
			return l, nil
		}
		return nil, listErr(dir, err)
	}
	defer d.Close()
	dfp, err := d.FP()
	if err != nil {
		return nil, listErr(dir, err)
	}
	subsSum := SumOf(subs)
	sw := Sweep{Dir: dfp}
	fresh := prev == nil
	if !fresh {
		sw = *prev
		if sw.Dir != dfp {
			sw.Dirty = true
		}
	}
	l.Start = sw
	left := ChunkEntries
	// Every file listed is summed (sum), whether or not it is kept: the
	// listing's fingerprint does not depend on the order they are met.
	var sum fpSum
	add := func(f File) {
		sum.add(f.Name, f.FP, f.Skip)
		if keep {
			l.Files = append(l.Files, f)
		}
	}
	// Whether the index was among the directory's entries.
	var haveIndex bool
	if !sw.DirDone {
		var met int
		each := func(name []byte, typ fs.FileMode, next int64) {
			met++
			if !memoryName(name) {
				return
			}
			haveIndex = haveIndex || string(name) == Index
			f := d.fileOf(name, string(name), typ)
			f.At, f.Pos = AtDirent, next
			add(f)
		}
		// Without files to keep, the directory's entries are summed as
		// they are stat'ed (sumScan: by two goroutines when there are
		// many).
		scan := func(cookie int64) (int64, bool, error) {
			if keep {
				return d.scan(cookie, left, each)
			}
			next, eof, p, err := d.sumScan(cookie, left)
			met, haveIndex = p.met, p.index
			sum.sum += p.sum.sum
			sum.n += p.sum.n
			return next, eof, err
		}
		next, eof, err := scan(sw.Cookie)
		if err != nil && sw.Cookie != 0 {
			// A cookie this directory does not take (it was replaced,
			// or moved to another filesystem): a new sweep.
			sw = Sweep{Dir: dfp}
			fresh, l.Start = true, sw
			l.Files, sum, haveIndex, met = l.Files[:0], fpSum{}, false, 0
			next, eof, err = scan(0)
		}
		if err != nil {
			return nil, listErr(dir, err)
		}
		left -= met
		sw.Cookie, sw.DirDone = next, eof
		if eof {
			sw.Sub, sw.Subs = 0, subsSum
		}
	}
	if sw.DirDone {
		if sw.Subs != subsSum {
			sw.Dirty, sw.Sub, sw.Subs = true, 0, subsSum
		}
		left = subFiles(dir, subs, &sw, left, add)
	}
	l.Last = sw.DirDone && sw.Sub >= len(subs)
	if !haveIndex {
		d.addIndex(l, keep, &sum)
	}
	if l.Last {
		// An entry added, removed or renamed while this turn read.
		if now, err := d.FP(); err != nil || now != sw.Dir {
			sw.Dirty = true
		}
	}
	l.End = sw
	l.Whole = fresh && l.Last && !sw.Dirty
	if l.Whole {
		// A sum over the files whatever their order, as List sums them
		// by name: a session's fingerprint stands whichever way it was
		// taken. The files stay in the directory's order, which the
		// sweep's positions follow.
		l.FP = sum.String()
	}
	return l, nil
}

// listErr is an error listing dir.
//
//go:noinline
func listErr(dir string, err error) error { return fmt.Errorf("list memory dir %s: %w", dir, err) }

// subFiles lists the sub-folder files of subs that sweep sw has not done
// yet, up to left (add is given each), and returns what is left. A
// sub-folder file's name holds a slash, a directory entry's never does:
// the two cannot meet, and only pointers can name a file twice.
//
// Its own function, as is addIndex, so that turn's frame stays small (a
// quiet turn's listing runs a few kilobytes deep in a hook's main
// goroutine, whose stack would grow).
//
//go:noinline
func subFiles(dir string, subs []string, sw *Sweep, left int, add func(File)) int {
	var have map[string]bool
	for ; sw.Sub < len(subs) && left > 0; left-- {
		s := subs[sw.Sub]
		sw.Sub++
		f, ok := SubFile(dir, s)
		if !ok || have[f.Name] {
			continue
		}
		if have == nil {
			have = make(map[string]bool, len(subs)-sw.Sub+1)
		}
		have[f.Name] = true
		f.At, f.Pos = AtSub, int64(sw.Sub)
		add(f)
	}
	return left
}

// addIndex adds the index to the listing l and its sum when the
// directory holds one that was not among the entries listed: first in
// l.Files (kept), as the directory's own entry would not be.
//
//go:noinline
func (d *Dir) addIndex(l *Listing, keep bool, sum *fpSum) {
	fi, err := d.Stat(Index, false)
	if err != nil {
		return
	}
	f := FileOf(Index, fi.Mode().Type(), func() (fs.FileInfo, error) {
		if fi.Mode()&fs.ModeSymlink != 0 {
			return d.Stat(Index, true)
		}
		return fi, nil
	})
	sum.add(f.Name, f.FP, f.Skip)
	if keep {
		l.Files = append(l.Files, f)
		copy(l.Files[1:], l.Files)
		l.Files[0] = f
	}
}

// Index is the memory directory's index file.
const Index = "MEMORY.md"

// MemoryName reports whether a directory entry is a memory file as
// automem.Scan reads them: *.md, no leading dot.
func MemoryName(name string) bool { return memoryName(name) }

func memoryName[T text](name T) bool {
	n := len(name)
	return n >= 3 && name[n-3] == '.' && name[n-2] == 'm' && name[n-1] == 'd' && name[0] != '.'
}

// text is a name or fingerprint as the listing has it: a string, or the
// bytes of a directory entry not copied out of the getdents buffer.
type text interface{ ~string | ~[]byte }

// ListingFP sums every file's name, fingerprint and skip: equal sums mean
// no file changed. It does not depend on the files' order, so that a
// listing is summed as its files are stat'ed, in the directory's order,
// without keeping them to sort (fpSum says how).
func ListingFP(files []File) string {
	var s fpSum
	for i := range files {
		s.add(files[i].Name, files[i].FP, files[i].Skip)
	}
	return s.String()
}

// fpSum is a listing's fingerprint summed file by file in any order:
// each file's term is FNV-1a (64 bits) over its name NUL fingerprint NUL
// skip NEWLINE, mixed by MurmurHash3's 64-bit finalizer (so that the
// terms' low bits are as good as their high ones), and the terms are
// added modulo 2^64; the fingerprint is "m", the sum in hex, ".", the
// count of files. A file added, removed or changed changes its term,
// which changes the sum but for a chance of 2^-64, as the former sum
// over files in name order ("m" tells the two apart: a session recorded
// by a version before takes one full turn).
type fpSum struct {
	sum, n uint64
}

func (s *fpSum) add(name string, fp string, skip string) { s.addTerm(term(name, fp, skip)) }

func (s *fpSum) addTerm(t uint64) {
	s.sum += t
	s.n++
}

// term is one file's term in the sum.
func term[N, F text](name N, fp F, skip string) uint64 {
	const offset64, prime64 = 14695981039346656037, 1099511628211
	h := uint64(offset64)
	for i := 0; i < len(name); i++ {
		h = (h ^ uint64(name[i])) * prime64
	}
	h = (h ^ 0) * prime64
	for i := 0; i < len(fp); i++ {
		h = (h ^ uint64(fp[i])) * prime64
	}
	h = (h ^ 0) * prime64
	for i := 0; i < len(skip); i++ {
		h = (h ^ uint64(skip[i])) * prime64
	}
	h = (h ^ '\n') * prime64
	return fmix64(h)
}

// fmix64 is MurmurHash3's 64-bit finalizer, a bijection that spreads
// every bit of h over every bit of the result.
func fmix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

func (s fpSum) String() string {
	var buf [48]byte
	b := append(buf[:0], 'm')
	b = strconv.AppendUint(b, s.sum, 16)
	b = append(b, '.')
	b = strconv.AppendUint(b, s.n, 10)
	return string(b)
}

func SumOf(subs []string) string {
	if len(subs) == 0 {
		return ""
	}
	h := fnv.New64a()
	for _, s := range subs {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return strconv.FormatUint(h.Sum64(), 16)
}
