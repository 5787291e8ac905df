// Package rendercache is SessionStart's render cache: the rendering a
// session start printed, kept with every filesystem fact it relied on
// (Deps) and everything else it depended on (Key), so that a later start
// that finds every fact still true serves it without opening the store or
// reading a memory file, byte for byte what a fresh rendering would be.
//
// It is the one definition of the cache's validity, used by the full hook
// (package inject, which records the facts and writes the file) and by
// the hook front (package hookfront, which serves a hit without starting
// the full hook), and so links nothing heavy: no store, no JSON library.
//
// What a hit costs is what a session start answered by the front costs,
// so Load checks each fact as it decodes it (load.go): the file streamed
// through one buffer, nothing built per fact, the first fact that no
// longer holds ending the check. The stats and lstats, most of the facts
// (every memory file kept, every cited file), are grouped in the file by
// directory, each group checked with fstatat on the directory opened once
// (O_PATH), so the kernel does not walk the whole path again for each.
// A fact keeps its meaning exactly: a stat follows a link and an lstat
// does not, and a path's directory is resolved, links and all, as the
// absolute path's own resolution would resolve it.
//
// The file sits in the repository's .intermem/ and is hostile input: read
// without following a link and without blocking, only when a regular file
// of at most MaxBytes; every record's path is absolute and clean (a
// group's member is one name), every field bounded; anything else is a
// miss, never an error nor a wait (a listing or a read of a path the file
// names opens it without blocking, as a directory or a regular file).
package rendercache

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/intermem/intermem/pkg/memlist"
)

// Deps records every filesystem fact Gather relied on — each stat, lstat,
// directory listing, symlink resolution and git HEAD read — so that a
// later run can tell, by repeating just those cheap calls, whether any
// input changed. A nil *Deps records nothing and simply performs the calls.
//
// This is what makes the render cache exact rather than a guess: the cache
// is valid only if every recorded fact still holds (and the clock has not
// crossed a recency boundary, see renderValidUntil), so a cached rendering
// is byte-for-byte what a fresh one would be.
type Deps struct {
	list []dep
	seen map[string]bool
	// secret is set when a recorded path holds a secret (a memory file
	// named after one): the render cache, which lists every path, is then
	// not written.
	secret bool
}

// dep is one recorded fact. Kind: 's' stat, 'l' lstat, 'd' directory
// listing, 'D' directory names (any order), 'r' symlink resolution, 'h' small file content.
type dep struct {
	Kind byte
	Path string
	Val  string
}

// NewDeps returns an empty recorder.
func NewDeps() *Deps { return &Deps{seen: map[string]bool{}} }

func (d *Deps) add(kind byte, path, val string) {
	if d == nil {
		return
	}
	key := string(kind) + path
	if d.seen[key] {
		return
	}
	d.seen[key] = true
	d.list = append(d.list, dep{kind, path, val})
}

// infoVal is a stat result as recorded: size, modification time in
// nanoseconds and the raw mode, or "!" for an error. It reads the raw
// syscall.Stat_t so that recording and re-checking agree exactly and
// re-checking allocates nothing.
func infoVal(fi fs.FileInfo, err error) string {
	if err != nil {
		return "!"
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		var buf [64]byte
		return string(statVal(buf[:0], st))
	}
	return fmt.Sprintf("%d %d %o", fi.Size(), fi.ModTime().UnixNano(), uint32(fi.Mode()))
}

// statVal is what a stat says of a file's identity: size, modification
// and change times, inode and mode. The change time cannot be set back, so
// a directory whose names changed differs even when its modification time
// was restored.
func statVal(b []byte, st *syscall.Stat_t) []byte {
	b = strconv.AppendInt(b, st.Size, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, memlist.Mtime(st), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, memlist.Ctime(st), 10)
	b = append(b, ' ')
	b = strconv.AppendUint(b, st.Ino, 10)
	b = append(b, ' ')
	return strconv.AppendUint(b, uint64(st.Mode), 8)
}

