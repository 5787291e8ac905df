package inject

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestReadFIFONeverBlocks: a FIFO put in a memory file's place, or behind
// its link, after the listing is refused at once; opened without
// O_NONBLOCK, the read waited for a writer that never comes, holding the
// session start until its deadline.
func TestReadFIFONeverBlocks(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	link := filepath.Join(dir, "topic.md")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, link} {
		done := make(chan error, 2)
		go func() {
			_, _, _, err := readFP(p)
			done <- err
		}()
		go func() {
			_, err := readLimited(p, 1<<20)
			done <- err
		}()
		for range 2 {
			select {
			case err := <-done:
				if err == nil {
					t.Errorf("%s: read a FIFO as a memory file", filepath.Base(p))
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("%s: a read of a FIFO is still waiting for a writer", filepath.Base(p))
			}
		}
	}
}
