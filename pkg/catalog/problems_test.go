package catalog

import (
	"os"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/source"
	"github.com/intermem/intermem/pkg/source/sources"
	"github.com/intermem/intermem/pkg/store"
)

// TestProblemsAreRedacted: a problem whose message quotes a secret the
// file holds reaches neither the build's report (Fresh, the source's
// problems) nor the store in the clear, whatever the source did with it —
// the catalog redacts every message, as it redacts every entry — and the
// same file built again reports nothing new (the stored message is the
// redacted one).
func TestProblemsAreRedacted(t *testing.T) {
	const secret = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
	f := newFixture(t)
	f.write("ids/a.txt", "a1 the spool keeps its segments\n!token "+secret+" is not a line\n")
	reg, err := source.NewRegistry(append(sources.Registry().All(), idSource{})...)
	if err != nil {
		t.Fatal(err)
	}
	build := func() (fresh, all []source.Problem) {
		t.Helper()
		f.now = f.now.Add(1)
		if err := f.st.Update(func(tx *bolt.Tx) error {
			cfg := f.cfg()
			cfg.Registry = reg
			c, err := Build(store.Catalog(tx), cfg)
			if err != nil {
				return err
			}
			fresh = c.Fresh()
			for _, info := range c.Sources() {
				if info.Name == "ids" {
					all = info.Problems
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return fresh, all
	}
	fresh, all := build()
	if len(fresh) != 1 || len(all) != 1 {
		t.Fatalf("problems: fresh %v, source's %v; want one each", fresh, all)
	}
	for _, p := range append(fresh, all...) {
		if strings.Contains(p.Message, secret[:8]) {
			t.Errorf("problem in the clear: %q", p.Message)
		}
		if !strings.Contains(p.Message, "[REDACTED:") || !strings.Contains(p.Message, "is not a line") {
			t.Errorf("problem %q: want the secret redacted and the rest kept", p.Message)
		}
	}
	if fresh, _ := build(); len(fresh) != 0 {
		t.Errorf("the unchanged file reported again: %v", fresh)
	}
	var db []byte
	if err := f.st.View(func(tx *bolt.Tx) error {
		var err error
		db, err = os.ReadFile(tx.DB().Path())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(db), secret[:8]) {
		t.Errorf("the store holds the secret in the clear")
	}
}
