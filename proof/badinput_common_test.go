// What the bad-input proofs (badinput_*_test.go) share: running a
// command with a hang detector and a FIFO watch, the state of every path a
// user owns, the hook rules and the "error and hint" rule for commands.

package proof

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A command is hung when it has used no CPU time for stallLimit: blocked
// for good (a read of a FIFO is caught by watchFIFOs first; a lock never
// released, a wait on nothing). Never merely slow: a command over a
// 100,000-line MEMORY.md runs for minutes on a loaded machine (intermem
// validate took 97 s at load 4, and past the former wall-clock limit of
// 2 minutes at load 10), which is no hang. hangLimit is the last resort
// whatever the CPU, for a loop that never ends. Neither is a performance
// bound.
const (
	stallLimit = 30 * time.Second
	hangLimit  = 15 * time.Minute
	// stallTicks is the CPU time, in clock ticks (1/100 s), that counts as
	// running: a blocked Go process's runtime still takes a tick now and then.
	stallTicks = 5
)

// cpuTicks returns the user and system CPU time process pid has used, in
// clock ticks (/proc/PID/stat), or -1 where it cannot be read.
func cpuTicks(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	// The fields after the command name, which is in parentheses and may
	// hold anything: the state is the first, utime the 12th, stime the 13th.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return -1
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return -1
	}
	return u + st
}

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

// runLimited runs a binary like fixture.run, but ends it when it is hung:
// no CPU time used for stallLimit, or still running at hangLimit; why is
// in r.hung.
func (f *fixture) runLimited(stdin string, extraEnv []string, bin string, args ...string) (r result, wall time.Duration, hung bool) {
	f.t.Helper()
	cmd := exec.Command(filepath.Join(binDir, bin), args...)
	cmd.WaitDelay = time.Second
	cmd.Dir = f.root
	cmd.Env = f.env(extraEnv...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		f.t.Fatalf("run %s: %v", bin, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	ran, ranAt := cpuTicks(cmd.Process.Pid), t0
	var err error
	why := ""
wait:
	for {
		select {
		case err = <-done:
			break wait
		case now := <-tick.C:
			if c := cpuTicks(cmd.Process.Pid); c < 0 || c-ran >= stallTicks {
				ran, ranAt = c, now
			}
			switch {
			case ran >= 0 && now.Sub(ranAt) >= stallLimit:
				why = fmt.Sprintf("no CPU time used for %v", stallLimit)
			case now.Sub(t0) >= hangLimit:
				why = fmt.Sprintf("no exit after %v", hangLimit)
			default:
				continue
			}
			cmd.Process.Kill()
			err = <-done
			break wait
		}
	}
	wall = time.Since(t0)
	r = result{stdout: out.String(), stderr: errb.String(), hung: why}
	var ee *exec.ExitError
	switch {
	case why != "":
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
		t.Errorf("%s hung: %s (stderr so far %q)", what, r.hung, clip(r.stderr))
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
			t.Errorf("%s hung: %s", what, r.hung)
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
