package cite

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
)

// mkfifo makes a FIFO at rel under root.
func mkfifo(t *testing.T, root, rel string) string {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	return p
}

// feedWhileWaiting runs f and, for as long as it has not returned, feeds
// data to whoever waits to read the FIFO at path: an open that would block
// for a writer is given one, so that code that waits on the FIFO ends
// (with data read from it) instead of hanging the test. It reports whether
// anyone ever waited.
func feedWhileWaiting(path string, data []byte, f func()) (waited bool) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	for {
		select {
		case <-done:
			return waited
		default:
		}
		// Without a reader this open fails with ENXIO at once; it
		// succeeds only while a reader has the FIFO open.
		w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			runtime.Gosched()
			continue
		}
		waited = true
		w.Write(data)
		w.Close()
	}
}

// TestCheckFIFO: a FIFO the project holds, cited with a symbol, is not
// waited on (validate and memory_validate used to hang on it forever); its
// symbol cannot be checked, and it has no blob hash.
func TestCheckFIFO(t *testing.T) {
	root := t.TempDir()
	p := mkfifo(t, root, "src/fifo.go")
	c := NewChecker(root)
	var rs []Result
	var blobErr error
	waited := feedWhileWaiting(p, []byte("func handleFifo() {}\n"), func() {
		rs = c.Check(Extract("Evidence: src/fifo.go:1, handleFifo()"))
		_, blobErr = Blob(root, "src/fifo.go")
	})
	if waited {
		t.Error("the check waited for a writer of the FIFO")
	}
	var sym *Result
	for i := range rs {
		if rs[i].Kind == Symbol {
			sym = &rs[i]
		}
	}
	if sym == nil {
		t.Fatalf("no symbol citation among %+v", rs)
	}
	if sym.Status != Unchecked {
		t.Errorf("symbol in a FIFO: %s (%s), want %s", sym.Status, sym.Detail, Unchecked)
	}
	if !errors.Is(blobErr, ErrNotBlob) {
		t.Errorf("Blob of a FIFO: %v, want ErrNotBlob", blobErr)
	}
}
