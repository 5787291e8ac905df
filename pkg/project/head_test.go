package project

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestHead: the commit HEAD names, as git itself reports it, through a
// loose ref, packed refs, a detached HEAD and a linked worktree; "" for
// no repository, an unborn branch and a hostile ref.
func TestHead(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("this test needs a real git: %v", err)
	}
	root := t.TempDir()
	if got := Head(root); got != "" {
		t.Errorf("no repository: Head = %q", got)
	}
	gitOut(t, root, "init", "-q")
	if got := Head(root); got != "" {
		t.Errorf("unborn branch: Head = %q", got)
	}
	os.WriteFile(filepath.Join(root, "a"), []byte("a\n"), 0o644)
	gitOut(t, root, "add", "a")
	gitOut(t, root, "commit", "-qm", "one")
	want := gitOut(t, root, "rev-parse", "HEAD")
	if got := Head(root); got != want {
		t.Errorf("loose ref: Head = %q, want %q", got, want)
	}
	gitOut(t, root, "pack-refs", "--all")
	if _, err := os.Stat(filepath.Join(root, ".git/refs/heads/main")); err == nil {
		t.Fatal("pack-refs left the loose ref")
	}
	if got := Head(root); got != want {
		t.Errorf("packed ref: Head = %q, want %q", got, want)
	}
	wt := filepath.Join(t.TempDir(), "wt")
	gitOut(t, root, "worktree", "add", "-q", "--detach", wt)
	if got := Head(wt); got != want {
		t.Errorf("linked worktree: Head = %q, want %q", got, want)
	}
	gitOut(t, root, "checkout", "-q", "--detach")
	if got := Head(root); got != want {
		t.Errorf("detached: Head = %q, want %q", got, want)
	}
	os.WriteFile(filepath.Join(root, ".git/HEAD"), []byte("ref: refs/../../../etc/passwd\n"), 0o644)
	if got := Head(root); got != "" {
		t.Errorf("hostile ref: Head = %q", got)
	}
}