// Stat is os.Stat, recorded.
func (d *Deps) Stat(path string) (fs.FileInfo, error) {
	fi, err := os.Stat(path)
	d.add('s', path, infoVal(fi, err))
	return fi, err
}

// Lstat is os.Lstat, recorded.
func (d *Deps) Lstat(path string) (fs.FileInfo, error) {
	fi, err := os.Lstat(path)
	d.add('l', path, infoVal(fi, err))
	return fi, err
}

// Info records what a directory listing said of one of its entries (the
// lstat the listing carries).
func (d *Deps) Info(path string, de fs.DirEntry) (fs.FileInfo, error) {
	fi, err := de.Info()
	d.add('l', path, infoVal(fi, err))
	return fi, err
}

// ReadDir is os.ReadDir, recorded as the names and types in the
// directory (listing); what is not a directory (a FIFO put in its place)
// is an error at once, never opened for reading (readDir). The listing is
// recorded before the directory is read for the caller: a change between
// the two leaves the recorded fact false, so the cache misses, where the
// other order could record the change and serve a rendering made before
// it.
func (d *Deps) ReadDir(path string) ([]fs.DirEntry, error) {
	if d != nil {
		d.add('d', path, listing(path))
	}
	return readDir(path)
}

// Names records the names and types in directory path, streamed in
// chunks (the order the directory gives them in does not matter), for a
// listing too large to hold: kind 'D'.
func (d *Deps) Names(path string) {
	d.add('D', path, namesVal(path))
}

// openDir opens path as a directory to list it, never waiting:
// O_DIRECTORY refuses anything else (os.Open of a FIFO waits for a
// writer), and a link to a directory is followed, as os.ReadDir follows it.
func openDir(path string) (*os.File, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// readDir is os.ReadDir (the entries sorted by name) opened by openDir.
func readDir(path string) ([]fs.DirEntry, error) {
	f, err := openDir(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ents, err := f.ReadDir(-1)
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return ents, err
}

// namesVal is the count of the entries of a directory and the sum of the
// FNV-1a hashes of their names and types: the same for the same names in
// any order.
func namesVal(path string) string {
	f, err := openDir(path)
	if err != nil {
		return "!"
	}
	defer f.Close()
	var n int
	var sum uint64
	for {
		ents, err := f.ReadDir(512)
		for _, e := range ents {
			h := fnv.New64a()
			fmt.Fprintf(h, "%s\x00%d", e.Name(), uint32(e.Type()))
			sum += h.Sum64()
			n++
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return "!"
		}
	}
	return fmt.Sprintf("%d %x", n, sum)
}

// listingVal is what a listing says: the count of its entries and the
// FNV-1a hash of their names and types (as fs.FileMode), in name order.
func listingVal(ents []fs.DirEntry, err error) string {
	if err != nil {
		return "!"
	}
	h := fnv.New64a()
	for _, e := range ents {
		fmt.Fprintf(h, "%s\x00%d\x00", e.Name(), uint32(e.Type()))
	}
	return fmt.Sprintf("%d %x", len(ents), h.Sum64())
}

// EvalSymlinks is filepath.EvalSymlinks, recorded.
func (d *Deps) EvalSymlinks(path string) (string, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		d.add('r', path, "!")
	} else {
		d.add('r', path, real)
	}
	return real, err
}

// ReadHead reads the first KiB of a small git file, recorded by content
// (readHead: a regular file, opened without blocking).
func (d *Deps) ReadHead(path string) ([]byte, error) {
	b, err := readHead(path, make([]byte, headBytes))
	if err != nil {
		d.add('h', path, "!")
	} else {
		d.add('h', path, string(b))
	}
	return b, err
}

// headBytes is how much of a git file ReadHead reads.
const headBytes = 1024

// errNotRegular is readHead's error for what is not a regular file.
var errNotRegular = errors.New("not a regular file")

// readHead reads the start of a small git file into buf: one read of a
// regular file, opened without blocking (a FIFO put in the place of
// .git/HEAD must not hold a session start), the file's type checked on
// the descriptor.
func readHead(path string, buf []byte) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, err
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, errNotRegular
	}
	n, err := syscall.Read(fd, buf)
	if n <= 0 {
		if err == nil {
			err = io.EOF
		}
		return nil, err
	}
	return buf[:n], nil
}

