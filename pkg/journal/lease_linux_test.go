//go:build linux

package journal

import (
	"os"
	"path/filepath"
	"testing"
)

// The lease probe sees a writer holding the file open, and its close.
func TestNoWritersSeesAnOpenWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "M.md")
	if err := os.WriteFile(path, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if none, ok := noWriters(r); !ok || !none {
		t.Fatalf("no writer: none=%v ok=%v", none, ok)
	}
	w, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if none, ok := noWriters(r); !ok || none {
		t.Fatalf("a writer holds it open: none=%v ok=%v", none, ok)
	}
	w.Close()
	if none, ok := noWriters(r); !ok || !none {
		t.Fatalf("after the writer closed: none=%v ok=%v", none, ok)
	}
}
