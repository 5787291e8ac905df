package project

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/confine"
)

// The vectors come from the real client (the memory directories it named)
// and, for the long paths, from an independent JavaScript implementation
// run under Node (the runtime Claude Code itself uses).
func TestEncode(t *testing.T) {
	long := "/home/user/" +
		"very long project name with spaces.and.dots_and_underscores/" +
		"very long project name with spaces.and.dots_and_underscores/" +
		"very long project name with spaces.and.dots_and_underscores/" +
		"very long project name with spaces.and.dots_and_underscores/" +
		"ünïcödé 😀 final"
	a300 := "/tmp/"
	for range 300 {
		a300 += "a"
	}
	aEnc := "-tmp-"
	for range 195 {
		aEnc += "a"
	}
	tests := []struct{ in, want string }{
		{"/home/user/proj", "-home-user-proj"},
		{"/home/u/cc dir.v2_x@y+z~w", "-home-u-cc-dir-v2-x-y-z-w"},
		{"/home/u/ünï 😀x", "-home-u--n----x"},
		{"/home/u/.claude-mem", "-home-u--claude-mem"},
		{"C:\\Users\\aldoh\\Documents\\NewTrading", "C--Users-aldoh-Documents-NewTrading"},
		{long, "-home-user-very-long-project-name-with-spaces-and-dots-and-underscores-very-long-project-name-with-spaces-and-dots-and-underscores-very-long-project-name-with-spaces-and-dots-and-underscores-very-long-yn2mut"},
		{a300, aEnc + "-w6az8n"},
	}
	for _, tt := range tests {
		if got := Encode(tt.in); got != tt.want {
			t.Errorf("Encode(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
}

func TestEncodeExactly200IsNotHashed(t *testing.T) {
	p := "/"
	for len(p) < 200 {
		p += "x"
	}
	if got := Encode(p); len(got) != 200 {
		t.Fatalf("200-unit path: got %d units, want 200 (no hash suffix)", len(got))
	}
	if got := Encode(p + "y"); len(got) <= 201 || got[200] != '-' {
		t.Fatalf("201-unit path must be cut and hashed, got %q", got)
	}
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func realTemp(t *testing.T) string {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestFindRoot(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is required for this test")
	}
	base := realTemp(t)
	repo := filepath.Join(base, "my repo.v2")
	deep := filepath.Join(repo, "sub", "deeper")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, repo, "init", "-q")
	os.WriteFile(filepath.Join(repo, "a.txt"), []byte("a"), 0o644)
	git(t, repo, "add", ".")
	git(t, repo, "commit", "-qm", "init")
	wt := filepath.Join(base, "wt")
	git(t, repo, "worktree", "add", "-q", wt)
	if err := os.MkdirAll(filepath.Join(wt, "inner"), 0o755); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(base, "plain", "dir")
	os.MkdirAll(plain, 0o755)
	link := filepath.Join(base, "link")
	if err := os.Symlink(deep, link); err != nil {
		t.Fatal(err)
	}

	for _, tt := range []struct{ dir, want string }{
		{repo, repo},
		{deep, repo},
		{wt, repo},
		{filepath.Join(wt, "inner"), repo},
		{plain, plain},
		{link, repo},
	} {
		got, err := FindRoot(tt.dir)
		if err != nil {
			t.Errorf("FindRoot(%s): %v", tt.dir, err)
			continue
		}
		if got != tt.want {
			t.Errorf("FindRoot(%s) = %s, want %s", tt.dir, got, tt.want)
		}
	}
	if _, err := FindRoot(filepath.Join(base, "missing")); err == nil {
		t.Error("FindRoot of a missing dir succeeded")
	}
}

func TestMemoryDir(t *testing.T) {
	home := realTemp(t)
	root := filepath.Join(home, "proj")
	os.MkdirAll(filepath.Join(root, ".claude"), 0o755)
	env := func(kv ...string) *cli.Env {
		return cli.New(append([]string{"HOME=" + home}, kv...), root, nil, nil, nil)
	}

	got, _ := MemoryDir(env(), root)
	if want := filepath.Join(home, ".claude", "projects", Encode(root), "memory"); got != want {
		t.Errorf("default: got %s want %s", got, want)
	}
	got, _ = MemoryDir(env("CLAUDE_CONFIG_DIR="+filepath.Join(home, "cfg")), root)
	if want := filepath.Join(home, "cfg", "projects", Encode(root), "memory"); got != want {
		t.Errorf("CLAUDE_CONFIG_DIR: got %s want %s", got, want)
	}
	os.MkdirAll(filepath.Join(home, ".claude"), 0o755)
	os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte(`{"autoMemoryDirectory":"~/mem-user"}`), 0o644)
	got, _ = MemoryDir(env(), root)
	if want := filepath.Join(home, "mem-user"); got != want {
		t.Errorf("user settings: got %s want %s", got, want)
	}
	os.WriteFile(filepath.Join(root, ".claude", "settings.local.json"), []byte(`{"autoMemoryDirectory":"/abs/mem-local"}`), 0o644)
	got, _ = MemoryDir(env(), root)
	if want := "/abs/mem-local"; got != want {
		t.Errorf("local settings: got %s want %s", got, want)
	}
	// Checked-in project settings are ignored, as Claude Code ignores them.
	os.Remove(filepath.Join(root, ".claude", "settings.local.json"))
	os.WriteFile(filepath.Join(root, ".claude", "settings.json"), []byte(`{"autoMemoryDirectory":"/abs/mem-project"}`), 0o644)
	got, _ = MemoryDir(env(), root)
	if want := filepath.Join(home, "mem-user"); got != want {
		t.Errorf("project settings must be ignored: got %s want %s", got, want)
	}
	// Malformed settings fall through to the default.
	os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte(`{"autoMemoryDirectory":`), 0o644)
	got, _ = MemoryDir(env(), root)
	if want := filepath.Join(home, ".claude", "projects", Encode(root), "memory"); got != want {
		t.Errorf("malformed settings: got %s want %s", got, want)
	}
	got, _ = MemoryDir(env("INTERMEM_MEMORY_DIR=~/override"), root)
	if want := filepath.Join(home, "override"); got != want {
		t.Errorf("INTERMEM_MEMORY_DIR: got %s want %s", got, want)
	}
	// A settings file kept elsewhere behind a link is read; a link to
	// what is no regular file (a repository's settings.local.json to
	// /dev/zero, a FIFO) is never read or waited on: the default.
	os.WriteFile(filepath.Join(home, "dotfiles.json"), []byte(`{"autoMemoryDirectory":"/abs/mem-linked"}`), 0o644)
	local := filepath.Join(root, ".claude", "settings.local.json")
	os.Symlink(filepath.Join(home, "dotfiles.json"), local)
	got, _ = MemoryDir(env(), root)
	if want := "/abs/mem-linked"; got != want {
		t.Errorf("linked settings: got %s want %s", got, want)
	}
	fifo := filepath.Join(home, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	def := filepath.Join(home, ".claude", "projects", Encode(root), "memory")
	for _, target := range []string{"/dev/zero", fifo} {
		os.Remove(local)
		os.Symlink(target, local)
		got, _ = MemoryDir(env(), root) // must neither block nor read without end
		if got != def {
			t.Errorf("settings linked to %s: got %s want %s", target, got, def)
		}
	}
}

func TestEnsureStateDir(t *testing.T) {
	root := realTemp(t)
	p := &Project{Root: root, StateDir: filepath.Join(root, StateDirName)}
	if err := p.EnsureStateDir(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p.StateDir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o700 {
		t.Errorf("state dir mode %v, want 0700", st.Mode().Perm())
	}
	b, err := os.ReadFile(filepath.Join(p.StateDir, ".gitignore"))
	if err != nil || string(b) != "*\n" {
		t.Errorf(".gitignore = %q, %v", b, err)
	}
}

func BenchmarkFindRoot(b *testing.B) {
	dir, _ := os.Getwd()
	for b.Loop() {
		if _, err := FindRoot(dir); err != nil {
			b.Fatal(err)
		}
	}
}

func TestResolveRefusesNoProject(t *testing.T) {
	base := realTemp(t)
	home := filepath.Join(base, "home", "u")
	sub := filepath.Join(home, "notes")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	// HOME named through a link still means the same directory.
	link := filepath.Join(base, "homelink")
	if err := os.Symlink(home, link); err != nil {
		t.Fatal(err)
	}
	env := func(h string) *cli.Env { return cli.New([]string{"HOME=" + h}, sub, nil, nil, nil) }
	for _, c := range []struct {
		dir, home string
		refuse    bool
	}{
		{"/", home, true},
		{home, home, true},
		{home, link, true},
		{link, home, true},
		{sub, home, false},  // a directory below home is a project of its own
		{base, home, false}, // above home, not / : a directory like any other
	} {
		_, err := Resolve(env(c.home), c.dir)
		if got := errors.Is(err, ErrNoProject); got != c.refuse {
			t.Errorf("Resolve(%s) with HOME=%s: err = %v, want refused=%v", c.dir, c.home, err, c.refuse)
		}
	}
	// A home directory that is a git repository is a project.
	if err := os.Mkdir(filepath.Join(home, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if p, err := Resolve(env(home), sub); err != nil || p.Root != home {
		t.Errorf("home as a repository: got %v, %v; want root %s", p, err, home)
	}
	// Nothing was created in home.
	if _, err := os.Lstat(filepath.Join(home, StateDirName)); err == nil {
		t.Error("Resolve created a state directory")
	}
}

func TestEnsureStateDirRefusesLinks(t *testing.T) {
	base := realTemp(t)
	root := filepath.Join(base, "proj")
	shared := filepath.Join(base, "shared")
	for _, d := range []string{root, shared} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p := &Project{Root: root, StateDir: filepath.Join(root, StateDirName)}
	if err := os.Symlink(shared, p.StateDir); err != nil {
		t.Fatal(err)
	}
	err := p.EnsureStateDir()
	var se *confine.StateError
	if !errors.As(err, &se) || !se.Link || se.Path != p.StateDir {
		t.Fatalf("linked state dir: err = %v, want a StateError for the link", err)
	}
	st, _ := os.Stat(shared)
	if st.Mode().Perm() != 0o755 {
		t.Errorf("the shared directory was chmodded to %v", st.Mode().Perm())
	}
	if ents, _ := os.ReadDir(shared); len(ents) != 0 {
		t.Errorf("something was written into the shared directory: %v", ents)
	}
	// A real state directory with a linked .gitignore: not written through.
	os.Remove(p.StateDir)
	if err := os.Mkdir(p.StateDir, 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(shared, "target")
	if err := os.Symlink(target, filepath.Join(p.StateDir, ".gitignore")); err != nil {
		t.Fatal(err)
	}
	if err := p.EnsureStateDir(); !errors.As(err, &se) || !se.Link {
		t.Fatalf("linked .gitignore: err = %v, want a StateError", err)
	}
	if _, err := os.Lstat(target); err == nil {
		t.Error("the .gitignore link's target was created")
	}
	// Its own directory is set to 0700 all the same.
	if st, _ := os.Stat(p.StateDir); st.Mode().Perm() != 0o700 {
		t.Errorf("state dir mode %v, want 0700", st.Mode().Perm())
	}
}
