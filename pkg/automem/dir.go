package automem

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/intermem/intermem/pkg/memlist"
	"github.com/intermem/intermem/pkg/redact"
)

// MaxFileBytes is the largest memory file Scan reads (memlist's: the
// listing skips a larger file by its size).
const MaxFileBytes = memlist.MaxFileBytes

// Dir is a scanned auto-memory directory.
type Dir struct {
	Path string
	// Files are the top-level *.md regular files (symlinks to regular files
	// followed), sorted by name, MEMORY.md included, and the files in
	// sub-folders that pointers name ("notes/debugging.md"). Names starting
	// with "." are skipped, as a shell glob would.
	Files []*File
	Index *File    // MEMORY.md, nil if absent
	Load  LoadInfo // of MEMORY.md (zero if absent)
	// Warnings report files that were skipped: unreadable, not regular,
	// larger than MaxFileBytes. Parse warnings stay in each File.
	Warnings []string

	// Cached reports that some files came from a FileCache and have no
	// Content: such a Dir is for reading entries, never for editing files.
	Cached bool

	// Touched are the paths, relative to Path and slash-separated, whose
	// state the scan depended on beyond the files it read: every top-level
	// name it considered and every pointer target it looked for, found or
	// not. With Path and their parent directories, they are what a caller
	// stats to tell that a new scan would give the same Dir.
	Touched []string

	skipped map[string]bool // names of files that exist but were not read
	cache   FileCache
}

// Scan reads and parses every memory file in dir. It fails only when dir
// itself cannot be read; a missing directory gives an error wrapping
// fs.ErrNotExist, which callers treat as an empty memory. One bad file is
// a warning, never an error.
func Scan(dir string) (*Dir, error) { return ScanCached(dir, nil) }

// ScanCached is Scan reusing what c holds of files parsed before (see
// FileCache); a nil c is Scan. The files it takes from c have no Content:
// a Dir scanned with a cache is for reading entries, never for editing
// files (Dir.Cached says so).
func ScanCached(dir string, c FileCache) (*Dir, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("automem: scan memory dir: %w", err)
	}
	d := &Dir{Path: dir, cache: c}
	for _, de := range des {
		name := de.Name()
		if !strings.HasSuffix(name, ".md") || strings.HasPrefix(name, ".") {
			continue
		}
		d.Touched = append(d.Touched, name)
		f, err := d.parseFile(name, filepath.Join(dir, name), de)
		if err != nil {
			d.Warnings = append(d.Warnings, fmt.Sprintf("%s: %v", redact.Name(name), err))
			d.skip(name)
			continue
		}
		d.Files = append(d.Files, f)
		if name == IndexName {
			d.Index = f
		}
	}
	d.resolve()
	d.markPointedSecrets()
	if d.Index != nil {
		d.Load = d.Index.load
	}
	return d, nil
}

// parseFile reads and parses one memory file, or takes it from the cache
// when the cache holds it at the file's current fingerprint.
func (d *Dir) parseFile(name, path string, de fs.DirEntry) (*File, error) {
	if d.cache == nil {
		content, err := readMemoryFile(path, de)
		if err != nil {
			return nil, err
		}
		return parseMemory(name, content), nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("stat: %w", err)
	}
	if fi.Mode().IsRegular() {
		if f, ok := d.cache.Load(name, fi); ok {
			d.Cached = true
			return f, nil
		}
	}
	content, err := readMemoryFile(path, de)
	if err != nil {
		return nil, err
	}
	f := parseMemory(name, content)
	d.cache.Save(name, fi, f)
	return f, nil
}

// parseMemory is Parse, measuring the index's load as well.
func parseMemory(name string, content []byte) *File {
	f := Parse(name, content)
	if name == IndexName {
		f.load = Load(content)
	}
	return f
}

