package source

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// Limits on what Find and ReadFile accept. Real solution documents and
// learnings are a few kilobytes; a project with thousands of them, a
// directory tree hundreds deep or a megabyte "document" is not a memory
// system but something that would cost every scan.
const (
	// MaxFiles is the most files Find returns for one source.
	MaxFiles = 10000
	// MaxDepth is the deepest directory, counted from the project root, that
	// Find descends into.
	MaxDepth = 24
	// MaxFileBytes is the largest file ReadFile reads.
	MaxFileBytes = 1 << 20
)

// ErrTooLarge is returned by ReadFile for a file over its size limit.
var ErrTooLarge = errors.New("file is larger than the limit")

// ErrNotRegular is returned by Open for anything but a regular file.
var ErrNotRegular = errors.New("not a regular file")

// File is one file a source reads, with what the catalog fingerprints: an
// unchanged Size and ModTime cost a stat instead of a parse.
type File struct {
	// Path is slash-separated and relative to the project root, as written
	// into entries.
	Path string
	// Size and ModTime are those of the file, or of the file a link leads to.
	Size    int64
	ModTime time.Time
	// FP is the file's fingerprint: what must be unchanged for the
	// catalog to keep what it parsed from the file.
	FP Fingerprint
	// real is the absolute path to open: the link target for a link.
	real string
}

// Find returns the files of s under root, sorted by path, and the problems
// met on the way (a link that leads out of the project, too many files).
// A pattern whose directory does not exist finds nothing and is no problem.
//
// Directory links are never followed. A linked file is returned only when
// the link resolves inside root to a regular file; anything else that is not
// a regular file is skipped with a problem.
func Find(root string, s Source) ([]File, []Problem) {
	return FindUnder(root, "", s)
}

// FindUnder is Find below base instead of the project root, for a source
// whose files live elsewhere (auto-memory, in Claude Code's memory
// directory): s's patterns are relative to base, links are followed only
// to regular files inside base, and each File's Path is prefix (a name
// like "memory/", or "") followed by its path relative to base. A base
// that does not exist finds nothing and is no problem.
func FindUnder(base, prefix string, s Source) ([]File, []Problem) {
	files, probs := findUnder(base, s, nil)
	if prefix != "" {
		for i := range files {
			files[i].Path = prefix + files[i].Path
		}
		for i := range probs {
			probs[i].Path = prefix + probs[i].Path
		}
	}
	return files, probs
}

func findUnder(root string, s Source, w *Walk) ([]File, []Problem) {
	if w == nil {
		w = &Walk{next: Dirs{}}
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []Problem{{Path: ".", Message: fmt.Sprintf("cannot be read: %v", err), Unread: true}}
	}
	var seen map[string]bool // made for a second pattern, from matched
	var matched []string
	// The previous walk's listings bound how many files this one finds,
	// near enough: the slice is made once instead of grown by copying.
	hint := 0
	for _, d := range w.Prev {
		if w.sum != nil {
			break // (a SumWalk makes no File)
		}
		hint += len(d.Entries)
	}
	files := make([]File, 0, min(hint, MaxFiles))
	var probs []Problem
	for i, pat := range s.Patterns() {
		base := staticBase(pat)
		realBase, err := filepath.EvalSymlinks(filepath.Join(realRoot, filepath.FromSlash(base)))
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				probs = append(probs, Problem{Path: base, Message: fmt.Sprintf("cannot be read: %v", err), Unread: true})
			}
			continue
		}
		if !within(realRoot, realBase) {
			probs = append(probs, Problem{Path: base, Message: "is a link that leads out of the project; not read"})
			continue
		}
		if i > 0 && seen == nil {
			seen = make(map[string]bool, len(matched))
			for _, m := range matched {
				seen[m] = true
			}
		}
		k := &walker{w: w, realRoot: realRoot, realRootPrefixed: realRoot + string(filepath.Separator),
			realBase: realBase, base: base, pat: pat, pats: s.Patterns(), seen: seen, probs: &probs}
		if seen == nil && len(s.Patterns()) > 1 {
			k.matched = &matched // for the next pattern's seen
		}
		k.visit = func(f File, relPath, prob string) error {
			if prob != "" {
				probs = append(probs, Problem{Path: relPath, Message: prob})
				return nil
			}
			if len(files) == MaxFiles {
				probs = append(probs, Problem{Path: base, Message: fmt.Sprintf("holds more than %d files; the rest are not read", MaxFiles)})
				return errFull
			}
			files = append(files, f)
			return nil
		}
		walkErr := k.walk()
		if errors.Is(walkErr, errFull) {
			break
		}
		if walkErr != nil && !errors.Is(walkErr, fs.ErrNotExist) {
			probs = append(probs, Problem{Path: base, Message: fmt.Sprintf("cannot be read: %v", walkErr), Unread: true})
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, probs
}

