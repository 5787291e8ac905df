package continuity

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/catalog"
	"github.com/intermem/intermem/pkg/source"
	"github.com/intermem/intermem/pkg/store"
)

// "Why did we choose bbolt" finds the decision through the catalog, and
// what a backtrack invalidated is not in it.
func TestDecisionsAreSearchable(t *testing.T) {
	root := t.TempDir()
	state := filepath.Join(root, ".intermem")
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(filepath.Join(state, "intermem.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	at := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	var exp []byte
	err = s.Update(func(tx *bolt.Tx) error {
		if _, err := StartPhase(tx, 0, "Discovery", "", "", at); err != nil {
			return err
		}
		if _, _, err := Decide(tx, "bbolt for the store", "one file, no server, nothing to install", nil, "", at); err != nil {
			return err
		}
		if _, err := StartPhase(tx, 1, "Build", "", "", at.Add(time.Hour)); err != nil {
			return err
		}
		if _, _, err := Decide(tx, "SQLite for the store after all", "joins across buckets", nil, "", at.Add(time.Hour)); err != nil {
			return err
		}
		if _, err := StartPhase(tx, 0, "", Continue, "", at.Add(2*time.Hour)); err != nil {
			return err
		}
		exp, err = Export(tx)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteExport(state, exp); err != nil {
		t.Fatal(err)
	}
	var hits []catalog.Hit
	err = s.View(func(tx *bolt.Tx) error {
		c, err := catalog.Build(store.Catalog(tx), catalog.Config{Env: source.Env{Root: root}, Now: at.Add(3 * time.Hour)})
		if err != nil {
			return err
		}
		hits, err = c.Search(catalog.Query{Text: "why did we choose bbolt for the store", Now: at.Add(3 * time.Hour)})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || hits[0].Source != "continuity" || hits[0].Title != "bbolt for the store" {
		t.Fatalf("hits = %+v", hits)
	}
	for _, h := range hits {
		if h.Title == "SQLite for the store after all" {
			t.Errorf("an invalidated decision was found: %+v", h)
		}
	}
}