// markPointedSecrets marks a one-memory file Secret when an index line that
// points to it holds a secret: pruning the memory removes those lines.
func (d *Dir) markPointedSecrets() {
	secret := map[string]bool{}
	for _, f := range d.Files {
		for _, e := range f.Entries {
			if e.Kind == Pointer && e.Secret {
				secret[e.RawLink()] = true
			}
		}
	}
	if len(secret) == 0 {
		return
	}
	for _, f := range d.Files {
		for i := range f.Entries {
			if e := &f.Entries[i]; e.Kind == Memory && secret[f.Name] {
				e.Secret = true
			}
		}
	}
}

// maxLinked bounds how many files in sub-folders pointers may pull in.
const maxLinked = 256

// resolve settles what every pointer names, now that the directory is
// known:
//
//   - a pointer into a sub-folder ("`notes/debugging.md` — …") pulls that
//     file in as a memory file of its own (and, through its own pointers,
//     the files it names, up to maxLinked files), so the memory it points
//     to is an entry like any other;
//   - a [[wikilink]] or a link whose case differs names the file whose name
//     or frontmatter name matches;
//   - a pointer whose file does not exist is no pointer: its text is the
//     only copy of that memory (Claude Code wrote the hook and never the
//     file, or the file was lost), so it becomes a Fact — unless its text
//     says nothing beyond the file's name ("See [x.md](x.md)"), which leaves
//     nothing to keep. Dangling lists those.
//
// A pointer's Link is made relative to the memory directory (a pointer in
// notes/a.md to "b.md" names "notes/b.md"). Files are found by the link as
// written (RawLink); Link stays redacted.
func (d *Dir) resolve() {
	have := make(map[string]bool, len(d.Files))
	for _, f := range d.Files {
		have[f.Name] = true
	}
	for k := 0; k < len(d.Files) && len(d.Files) < len(have)+maxLinked; k++ {
		f := d.Files[k]
		for i := range f.Entries {
			e := &f.Entries[i]
			if e.Kind != Pointer {
				continue
			}
			link := e.RawLink()
			if dir := path.Dir(f.Name); dir != "." {
				link = path.Join(dir, link)
				e.setLink(link)
			}
			if have[link] || d.skipped[link] || !strings.Contains(link, "/") {
				continue
			}
			p := filepath.Join(d.Path, filepath.FromSlash(link))
			d.Touched = append(d.Touched, link)
			fi, err := os.Lstat(p)
			if err != nil {
				continue
			}
			have[link] = true
			lf, err := d.parseFile(link, p, fs.FileInfoToDirEntry(fi))
			if err != nil {
				d.Warnings = append(d.Warnings, fmt.Sprintf("%s: %v", redact.Name(link), err))
				d.skip(link)
				continue
			}
			d.Files = append(d.Files, lf)
		}
	}
	sort.SliceStable(d.Files, func(a, b int) bool { return d.Files[a].Name < d.Files[b].Name })

	byName := make(map[string]string) // lower-cased name, stem or title → file
	for _, f := range d.Files {
		byName[strings.ToLower(f.Name)] = f.Name
	}
	for _, f := range d.Files {
		if fm := f.Frontmatter; fm != nil && fm.Name != "" && f.Name != IndexName {
			if _, dup := byName[strings.ToLower(fm.Name)+".md"]; !dup {
				byName[strings.ToLower(fm.Name)+".md"] = f.Name
			}
		}
	}
	for _, f := range d.Files {
		for i := range f.Entries {
			e := &f.Entries[i]
			if e.Kind != Pointer || have[e.RawLink()] || d.skipped[e.RawLink()] {
				continue
			}
			if name, ok := byName[strings.ToLower(e.RawLink())]; ok {
				e.setLink(name)
				continue
			}
			if HasHook(e.Text, e.Link) {
				e.Kind = Fact
			}
		}
	}
}

func (d *Dir) skip(name string) {
	if d.skipped == nil {
		d.skipped = make(map[string]bool)
	}
	d.skipped[name] = true
}

// errSkipped explains why a directory entry is not read.
type errSkipped string

func (e errSkipped) Error() string { return string(e) }

