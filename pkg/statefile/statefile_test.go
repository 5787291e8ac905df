package statefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if _, err := Read(path, 10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	os.WriteFile(path, []byte("0123456789"), 0o600)
	if b, err := Read(path, 10); err != nil || string(b) != "0123456789" {
		t.Errorf("regular: %q %v", b, err)
	}
	if _, err := Read(path, 9); !errors.Is(err, ErrTooLarge) {
		t.Errorf("over the bound: %v", err)
	}
	os.WriteFile(path, nil, 0o600)
	if b, err := Read(path, 10); err != nil || len(b) != 0 {
		t.Errorf("empty: %q %v", b, err)
	}
	os.Remove(path)
	os.WriteFile(filepath.Join(dir, "target"), []byte("x"), 0o600)
	os.Symlink("target", path)
	if _, err := Read(path, 10); !errors.Is(err, ErrNotRegular) {
		t.Errorf("link: %v", err)
	}
	os.Remove(path)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(path, 10); !errors.Is(err, ErrNotRegular) { // must not block
		t.Errorf("FIFO: %v", err)
	}
	os.Remove(path)
	os.Mkdir(path, 0o700)
	if _, err := Read(path, 10); !errors.Is(err, ErrNotRegular) {
		t.Errorf("directory: %v", err)
	}
	// /proc files say size 0 and hold more: read on to the bound.
	if b, err := Read("/proc/self/status", 1<<20); err == nil && len(b) == 0 {
		t.Errorf("a file whose size the stat does not say: read nothing")
	}
}

// ReadLinked follows a link, and still takes only a regular file, never
// waiting on a FIFO nor reading a device without end.
func TestReadLinked(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "target"), []byte("x"), 0o600)
	link := filepath.Join(dir, "link")
	os.Symlink("target", link)
	if b, err := ReadLinked(link, 10); err != nil || string(b) != "x" {
		t.Errorf("link to a file: %q %v", b, err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{fifo, "/dev/zero", dir} {
		os.Remove(link)
		os.Symlink(target, link)
		if _, err := ReadLinked(link, 10); !errors.Is(err, ErrNotRegular) {
			t.Errorf("link to %s: %v", target, err)
		}
	}
}
