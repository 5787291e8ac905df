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
package rendercache

import (
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/intermem/intermem/pkg/statefile"
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
	b = strconv.AppendInt(b, st.Mtim.Sec*1e9+st.Mtim.Nsec, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, st.Ctim.Sec*1e9+st.Ctim.Nsec, 10)
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

// ReadDir is os.ReadDir, recorded as the names and types it listed.
func (d *Deps) ReadDir(path string) ([]fs.DirEntry, error) {
	ents, err := os.ReadDir(path)
	d.add('d', path, listingVal(ents, err))
	return ents, err
}

// Names records the names and types in directory path, streamed in
// chunks (the order the directory gives them in does not matter), for a
// listing too large to hold: kind 'D'.
func (d *Deps) Names(path string) {
	d.add('D', path, namesVal(path))
}

// namesVal is the count of the entries of a directory and the sum of the
// FNV-1a hashes of their names and types: the same for the same names in
// any order.
func namesVal(path string) string {
	f, err := os.Open(path)
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

// ReadHead reads the first KiB of a small git file, recorded by content.
func (d *Deps) ReadHead(path string) ([]byte, error) {
	b, err := readHead(path)
	if err != nil {
		d.add('h', path, "!")
	} else {
		d.add('h', path, string(b))
	}
	return b, err
}

// Hold reports whether every recorded fact is still true. The facts are
// re-checked in parallel: each is a system call, and on a small machine
// their latency, not CPU, is what a session start waits for.
func (d *Deps) Hold() bool {
	const chunk = 48
	if len(d.list) <= chunk {
		return holdAll(d.list)
	}
	var failed atomic.Bool
	var wg sync.WaitGroup
	for i := 0; i < len(d.list); i += chunk {
		part := d.list[i:min(i+chunk, len(d.list))]
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !failed.Load() && !holdAll(part) {
				failed.Store(true)
			}
		}()
	}
	wg.Wait()
	return !failed.Load()
}

func holdAll(list []dep) bool {
	for _, x := range list {
		if !x.holds() {
			return false
		}
	}
	return true
}

func (x dep) holds() bool {
	var now string
	switch x.Kind {
	case 's', 'l':
		var st syscall.Stat_t
		var err error
		if x.Kind == 's' {
			err = syscall.Stat(x.Path, &st)
		} else {
			err = syscall.Lstat(x.Path, &st)
		}
		if err != nil {
			return x.Val == "!"
		}
		var buf [64]byte
		return string(statVal(buf[:0], &st)) == x.Val
	case 'd':
		now = listingVal(os.ReadDir(x.Path))
	case 'D':
		now = namesVal(x.Path)
	case 'r':
		if real, err := filepath.EvalSymlinks(x.Path); err != nil {
			now = "!"
		} else {
			now = real
		}
	case 'h':
		if b, err := readHead(x.Path); err != nil {
			now = "!"
		} else {
			now = string(b)
		}
	default:
		return false
	}
	return now == x.Val
}

// The render cache file is plain text with NUL-delimited dependency
// records, so that reading it needs neither reflection nor unquoting (a
// session start has a few milliseconds in all; no path or recorded value
// contains a NUL, and a file that does is simply not trusted):
//
//	intermem-render 4
//	key <key>
//	until <unix nanoseconds, 0 for none>
//	sessions <quoted SessionRule.Skipped> <quoted SessionRule.Chosen>
//	deps <n>
//	<kind><path>NUL<value>NUL            (n records, no separators between)
//	text <byte length>
//	<the rendering>
const renderMagic = "intermem-render 4\n"

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

// String is the key as the cache file records it.
func (k Key) String() string {
	return strconv.Quote(fmt.Sprintf("%s|%s|%s|%s|%s|%s|%t|%q|%d|%d", k.Exe, k.Root, k.MemoryDir, k.Cwd, k.ConfigDir, k.Home,
		k.Resume, k.Identity, k.Budget, k.Threshold))
}

// ExeID identifies the executable at path (resolved, as os.Executable
// gives it): its path, size and modification time; "" when it cannot be
// known (then no cache is trusted).
func ExeID(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%s %d %d", path, fi.Size(), fi.ModTime().UnixNano())
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

// MaxBytes bounds the cache file.
const MaxBytes = 4 << 20

// Load returns the cached rendering when it is still exactly what a fresh
// one would be for the start of session with key k. The file is hostile
// input like everything in the state directory: opened without following
// a link and without blocking (a FIFO put there must not hang a session
// start), read only when it is a regular file of at most MaxBytes, and
// decoded strictly.
func Load(path string, k Key, session string, now time.Time) (string, bool) {
	if k.Exe == "" {
		return "", false
	}
	b, ok := readRegular(path, MaxBytes)
	if !ok {
		return "", false
	}
	s, ok := strings.CutPrefix(string(b), renderMagic)
	if !ok {
		return "", false
	}
	line := func() string {
		l, rest, _ := strings.Cut(s, "\n")
		s = rest
		return l
	}
	if line() != "key "+k.String() {
		return "", false
	}
	until, err := strconv.ParseInt(strings.TrimPrefix(line(), "until "), 10, 64)
	if err != nil || (until != 0 && now.UnixNano() >= until) {
		return "", false
	}
	var rule SessionRule
	if _, err := fmt.Sscanf(line(), "sessions %q %q", &rule.Skipped, &rule.Chosen); err != nil || !rule.Holds(session) {
		return "", false
	}
	n, err := strconv.Atoi(strings.TrimPrefix(line(), "deps "))
	if err != nil || n < 0 || n > 100000 {
		return "", false
	}
	d := &Deps{list: make([]dep, 0, n)}
	for i := 0; i < n; i++ {
		if len(s) < 1 {
			return "", false
		}
		kind := s[0]
		p, rest, ok1 := strings.Cut(s[1:], "\x00")
		v, rest, ok2 := strings.Cut(rest, "\x00")
		if !ok1 || !ok2 {
			return "", false
		}
		d.list = append(d.list, dep{Kind: kind, Path: p, Val: v})
		s = rest
	}
	if !strings.HasPrefix(s, "\n") {
		return "", false
	}
	s = s[1:]
	size, err := strconv.Atoi(strings.TrimPrefix(line(), "text "))
	if err != nil || size != len(s) {
		return "", false
	}
	if !d.Hold() {
		return "", false
	}
	return s, true
}

// readRegular reads path when it is a regular file of at most max bytes,
// never through a link, never waiting on a FIFO (statefile.Read: one read
// into a buffer sized by its fstat, on the descriptor, so that a session
// start answered from the cache never starts the network poller).
func readRegular(path string, max int64) ([]byte, bool) {
	b, err := statefile.Read(path, max)
	return b, err == nil
}

// Encode is the cache file for text rendered under key k, valid until
// until (zero: no time limit) for the sessions rule holds for, while the
// facts d recorded hold; nil when it must not be written (a recorded path
// holds a secret, or a NUL).
func Encode(k Key, until time.Time, rule SessionRule, d *Deps, text string) []byte {
	var b strings.Builder
	b.WriteString(renderMagic)
	b.WriteString("key " + k.String() + "\n")
	u := int64(0)
	if !until.IsZero() {
		u = until.UnixNano()
	}
	fmt.Fprintf(&b, "until %d\nsessions %q %q\ndeps %d\n", u, rule.Skipped, rule.Chosen, len(d.list))
	if d.secret {
		return nil // no cache rather than a secret in it
	}
	for _, x := range d.list {
		if strings.ContainsRune(x.Path, 0) || strings.ContainsRune(x.Val, 0) {
			return nil // cannot be recorded: no cache rather than a wrong one
		}
		b.WriteByte(x.Kind)
		b.WriteString(x.Path)
		b.WriteByte(0)
		b.WriteString(x.Val)
		b.WriteByte(0)
	}
	fmt.Fprintf(&b, "\ntext %d\n%s", len(text), text)
	return []byte(b.String())
}

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

// MarkSecret records that a recorded path holds a secret (a memory file
// named after one): the cache, which lists every path, is then not
// written.
func (d *Deps) MarkSecret() {
	if d != nil {
		d.secret = true
	}
}

// readHead reads the first 1 KiB of a small git file.
func readHead(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, 1024)
	n, err := f.Read(buf)
	if n == 0 && err != nil {
		return nil, err
	}
	return buf[:n], nil
}
