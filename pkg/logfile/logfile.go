// Package logfile appends one-line records to intermem's per-project log,
// .intermem/log. Hooks must never print on Stop or SessionEnd and must never
// fail a session, so the log is where failures go. It is bounded: when it
// grows past MaxBytes it is rotated to log.1 (one generation kept), so it
// can never fill a disk. Every line passes through a redactor first, since a
// failure message may quote memory text, and then through clienv.Escape, since
// people read the log on a terminal.
//
// The log is the one file a hook writes on every failure, and its lines
// quote names an attacker may choose (a file name in a memory directory),
// so it is never written through a link: the directory must be a real
// directory of this user's, the file is opened with O_NOFOLLOW (and
// O_NONBLOCK, so a FIFO planted there cannot hang a hook) and must turn out
// a regular file of this user's. When either is not, the line goes
// nowhere: there is no safe place left to say so.
package logfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/intermem/intermem/pkg/clienv"
	"github.com/intermem/intermem/pkg/confine"
)

// MaxBytes is the size at which the log is rotated.
const MaxBytes = 256 << 10

// Log writes to one log file. A nil *Log discards everything, so callers
// that could not resolve a project can still "log".
type Log struct {
	path   string
	prog   string
	now    func() time.Time
	redact func(string) string
}

// New returns a log at path for program prog. redact may be nil.
func New(path, prog string, now func() time.Time, redact func(string) string) *Log {
	if now == nil {
		now = time.Now
	}
	return &Log{path: path, prog: prog, now: now, redact: redact}
}

// Path returns the file the log writes to.
func (l *Log) Path() string {
	if l == nil {
		return ""
	}
	return l.path
}

// Printf appends one line. Newlines in the message are folded so that one
// event is one line. Errors writing the log are ignored: there is nowhere
// left to report them, and logging must never break a hook.
func (l *Log) Printf(format string, args ...any) {
	if l == nil || l.path == "" {
		return
	}
	msg := fmt.Sprintf(format, args...)
	if l.redact != nil {
		msg = l.redact(msg)
	}
	msg = clienv.Escape(strings.ReplaceAll(strings.TrimRight(msg, "\n"), "\n", " | "))
	if len(msg) > 4096 {
		msg = msg[:4096] + "…"
	}
	line := fmt.Sprintf("%s %s[%d] %s\n", l.now().UTC().Format(time.RFC3339), l.prog, os.Getpid(), msg)
	dir := filepath.Dir(l.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return
	}
	if st, err := os.Lstat(dir); err != nil || !st.IsDir() || confine.Owned(dir, st) != nil {
		return
	}
	if st, err := os.Lstat(l.path); err == nil && st.Mode().IsRegular() && st.Size()+int64(len(line)) > MaxBytes {
		_ = os.Rename(l.path, l.path+".1") // renames the file itself, never a link's target
	}
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || confine.Owned(l.path, st) != nil || !st.Mode().IsRegular() {
		return
	}
	_, _ = f.WriteString(line)
}
