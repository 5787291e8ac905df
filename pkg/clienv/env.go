// Package clienv is the part of package cli that the hook front
// (cmd/intermem-hook) needs, without the rest's dependencies (flag,
// encoding/json): the process environment a command sees (Env, with the
// INTERMEM_NOW clock override), intermem's version, and terminal safety
// (escape.go: Unsafe, Escape, SafeWriter, EscapeJSON). Package cli gives
// every name here under its own (aliases and wrappers), so every other
// binary keeps writing cli.Env; the front imports this package alone, so
// its start-up pays for no flag set and no JSON encoder (about ten page
// faults of a process of two hundred).
package clienv

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// Version is intermem's version, one for every binary; scripts/build.sh sets it with -ldflags
// "-X github.com/intermem/intermem/pkg/clienv.Version=…".
var Version = "0.1.0"

// Env is the process environment as seen by a command: variables, standard
// streams and the clock. The zero value is not usable; build one with
// FromOS or New.
type Env struct {
	vars   map[string]string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Dir is the working directory (the default project directory).
	Dir string
}

// New builds an Env from "KEY=value" strings, as returned by os.Environ.
func New(environ []string, dir string, stdin io.Reader, stdout, stderr io.Writer) *Env {
	vars := make(map[string]string, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	return &Env{vars: vars, Stdin: stdin, Stdout: stdout, Stderr: stderr, Dir: dir}
}

// FromOS builds the Env of the running process.
func FromOS() *Env {
	dir, err := os.Getwd()
	if err != nil {
		dir = "."
	}
	return New(os.Environ(), dir, os.Stdin, os.Stdout, os.Stderr)
}

// Get returns the value of an environment variable, or "".
func (e *Env) Get(key string) string { return e.vars[key] }

// Set changes a variable for this Env only (used by tests and by commands
// that pass a modified environment on).
func (e *Env) Set(key, value string) { e.vars[key] = value }

// Environ returns the variables as "KEY=value" strings.
func (e *Env) Environ() []string {
	out := make([]string, 0, len(e.vars))
	for k, v := range e.vars {
		out = append(out, k+"="+v)
	}
	return out
}

// ErrBadNow is returned when INTERMEM_NOW is set but is not RFC 3339.
var ErrBadNow = errors.New("INTERMEM_NOW is not an RFC 3339 time")

// Now returns the current time, or INTERMEM_NOW when it is set. Tests and
// the demo step through time with it; every binary honours it so that
// "sessions", decay and dates are reproducible.
func (e *Env) Now() (time.Time, error) {
	if v := strings.TrimSpace(e.vars["INTERMEM_NOW"]); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return time.Time{}, fmt.Errorf("%w: %q", ErrBadNow, v)
		}
		return t.UTC(), nil
	}
	return time.Now().UTC(), nil
}
