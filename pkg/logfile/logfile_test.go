package logfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func fixed() time.Time { return time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC) }

func TestPrintf(t *testing.T) {
	dir := t.TempDir()
	l := New(filepath.Join(dir, ".intermem", "log"), "prog", fixed, strings.ToUpper)
	l.Printf("one\ntwo %d", 2)
	b, err := os.ReadFile(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("2026-11-01T09:00:00Z prog[%d] ONE | TWO 2\n", os.Getpid())
	if string(b) != want {
		t.Errorf("log = %q, want %q", b, want)
	}
	if st, _ := os.Stat(l.Path()); st.Mode().Perm() != 0o600 {
		t.Errorf("log mode %v, want 0600", st.Mode().Perm())
	}
}

// A log that is a link (to a file standing for ~/.bashrc, or dangling), a
// state directory that is a link, or a FIFO: nothing is written anywhere
// and nothing hangs.
func TestPrintfNeverThroughLinks(t *testing.T) {
	base := t.TempDir()
	home := filepath.Join(base, "home")
	state := filepath.Join(base, "proj", ".intermem")
	for _, d := range []string{home, state} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	bashrc := filepath.Join(home, ".bashrc")
	if err := os.WriteFile(bashrc, []byte("export A=1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(state, "log")

	if err := os.Symlink(bashrc, log); err != nil {
		t.Fatal(err)
	}
	New(log, "p", fixed, nil).Printf("planted name ; rm -rf ~")
	if b, _ := os.ReadFile(bashrc); string(b) != "export A=1\n" {
		t.Errorf("log link: .bashrc is now %q", b)
	}

	os.Remove(log)
	dangling := filepath.Join(home, ".profile")
	if err := os.Symlink(dangling, log); err != nil {
		t.Fatal(err)
	}
	New(log, "p", fixed, nil).Printf("x")
	if _, err := os.Lstat(dangling); err == nil {
		t.Error("dangling log link: its target was created")
	}

	os.Remove(log)
	if err := syscall.Mkfifo(log, 0o600); err != nil {
		t.Fatal(err)
	}
	New(log, "p", fixed, nil).Printf("x") // must return, not block on the FIFO
	os.Remove(log)

	// The state directory itself a link to home.
	if err := os.RemoveAll(state); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(home, state); err != nil {
		t.Fatal(err)
	}
	New(log, "p", fixed, nil).Printf("x")
	if _, err := os.Lstat(filepath.Join(home, "log")); err == nil {
		t.Error("linked state dir: a log was written into the link's target")
	}
}

func TestRotate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "log")
	if err := os.WriteFile(path, []byte(strings.Repeat("x", MaxBytes-10)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	New(path, "p", fixed, nil).Printf("next")
	old, _ := os.ReadFile(path + ".1")
	cur, _ := os.ReadFile(path)
	if len(old) != MaxBytes-9 || !strings.HasSuffix(string(cur), " next\n") || len(cur) > 100 {
		t.Errorf("rotation: log.1 %d bytes, log %q", len(old), cur)
	}
}
