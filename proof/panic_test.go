package proof

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPanicEveryMain: a panic, raised in the real binaries by the
// failpoint build (INTERMEM_FAILPOINT=panic:NAME), is recovered the same
// way by every Main. A command prints "intermem: error: internal error:
// …", the stack from where it was raised and a hint, exits 1 (never Go's
// status 2 and crash dump), and releases its lock: the operation it
// interrupted is resumed by the next writer. A hook exits 0, prints
// nothing, and logs the panic with its stack on one line.
func TestPanicEveryMain(t *testing.T) {
	f := newFixture(t, map[string]string{"CLAUDE.md": "# Project\n"}, map[string]string{
		"MEMORY.md": "# Memory\n\n## Build\n- The project builds with make.\n",
	})
	f.layout = "flat"
	f.sessions(3)
	if n := len(candidates(f.planJSON())); n != 1 {
		t.Fatalf("the plan offers %d candidates, want 1", n)
	}

	r := f.run("", []string{"INTERMEM_FAILPOINT=panic:promote:after-journal"}, "intermem-synthesize", "apply", "--approve", "all", "--target", "1=CLAUDE.md")
	if r.code != 1 || r.stdout != "" {
		t.Fatalf("apply that panics: exit %d, stdout %q\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
	if lines[0] != "intermem: error: internal error: failpoint promote:after-journal" ||
		!strings.HasPrefix(lines[1], "\tat pkg/failpoint.Inject (on.go:") ||
		lines[len(lines)-1] != "intermem: hint: this is a bug in intermem; please report it with the lines above" ||
		!strings.Contains(r.stderr, "\tat pkg/journal.(*Journal).Run (journal.go:") ||
		strings.Contains(r.stderr, "goroutine ") {
		t.Errorf("apply's stderr:\n%s", r.stderr)
	}
	// The lock was released and the operation is whole in the journal:
	// the next writer completes it.
	if rep := f.recoverJSON(); len(rep.Incomplete) != 1 {
		t.Fatalf("after the panic: %+v", rep)
	}
	f.must("intermem-recover", "--resume")
	if got := readFile(t, filepath.Join(f.root, "CLAUDE.md")); !strings.Contains(got, "- The project builds with make. <!-- intermem:") {
		t.Errorf("CLAUDE.md after --resume:\n%s", got)
	}

	// The hooks: exit 0, no output, one log line with the stack.
	log := filepath.Join(f.root, ".intermem", "log")
	for _, h := range []struct{ bin, event string }{{"intermem-snapshot", "Stop"}, {"intermem-inject", "SessionStart"}} {
		os.Remove(log)
		r := f.run(hookPayload(h.event, "panic-"+h.event, f.root), []string{"INTERMEM_FAILPOINT=panic:hook:body"}, h.bin)
		if r.code != 0 || r.stdout != "" || r.stderr != "" {
			t.Errorf("%s that panics: exit %d, stdout %q, stderr %q", h.bin, r.code, r.stdout, r.stderr)
		}
		got := readFile(t, log)
		if strings.Count(got, "\n") != 1 || !strings.Contains(got, " "+h.bin+"[") ||
			!strings.Contains(got, h.event+": internal error: failpoint hook:body at pkg/failpoint.Inject (on.go:") ||
			!strings.Contains(got, " < pkg/hookio.Run.func") {
			t.Errorf("%s's log:\n%s", h.bin, got)
		}
	}
}
