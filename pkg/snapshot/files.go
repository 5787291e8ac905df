package snapshot

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/redact"
	"github.com/intermem/intermem/pkg/source"
	"github.com/intermem/intermem/pkg/store"
)

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
	// file, over automem.MaxFileBytes. A skipped file is logged once per
	// fingerprint, never silently ignored.
	Skip string `json:"skip,omitempty"`

	mod time.Time // modification time, for RacyWindow
	at  int       // what pos is (atNone, atDirent, atSub: sweep.go)
	pos int64     // where a sweep resumes after this file
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

	start, end store.Sweep // the sweep before this turn, and after it when every file is done
	last       bool        // the sweep ends with this listing
}

// List lists the memory files the way automem.Scan reads them — top-level
// *.md names without a leading dot, regular files or links to regular
// files — plus the sub-folder files that pointers name (subs, slash
// separated, relative to dir), with one lstat each (a stat for a link). A
// missing directory is an empty listing with fingerprint "none".
func List(dir string, subs []string) (*Listing, error) {
	l := &Listing{Dir: dir, Whole: true, last: true}
	des, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			l.FP = "none"
			return l, nil
		}
		return nil, fmt.Errorf("list memory dir %s: %w", dir, err)
	}
	have := make(map[string]bool, len(des))
	for _, de := range des { // ReadDir sorts by name
		name := de.Name()
		if !strings.HasSuffix(name, ".md") || strings.HasPrefix(name, ".") {
			continue
		}
		have[name] = true
		p := filepath.Join(dir, name)
		l.Files = append(l.Files, file(name, de.Type(), func() (fs.FileInfo, error) {
			if de.Type()&fs.ModeSymlink != 0 {
				return os.Stat(p)
			}
			return de.Info()
		}))
	}
	var extra []File
	for _, s := range subs {
		f, ok := subFile(dir, s)
		if !ok || have[f.Name] {
			continue
		}
		have[f.Name] = true
		extra = append(extra, f)
	}
	if len(extra) > 0 {
		l.Files = append(l.Files, extra...)
		sortFiles(l.Files)
	}
	l.FP = listingFP(l.Files)
	return l, nil
}

// subFile is the sub-folder file s (slash separated, relative to dir) that
// a pointer names, fingerprinted; ok is false for a name that is not in a
// sub-folder of dir, or no file.
func subFile(dir, s string) (File, bool) {
	s = path.Clean(s)
	if !subName(s) {
		return File{}, false
	}
	p := filepath.Join(dir, filepath.FromSlash(s))
	fi, err := os.Lstat(p)
	if err != nil {
		return File{}, false // a pointer to no file: nothing to read
	}
	return file(s, fi.Mode().Type(), statOf(p, fi)), true
}

// statOf returns fi, the lstat of p, or the stat of p when it is a link.
func statOf(p string, fi fs.FileInfo) func() (fs.FileInfo, error) {
	return func() (fs.FileInfo, error) {
		if fi.Mode()&fs.ModeSymlink != 0 {
			return os.Stat(p)
		}
		return fi, nil
	}
}

// subName reports whether s, clean, names a file in a sub-folder of the
// memory directory.
func subName(s string) bool {
	return strings.Contains(s, "/") && !strings.HasPrefix(s, "../") && !path.IsAbs(s) && !strings.ContainsRune(s, 0)
}

// file fingerprints one directory entry of type typ: info returns its
// lstat, or its stat when it is a link.
func file(name string, typ fs.FileMode, info func() (fs.FileInfo, error)) File {
	f := File{Name: name}
	var fi fs.FileInfo
	var err error
	switch {
	case typ.IsRegular(), typ&fs.ModeSymlink != 0:
		fi, err = info()
	default:
		f.Skip = "not a regular file"
		return f
	}
	if err != nil {
		f.Skip = "cannot be read: " + errText(err)
		return f
	}
	f.FP, f.mod = fingerprint(fi), fi.ModTime()
	switch {
	case !fi.Mode().IsRegular():
		f.Skip = "not a regular file"
	case fi.Size() > automem.MaxFileBytes:
		f.Skip = fmt.Sprintf("%d bytes, over the %d-byte limit", fi.Size(), automem.MaxFileBytes)
	}
	return f
}

