package inject

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

	"github.com/intermem/intermem/pkg/atomicfile"
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

// ReadHead is readHead (the first KiB of a small git file), recorded by
// content.
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

// RenderCacheName is the render cache file inside .intermem.
const RenderCacheName = "context.render"

// renderKey identifies everything besides the filesystem and the session
// a rendering depends on: the binary, the project, the session's cwd,
// whether it gets the bootstrap, the settings.
func renderKey(e Env) string {
	return strconv.Quote(fmt.Sprintf("%s|%s|%s|%s|%s|%s|%t|%q|%d|%d", exeID(), e.Root, e.MemoryDir, e.Cwd, e.ConfigDir, e.Home,
		e.Resume, e.Identity, e.Budget, e.Threshold))
}

// loadRender returns the cached rendering when it is still exactly what
// a fresh one would be for the start of session.
func loadRender(path, key, session string, now time.Time) (string, bool) {
	if exeID() == "" {
		return "", false
	}
	b, err := os.ReadFile(path)
	if err != nil || len(b) > 4<<20 {
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
	if line() != "key "+key {
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

// saveRender writes the render cache atomically (atomicfile, in the state
// directory that holds it; not fsynced: a cache lost in a crash costs
// nothing).
func saveRender(path, key string, until time.Time, rule SessionRule, d *Deps, text string) error {
	var b strings.Builder
	b.WriteString(renderMagic)
	b.WriteString("key " + key + "\n")
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
	if err := atomicfile.WriteState(filepath.Dir(path), path, []byte(b.String()), atomicfile.Options{NoSync: true}); err != nil {
		return fmt.Errorf("render cache: %w", err)
	}
	return nil
}

// recencyBounds are the ages at which a cited file's relevance changes
// tier (see recencyPoints and ago).
var recencyBounds = []time.Duration{time.Hour, 24 * time.Hour, 7 * 24 * time.Hour, 30 * 24 * time.Hour}

// renderValidUntil is the earliest time any cited file crosses a recency
// tier, or a sweep falls due, so a cached rendering is never served past a
// change in what it says.
func renderValidUntil(in *Inputs, now time.Time) time.Time {
	var until time.Time
	// The sweep suggestion appears once the last sweep is SweepEvery old.
	if due, since := in.SweepDue(); !due && !since.IsZero() {
		until = since.Add(SweepEvery).Add(time.Nanosecond)
	}
	tier := func(c Cited) {
		if !c.Exists {
			return
		}
		age := now.Sub(c.ModTime)
		for _, b := range recencyBounds {
			if age <= b {
				t := c.ModTime.Add(b).Add(time.Nanosecond)
				if until.IsZero() || t.Before(until) {
					until = t
				}
				break
			}
		}
	}
	for i := range in.Candidates {
		for _, c := range in.Candidates[i].Cites {
			tier(c)
		}
	}
	for i := range in.Related {
		for _, c := range in.Related[i].Cites {
			tier(c)
		}
	}
	for i := range in.Corrections {
		tier(in.Corrections[i].State)
	}
	return until
}
