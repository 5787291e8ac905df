package cite

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// gitEnv isolates test git runs from the user's configuration.
func gitEnv(home string) []string {
	return append(os.Environ(),
		"HOME="+home,
		"GIT_CONFIG_GLOBAL="+filepath.Join(home, "gitconfig"),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid",
	)
}

// git runs git in dir and fails the test on error.
func git(t testing.TB, dir string, args ...string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("these tests need a real git: %v", err)
	}
	cmd := exec.Command("git", append([]string{"-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	cmd.Env = gitEnv(t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// writeFile creates name (slash-separated) under dir with its parents.
func writeFile(t testing.TB, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// buildProject writes the txtar tree into a new git repository, commits it,
// and replays the history script (mv / rm / commit lines).
func buildProject(t testing.TB, tree, script string) string {
	t.Helper()
	dir := t.TempDir()
	ar, err := txtar.ParseFile(tree)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range ar.Files {
		data := string(f.Data)
		if strings.TrimSpace(data) == "" {
			data = "content of " + f.Name + "\nsecond line so renames are detected\n"
		}
		writeFile(t, dir, f.Name, data)
	}
	git(t, dir, "init", "-q")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "initial tree")
	if script == "" {
		return dir
	}
	f, err := os.Open(script)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		op, rest, _ := strings.Cut(line, " ")
		switch op {
		case "mv":
			from, to := splitMv(t, dir, rest)
			if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, filepath.FromSlash(to))), 0o755); err != nil {
				t.Fatal(err)
			}
			git(t, dir, "mv", from, to)
		case "rm":
			git(t, dir, "rm", "-q", "-r", "--", rest)
		case "commit":
			git(t, dir, "commit", "-q", "-m", rest)
		default:
			t.Fatalf("history: unknown op %q", line)
		}
	}
	return dir
}

// splitMv splits "a b" where a is an existing path (paths may hold spaces).
func splitMv(t testing.TB, dir, rest string) (string, string) {
	t.Helper()
	for i := range rest {
		if rest[i] != ' ' {
			continue
		}
		if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(rest[:i]))); err == nil {
			return rest[:i], rest[i+1:]
		}
	}
	t.Fatalf("history: cannot split mv %q", rest)
	return "", ""
}

// bullets returns the "- " lines of a markdown file.
func bullets(t testing.TB, name string) []string {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "- ") {
			out = append(out, l)
		}
	}
	return out
}