// errText is an error without the path it names (the file is named apart,
// redacted).
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// fingerprint is what must stay equal for a file's derived state to stand:
// size, modification time, inode and mode ("size:mtime-ns:inode:mode in
// octal"). Built without fmt: a sweep takes 4,096 a turn.
func fingerprint(fi fs.FileInfo) string {
	var ino uint64
	switch st := fi.Sys().(type) {
	case *syscall.Stat_t:
		ino = uint64(st.Ino)
	case uint64: // statInfo's
		ino = st
	}
	b := make([]byte, 0, 64)
	b = strconv.AppendInt(b, fi.Size(), 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, fi.ModTime().UnixNano(), 10)
	b = append(b, ':')
	b = strconv.AppendUint(b, ino, 10)
	b = append(b, ':')
	b = strconv.AppendUint(b, uint64(uint32(fi.Mode())), 8)
	return string(b)
}

func sortFiles(fs []File) {
	slices.SortFunc(fs, func(a, b File) int { return strings.Compare(a.Name, b.Name) })
}

// safeName is a file name as entries and logs show it: any secret in it
// redacted.
func safeName(name string) string {
	if name == automemIndex {
		// Read at every turn: not worth building the redaction engine
		// for, on a turn that has nothing else to redact.
		return name
	}
	return redact.Name(name)
}

// readFile reads one memory file: a regular file (a link is followed),
// opened without blocking (a FIFO put there must not hang the hook), at
// most automem.MaxFileBytes, checked on the bytes read. fp is the
// catalog's fingerprint of the file (source.Fingerprint), taken from the
// open file before reading it: a parse stored under fp is trusted only
// while the file still has it, and a write during the read changes it
// (one within the clock's granularity is a racy fingerprint, trusted by
// nobody).
func readFile(p string) (b []byte, fp source.Fingerprint, err error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fp, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fp, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fp, errors.New("not a regular file")
	}
	b, err = io.ReadAll(io.LimitReader(f, automem.MaxFileBytes+1))
	if err != nil {
		return nil, fp, err
	}
	if len(b) > automem.MaxFileBytes {
		return nil, fp, fmt.Errorf("over the %d-byte limit", automem.MaxFileBytes)
	}
	return b, source.FingerprintOf(fi), nil
}

// Spoolable returns the listing's files as a spool file keeps them: by
// their redacted names. Never nil, so that an empty listing is still one.
func (l *Listing) Spoolable() []File {
	out := make([]File, len(l.Files))
	for i, f := range l.Files {
		out[i] = File{Name: safeName(f.Name), FP: f.FP, Skip: f.Skip}
	}
	return out
}

// spooledListing turns the files of a spooled listing (redacted names,
// and hostile input like every spool byte) back into memory files: each
// carries the fingerprint it had when it was spooled, so Sync reads it
// only if it still has that fingerprint. A spooled name is used as a path
// only when it is a memory file's name at the top of memDir (no slash, no
// leading dot, *.md) or one of the sub-folder files the store's pointers
// name, and a file by that name exists whose redacted name it is;
// otherwise it is looked up by its redacted name among the first
// ChunkEntries entries of memDir (a file whose name held a secret). A name
// that matches no file, or two, is left out and counted in missing: the
// session's sweep reads that file in its turn.
func spooledListing(tx *bolt.Tx, memDir string, spooled []File) (l *Listing, missing int) {
	l = &Listing{Dir: memDir}
	if memDir == "" {
		return l, len(spooled)
	}
	named := map[string]bool{}
	for _, s := range Subs(tx) {
		named[s] = true
	}
	var unresolved []File
	for _, sf := range spooled {
		name := sf.Name
		direct := (memoryName(name) && !strings.ContainsAny(name, "/\x00")) || (named[name] && path.Clean(name) == name && subName(name))
		if direct && safeName(name) == name {
			if _, err := os.Lstat(filepath.Join(memDir, filepath.FromSlash(name))); err == nil {
				l.Files = append(l.Files, File{Name: name, FP: sf.FP, Skip: sf.Skip})
				continue
			}
		}
		unresolved = append(unresolved, sf)
	}
	if len(unresolved) == 0 {
		return l, 0
	}
	bySafe := map[string]string{}
	if d, err := openDir(memDir); err == nil {
		ents, _, _, _ := d.read(0, ChunkEntries)
		d.Close()
		for _, e := range ents {
			if !memoryName(e.name) {
				continue
			}
			k := safeName(e.name)
			if _, dup := bySafe[k]; dup {
				bySafe[k] = "" // two files redact alike: neither can be told
				continue
			}
			bySafe[k] = e.name
		}
	}
	for _, sf := range unresolved {
		name := bySafe[sf.Name]
		if name == "" {
			missing++
			continue
		}
		l.Files = append(l.Files, File{Name: name, FP: sf.FP, Skip: sf.Skip})
	}
	return l, missing
}