// MarkSecret records that a recorded path holds a secret (a memory file
// named after one): the cache, which lists every path, is then not
// written.
func (d *Deps) MarkSecret() {
	if d != nil {
		d.secret = true
	}
}

// Name is the render cache file inside .intermem.
const Name = "context.render"

// Key identifies everything besides the filesystem and the session a
// rendering depends on: the binary that renders (intermem-inject, by
// ExeID), the project, the session's cwd, whether it gets the bootstrap,
// the settings.
type Key struct {
	Exe                                   string
	Root, MemoryDir, Cwd, ConfigDir, Home string
	Resume                                bool
	Identity                              string
	Budget, Threshold                     int
}

// String is the key as the cache file records it (its line, without
// "key ").
func (k Key) String() string { return string(k.append(nil)) }

// append appends the key's line: each string quoted (no field can end
// another early, whatever it holds), the rest as numbers.
func (k Key) append(b []byte) []byte {
	for _, s := range [...]string{k.Exe, k.Root, k.MemoryDir, k.Cwd, k.ConfigDir, k.Home, k.Identity} {
		b = strconv.AppendQuote(b, s)
		b = append(b, ' ')
	}
	b = strconv.AppendBool(b, k.Resume)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(k.Budget), 10)
	b = append(b, ' ')
	return strconv.AppendInt(b, int64(k.Threshold), 10)
}

// ExeID identifies the executable at path (resolved, as os.Executable
// gives it): its path, size and modification time; "" when it cannot be
// known (then no cache is trusted).
func ExeID(path string) string {
	var st syscall.Stat_t
	if syscall.Stat(path, &st) != nil {
		return ""
	}
	return exeID(path, &st)
}

func exeID(path string, st *syscall.Stat_t) string {
	var num [48]byte
	n := strconv.AppendInt(num[:0], st.Size, 10)
	n = append(n, ' ')
	n = strconv.AppendInt(n, memlist.Mtime(st), 10)
	return path + " " + string(n)
}

// RendererID is ExeID(filepath.EvalSymlinks(path)) for a path in a
// directory that is already resolved (os.Executable's, which the kernel
// gives with no link in it): when path itself is not a link, one lstat
// says both that it resolves to itself and what ExeID needs of it; a link
// is resolved as before.
func RendererID(path string) string {
	var st syscall.Stat_t
	if syscall.Lstat(path, &st) != nil {
		return ""
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFLNK {
		return exeID(path, &st)
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return ""
	}
	return ExeID(real)
}

// SessionCwd is the directory a session start works from: the payload's
// cwd when it is absolute, else the project root.
func SessionCwd(cwd, root string) string {
	if cwd == "" || !filepath.IsAbs(cwd) {
		return root
	}
	return cwd
}

// GetsResume reports whether a session start of this source (the
// payload's) gets the resume note: a resumed or compacted session
// continues its own history.
func GetsResume(source string) bool { return source != "resume" && source != "compact" }

// SessionRule is how the resume note depends on the session starting: the
// latest checkpoint is chosen among those of other sessions, so the same
// store gives another session the same note exactly when none of the
// checkpoints passed over (Skipped: all of one session, "" when none) is
// someone else's and the one chosen (Chosen) is not its own. The render
// cache keeps the rule with the rendering.
type SessionRule struct {
	Skipped, Chosen string
}

// Holds reports whether a start of session gets the same resume note.
func (r SessionRule) Holds(session string) bool {
	return (r.Skipped == "" || r.Skipped == session) && (r.Chosen == "" || r.Chosen != session)
}