// readMemoryFile reads one regular file (following a symlink), refusing
// anything that is not a regular file — a FIFO named x.md would block the
// hook forever — and anything over MaxFileBytes, checked on the bytes
// actually read so a file growing under us cannot slip past.
func readMemoryFile(path string, de fs.DirEntry) ([]byte, error) {
	if !de.Type().IsRegular() {
		if de.Type()&fs.ModeSymlink == 0 {
			return nil, errSkipped("not a regular file, skipped")
		}
		fi, err := os.Stat(path)
		if err != nil {
			return nil, fmt.Errorf("follow symlink: %w", err)
		}
		if !fi.Mode().IsRegular() {
			return nil, errSkipped("symlink to a non-regular file, skipped")
		}
	}
	// Not blocking: a FIFO put in place of the file since it was listed
	// is refused by the fstat below, not waited on.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := 0
	if fi, err := f.Stat(); err == nil {
		if !fi.Mode().IsRegular() {
			return nil, errSkipped("not a regular file, skipped")
		}
		if fi.Size() > MaxFileBytes {
			return nil, errSkipped(fmt.Sprintf("%d bytes is over the %d-byte limit, skipped", fi.Size(), MaxFileBytes))
		}
		size = int(fi.Size())
	}
	buf := make([]byte, 0, size+1)
	buf, err = readAllLimited(f, buf, MaxFileBytes+1)
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	if len(buf) > MaxFileBytes {
		return nil, errSkipped(fmt.Sprintf("over the %d-byte limit, skipped", MaxFileBytes))
	}
	return buf, nil
}

// readAllLimited appends at most limit bytes of r to buf.
func readAllLimited(r io.Reader, buf []byte, limit int) ([]byte, error) {
	lr := io.LimitReader(r, int64(limit))
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// Entries returns the entries of all files, in file order.
func (d *Dir) Entries() []Entry {
	n := 0
	for _, f := range d.Files {
		n += len(f.Entries)
	}
	out := make([]Entry, 0, n)
	for _, f := range d.Files {
		out = append(out, f.Entries...)
	}
	return out
}

// BeyondCap returns the entries of MEMORY.md that Claude Code does not load
// because they start past the last loaded line: the knowledge the cap is
// silently dropping.
func (d *Dir) BeyondCap() []Entry {
	if d.Index == nil {
		return nil
	}
	var out []Entry
	for _, e := range d.Index.Entries {
		if e.StartLine > d.Load.LoadedLines {
			out = append(out, e)
		}
	}
	return out
}

// File returns the scanned file with the given name, or nil.
func (d *Dir) File(name string) *File {
	for _, f := range d.Files {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// Dangling returns the pointers whose target is not a file of the
// directory (read or skipped) and whose text says nothing beyond the file's
// name: index lines that promise a memory nobody can read. (A dangling
// pointer with a hook is a Fact: see resolve.)
func (d *Dir) Dangling() []Entry {
	var out []Entry
	for _, f := range d.Files {
		for _, e := range f.Entries {
			if e.Kind == Pointer && d.File(e.RawLink()) == nil && !d.skipped[e.RawLink()] {
				out = append(out, e)
			}
		}
	}
	return out
}

// PointersTo returns the pointer entries, in any file, that link to the
// named file: what must be pruned with it when a topic file is promoted.
func (d *Dir) PointersTo(name string) []Entry {
	var out []Entry
	for _, f := range d.Files {
		for _, e := range f.Entries {
			if e.Kind == Pointer && e.Link == name {
				out = append(out, e)
			}
		}
	}
	return out
}

// ParseMeasured is Parse, measuring MEMORY.md's load (LoadInfo) as Scan
// does: what a caller storing a file's parse (EncodeFile) must use.
func ParseMeasured(name string, content []byte) *File { return parseMemory(name, content) }

// Loaded is the load of MEMORY.md as measured when it was read (by Scan,
// ParseMeasured or the stored form); zero for any other file.
func (f *File) Loaded() LoadInfo { return f.load }
