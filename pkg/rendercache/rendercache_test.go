package rendercache_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/intermem/intermem/pkg/rendercache"
)

var (
	key  = rendercache.Key{Exe: "/bin/intermem-inject 1 2", Root: "/p", Budget: 1200, Threshold: 3, Resume: true}
	now  = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	text = "# intermem: context\n- a line\n"
)

// tree is a project-like directory: files in a few directories, a link,
// a listed directory, a git HEAD.
type tree struct {
	t    *testing.T
	root string
}

func newTree(t *testing.T) *tree {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tr := &tree{t, root}
	tr.write("mem/MEMORY.md", "- index\n")
	tr.write("mem/topic.md", "- a fact\n")
	for i := range 8 {
		tr.write(fmt.Sprintf("mem/m%d.md", i), "- another fact\n")
	}
	tr.write("src/a.go", "package a\n")
	tr.write("docs/intermem/x.md", "# x\n")
	tr.write(".git/HEAD", "ref: refs/heads/main\n")
	if err := os.Symlink(tr.path("src/a.go"), tr.path("src/link.go")); err != nil {
		t.Fatal(err)
	}
	return tr
}

func (tr *tree) path(rel string) string { return filepath.Join(tr.root, filepath.FromSlash(rel)) }

func (tr *tree) write(rel, s string) {
	tr.t.Helper()
	p := tr.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tr.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		tr.t.Fatal(err)
	}
}

// record records one fact of every kind, as Gather would, and returns the
// cache file's bytes.
func (tr *tree) record() []byte {
	tr.t.Helper()
	d := rendercache.NewDeps()
	d.Stat(tr.path("mem"))
	d.Lstat(tr.path("mem/MEMORY.md"))
	d.Lstat(tr.path("mem/topic.md"))
	d.Lstat(tr.path("mem/gone.md")) // recorded missing
	for i := range 8 {
		d.Lstat(tr.path(fmt.Sprintf("mem/m%d.md", i))) // enough for a group
	}
	d.Stat(tr.path("src/link.go"))  // a link, followed
	d.Lstat(tr.path("src/link.go")) // … and not
	d.Stat(tr.path("nowhere/at/all.go"))
	d.Lstat("/")
	d.ReadDir(tr.path("docs/intermem"))
	d.Names(tr.path("mem"))
	d.EvalSymlinks(tr.path("src/link.go"))
	d.ReadHead(tr.path(".git/HEAD"))
	b := rendercache.Encode(key, time.Time{}, rendercache.SessionRule{}, d, text)
	if b == nil {
		tr.t.Fatal("Encode refused a plain recording")
	}
	return b
}

// load writes b as the cache file and loads it.
func (tr *tree) load(b []byte) (string, bool) {
	tr.t.Helper()
	p := tr.path(".intermem/" + rendercache.Name)
	os.MkdirAll(filepath.Dir(p), 0o700)
	os.Remove(p)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		tr.t.Fatal(err)
	}
	return rendercache.Load(p, key, "s", now)
}

// A change to any fact after caching is a miss; with no change, a hit
// that is the text as written.
func TestEveryFactKindChangedIsAMiss(t *testing.T) {
	for _, c := range []struct {
		what   string
		change func(tr *tree)
	}{
		{"a memory file edited", func(tr *tree) { tr.write("mem/topic.md", "- a fact, longer now\n") }},
		{"a memory file added where one was missing", func(tr *tree) { tr.write("mem/gone.md", "- back\n") }},
		{"a file removed", func(tr *tree) { os.Remove(tr.path("mem/MEMORY.md")) }},
		{"a link retargeted (its stat follows it)", func(tr *tree) {
			tr.write("src/b.go", "package a\n")
			os.Remove(tr.path("src/link.go"))
			os.Symlink(tr.path("src/b.go"), tr.path("src/link.go"))
		}},
		{"a link's target edited (a stat of it follows it)", func(tr *tree) { tr.write("src/a.go", "package a // edited\n") }},
		{"a missing directory created with the file", func(tr *tree) { tr.write("nowhere/at/all.go", "package all\n") }},
		{"a directory's listing changed", func(tr *tree) { tr.write("docs/intermem/y.md", "# y\n") }},
		{"the branch switched", func(tr *tree) { tr.write(".git/HEAD", "ref: refs/heads/other\n") }},
		{"a group's directory replaced by a link to a copy", func(tr *tree) {
			// The same names, sizes and times, another inode: the
			// directory is resolved again, through the link.
			os.Rename(tr.path("mem"), tr.path("mem.old"))
			os.Mkdir(tr.path("mem2"), 0o755)
			ents, _ := os.ReadDir(tr.path("mem.old"))
			for _, e := range ents {
				n := e.Name()
				b, _ := os.ReadFile(tr.path("mem.old/" + n))
				tr.write("mem2/"+n, string(b))
				fi, _ := os.Stat(tr.path("mem.old/" + n))
				os.Chtimes(tr.path("mem2/"+n), fi.ModTime(), fi.ModTime())
			}
			os.Symlink(tr.path("mem2"), tr.path("mem"))
		}},
	} {
		t.Run(c.what, func(t *testing.T) {
			tr := newTree(t)
			b := tr.record()
			if got, ok := tr.load(b); !ok || got != text {
				t.Fatalf("unchanged: Load = %q, %v; want the text, a hit", got, ok)
			}
			time.Sleep(5 * time.Millisecond) // distinct times on coarse filesystems
			c.change(tr)
			if got, ok := tr.load(b); ok {
				t.Fatalf("after the change: a hit (%q)", got)
			}
		})
	}
}

