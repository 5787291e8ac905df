package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strings"
)

// maxFrames bounds the stack a Panic keeps: enough to find the bug, short
// enough for one log line (the log caps a line at 4 KiB).
const maxFrames = 24

// Panic is a recovered panic: its value and the stack from where it was
// raised. No binary may die of a panic (Go's exit status 2 reads as
// "block" to Claude Code, and a command would leave only Go's trace on a
// terminal), so every Main recovers the same way: commands with Recover,
// hooks in package hookio, which logs Error and Trace as one line.
type Panic struct {
	Value any
	// Frames are "function (file:line)", innermost first, from the
	// function that panicked (the runtime's own frames left out).
	Frames []string
}

// Error is "internal error: " and the panic's value.
func (p *Panic) Error() string { return fmt.Sprintf("internal error: %v", p.Value) }

// Trace is Frames on one line, innermost first.
func (p *Panic) Trace() string { return strings.Join(p.Frames, " < ") }

// Recovered wraps the value recover returned, with the stack of the
// panicking goroutine. Call it from the deferred function that recovered:
// only there is the stack still the panic's.
func Recovered(r any) *Panic {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(1, pcs)])
	var all []runtime.Frame
	from := 0
	for {
		f, more := frames.Next()
		all = append(all, f)
		if f.Function == "runtime.gopanic" {
			from = len(all) // what raised it is below
		}
		if !more {
			break
		}
	}
	p := &Panic{Value: r}
	for _, f := range all[from:] {
		if len(p.Frames) == 0 && strings.HasPrefix(f.Function, "runtime.") {
			continue // panicmem, sigpanic, panicIndex: how, not where
		}
		if f.Function == "runtime.goexit" || f.Function == "runtime.main" || len(p.Frames) == maxFrames {
			break
		}
		fn := strings.TrimPrefix(f.Function, "github.com/intermem/intermem/")
		p.Frames = append(p.Frames, fmt.Sprintf("%s (%s:%d)", fn, filepath.Base(f.File), f.Line))
	}
	return p
}

// Recover is the panic recovery of every command's Main, deferred after
// the Main's streams are set up:
//
//	defer cli.Recover(env.Stderr, &code)
//
// A panic becomes "intermem: error: internal error: …", the stack, a hint
// to report it, and exit status 1.
func Recover(stderr io.Writer, code *int) {
	if r := recover(); r != nil {
		*code = Report(stderr, Recovered(r))
	}
}
