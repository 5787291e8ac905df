package config_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/intermem/intermem/pkg/config"
	"github.com/intermem/intermem/pkg/source/automemory"
)

// TestAutoMemoryIsTheSourcesName: the hooks ask config.On with the name
// the catalog registers the source under.
func TestAutoMemoryIsTheSourcesName(t *testing.T) {
	if config.AutoMemory != automemory.Name {
		t.Fatalf("config.AutoMemory = %q, the source is %q", config.AutoMemory, automemory.Name)
	}
}

// TestMemoryOff: only a usable file that maps the source to false (or
// null) switches it off; a missing file, another source switched off, and
// an unusable file (not JSON, a link to a file that would switch it off)
// leave it on, as a session start reads them.
func TestMemoryOff(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, config.Name)
	elsewhere := filepath.Join(t.TempDir(), "off.json")
	if err := os.WriteFile(elsewhere, []byte(`{"sources":{"auto-memory":false}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		make func() error
		off  bool
	}{
		{"missing", func() error { return nil }, false},
		{"false", func() error { return os.WriteFile(path, []byte(`{"sources":{"auto-memory":false}}`), 0o600) }, true},
		{"null", func() error { return os.WriteFile(path, []byte(`{"sources":{"auto-memory":null}}`), 0o600) }, true},
		{"true", func() error { return os.WriteFile(path, []byte(`{"sources":{"auto-memory":true}}`), 0o600) }, false},
		{"another source", func() error { return os.WriteFile(path, []byte(`{"sources":{"interfluence":false}}`), 0o600) }, false},
		{"not JSON", func() error { return os.WriteFile(path, []byte(`{"sources":{"auto-memory":false},}`), 0o600) }, false},
		{"a link", func() error { return os.Symlink(elsewhere, path) }, false},
	}
	for _, c := range cases {
		if err := os.RemoveAll(path); err != nil {
			t.Fatal(err)
		}
		if err := c.make(); err != nil {
			t.Fatal(err)
		}
		if got := config.MemoryOff(dir); got != c.off {
			t.Errorf("%s: MemoryOff = %v, want %v", c.name, got, c.off)
		}
	}
}
