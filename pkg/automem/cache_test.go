package automem

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/intermem/intermem/pkg/wire"
)

// mapCache is a FileCache in memory, keyed by name and size, counting
// what it serves.
type mapCache struct {
	files map[string][]byte
	hits  int
}

func (m *mapCache) key(name string, fi fs.FileInfo) string {
	b, _ := json.Marshal([]any{name, fi.Size(), fi.ModTime().UnixNano()})
	return string(b)
}

func (m *mapCache) Load(name string, fi fs.FileInfo) (*File, bool) {
	b, ok := m.files[m.key(name, fi)]
	if !ok {
		return nil, false
	}
	r := wire.NewReader(b, "")
	f := ReadFile(r, name)
	if r.Done() != nil {
		return nil, false
	}
	m.hits++
	return f, true
}

func (m *mapCache) Save(name string, fi fs.FileInfo, f *File) {
	if b, ok := AppendFile(nil, f); ok {
		m.files[m.key(name, fi)] = b
	}
}

// A scan served from the cache has the entries, warnings and load of a
// scan that reads every file, over the whole corpus laid out as one
// directory (pointers resolved across cached files alike), and reads no
// file it holds.
func TestScanCachedMatchesScan(t *testing.T) {
	dir := t.TempDir()
	for name, b := range corpusFiles(t) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// An index whose pointers name corpus files, so resolution matters.
	index := "# Memory\n\n- [No fabrication](1000ssam__claude-config__memory_feedback_no-fabrication.md) — rule\n- [Gone](gone.md) — deploys need the VPN\n"
	if err := os.WriteFile(filepath.Join(dir, IndexName), []byte(index), 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := &mapCache{files: map[string][]byte{}}
	first, err := ScanCached(dir, c)
	if err != nil {
		t.Fatal(err)
	}
	if c.hits != 0 || len(c.files) != len(want.Files) {
		t.Fatalf("first scan: %d hits, %d cached of %d files", c.hits, len(c.files), len(want.Files))
	}
	second, err := ScanCached(dir, c)
	if err != nil {
		t.Fatal(err)
	}
	if c.hits != len(want.Files) || !second.Cached {
		t.Errorf("second scan: %d hits of %d files, cached=%v", c.hits, len(want.Files), second.Cached)
	}
	for _, got := range []*Dir{first, second} {
		if !reflect.DeepEqual(got.Entries(), want.Entries()) {
			t.Errorf("entries differ from Scan's")
		}
		if got.Load != want.Load || !reflect.DeepEqual(got.Warnings, want.Warnings) {
			t.Errorf("load %+v warnings %v, want %+v %v", got.Load, got.Warnings, want.Load, want.Warnings)
		}
	}
	for _, f := range second.Files {
		if f.Content != nil {
			t.Errorf("%s: a cached file has content", f.Name)
		}
	}
}
