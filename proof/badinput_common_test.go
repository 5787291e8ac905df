// What the bad-input proofs (badinput_*_test.go) share: running a
// command with a hang detector and a FIFO watch, the state of every path a
// user owns, the hook rules and the "error and hint" rule for commands.

package proof

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hangLimit ends a command that has not finished: not a performance
// bound, a last-resort hang detector (commands finish in seconds even on
// a 100,000-line memory; a read of a FIFO is caught by watchFIFOs first).
const hangLimit = 2 * time.Minute

// watchFIFOs watches FIFOs while a command runs. A FIFO that a command
// opens for reading blocks it until someone writes, which in real life is
// never; the watcher notices the reader (a non-blocking open for writing
// succeeds only while a reader has the FIFO open), records it, and closes
// its end at once, so the reader sees end-of-file and the test goes on.
// stop returns the FIFOs that were opened.
func watchFIFOs(paths []string) (stop func() []string) {
	if len(paths) == 0 {
		return func() []string { return nil }
	}
	done := make(chan struct{})
	var opened []string
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		seen := map[string]bool{}
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			for _, p := range paths {
				fd, err := syscall.Open(p, syscall.O_WRONLY|syscall.O_NONBLOCK, 0)
				if err == nil {
					syscall.Close(fd)
					if !seen[p] {
						seen[p] = true
						opened = append(opened, p)
					}
				}
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() []string {
		close(done)
		<-finished
		return opened
	}
}

// cliCommands are the commands every hostile case runs, in this order.
var cliCommands = [][]string{
	{"intermem", "status"},
	{"intermem", "status", "--json"},
	{"intermem", "validate"},
	{"intermem", "sweep"},
	{"intermem", "search", "fact"},
	{"intermem", "topics"},
	{"intermem", "context"},
	{"intermem-synthesize", "plan"},
	{"intermem-synthesize", "plan", "--json"},
	{"intermem-synthesize", "apply", "--approve", "all"},
	{"intermem-recover"},
}

// runLimited runs a binary like fixture.run, but ends it at hangLimit.
func (f *fixture) runLimited(stdin string, extraEnv []string, bin string, args ...string) (r result, wall time.Duration, hung bool) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, bin), args...)
	cmd.WaitDelay = time.Second
	cmd.Dir = f.root
	cmd.Env = f.env(extraEnv...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	t0 := time.Now()
	err := cmd.Run()
	wall = time.Since(t0)
	r = result{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return r, wall, true
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		f.t.Fatalf("run %s: %v", bin, err)
	}
	return r, wall, false
}

// fsState maps every path under the project (but .intermem/ when it is
// intermem's directory) and the memory dir to its type and bytes, so
// FIFOs, symlinks and directories compare too.
func fsState(t *testing.T, f *fixture) map[string]string {
	t.Helper()
	out := map[string]string{}
	for prefix, base := range map[string]string{"proj": f.root, "mem": f.memDir} {
		filepath.WalkDir(base, func(path string, d fs.DirEntry, err error) error {
			rel, _ := filepath.Rel(base, path)
			key := prefix + "/" + filepath.ToSlash(rel)
			if err != nil {
				out[key] = "unreadable: " + err.Error()
				return nil
			}
			if d.IsDir() && d.Name() == ".intermem" && path != base {
				return filepath.SkipDir
			}
			switch t := d.Type(); {
			case t.IsRegular():
				b, err := os.ReadFile(path)
				if err != nil {
					out[key] = "file (unreadable)"
				} else {
					out[key] = "file:" + string(b)
				}
			case t.IsDir():
				out[key] = "dir"
			case t&fs.ModeSymlink != 0:
				target, _ := os.Readlink(path)
				out[key] = "symlink:" + target
			default:
				out[key] = "special:" + t.String()
			}
			return nil
		})
	}
	return out
}

// abs maps a tree key ("proj/…", "mem/…") to its path.
func (f *fixture) abs(key string) string {
	prefix, rel, _ := strings.Cut(key, "/")
	base := map[string]string{"proj": f.root, "mem": f.memDir}[prefix]
	if base == "" {
		f.t.Fatalf("tree key %q has no proj/ or mem/ prefix", key)
	}
	return filepath.Join(base, filepath.FromSlash(rel))
}