// The key, the time limit and the session rule each decide a hit.
func TestKeyUntilAndSessions(t *testing.T) {
	tr := newTree(t)
	d := rendercache.NewDeps()
	d.Stat(tr.path("mem/topic.md"))
	p := tr.path("context.render")
	write := func(b []byte) {
		os.Remove(p)
		os.WriteFile(p, b, 0o600)
	}
	write(rendercache.Encode(key, now.Add(time.Hour), rendercache.SessionRule{Skipped: "s", Chosen: "other"}, d, text))
	if _, ok := rendercache.Load(p, key, "s", now); !ok {
		t.Fatal("a hit was missed")
	}
	other := key
	other.Identity = "another project"
	for _, c := range []struct {
		what    string
		k       rendercache.Key
		session string
		at      time.Time
	}{
		{"another key", other, "s", now},
		{"past until", key, "s", now.Add(time.Hour)},
		{"a session the rule does not hold for", key, "t", now},
		{"the chosen checkpoint's own session", key, "other", now},
		{"no renderer", rendercache.Key{}, "s", now},
	} {
		if _, ok := rendercache.Load(p, c.k, c.session, c.at); ok {
			t.Errorf("%s: a hit", c.what)
		}
	}
	// A key field cannot end early and pass for another: the strings are
	// quoted.
	a, b := key, key
	a.Root, a.MemoryDir = `/p" "/m`, ""
	b.Root, b.MemoryDir = "/p", `/m`
	if a.String() == b.String() {
		t.Fatalf("two keys encode alike: %s", a.String())
	}
}

// A cache file of an older version is a miss, never misread.
func TestOlderVersionIsAMiss(t *testing.T) {
	tr := newTree(t)
	b := tr.record()
	old := bytes.Replace(b, []byte("intermem-render 5\n"), []byte("intermem-render 4\n"), 1)
	if _, ok := tr.load(old); ok {
		t.Fatal("a version 4 file was a hit")
	}
	// What version 4 wrote: one key string, absolute paths.
	v4 := "intermem-render 4\nkey \"x\"\nuntil 0\nsessions \"\" \"\"\ndeps 1\ns" + tr.path("mem/topic.md") + "\x00!\x00\ntext 4\nTEXT"
	if _, ok := tr.load([]byte(v4)); ok {
		t.Fatal("a version 4 file was a hit")
	}
}

