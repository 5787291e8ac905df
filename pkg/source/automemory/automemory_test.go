package automemory

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/intermem/intermem/pkg/source"
)

// ScanFiles hands over, file by file, exactly the entries ScanAll returns
// for each file: a pointer whose file exists is left out, the same line
// pointing to a missing file is a fact, and a file pointed into from a
// sub-folder is brought in.
func TestScanFilesIsScanAll(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("MEMORY.md", "# Index\n- [Retries](retries.md) — backoff\n- [Gone](gone.md) — the only copy of this fact\n- [Notes](notes/deep.md)\n- Plain fact about invoices in `internal/pay.go`.\n")
	write("retries.md", "---\nname: retries\ndescription: backoff with jitter\ntype: feedback\n---\nUse jitter.\n")
	write("facts.md", "# Facts\n- One fact.\n- Another fact.\n")
	write("notes/deep.md", "- A fact in a sub-folder.\n")
	env := source.Env{MemoryDir: dir}
	all, files, probs := Source{}.ScanAll(env, nil)
	bf := Source{}.ScanFiles(env, nil)
	files2, probs2, entries := bf.Files, bf.Problems, bf.Entries
	if !reflect.DeepEqual(files, files2) || !reflect.DeepEqual(probs, probs2) {
		t.Fatalf("files or problems differ:\n%v %v\n%v %v", files, probs, files2, probs2)
	}
	if len(files) != 4 {
		t.Fatalf("%d files, want 4 (the sub-folder's pointed-to file included)", len(files))
	}
	var got []source.Entry
	for _, f := range files {
		got = append(got, entries(f.Path)...)
	}
	if len(all) != 6 || !reflect.DeepEqual(got, all) {
		t.Fatalf("ScanFiles' entries, file by file:\n%v\nScanAll's (want 6):\n%v", got, all)
	}
	if es := entries("memory/none.md"); es != nil {
		t.Fatalf("entries of a path not scanned: %v", es)
	}
}
