package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRead: the file as the state directory's own hostile input — a
// missing file is the defaults, a link is never followed, a FIFO never
// waited on, a file over MaxBytes never read, anything not JSON of File's
// shape unusable.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, Name)
	if c, err := Read(dir); err != nil || c.Mode != "" || c.Sources != nil {
		t.Fatalf("missing: %+v, %v", c, err)
	}
	if c, err := Read(filepath.Join(dir, "nothing")); err != nil || c.Mode != "" {
		t.Fatalf("missing state directory: %+v, %v", c, err)
	}
	os.WriteFile(path, []byte(`{"layout":"tiered","mode":"meta","sources":{"interfluence":false},"project":"p"}`), 0o600)
	c, err := Read(dir)
	if err != nil || c.Layout != "tiered" || c.Mode != "meta" || c.Sources["interfluence"] || len(c.Sources) != 1 || c.Project != "p" {
		t.Fatalf("valid: %+v, %v", c, err)
	}
	if got := Mode(dir); got != "meta" {
		t.Fatalf("Mode = %q", got)
	}
	target := filepath.Join(t.TempDir(), "elsewhere.json")
	os.WriteFile(target, []byte(`{"mode":"meta"}`), 0o600)
	bad := map[string]func(){
		"link":      func() { os.Symlink(target, path) },
		"fifo":      func() { syscall.Mkfifo(path, 0o600) },
		"directory": func() { os.Mkdir(path, 0o700) },
		"too large": func() { os.WriteFile(path, []byte(`{"project":"`+strings.Repeat("x", MaxBytes)+`"}`), 0o600) },
		"not json":  func() { os.WriteFile(path, []byte(`{"mode":`), 0o600) },
		"a number":  func() { os.WriteFile(path, []byte(`{"mode":1}`), 0o600) },
	}
	for name, setup := range bad {
		os.RemoveAll(path)
		setup()
		c, err := Read(dir)
		if !errors.Is(err, ErrInvalid) || c.Mode != "" {
			t.Errorf("%s: %+v, %v; want ErrInvalid", name, c, err)
		}
		if got := Mode(dir); got != "" {
			t.Errorf("%s: Mode = %q", name, got)
		}
	}
}
