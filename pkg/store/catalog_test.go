package store

import (
	"path/filepath"
	"slices"
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

// The search index's base is kept in a bucket of its own, so that a
// commit that writes the catalog's generation (every one that changes an
// entry) does not write the base's megabytes again, as it did while the
// base shared BucketCatMeta's leaf with the generation. A base an older
// intermem stored there is read where it is, and moved by the first
// writer of a delta.
func TestIndexBaseApart(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "intermem.db"), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	base := []byte("IMSX" + strings.Repeat("base of the index ", 60_000)) // 1 MB
	update := func(fn func(c *CatalogTx) error) {
		t.Helper()
		if err := s.Update(func(tx *bolt.Tx) error { return fn(Catalog(tx)) }); err != nil {
			t.Fatal(err)
		}
	}
	// Where an older intermem stored it.
	update(func(c *CatalogTx) error {
		if err := c.Bump(); err != nil {
			return err
		}
		if err := c.put(BucketCatMeta, "index", base); err != nil {
			return err
		}
		return c.put(BucketCatMeta, "index_generation", []byte("1"))
	})
	read := func() (b []byte, gen uint64, old bool) {
		s.View(func(tx *bolt.Tx) error {
			c := Catalog(tx)
			raw, g := c.Index()
			b, gen = append([]byte(nil), raw...), g
			old = tx.Bucket(BucketCatMeta).Get([]byte("index")) != nil
			return nil
		})
		return b, gen, old
	}
	if b, gen, old := read(); string(b) != string(base) || gen != 1 || !old {
		t.Fatalf("an older intermem's base: %d bytes at %d (in BucketCatMeta: %v), want %d at 1", len(b), gen, old, len(base))
	}
	update(func(c *CatalogTx) error { return c.PutIndexDelta([]byte("IMSX delta"), 1) })
	if b, gen, old := read(); string(b) != string(base) || gen != 1 || old {
		t.Fatalf("after a delta was stored: %d bytes at %d (left in BucketCatMeta: %v), want %d at 1 in its own bucket", len(b), gen, old, len(base))
	}
	// A commit that bumps the generation and marks an entry changed
	// leaves the base's pages where they were: not written again.
	root := func() (pgid uint64) {
		s.View(func(tx *bolt.Tx) error {
			pgid = uint64(tx.Bucket(BucketCatIndex).RootPage())
			return nil
		})
		return pgid
	}
	before := root()
	update(func(c *CatalogTx) error {
		if err := c.PutEntry(&CatalogEntry{Entry: source.Entry{ID: "a1", Source: "compound", Text: "changed"}}); err != nil {
			return err
		}
		return c.Bump()
	})
	if after := root(); after != before {
		t.Errorf("a commit that changed an entry wrote the base again (its page %d → %d)", before, after)
	}
	update(func(c *CatalogTx) error { return c.PutIndex([]byte("IMSX new base"), 2) })
	if b, gen, old := read(); string(b) != "IMSX new base" || gen != 2 || old {
		t.Fatalf("a new base: %q at %d (old one left: %v)", b, gen, old)
	}
}

// The marks of the ids changed since the index's base are keyed by the
// generation they were written at, then the id, so that one
// transaction's marks lie together after every earlier one's (keyed by
// the id alone, each was written in a leaf of its own, at random). Marks
// an older intermem wrote, keyed by the id alone, are still read, and
// cleared with the rest when a base is stored.
func TestChangedMarks(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "intermem.db"), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	update := func(fn func(c *CatalogTx) error) {
		t.Helper()
		if err := s.Update(func(tx *bolt.Tx) error { return fn(Catalog(tx)) }); err != nil {
			t.Fatal(err)
		}
	}
	put := func(c *CatalogTx, ids ...string) error {
		for _, id := range ids {
			if err := c.PutEntry(&CatalogEntry{Entry: source.Entry{ID: id, Source: "compound", Text: id}}); err != nil {
				return err
			}
		}
		return c.Bump()
	}
	update(func(c *CatalogTx) error {
		if err := c.PutIndex([]byte("IMSX base"), 0); err != nil {
			return err
		}
		// An older intermem's mark.
		return c.put(BucketCatMeta, "changed\x00b0", []byte("1"))
	})
	update(func(c *CatalogTx) error { return put(c, "f1", "a1") })
	update(func(c *CatalogTx) error { return put(c, "c2", "b0", "f1") })
	var keys []string
	s.View(func(tx *bolt.Tx) error {
		c := Catalog(tx)
		if got, want := c.IndexChanged(), []string{"a1", "b0", "c2", "f1"}; !slices.Equal(got, want) {
			t.Errorf("ids changed: %q, want %q", got, want)
		}
		keys = c.changedKeys()
		return nil
	})
	want := []string{"changed\x00b0",
		"changes\x00\x00\x00\x00\x00\x00\x00\x00\x00a1", "changes\x00\x00\x00\x00\x00\x00\x00\x00\x00f1",
		"changes\x00\x00\x00\x00\x00\x00\x00\x00\x01b0", "changes\x00\x00\x00\x00\x00\x00\x00\x00\x01c2", "changes\x00\x00\x00\x00\x00\x00\x00\x00\x01f1"}
	if !slices.Equal(keys, want) {
		t.Errorf("marks %q, want %q", keys, want)
	}
	update(func(c *CatalogTx) error { return c.PutIndex([]byte("IMSX new base"), 2) })
	s.View(func(tx *bolt.Tx) error {
		if ids := Catalog(tx).IndexChanged(); len(ids) != 0 {
			t.Errorf("after a new base, ids changed: %q", ids)
		}
		return nil
	})
}

// Committed reports a write transaction's id once it committed, never
// when it rolled back, and never for a read-only one; the next write
// transaction's ID is the last committed one's plus one, which tells a
// caller that nothing was committed in between.
func TestCommittedID(t *testing.T) {
	st, err := Open(filepath.Join(t.TempDir(), "intermem.db"), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var got []int
	update := func(fail bool) (id int) {
		st.Update(func(tx *bolt.Tx) error {
			c := Catalog(tx)
			id = c.ID()
			c.Committed(func(id int) { got = append(got, id) })
			if fail {
				return bolt.ErrTxClosed // any error rolls back
			}
			return nil
		})
		return id
	}
	first := update(false)
	rolled := update(true)
	next := update(false)
	st.View(func(tx *bolt.Tx) error {
		Catalog(tx).Committed(func(id int) { got = append(got, -id) })
		return nil
	})
	if rolled != first+1 || next != first+1 {
		t.Errorf("transaction ids %d, %d (rolled back), %d", first, rolled, next)
	}
	if !slices.Equal(got, []int{first, next}) {
		t.Errorf("committed %v, want %v", got, []int{first, next})
	}
	if id := Catalog(nil).ID(); id != 0 {
		t.Errorf("without a store, ID %d", id)
	}
}
