// Package proof holds the reliability proofs: crash matrices, load, bad
// input and secrets. Each test builds the real binaries (with failpoints
// compiled in) and runs them as separate processes against real temporary
// projects, real bbolt stores and real files.
package proof

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/intermem/intermem/pkg/project"
)

var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "intermem-proof-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cmd := exec.Command("go", "build", "-tags", "failpoint", "-o", dir+"/", "../cmd/...")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building binaries: %v\n%s", err, out)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// fixture is a temporary project with a HOME holding its auto-memory.
type fixture struct {
	t      *testing.T
	dir    string
	root   string // the project
	home   string
	memDir string
	now    string
	layout string // INTERMEM_LAYOUT for every command, "" for the default
}

func newFixture(t *testing.T, files map[string]string, memory map[string]string) *fixture {
	t.Helper()
	dir := t.TempDir()
	dir, _ = filepath.EvalSymlinks(dir)
	f := &fixture{t: t, dir: dir, root: filepath.Join(dir, "proj"), home: filepath.Join(dir, "home"), now: "2026-11-01T09:00:00Z"}
	f.memDir = filepath.Join(f.home, ".claude", "projects", project.Encode(f.root), "memory")
	for name, body := range files {
		f.write(filepath.Join(f.root, name), body)
	}
	if err := os.MkdirAll(f.root, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range memory {
		f.write(filepath.Join(f.memDir, name), body)
	}
	return f
}

func (f *fixture) write(path, body string) {
	f.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) env(extra ...string) []string {
	env := []string{"HOME=" + f.home, "PATH=" + os.Getenv("PATH"), "INTERMEM_NOW=" + f.now}
	if f.layout != "" {
		env = append(env, "INTERMEM_LAYOUT="+f.layout)
	}
	return append(env, extra...)
}

// result of running a binary.
type result struct {
	code   int
	stdout string
	stderr string
	hung   string // why runLimited ended the process ("" when it exited)
}

func (f *fixture) run(stdin string, extraEnv []string, bin string, args ...string) result {
	f.t.Helper()
	cmd := exec.Command(filepath.Join(binDir, bin), args...)
	cmd.Dir = f.root
	cmd.Env = f.env(extraEnv...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		f.t.Fatalf("run %s: %v", bin, err)
	}
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// must runs a binary and fails the test unless it exits 0.
func (f *fixture) must(bin string, args ...string) result {
	f.t.Helper()
	r := f.run("", nil, bin, args...)
	if r.code != 0 {
		f.t.Fatalf("%s %v: exit %d\nstdout:\n%s\nstderr:\n%s", bin, args, r.code, r.stdout, r.stderr)
	}
	return r
}

// sessions records n Stop events of distinct sessions, a day apart.
func (f *fixture) sessions(n int) {
	f.t.Helper()
	for i := 0; i < n; i++ {
		payload := fmt.Sprintf(`{"session_id":"sess-%s-%d","cwd":%q,"hook_event_name":"Stop"}`, f.now[:10], i, f.root)
		if r := f.run(payload, nil, "intermem-snapshot"); r.code != 0 || r.stdout != "" {
			f.t.Fatalf("snapshot: exit %d, stdout %q", r.code, r.stdout)
		}
		f.advanceDay()
	}
}

func (f *fixture) advanceDay() {
	day := f.now[8:10]
	var d int
	fmt.Sscanf(day, "%d", &d)
	f.now = fmt.Sprintf("%s%02d%s", f.now[:8], d+1, f.now[10:])
}

// planJSON runs plan --json --max 0 and decodes it.
func (f *fixture) planJSON() map[string]any {
	f.t.Helper()
	r := f.must("intermem-synthesize", "plan", "--json", "--max", "0")
	var v map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		f.t.Fatalf("plan json: %v\n%s", err, r.stdout)
	}
	return v
}

// tree maps every file under the project (except .intermem) and the
// memory dir (as proj/… and mem/…, so fixtures compare) to its bytes.
func (f *fixture) tree() map[string]string {
	f.t.Helper()
	out := map[string]string{}
	for prefix, base := range map[string]string{"proj": f.root, "mem": f.memDir} {
		filepath.WalkDir(base, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() && d.Name() == ".intermem" {
				return filepath.SkipDir
			}
			if d.Type().IsRegular() {
				b, _ := os.ReadFile(path)
				rel, _ := filepath.Rel(base, path)
				out[prefix+"/"+filepath.ToSlash(rel)] = string(b)
			}
			return nil
		})
	}
	return out
}

func hashTree(t map[string]string) string {
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		fmt.Fprintf(h, "%s\x00%d\x00%s", k, len(t[k]), t[k])
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// tempFiles lists leftover journal temporary files.
func (f *fixture) tempFiles() []string {
	var out []string
	for _, base := range []string{f.root, f.memDir} {
		filepath.WalkDir(base, func(path string, d fs.DirEntry, err error) error {
			if err == nil && strings.Contains(d.Name(), ".intermem-") && strings.HasSuffix(d.Name(), ".tmp") {
				out = append(out, path)
			}
			return nil
		})
	}
	return out
}
