// Package cli holds what every intermem binary shares at its edge: the
// process environment (with the INTERMEM_NOW clock override), the
// "intermem: error: … / intermem: hint: …" message style, flag sets that
// never call os.Exit, and the one panic recovery of every Main (panic.go).
//
// Each cmd/<name>/main.go is a few lines that call a Main function with the
// real process state; everything below it takes an Env instead of reading
// globals, so tests run the same code in-process with a fake environment.
package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/intermem/intermem/pkg/clienv"
)

// Env is the process environment as seen by a command (clienv.Env).
type Env = clienv.Env

// New builds an Env from "KEY=value" strings, as returned by os.Environ.
func New(environ []string, dir string, stdin io.Reader, stdout, stderr io.Writer) *Env {
	return clienv.New(environ, dir, stdin, stdout, stderr)
}

// FromOS builds the Env of the running process.
func FromOS() *Env { return clienv.FromOS() }

// The terminal safety of every binary's output (clienv's escape.go).
type SafeWriter = clienv.SafeWriter

func Unsafe(r rune) bool                    { return clienv.Unsafe(r) }
func Escape(s string) string                { return clienv.Escape(s) }
func Line(s string) string                  { return clienv.Line(s) }
func EscapeJSON(b []byte) []byte            { return clienv.EscapeJSON(b) }
func NewSafeWriter(w io.Writer) *SafeWriter { return clienv.NewSafeWriter(w) }
func Raw(w io.Writer) io.Writer             { return clienv.Raw(w) }

// Error is a command failure with an optional hint and exit status. Commands
// return it (or any error) from Run; Report prints it in the house style.
type Error struct {
	Err  error
	Hint string
	Code int // exit status; 0 means 1
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Errorf builds an *Error with a hint.
func Errorf(hint string, format string, args ...any) *Error {
	return &Error{Err: fmt.Errorf(format, args...), Hint: hint}
}

// WithHint attaches a hint to err.
func WithHint(err error, hint string) error {
	if err == nil {
		return nil
	}
	return &Error{Err: err, Hint: hint}
}

// Usagef reports a usage error: exit status 2, with a hint to run --help.
// (Hooks take no usage errors: they always exit 0.)
func Usagef(format string, args ...any) error {
	return &Error{Err: fmt.Errorf(format, args...), Code: 2, Hint: "run with --help for usage"}
}

// Report prints err as "intermem: error: …" (and "intermem: hint: …") and
// returns the exit status to use. flag.ErrHelp exits 0 without a message.
func Report(stderr io.Writer, err error) int {
	if err == nil {
		return 0
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	code := 1
	msg := err.Error()
	var hint string
	var ce *Error
	if errors.As(err, &ce) {
		hint = ce.Hint
		if ce.Code != 0 {
			code = ce.Code
		}
	}
	fmt.Fprintf(stderr, "intermem: error: %s\n", msg)
	var p *Panic
	if errors.As(err, &p) {
		for _, f := range p.Frames {
			fmt.Fprintf(stderr, "\tat %s\n", f)
		}
		hint = "this is a bug in intermem; please report it with the lines above"
	}
	if hint != "" {
		fmt.Fprintf(stderr, "intermem: hint: %s\n", hint)
	}
	return code
}

// WriteJSON writes v as indented JSON (HTML characters as themselves),
// escaped by EscapeJSON, to w, or to the writer under w when w is a
// SafeWriter: the --json output of every command.
func WriteJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := Raw(w).Write(EscapeJSON(buf.Bytes()))
	return err
}
