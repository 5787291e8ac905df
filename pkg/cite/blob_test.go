package cite

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestBlobHash holds BlobHash to what git hash-object prints (values
// written down from git, not computed here).
func TestBlobHash(t *testing.T) {
	for _, c := range []struct{ data, want string }{
		{"", "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"},
		{"hello\n", "ce013625030ba8dba906f756967f9e9ca394464a"},
	} {
		if got := BlobHash([]byte(c.data)); got != c.want {
			t.Errorf("BlobHash(%q) = %s, want %s", c.data, got, c.want)
		}
	}
}

func TestBlobs(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.go"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Blob(root, "dir"); !errors.Is(err, ErrNotBlob) {
		t.Errorf("Blob of a directory: %v, want ErrNotBlob", err)
	}
	got := Blobs(root, []Result{
		{Citation: Citation{Path: "a.go", Kind: File}, Status: Valid},
		{Citation: Citation{Path: "a.go", Kind: Symbol, Symbol: "X"}, Status: Valid},
		{Citation: Citation{Path: "dir", Kind: Path}, Status: Valid},
		{Citation: Citation{Path: "gone.go", Kind: File}, Status: Broken},
	})
	if len(got) != 1 || got["a.go"] != "ce013625030ba8dba906f756967f9e9ca394464a" {
		t.Errorf("Blobs = %v, want only a.go", got)
	}
}
