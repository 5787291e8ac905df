package hookio

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/intermem/intermem/pkg/cli"
)

// hookProject is a git project and a home for the hook to run in.
func hookProject(t *testing.T) (root string, env []string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root = filepath.Join(base, "proj")
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	return root, []string{"HOME=" + filepath.Join(base, "home"), "CLAUDE_PROJECT_DIR=" + root}
}

func readLog(t *testing.T, root string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, ".intermem", "log"))
	if err != nil {
		t.Fatalf("no log: %v", err)
	}
	return string(b)
}

func explode(m map[string]int) { m["x"] = 1 }

// TestHookPanicLogsStack: a panic in a hook's body is one log line with
// the panic and the stack from where it was raised; the hook prints
// nothing and exits 0.
func TestHookPanicLogsStack(t *testing.T) {
	root, vars := hookProject(t)
	var out, errb bytes.Buffer
	payload := `{"session_id":"s1","cwd":"` + root + `","hook_event_name":"Stop"}`
	env := cli.New(vars, root, strings.NewReader(payload), &out, &errb)
	code := Run(env, nil, Options{Name: "intermem-test"}, func(context.Context, *Hook) ([]byte, error) {
		explode(nil)
		return nil, nil
	})
	if code != 0 || out.Len() != 0 || errb.Len() != 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
	log := readLog(t, root)
	if strings.Count(log, "\n") != 1 {
		t.Errorf("want one log line:\n%s", log)
	}
	for _, want := range []string{
		"Stop: internal error: assignment to entry in nil map at pkg/hookio.explode (panic_test.go:",
		" < pkg/hookio.TestHookPanicLogsStack.func1 (panic_test.go:",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the log does not say %q:\n%s", want, log)
		}
	}
}

// panickyStdin panics when the hook reads its payload: a panic outside
// the body, before the payload named the project.
type panickyStdin struct{}

func (panickyStdin) Read([]byte) (int, error) { panic("stdin exploded") }

// TestHookPanicOutsideBody: a panic around the body is logged too, in the
// project CLAUDE_PROJECT_DIR names, with its stack; exit 0.
func TestHookPanicOutsideBody(t *testing.T) {
	root, vars := hookProject(t)
	var out bytes.Buffer
	env := cli.New(vars, root, panickyStdin{}, &out, &out)
	code := Run(env, nil, Options{Name: "intermem-test"}, func(context.Context, *Hook) ([]byte, error) {
		t.Error("the body ran")
		return nil, nil
	})
	if code != 0 || out.Len() != 0 {
		t.Fatalf("exit %d, output %q", code, out.String())
	}
	log := readLog(t, root)
	if !strings.Contains(log, "hook: internal error: stdin exploded at pkg/hookio.panickyStdin.Read (panic_test.go:") {
		t.Errorf("log:\n%s", log)
	}
}
