package store

import (
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/source"
)

// A schema-2 store (before the catalog) is migrated by the first
// read-write open: its data kept, the catalog's buckets made, the schema
// 3. Read-only, it is usable as it is: the catalog reads as empty.
func TestMigrateFrom2AddsCatalog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "intermem.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	v2 := []string{"meta", "sessions", "entries", "seen", "files", "plans", "decisions", "promoted", "journal", "checks", "facts", "backups"}
	db.Update(func(tx *bolt.Tx) error {
		for _, b := range v2 {
			tx.CreateBucket([]byte(b))
		}
		tx.Bucket(BucketMeta).Put([]byte("schema"), []byte("2"))
		tx.Bucket(BucketMeta).Put([]byte("id"), []byte("0123456789abcdef0123456789abcdef"))
		return tx.Bucket(BucketFacts).Put([]byte("aaaa"), []byte(`{"confidence":0.8,"at":"2026-01-02T03:04:05Z"}`))
	})
	db.Close()

	r, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	r.View(func(tx *bolt.Tx) error {
		c := Catalog(tx)
		if _, ok := c.File(FileKey("compound", "a.md")); ok {
			t.Error("a schema-2 store has a catalog file")
		}
		// Writes through a read-only transaction are held, not stored.
		c.PutFile(&CatalogFile{Source: "compound", Path: "a.md", IDs: []string{"x"}})
		if f, ok := c.File(FileKey("compound", "a.md")); !ok || f.IDs[0] != "x" {
			t.Errorf("held write not read back: %+v %v", f, ok)
		}
		return nil
	})
	r.Close()

	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.View(func(tx *bolt.Tx) error {
		if v := string(tx.Bucket(BucketMeta).Get([]byte("schema"))); v != "5" {
			t.Errorf("schema = %q, want 5", v)
		}
		for _, b := range [][]byte{BucketCatFiles, BucketCatBlobs, BucketCatEntries, BucketCatMeta, BucketOverlay} {
			if tx.Bucket(b) == nil {
				t.Errorf("no bucket %s", b)
			}
		}
		if tx.Bucket(BucketCatFiles).Get([]byte(FileKey("compound", "a.md"))) != nil {
			t.Error("a read-only open's held write reached the store")
		}
		var f Fact
		if ok, _ := Get(tx, BucketFacts, "aaaa", &f); !ok || f.Confidence != 0.8 {
			t.Errorf("fact lost in migration: %+v", f)
		}
		if ID(tx) != "0123456789abcdef0123456789abcdef" {
			t.Errorf("id changed: %q", ID(tx))
		}
		return nil
	})
}

// Held writes merge with the stored records in key order: overwritten,
// deleted and new keys each seen once.
func TestCatalogTxHeldWritesMerge(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "intermem.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	put := func(c *CatalogTx, id, text string) {
		if err := c.PutEntry(&CatalogEntry{Entry: source.Entry{ID: id, Source: "compound", Text: text}}); err != nil {
			t.Fatal(err)
		}
	}
	s.Update(func(tx *bolt.Tx) error {
		c := Catalog(tx)
		for _, id := range []string{"b", "d", "f"} {
			put(c, id, "stored")
		}
		return nil
	})
	s.View(func(tx *bolt.Tx) error {
		c := Catalog(tx)
		put(c, "a", "held")
		put(c, "d", "held")
		c.DeleteEntry("f", "compound")
		put(c, "g", "held")
		var got []string
		c.Entries(func(e *CatalogEntry) error {
			got = append(got, e.ID+"="+e.Text)
			return nil
		})
		if want := "a=held b=stored d=held g=held"; strings.Join(got, " ") != want {
			t.Errorf("entries = %q, want %q", strings.Join(got, " "), want)
		}
		if es := c.EntriesOf("d"); len(es) != 1 || es[0].Text != "held" {
			t.Errorf("EntriesOf(d) = %+v", es)
		}
		return nil
	})
}
