package cli

import (
	"bytes"
	"strings"
	"testing"
)

// panickyMain is a command's Main whose work panics.
func panickyMain(stderr *bytes.Buffer, work func()) (code int) {
	defer Recover(stderr, &code)
	work()
	return 0
}

func indexBeyond(s []int) int { return s[len(s)] }

// TestRecoverCommand: a panic in a command becomes "intermem: error:
// internal error: …", the stack from the function that panicked (not the
// runtime's frames), a hint, and exit status 1, never Go's status 2.
func TestRecoverCommand(t *testing.T) {
	var stderr bytes.Buffer
	code := panickyMain(&stderr, func() { indexBeyond([]int{1}) })
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
	if len(lines) < 4 {
		t.Fatalf("stderr:\n%s", stderr.String())
	}
	if lines[0] != "intermem: error: internal error: runtime error: index out of range [1] with length 1" {
		t.Errorf("first line %q", lines[0])
	}
	if !strings.HasPrefix(lines[1], "\tat pkg/cli.indexBeyond (panic_test.go:") {
		t.Errorf("the stack does not start where the panic was raised: %q", lines[1])
	}
	if !strings.HasPrefix(lines[2], "\tat pkg/cli.TestRecoverCommand.func1 (panic_test.go:") {
		t.Errorf("second frame %q", lines[2])
	}
	if last := lines[len(lines)-1]; last != "intermem: hint: this is a bug in intermem; please report it with the lines above" {
		t.Errorf("last line %q", last)
	}
	if strings.Contains(stderr.String(), "runtime.") {
		t.Errorf("the runtime's own frames are shown:\n%s", stderr.String())
	}

	// No panic: Recover changes nothing.
	stderr.Reset()
	if code := panickyMain(&stderr, func() {}); code != 0 || stderr.Len() != 0 {
		t.Errorf("no panic: exit %d, stderr %q", code, stderr.String())
	}
}

// TestRecoveredTrace: a panic with a value of any type, on one line for
// a log, innermost frame first.
func TestRecoveredTrace(t *testing.T) {
	var p *Panic
	func() {
		defer func() { p = Recovered(recover()) }()
		panic(struct{ N int }{7})
	}()
	if p.Error() != "internal error: {7}" {
		t.Errorf("Error() = %q", p.Error())
	}
	if tr := p.Trace(); !strings.HasPrefix(tr, "pkg/cli.TestRecoveredTrace.func1 (panic_test.go:") || !strings.Contains(tr, " < pkg/cli.TestRecoveredTrace (panic_test.go:") {
		t.Errorf("Trace() = %q", tr)
	}
}
