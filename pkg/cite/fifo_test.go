package cite

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/intermem/intermem/pkg/fifotest"
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

// TestCheckFIFO: a FIFO the project holds, cited with a symbol, is not
// waited on (validate and memory_validate used to hang on it forever); its
// symbol cannot be checked, and it has no blob hash.
func TestCheckFIFO(t *testing.T) {
	root := t.TempDir()
	p := mkfifo(t, root, "src/fifo.go")
	c := NewChecker(root)
	var rs []Result
	var blobErr error
	waited := fifotest.Fed(p, []byte("func handleFifo() {}\n"), func() {
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
