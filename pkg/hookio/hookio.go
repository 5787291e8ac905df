// Package hookio is the edge between Claude Code and an intermem hook
// binary. It enforces the rules that keep a hook from ever hurting a
// session:
//
//   - stdin is read to the end of the JSON value, never beyond MaxInput
//     bytes; past the first read, a writer that stops half-way is waited
//     for at most payload.ReadTimeout, wherever it stopped
//     (payload.ReadInput; a lone --help or --version argument is
//     answered without reading it);
//   - the payload is parsed leniently (package payload): unknown fields are
//     ignored and only session_id, cwd and hook_event_name are relied on;
//   - the exit status is always 0 — a Go panic or a flag.ExitOnError
//     failure would exit 2, which Claude Code reads as "block"; a panic,
//     in the body or around it, is logged with its stack (cli.Recovered);
//   - nothing is printed unless the event injects output (SessionStart),
//     and then exactly one JSON object (SessionStartOutput);
//   - the body runs under a deadline; if it overruns, the hook gives up,
//     logs, and exits 0 (bbolt and our atomic renames are crash-safe, so
//     abandoning a write mid-way loses nothing);
//   - every failure becomes one line in the project's .intermem/log;
//   - a directory that is no project (/ or the home directory, package
//     project) gets nothing at all: no state directory, no log line;
//   - a state directory holding anything but real files and directories of
//     the user's (a planted link, package confine) stops the hook before
//     its body: one log line (none when the log itself is the bad entry),
//     nothing read or written there.
package hookio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/clienv"
	"github.com/intermem/intermem/pkg/confine"
	"github.com/intermem/intermem/pkg/failpoint"
	"github.com/intermem/intermem/pkg/logfile"
	"github.com/intermem/intermem/pkg/payload"
	"github.com/intermem/intermem/pkg/project"
)

// MaxInput caps how much of stdin a hook reads (payload.MaxInput).
const MaxInput = payload.MaxInput

// Input is the part of a hook payload intermem relies on.
type Input = payload.Input

// Read reads and parses a hook payload (payload.Read; its errors are
// payload's: ErrEmpty, ErrTooLarge, ErrNotJSON, ErrNoSession).
func Read(r io.Reader) (Input, error) { return payload.Read(r) }

// Parse parses a payload already in memory (payload.Parse).
func Parse(b []byte) (Input, error) { return payload.Parse(b) }

// SessionStartOutput builds the single JSON object SessionStart hooks
// print (payload.SessionStartOutput).
func SessionStartOutput(context string) ([]byte, error) { return payload.SessionStartOutput(context) }

// Hook is what a hook body gets: its parsed input, environment, project,
// log and clock.
type Hook struct {
	Name    string
	Env     *cli.Env
	Input   Input
	Project *project.Project
	Log     *logfile.Log
	Now     time.Time
}

// Options configure Run.
type Options struct {
	Name    string        // program name, for the log
	Timeout time.Duration // deadline for the body
	// MayPrint lists the events whose output is delivered; for any other
	// event the body's output is dropped, so a Stop hook can never force
	// another model turn by accident.
	MayPrint []string
	// Redact, when set, scrubs log lines.
	Redact func(string) string
	// Usage is what --help prints: a person trying the binary by hand
	// gets an answer instead of a process waiting on stdin.
	Usage string
}

// Body is a hook's work. It returns what to print (nil for nothing).
type Body func(ctx context.Context, h *Hook) ([]byte, error)