// hostileFixture is a project with curated documents and auto-memory but
// no stable entries, so no command has anything to promote or archive:
// every byte of the user's files must stay as it is.
func hostileFixture(t *testing.T) *fixture {
	return newFixture(t, map[string]string{
		"CLAUDE.md":          "# Project\n\n## Rules\n\n- Be brief.\n",
		"AGENTS.md":          "# Guide\n\n## Architecture\n\n- Handlers live in `internal/http`.\n",
		"internal/http/h.go": "package http\n",
	}, map[string]string{
		"MEMORY.md": "# Memory\n\n## Architecture\n- Requests are parsed in `internal/http/h.go`.\n- [Deploys](topic.md) — Friday freeze\n",
		"topic.md":  "# Topic\n\n## Ops\n- Logs go to journald.\n",
	})
}

// checkCLI: a command either succeeds or fails clearly: exit 1 with an
// "intermem: error:" line and an "intermem: hint:" line, never a crash.
func checkCLI(t *testing.T, what string, r result, hung, mustWork bool) {
	t.Helper()
	crashed := strings.Contains(r.stderr, "goroutine ") || strings.Contains(r.stderr, "fatal error") || strings.Contains(r.stderr, "panic") || strings.Contains(r.stderr, "internal error")
	switch {
	case hung:
		t.Errorf("%s hung: no exit after %v (stderr so far %q)", what, hangLimit, clip(r.stderr))
	case crashed:
		t.Errorf("%s crashed (exit %d):\n%s", what, r.code, clip(r.stderr))
	case r.code == 0 && strings.Contains(r.stderr, "intermem: error"):
		t.Errorf("%s exits 0 but reports an error:\n%s", what, r.stderr)
	case r.code == 0:
	case mustWork:
		t.Errorf("%s must work here, but exits %d:\n%s", what, r.code, r.stderr)
	case r.code != 1:
		t.Errorf("%s exits %d; a command that cannot proceed exits 1 (2 is for usage errors)\n%s", what, r.code, r.stderr)
	case !strings.HasPrefix(r.stderr, "intermem: error: ") || !strings.Contains(r.stderr, "\nintermem: hint: "):
		t.Errorf("%s fails without a clear error and hint (want \"intermem: error: …\" then \"intermem: hint: …\"):\n%s", what, r.stderr)
	}
}

// runHooks fires Stop, SessionEnd and SessionStart at the fixture, each
// through the hook front as Claude Code runs it and through the full hook
// it hands over to, and checks the hook rules.
func runHooks(t *testing.T, f *fixture, timeouts map[string]time.Duration, session string, fifos []string) {
	t.Helper()
	for _, h := range []struct{ event, bin, file string }{
		{"Stop", "intermem-hook", "Stop.2.1.197.json"},
		{"Stop", "intermem-snapshot", "Stop.2.1.197.json"},
		{"SessionEnd", "intermem-hook", "SessionEnd.prompt_input_exit.json"},
		{"SessionEnd", "intermem-snapshot", "SessionEnd.prompt_input_exit.json"},
		{"SessionStart", "intermem-hook", "SessionStart.startup.interactive.json"},
		{"SessionStart", "intermem-inject", "SessionStart.startup.interactive.json"},
	} {
		stop := watchFIFOs(fifos)
		r, wall, hung := f.runLimited(payload(t, h.file, session, f.root), nil, h.bin)
		what := h.event + " hook (" + h.bin + ")"
		for _, p := range stop() {
			t.Errorf("%s opened the FIFO %s for reading: without a writer that blocks forever", what, p)
		}
		switch {
		case hung:
			t.Errorf("%s hung", what)
		case r.code != 0:
			t.Errorf("%s exits %d:\n%s", what, r.code, clip(r.stderr))
		case r.stderr != "":
			t.Errorf("%s writes to stderr: %q", what, clip(r.stderr))
		case h.event != "SessionStart" && r.stdout != "":
			t.Errorf("%s prints on stdout: %q", what, clip(r.stdout))
		case wall > timeouts[h.event]:
			t.Errorf("%s took %v, past its hooks.json timeout %v", what, wall, timeouts[h.event])
		}
		if h.event == "SessionStart" {
			if err := checkSessionStartOutput(r.stdout); err != nil {
				t.Errorf("%s printed invalid output (%v): %q", what, err, clip(r.stdout))
			}
		}
	}
}