// A hostile cache file is a miss, at once: every truncation, a file over
// MaxBytes, paths with "..", relative, or unclean, a name that is a path,
// a member with no group, a FIFO or a link in its place, records naming a
// FIFO to read or list.
func TestHostileCacheFilesAreMisses(t *testing.T) {
	tr := newTree(t)
	b := tr.record()
	if _, ok := tr.load(b); !ok {
		t.Fatal("the valid file was a miss")
	}
	for i := range len(b) {
		if _, ok := tr.load(b[:i]); ok {
			t.Fatalf("truncated to %d of %d bytes: a hit", i, len(b))
		}
	}
	if _, ok := tr.load(append(b, 'x')); ok {
		t.Fatal("a byte past the text: a hit")
	}
	fifo := tr.path("fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	memDir := tr.path("mem")
	edits := []struct{ what, old, new string }{
		{"a group directory with ..", "g" + memDir + "\x00", "g" + memDir + "/../mem\x00"},
		{"a relative group directory", "g" + memDir + "\x00", "gmem\x00"},
		{"a group directory with a trailing slash", "g" + memDir + "\x00", "g" + memDir + "/\x00"},
		{"a name that is a path", "ltopic.md\x00", "l../mem/topic.md\x00"},
		{"a name ..", "ltopic.md\x00", "l..\x00"},
		{"an empty name", "ltopic.md\x00", "l\x00"},
		{"an absolute stat with ..", "l/\x00", "l/tmp/..\x00"},
		{"a listing with ..", "d" + tr.path("docs/intermem") + "\x00", "d" + tr.path("docs/intermem") + "/../intermem\x00"},
		{"a listing of a FIFO", "d" + tr.path("docs/intermem") + "\x00", "d" + fifo + "\x00"},
		{"names of a FIFO", "D" + memDir + "\x00", "D" + fifo + "\x00"},
		{"a git file that is a FIFO", "h" + tr.path(".git/HEAD") + "\x00", "h" + fifo + "\x00"},
		{"an unknown kind", "h" + tr.path(".git/HEAD") + "\x00", "x" + tr.path(".git/HEAD") + "\x00"},
		{"more records than there are", "\ndeps ", "\ndeps 1"},
		{"a text shorter than said", "\ntext ", "\ntext 1"},
		{"a negative until", "\nuntil 0\n", "\nuntil -1\n"},
	}
	for _, e := range edits {
		if !bytes.Contains(b, []byte(e.old)) {
			t.Fatalf("%s: the file has no %q", e.what, e.old)
		}
		edited := bytes.Replace(b, []byte(e.old), []byte(e.new), 1)
		if bytes.Equal(edited, b) {
			t.Fatalf("%s: the edit changed nothing", e.what)
		}
		done := make(chan bool)
		go func() {
			_, ok := tr.load(edited)
			done <- ok
		}()
		select {
		case ok := <-done:
			if ok {
				t.Errorf("%s: a hit", e.what)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: Load is still waiting", e.what)
		}
	}
	// A member of no group: the groups come after the other records, so
	// cutting the first group record leaves its members without one.
	i := bytes.Index(b, []byte("\x00g/"))
	j := bytes.IndexByte(b[i+2:], 0)
	if _, ok := tr.load(append(append([]byte{}, b[:i+1]...), b[i+2+j+1:]...)); ok {
		t.Error("members of no group: a hit")
	}

	// The file itself: too large, a link, a FIFO.
	p := tr.path(".intermem/" + rendercache.Name)
	huge := append(append([]byte{}, b...), make([]byte, rendercache.MaxBytes)...)
	if _, ok := tr.load(huge); ok {
		t.Error("a file over MaxBytes: a hit")
	}
	tr.load(b) // the valid file, where the link points
	os.Rename(p, tr.path("elsewhere"))
	os.Symlink(tr.path("elsewhere"), p)
	if _, ok := rendercache.Load(p, key, "s", now); ok {
		t.Error("a link to a valid file: a hit")
	}
	os.Remove(p)
	syscall.Mkfifo(p, 0o600)
	done := make(chan bool)
	go func() {
		_, ok := rendercache.Load(p, key, "s", now)
		done <- ok
	}()
	select {
	case ok := <-done:
		if ok {
			t.Error("a FIFO: a hit")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Load waits on a FIFO")
	}
}

// Encode writes no file Load would misread or refuse: a recorded path
// that is relative or holds a NUL, or a secret, gives no cache at all.
func TestEncodeRefuses(t *testing.T) {
	for _, c := range []struct {
		what   string
		record func(d *rendercache.Deps)
	}{
		{"a relative path", func(d *rendercache.Deps) { d.Stat("relative/path") }},
		{"a path with ..", func(d *rendercache.Deps) { d.Stat("/tmp/../etc") }},
		{"a NUL", func(d *rendercache.Deps) { d.Stat("/tmp/a\x00b") }},
		{"a path longer than a record", func(d *rendercache.Deps) { d.Stat("/" + strings.Repeat("a/", 5000) + "b") }},
		{"a secret", func(d *rendercache.Deps) { d.MarkSecret() }},
	} {
		d := rendercache.NewDeps()
		c.record(d)
		if b := rendercache.Encode(key, time.Time{}, rendercache.SessionRule{}, d, text); b != nil {
			t.Errorf("%s: encoded\n%q", c.what, b)
		}
	}
}

// FuzzLoad: whatever the file holds, Load returns without a panic or a
// wait, and a hit is the text the file ends with.
func FuzzLoad(f *testing.F) {
	dir, err := filepath.EvalSymlinks(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "a"), []byte("a"), 0o644)
	d := rendercache.NewDeps()
	d.Stat(filepath.Join(dir, "a"))
	d.Lstat(filepath.Join(dir, "b"))
	d.Lstat("/")
	d.ReadDir(dir)
	d.EvalSymlinks(dir)
	f.Add(rendercache.Encode(key, time.Time{}, rendercache.SessionRule{}, d, text))
	f.Add(rendercache.Encode(key, now.Add(time.Hour), rendercache.SessionRule{Skipped: "s"}, rendercache.NewDeps(), ""))
	f.Add([]byte("intermem-render 5\n"))
	p := filepath.Join(dir, rendercache.Name)
	f.Fuzz(func(t *testing.T, b []byte) {
		os.Remove(p)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		got, ok := rendercache.Load(p, key, "s", now)
		if ok && !bytes.HasSuffix(b, []byte(got)) {
			t.Fatalf("a hit %q that the file does not end with", got)
		}
	})
}

// RendererID names the renderer as ExeID of its resolved path: the file
// itself when it is not a link, what the link leads to when it is.
func TestRendererID(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "intermem-inject")
	os.WriteFile(exe, []byte("binary"), 0o755)
	if got, want := rendercache.RendererID(exe), rendercache.ExeID(exe); got != want || !strings.HasPrefix(got, exe+" 6 ") {
		t.Errorf("a file: RendererID = %q, ExeID = %q", got, want)
	}
	os.Mkdir(filepath.Join(dir, "real"), 0o755)
	real := filepath.Join(dir, "real", "intermem-inject")
	os.Rename(exe, real)
	os.Symlink(real, exe)
	if got := rendercache.RendererID(exe); got != rendercache.ExeID(real) || !strings.HasPrefix(got, real+" 6 ") {
		t.Errorf("a link: RendererID = %q, want ExeID of %s", got, real)
	}
	os.Remove(real)
	if got := rendercache.RendererID(exe); got != "" {
		t.Errorf("a dangling link: RendererID = %q", got)
	}
}

// The listing a cache records and checks is os.ReadDir's names and types
// (recorded as Deps.ReadDir did before it read the directory itself):
// every type, an entry whose type needs an lstat, more entries than one
// read returns, a missing directory, a file, a FIFO.
func TestListingIsReadDirs(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "file"), nil, 0o644)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.Symlink("file", filepath.Join(dir, "link"))
	os.Symlink("nowhere", filepath.Join(dir, "dangling"))
	syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600)
	if fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0); err == nil {
		syscall.Bind(fd, &syscall.SockaddrUnix{Name: filepath.Join(dir, "sock")})
		defer syscall.Close(fd)
	}
	many := filepath.Join(dir, "many")
	os.Mkdir(many, 0o755)
	for i := range 600 {
		os.WriteFile(filepath.Join(many, strings.Repeat("n", i%40)+string(rune('a'+i%26))+strings.Repeat("x", i/26)), nil, 0o644)
	}
	for _, p := range []string{dir, many, filepath.Join(dir, "sub"), filepath.Join(dir, "missing"), filepath.Join(dir, "file"), filepath.Join(dir, "fifo")} {
		ents, err := os.ReadDir(p)
		want := rendercache.ListingVal(ents, err)
		if got := rendercache.Listing(p); got != want {
			t.Errorf("%s: listing %q, os.ReadDir %q", p, got, want)
		}
	}
	if got := rendercache.Listing(dir); !strings.HasPrefix(got, "7 ") {
		t.Errorf("the listing of seven entries is %q", got)
	}
}