// Run executes body under the hook rules and returns the exit status,
// which is always 0.
func Run(env *cli.Env, args []string, opts Options, body Body) (code int) {
	start := time.Now()
	// A hook lives for milliseconds and allocates a few megabytes: garbage
	// collection would only cost time. The memory limit makes the collector
	// run after all when the heap grows: a session start that derives a
	// few thousand memory files allocates ~60 MB, almost all garbage, and
	// a hook's peak resident set is held under 30 MB (the binary and the
	// store's mapped pages take the rest).
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(16 << 20)
	h := &Hook{Name: opts.Name, Env: env}
	defer func() {
		if r := recover(); r != nil {
			h.logPanic(opts, cli.Recovered(r))
		}
		code = 0
	}()

	// --help and --version answer a person at a terminal, before stdin is
	// read: Claude Code never passes them.
	if len(args) == 1 {
		switch args[0] {
		case "-h", "-help", "--help", "help":
			fmt.Fprint(env.Stdout, opts.Usage)
			return 0
		case "-version", "--version", "version":
			fmt.Fprintf(env.Stdout, "%s %s\n", opts.Name, clienv.Version)
			return 0
		}
	}

	// Unknown flags from a newer hooks.json are not a reason to fail:
	// note them once the log is known, and carry on.
	fs := cli.FlagSet(opts.Name, "", io.Discard)
	flagErr := fs.Parse(args)

	now, err := env.Now()
	if err != nil {
		now = time.Now().UTC()
	}
	h.Now = now

	in, err := Read(env.Stdin)
	h.Input = in
	dir := in.Dir(env.Get, env.Dir)
	if noProject := h.setupLog(opts, dir); noProject {
		return 0
	}
	if flagErr != nil {
		h.logf("ignoring bad arguments %q: %v", args, flagErr)
	}
	if err != nil {
		h.logf("%s: %v", eventName(in), err)
		return 0
	}
	if h.Project == nil {
		h.logf("%s: no project for cwd %q", eventName(in), dir)
		return 0
	}
	if err := h.Project.CheckState(); err != nil {
		h.logf("%s: skipped: %v", eventName(in), err)
		return 0
	}

	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()

	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		defer func() {
			if p := recover(); p != nil {
				r.err = cli.Recovered(p)
			}
			done <- r
		}()
		failpoint.Inject("hook:body")
		r.out, r.err = body(ctx, h)
	}()

	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		h.logf("%s: gave up after %v", eventName(in), time.Since(start).Round(time.Millisecond))
		return 0
	}
	if r.err != nil {
		var p *cli.Panic
		if errors.As(r.err, &p) {
			h.logf("%s: %v at %s", eventName(in), p, p.Trace())
		} else {
			h.logf("%s: %v", eventName(in), r.err)
		}
		return 0
	}
	if len(r.out) > 0 && mayPrint(opts.MayPrint, in.Event) {
		if _, err := env.Stdout.Write(r.out); err != nil {
			h.logf("%s: write output: %v", eventName(in), err)
		}
	}
	return 0
}

func mayPrint(events []string, ev string) bool {
	for _, e := range events {
		if e == ev {
			return true
		}
	}
	return false
}

func eventName(in Input) string {
	if in.Event == "" {
		return "hook"
	}
	return in.Event
}

// setupLog resolves the project for dir (if possible) and opens its log;
// with no project, failures go to $CLAUDE_PLUGIN_DATA/intermem.log if
// Claude Code gave us a data directory, else nowhere. It reports whether
// dir is no project at all (project.ErrNoProject): the hook then does
// nothing, not even log.
func (h *Hook) setupLog(opts Options, dir string) (noProject bool) {
	if h.Log != nil {
		return false
	}
	now := func() time.Time {
		if h.Now.IsZero() {
			return time.Now()
		}
		return h.Now
	}
	if dir != "" {
		p, err := project.Resolve(h.Env, dir)
		if err == nil {
			h.Project = p
			h.Log = logfile.New(p.Path("log"), opts.Name, now, opts.Redact)
			return false
		}
		if errors.Is(err, project.ErrNoProject) {
			return true
		}
	}
	if d := h.Env.Get("CLAUDE_PLUGIN_DATA"); d != "" {
		h.Log = logfile.New(filepath.Join(d, "intermem.log"), opts.Name, now, opts.Redact)
	}
	return false
}

// logf writes one line to the hook's log, creating the state directory if
// needed. It is safe with no log. A state directory with a bad entry still
// gets the line that says so, unless the bad entry is the directory or the
// log itself (logfile then writes nothing).
func (h *Hook) logf(format string, args ...any) {
	if h.Log == nil {
		return
	}
	if h.Project != nil && strings.HasPrefix(h.Log.Path(), h.Project.StateDir) {
		if err := h.Project.EnsureStateDir(); err != nil && !errors.Is(err, confine.ErrLink) {
			return
		}
	}
	h.Log.Printf(format, args...)
}

// logPanic logs a panic raised outside the body, with its stack, in the
// project's log (found from CLAUDE_PROJECT_DIR or the working directory
// when the payload was not read yet). A panic while doing so goes
// nowhere: the hook still exits 0.
func (h *Hook) logPanic(opts Options, p *cli.Panic) {
	defer func() { _ = recover() }()
	if h.Log == nil {
		dir := h.Env.Get("CLAUDE_PROJECT_DIR")
		if dir == "" {
			dir = h.Env.Dir
		}
		if h.setupLog(opts, dir) {
			return
		}
	}
	h.logf("%s: %v at %s", eventName(h.Input), p, p.Trace())
}

// Logf is logf for hook bodies.
func (h *Hook) Logf(format string, args ...any) { h.logf(format, args...) }
