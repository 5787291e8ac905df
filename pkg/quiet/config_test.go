package quiet

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/intermem/intermem/pkg/config"
)

// storeFile writes a file whose two meta pages check out, last committed
// transaction txid.
func storeFile(t *testing.T, path string, txid uint64) {
	t.Helper()
	b := make([]byte, 2*4096)
	copy(b[pageHeader:], metaOf(4096, txid))
	copy(b[4096+pageHeader:], metaOf(4096, txid-1))
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestConfigBindsTheCopy: the binding changes whenever config.json is
// created, written, replaced (by a link too) or removed, the store left as
// it was, so that a copy written before is not used after: what a turn
// records depends on the file (auto-memory switched off, meta mode).
func TestConfigBindsTheCopy(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "intermem.db")
	cfg := filepath.Join(dir, config.Name)
	storeFile(t, db, 7)
	seen := map[string]string{}
	step := func(name string, change func() error) {
		t.Helper()
		if err := change(); err != nil {
			t.Fatal(err)
		}
		b, txid := StoreStat(db)
		if b == "" || txid != 7 {
			t.Fatalf("%s: binding %q, txid %d", name, b, txid)
		}
		if prev, ok := seen[b]; ok {
			t.Fatalf("%s: binding %q is %s's", name, b, prev)
		}
		seen[b] = name
	}
	step("no config", func() error { return nil })
	step("switched off", func() error { return os.WriteFile(cfg, []byte(`{"sources":{"auto-memory":false}}`), 0o600) })
	step("switched on in place", func() error { return os.WriteFile(cfg, []byte(`{"sources":{"auto-memory":true}}`), 0o600) })
	step("replaced", func() error {
		tmp := cfg + ".tmp"
		if err := os.WriteFile(tmp, []byte(`{"sources":{"auto-memory":true}}`), 0o600); err != nil {
			return err
		}
		return os.Rename(tmp, cfg)
	})
	step("a link", func() error {
		if err := os.Remove(cfg); err != nil {
			return err
		}
		return os.Symlink(db, cfg)
	})
	if b1, _ := StoreStat(db); seen[b1] != "a link" {
		t.Fatalf("the binding of an unchanged store and config changed: %q", b1)
	}
	if err := os.Remove(cfg); err != nil {
		t.Fatal(err)
	}
	if b, _ := StoreStat(db); seen[b] != "no config" {
		t.Fatalf("config removed again: binding %q, want the first one's", b)
	}
}
