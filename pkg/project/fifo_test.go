package project

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/intermem/intermem/pkg/fifotest"
)

// TestHeadNeverWaitsOnAFIFO: a FIFO in place of HEAD, a loose ref or
// packed-refs is read as no commit, at once: Head (and the project's
// resolution, which reads the same files) never waits for a writer.
func TestHeadNeverWaitsOnAFIFO(t *testing.T) {
	const sha = "0123456789abcdef0123456789abcdef01234567"
	for _, fifo := range []string{"HEAD", "refs/heads/main", "packed-refs"} {
		t.Run(fifo, func(t *testing.T) {
			root := t.TempDir()
			git := filepath.Join(root, ".git")
			if err := os.MkdirAll(filepath.Join(git, "refs/heads"), 0o755); err != nil {
				t.Fatal(err)
			}
			if fifo != "HEAD" {
				os.WriteFile(filepath.Join(git, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
			}
			p := filepath.Join(git, filepath.FromSlash(fifo))
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			data := sha + "\n"
			if fifo == "packed-refs" {
				data = sha + " refs/heads/main\n"
			}
			var got string
			if fifotest.Fed(p, []byte(data), func() { got = Head(root) }) {
				t.Errorf("Head waited for a writer of %s", fifo)
			}
			if got != "" {
				t.Errorf("Head = %q, want none", got)
			}
		})
	}
}