// judge decides whether the walked entry p is a file a source may read.
func judge(realRoot, p, relPath string, link bool) (File, string) {
	real := p
	if link {
		target, err := filepath.EvalSymlinks(p)
		if err != nil {
			return File{}, "is a link that leads nowhere; not read"
		}
		if !within(realRoot, target) {
			return File{}, "is a link that leads out of the project; not read"
		}
		real = target
	}
	fi, err := os.Stat(real)
	if err != nil {
		return File{}, fmt.Sprintf("cannot be read: %v", err)
	}
	if !fi.Mode().IsRegular() {
		return File{}, "is not a regular file; not read"
	}
	return File{Path: relPath, Size: fi.Size(), ModTime: fi.ModTime(), FP: FingerprintOf(fi), real: real}, ""
}

// StatFile returns the File at the absolute path real, to be shown as
// path, for a Locator that found the file itself. It must be a regular
// file (a link is followed).
func StatFile(path, real string) (File, error) {
	fi, err := os.Stat(real)
	if err != nil {
		return File{}, err
	}
	if !fi.Mode().IsRegular() {
		return File{}, fmt.Errorf("%s: %w", path, ErrNotRegular)
	}
	return File{Path: path, Size: fi.Size(), ModTime: fi.ModTime(), FP: FingerprintOf(fi), real: real}, nil
}

// Real is the absolute path of the file's bytes (a link's target).
func (f File) Real() string { return f.real }

// Open opens f for reading, checking again that it is a regular file (it may
// have been replaced since Find).
func Open(f File) (*os.File, error) {
	if f.real == "" {
		return nil, fmt.Errorf("open %s: %w", f.Path, fs.ErrInvalid)
	}
	fh, err := os.OpenFile(f.real, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", f.Path, err)
	}
	fi, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, fmt.Errorf("open %s: %w", f.Path, err)
	}
	if !fi.Mode().IsRegular() {
		fh.Close()
		return nil, fmt.Errorf("open %s: %w", f.Path, ErrNotRegular)
	}
	return fh, nil
}

// ReadFile reads f whole, refusing more than max bytes (MaxFileBytes when
// max ≤ 0). The limit is checked on the bytes read, so a file growing
// between Find and ReadFile cannot slip past it.
func ReadFile(f File, max int64) ([]byte, error) {
	if max <= 0 {
		max = MaxFileBytes
	}
	fh, err := Open(f)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", f.Path, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("read %s: %w (%d bytes)", f.Path, ErrTooLarge, max)
	}
	return data, nil
}

// staticBase is the directory part of pat before its first meta character:
// "docs/solutions" for "docs/solutions/**/*.md", "." for "*.md".
func staticBase(pat string) string {
	dir := pat
	if i := strings.IndexAny(pat, "*?[{\\"); i >= 0 {
		dir = pat[:i]
	}
	if i := strings.LastIndexByte(dir, '/'); i >= 0 {
		return path.Clean(dir[:i])
	}
	return "."
}

// within reports whether p is root or below it; both are real paths.
func within(root, p string) bool {
	r, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	return r == "." || (r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)))
}