// Each fact kind alone decides: a cache recording just that fact hits
// while it holds and misses once it does not (the resolution of a path
// by its kernel name, a listing by getdents, are each the recorded
// function's answer).
func TestEachFactAlone(t *testing.T) {
	for _, c := range []struct {
		what   string
		record func(tr *tree, d *rendercache.Deps)
		change func(tr *tree)
	}{
		{"a resolution through a link, retargeted", func(tr *tree, d *rendercache.Deps) { d.EvalSymlinks(tr.path("src/link.go")) },
			func(tr *tree) {
				tr.write("src/b.go", "package a\n")
				os.Remove(tr.path("src/link.go"))
				os.Symlink(tr.path("src/b.go"), tr.path("src/link.go"))
			}},
		{"a resolution to itself, a directory on the way made a link", func(tr *tree, d *rendercache.Deps) { d.EvalSymlinks(tr.path("src/a.go")) },
			func(tr *tree) {
				os.Rename(tr.path("src"), tr.path("src2"))
				os.Symlink(tr.path("src2"), tr.path("src"))
			}},
		{"a resolution to itself, the file made a link to a copy", func(tr *tree, d *rendercache.Deps) { d.EvalSymlinks(tr.path("src/a.go")) },
			func(tr *tree) {
				os.Rename(tr.path("src/a.go"), tr.path("src/a2.go"))
				os.Symlink("a2.go", tr.path("src/a.go"))
			}},
		{"a resolution of a missing path, created", func(tr *tree, d *rendercache.Deps) { d.EvalSymlinks(tr.path("src/new.go")) },
			func(tr *tree) { tr.write("src/new.go", "package a\n") }},
		{"a resolution, the path removed", func(tr *tree, d *rendercache.Deps) { d.EvalSymlinks(tr.path("src/link.go")) },
			func(tr *tree) { os.Remove(tr.path("src/a.go")) }},
		{"a listing, a name renamed", func(tr *tree, d *rendercache.Deps) { d.ReadDir(tr.path("docs/intermem")) },
			func(tr *tree) { os.Rename(tr.path("docs/intermem/x.md"), tr.path("docs/intermem/z.md")) }},
		{"a listing, a file made a directory", func(tr *tree, d *rendercache.Deps) { d.ReadDir(tr.path("docs/intermem")) },
			func(tr *tree) {
				os.Remove(tr.path("docs/intermem/x.md"))
				os.Mkdir(tr.path("docs/intermem/x.md"), 0o755)
			}},
		{"a listing of a missing directory, created", func(tr *tree, d *rendercache.Deps) { d.ReadDir(tr.path(".claude/rules")) },
			func(tr *tree) { os.MkdirAll(tr.path(".claude/rules"), 0o755) }},
		{"names, one added", func(tr *tree, d *rendercache.Deps) { d.Names(tr.path("mem")) },
			func(tr *tree) { tr.write("mem/new.md", "- new\n") }},
		{"a git file, rewritten", func(tr *tree, d *rendercache.Deps) { d.ReadHead(tr.path(".git/HEAD")) },
			func(tr *tree) { tr.write(".git/HEAD", "ref: refs/heads/next\n") }},
		{"a git file, made a FIFO", func(tr *tree, d *rendercache.Deps) { d.ReadHead(tr.path(".git/HEAD")) },
			func(tr *tree) {
				os.Remove(tr.path(".git/HEAD"))
				syscall.Mkfifo(tr.path(".git/HEAD"), 0o600)
			}},
		{"stats in a missing directory (a group that cannot be opened), the directory created with one", func(tr *tree, d *rendercache.Deps) {
			for i := range 9 {
				d.Stat(tr.path(fmt.Sprintf("gone/f%d.md", i)))
			}
		}, func(tr *tree) { tr.write("gone/f8.md", "- here\n") }},
		{"stats in a directory that cannot be searched (a group of errors), made searchable", func(tr *tree, d *rendercache.Deps) {
			if os.Geteuid() == 0 {
				// Root searches any directory: the same stats fail by
				// another route, the directory made a file.
				os.RemoveAll(tr.path("locked"))
				tr.write("locked", "a file\n")
			} else {
				for i := range 9 {
					tr.write(fmt.Sprintf("locked/f%d.md", i), "- x\n")
				}
				os.Chmod(tr.path("locked"), 0o600)
			}
			for i := range 9 {
				d.Lstat(tr.path(fmt.Sprintf("locked/f%d.md", i)))
			}
		}, func(tr *tree) {
			if os.Geteuid() == 0 {
				os.Remove(tr.path("locked"))
				tr.write("locked/f0.md", "- x\n")
			}
			os.Chmod(tr.path("locked"), 0o755)
		}},
		{"an lstat of the root, a stat of a directory, its mode changed", func(tr *tree, d *rendercache.Deps) {
			d.Lstat("/")
			d.Stat(tr.path("src"))
		}, func(tr *tree) { os.Chmod(tr.path("src"), 0o700) }},
	} {
		t.Run(c.what, func(t *testing.T) {
			tr := newTree(t)
			d := rendercache.NewDeps()
			c.record(tr, d)
			b := rendercache.Encode(key, time.Time{}, rendercache.SessionRule{}, d, text)
			if _, ok := tr.load(b); !ok {
				t.Fatal("unchanged: a miss")
			}
			time.Sleep(5 * time.Millisecond)
			c.change(tr)
			done := make(chan bool)
			go func() {
				_, ok := tr.load(b)
				done <- ok
			}()
			select {
			case ok := <-done:
				if ok {
					t.Fatal("after the change: a hit")
				}
			case <-time.After(20 * time.Second):
				t.Fatal("Load is still waiting")
			}
		})
	}
}
