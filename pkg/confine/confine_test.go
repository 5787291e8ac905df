package confine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// layout builds a project root, a memory dir and an "outside" directory
// standing in for the user's home, all real, in a temp dir.
func layout(t *testing.T) (Places, string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(base, "proj")
	mem := filepath.Join(base, "claude", "memory")
	out := filepath.Join(base, "home")
	for _, d := range []string{root, mem, out, filepath.Join(root, "docs")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return Places{Root: root, MemoryDir: mem}, out
}

func TestClassify(t *testing.T) {
	p, out := layout(t)
	cases := []struct {
		path string
		want Place
	}{
		{p.Root + "/CLAUDE.md", Target},
		{p.Root + "/AGENTS.md", Target},
		{p.Root + "/.claude/CLAUDE.md", Target},
		{p.Root + "/.claude/settings.json", None},
		{p.Root + "/docs/intermem/build.md", Detail},
		{p.Root + "/docs/intermem/.archived.md", Detail},
		{p.Root + "/docs/intermem", None},
		{p.Root + "/docs/intermem/../../../home/u/.bashrc", None},
		{p.Root + "/docs/intermem/../../CLAUDE.md", Target},
		{p.Root + "/.intermem", State},
		{p.Root + "/.intermem/log", State},
		{p.Root + "/.intermemx/log", None},
		{p.Root + "/README.md", None},
		{p.MemoryDir + "/MEMORY.md", Memory},
		{p.MemoryDir + "/../settings.json", None},
		{out + "/.bashrc", None},
		{"CLAUDE.md", None},
	}
	for _, c := range cases {
		if got := p.Classify(c.path); got != c.want {
			t.Errorf("Classify(%s) = %v, want %v", c.path, got, c.want)
		}
	}
}

func TestResolveTargets(t *testing.T) {
	p, out := layout(t)
	link := func(target, name string) {
		t.Helper()
		if err := os.Symlink(target, filepath.Join(p.Root, name)); err != nil {
			t.Fatal(err)
		}
	}
	// A dangling link out of the project: refused, naming the real path.
	link("../home/.profile", "CLAUDE.md")
	_, err := p.Resolve(filepath.Join(p.Root, "CLAUDE.md"), false)
	if !errors.Is(err, ErrOutside) {
		t.Fatalf("dangling link outside: err = %v, want ErrOutside", err)
	}
	// ... unless the user allows it.
	got, err := p.Resolve(filepath.Join(p.Root, "CLAUDE.md"), true)
	if err != nil || got != filepath.Join(out, ".profile") {
		t.Fatalf("allowOutside: got %q, %v; want %s", got, err, filepath.Join(out, ".profile"))
	}
	// A link inside the project is fine.
	if err := os.WriteFile(filepath.Join(p.Root, "docs", "guide.md"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	link("docs/guide.md", "AGENTS.md")
	got, err = p.Resolve(filepath.Join(p.Root, "AGENTS.md"), false)
	if err != nil || got != filepath.Join(p.Root, "docs", "guide.md") {
		t.Fatalf("link inside: got %q, %v", got, err)
	}
	// A link into the state directory is refused even inside the project.
	if err := os.Mkdir(filepath.Join(p.Root, ".claude"), 0o700); err != nil {
		t.Fatal(err)
	}
	link("../.intermem/intermem.db", ".claude/CLAUDE.md")
	if _, err := p.Resolve(filepath.Join(p.Root, ".claude", "CLAUDE.md"), false); !errors.Is(err, ErrOutside) {
		t.Fatalf("link into state: err = %v, want ErrOutside", err)
	}
	// docs/ as a link to a directory outside takes docs/intermem with it.
	if err := os.Remove(filepath.Join(p.Root, "docs", "guide.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(p.Root, "docs")); err != nil {
		t.Fatal(err)
	}
	link(out, "docs")
	if _, err := p.Resolve(filepath.Join(p.Root, "docs", "intermem", "x.md"), false); !errors.Is(err, ErrOutside) {
		t.Fatalf("docs linked outside: err = %v, want ErrOutside", err)
	}
	// Traversal never classifies as a place.
	if _, err := p.Resolve(filepath.Join(p.Root, "docs/intermem/../../../home/.bashrc"), true); !errors.Is(err, ErrOutside) {
		t.Fatalf("traversal: err = %v, want ErrOutside", err)
	}
}

func TestResolveState(t *testing.T) {
	p, out := layout(t)
	state := filepath.Join(p.Root, ".intermem")
	// Not there yet: fine, intermem creates it.
	if _, err := p.Resolve(filepath.Join(state, "log"), false); err != nil {
		t.Fatalf("absent state: %v", err)
	}
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(out, ".bashrc"), filepath.Join(state, "log")); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Resolve(filepath.Join(state, "log"), true); !errors.Is(err, ErrLink) {
		t.Fatalf("linked log: err = %v, want ErrLink", err)
	}
	if err := os.Symlink(out, filepath.Join(state, "spool")); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Resolve(filepath.Join(state, "spool", "a.json"), false); !errors.Is(err, ErrLink) {
		t.Fatalf("linked spool: err = %v, want ErrLink", err)
	}
	if err := os.RemoveAll(state); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(out, state); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Resolve(filepath.Join(state, "intermem.db"), false); !errors.Is(err, ErrLink) {
		t.Fatalf("linked state dir: err = %v, want ErrLink", err)
	}
}

func TestResolveMemoryFollowsUserLinks(t *testing.T) {
	p, out := layout(t)
	dot := filepath.Join(out, "dotfiles", "MEMORY.md")
	if err := os.MkdirAll(filepath.Dir(dot), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dot, []byte("- a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dot, filepath.Join(p.MemoryDir, "MEMORY.md")); err != nil {
		t.Fatal(err)
	}
	got, err := p.Resolve(filepath.Join(p.MemoryDir, "MEMORY.md"), false)
	if err != nil || got != dot {
		t.Fatalf("memory link: got %q, %v; want %s", got, err, dot)
	}
}

func TestRealDanglingChain(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// a -> b -> c/d (c missing): the write would create c/d.
	if err := os.Symlink("b", filepath.Join(base, "a")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("c/d", filepath.Join(base, "b")); err != nil {
		t.Fatal(err)
	}
	got, err := Real(filepath.Join(base, "a"))
	if want := filepath.Join(base, "c", "d"); err != nil || got != want {
		t.Fatalf("Real = %q, %v; want %s", got, err, want)
	}
	// A loop is an error, not a hang.
	if err := os.Symlink("loop2", filepath.Join(base, "loop1")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("loop1", filepath.Join(base, "loop2")); err != nil {
		t.Fatal(err)
	}
	if _, err := Real(filepath.Join(base, "loop1")); err == nil {
		t.Fatal("symlink loop resolved without error")
	}
}

func TestRealRelativeToTheRealDirectory(t *testing.T) {
	p, out := layout(t)
	// docs is a link to a directory outside; docs/intermem/x.md is a
	// dangling link to ../../y. Lexically that is <root>/y, inside; the
	// kernel resolves it from the real directory: <out>/y.
	if err := os.Remove(filepath.Join(p.Root, "docs")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(out, "docs", "intermem"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(out, "docs"), filepath.Join(p.Root, "docs")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../y", filepath.Join(out, "docs", "intermem", "x.md")); err != nil {
		t.Fatal(err)
	}
	got, err := Real(filepath.Join(p.Root, "docs", "intermem", "x.md"))
	if want := filepath.Join(out, "y"); err != nil || got != want {
		t.Fatalf("Real = %q, %v; want %s", got, err, want)
	}
}

func TestAllowOutsideNeverIntoStateOrGit(t *testing.T) {
	p, _ := layout(t)
	for _, target := range []string{".intermem/intermem.db", ".git/config"} {
		name := filepath.Join(p.Root, "CLAUDE.md")
		os.Remove(name)
		if err := os.Symlink(target, name); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Resolve(name, true); !errors.Is(err, ErrOutside) {
			t.Errorf("CLAUDE.md -> %s with allowOutside: err = %v, want ErrOutside", target, err)
		}
	}
}

func TestCheckState(t *testing.T) {
	p, out := layout(t)
	state := filepath.Join(p.Root, StateDir)
	if err := p.CheckState(); err != nil {
		t.Fatalf("no state dir yet: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(state, "spool"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"intermem.db", "log", ".gitignore"} {
		if err := os.WriteFile(filepath.Join(state, f), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.CheckState(); err != nil {
		t.Fatalf("real state dir: %v", err)
	}
	bashrc := filepath.Join(out, ".bashrc")
	cases := []struct {
		name  string
		setup func()
		hint  string
	}{
		{"log", func() { os.Remove(filepath.Join(state, "log")); os.Symlink(bashrc, filepath.Join(state, "log")) },
			"remove the symlink .intermem/log; intermem keeps its state in real files"},
		{"dangling", func() { os.Symlink(filepath.Join(out, "nothing"), filepath.Join(state, "write.lock")) },
			"remove the symlink .intermem/write.lock; intermem keeps its state in real files"},
		{"spool", func() { os.RemoveAll(filepath.Join(state, "spool")); os.Symlink(out, filepath.Join(state, "spool")) },
			"remove the symlink .intermem/spool; intermem keeps its state in real files"},
		{"fifo", func() { syscall.Mkfifo(filepath.Join(state, "context.cache"), 0o600) },
			"move .intermem/context.cache away; intermem keeps its state in real files and directories of its own"},
		{"state dir", func() { os.RemoveAll(state); os.Symlink(out, state) },
			"remove the symlink .intermem; intermem keeps its state in real files"},
	}
	for _, c := range cases {
		c.setup()
		err := p.CheckState()
		var se *StateError
		if !errors.Is(err, ErrLink) || !errors.As(err, &se) {
			t.Fatalf("%s: err = %v, want a StateError", c.name, err)
		}
		if got := se.Hint(p.Root); got != c.hint {
			t.Errorf("%s: hint %q, want %q", c.name, got, c.hint)
		}
		// Put it right for the next case.
		os.Remove(se.Path)
		if c.name == "spool" {
			os.Mkdir(se.Path, 0o700)
		}
	}
	// The link target was never touched.
	if _, err := os.Lstat(bashrc); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s exists: CheckState wrote through a link", bashrc)
	}
}

// BenchmarkCheckState is the cost every hook pays before its body: a
// state directory as a busy project has it (store, log and its rotation,
// lock, caches, spool, backups, config).
func BenchmarkCheckState(b *testing.B) {
	root, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	state := filepath.Join(root, StateDir)
	for _, d := range []string{"spool", "backups"} {
		if err := os.MkdirAll(filepath.Join(state, d), 0o700); err != nil {
			b.Fatal(err)
		}
	}
	for _, f := range []string{".gitignore", "intermem.db", "log", "log.1", "write.lock", "context.cache", "context.render", "context.index", "config.json"} {
		if err := os.WriteFile(filepath.Join(state, f), []byte("x"), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	p := Places{Root: root}
	for b.Loop() {
		if err := p.CheckState(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPlainState: the quick check of the state directory (plainState)
// accepts only what CheckState's own check accepts, and leaves every
// entry that is not a real file or directory of the user's — a link, a
// dangling link, a FIFO, a socket, another user's file, the directory
// itself a link or a file — to that check, which names it.
func TestPlainState(t *testing.T) {
	p, out := layout(t)
	state := filepath.Join(p.Root, StateDir)
	if !plainState(state) {
		t.Fatal("no state directory: not plainly fine")
	}
	fresh := func() {
		os.RemoveAll(state)
		os.MkdirAll(filepath.Join(state, "spool"), 0o700)
		for _, f := range []string{"intermem.db", "log", ".gitignore"} {
			os.WriteFile(filepath.Join(state, f), nil, 0o600)
		}
	}
	fresh()
	if !plainState(state) || checkStateDir(state) != nil {
		t.Fatalf("a real state directory: plain %v, check %v", plainState(state), checkStateDir(state))
	}
	// Many entries: more than one read of the directory.
	for i := range 300 {
		os.WriteFile(filepath.Join(state, fmt.Sprintf("backup-%03d-with-a-long-name", i)), nil, 0o600)
	}
	if !plainState(state) {
		t.Fatal("300 more entries: not plainly fine")
	}
	os.Symlink(out, filepath.Join(state, "zz-last"))
	if plainState(state) {
		t.Fatal("a link after 300 entries: plainly fine")
	}
	hostile := map[string]func(){
		"link":          func() { os.Symlink(filepath.Join(out, ".bashrc"), filepath.Join(state, "log.1")) },
		"dangling link": func() { os.Symlink(filepath.Join(out, "nothing"), filepath.Join(state, "write.lock")) },
		"fifo":          func() { syscall.Mkfifo(filepath.Join(state, "context.cache"), 0o600) },
		"socket": func() {
			fd, _ := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
			syscall.Bind(fd, &syscall.SockaddrUnix{Name: filepath.Join(state, "sock")})
			syscall.Close(fd)
		},
		"state dir a link": func() { os.RemoveAll(state); os.Symlink(out, state) },
		"state dir a file": func() { os.RemoveAll(state); os.WriteFile(state, nil, 0o600) },
	}
	if os.Geteuid() == 0 {
		hostile["another user's file"] = func() { os.Lchown(filepath.Join(state, "log"), 4242, 4242) }
		hostile["another user's directory"] = func() { os.Lchown(state, 4242, 4242) }
	} else {
		t.Log("not root: the cases of another user's files are CheckState's tests' alone")
	}
	for name, setup := range hostile {
		fresh()
		setup()
		if plainState(state) {
			t.Errorf("%s: plainly fine", name)
		}
		if checkStateDir(state) == nil {
			t.Errorf("%s: CheckState's check accepts it", name)
		}
	}
	os.RemoveAll(state)
}
