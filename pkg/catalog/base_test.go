package catalog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/search"
	"github.com/intermem/intermem/pkg/store"
)

// A hook's new base (NewBase in a read transaction, PutBase in a write
// one) is the base a command's Settle stores, byte for byte, and ranks as
// a plain build over the entries does; it is stored only while needed and
// while the catalog is at the generation it was built at.
func TestNewBaseIsSettle(t *testing.T) {
	f := newFixture(t)
	for i := range 300 {
		f.write(fmt.Sprintf(".clavain/learnings/l%03d.md", i), fmt.Sprintf("Learning %d: the worker pool drains queue %d before shutdown.\n", i, i))
	}
	needed := func() (need bool) {
		f.st.View(func(tx *bolt.Tx) error { need = BaseNeeded(store.Catalog(tx)); return nil })
		return need
	}
	if !needed() {
		t.Fatal("no index stored: a base is needed")
	}
	f.update(func(c *Catalog) {
		if err := c.Settle(); err != nil {
			t.Fatal(err)
		}
	})
	if needed() {
		t.Fatal("an index at the generation needs no base")
	}
	// 60 learnings edited: a delta's worth (maxDelta: 307/8+64 = 102).
	edit := func(from, to int, word string) {
		for i := from; i < to; i++ {
			f.write(fmt.Sprintf(".clavain/learnings/l%03d.md", i), fmt.Sprintf("Learning %d: the invoice renderer %s %d times.\n", i, word, i))
		}
		f.update(func(c *Catalog) {
			if err := c.SettleDelta(); err != nil {
				t.Fatal(err)
			}
		})
	}
	edit(0, 60, "retries")
	if needed() {
		t.Fatal("60 ids changed: a delta brings the index up to date")
	}
	// 60 more: 120 changed since the base, past a delta.
	edit(60, 120, "backs off")
	var gen uint64
	f.st.View(func(tx *bolt.Tx) error {
		ct := store.Catalog(tx)
		if _, at := ct.Index(); at == ct.Generation() {
			t.Errorf("SettleDelta stored the index at the generation with %d ids changed", len(ct.IndexChanged()))
		}
		gen = ct.Generation()
		return nil
	})
	if !needed() {
		t.Fatal("120 ids changed since the base: a new base is needed")
	}
	var base []byte
	f.st.View(func(tx *bolt.Tx) error {
		var err error
		var at uint64
		base, at, err = NewBase(context.Background(), store.Catalog(tx))
		if err != nil || at != gen {
			t.Fatalf("NewBase: at %d of %d: %v", at, gen, err)
		}
		return nil
	})
	// Built at an older generation: not stored.
	putBase := func(gen uint64) (ok bool) {
		if err := f.st.Update(func(tx *bolt.Tx) error {
			var err error
			ok, err = PutBase(store.Catalog(tx), base, gen)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if putBase(gen - 1) {
		t.Fatal("a base built at an older generation was stored")
	}
	if !putBase(gen) {
		t.Fatal("the base was not stored")
	}
	if needed() || putBase(gen) {
		t.Fatal("a base is still needed, or stored twice")
	}
	f.st.View(func(tx *bolt.Tx) error {
		ct := store.Catalog(tx)
		if b, at := ct.Index(); at != gen || string(b) != string(base) || ct.IndexDelta() != nil || len(ct.IndexChanged()) != 0 {
			t.Errorf("stored: base %v at %d of %d, delta %d bytes, %d ids changed",
				string(b) == string(base), at, gen, len(ct.IndexDelta()), len(ct.IndexChanged()))
		}
		return nil
	})
	// What a command's Settle stores as a new base over the same entries
	// (its stored one made undecodable).
	f.update(func(c *Catalog) {
		if err := c.tx.PutIndex([]byte("IMSX\x01"), c.tx.Generation()); err != nil {
			t.Fatal(err)
		}
		if err := c.Settle(); err != nil {
			t.Fatal(err)
		}
		settled, _ := c.tx.Index()
		if string(settled) != string(base) {
			t.Errorf("the hook's base is %d bytes, Settle's %d: not the same", len(base), len(settled))
		}
		// And it ranks as a plain build over the entries.
		var docs []search.Doc
		c.tx.Entries(func(e *store.CatalogEntry) error {
			if e.Gone.IsZero() {
				docs = append(docs, docOf(c.tx, e))
			}
			return nil
		})
		got, err := search.DecodeShared(base)
		if err != nil {
			t.Fatal(err)
		}
		plain := search.Build(docs)
		for _, q := range []string{"invoice renderer retries", "backs off", "worker pool drains queue", "learning 7"} {
			opt := search.Options{Limit: 20, Now: f.now}
			a, b := got.Search(q, opt), plain.Search(q, opt)
			if len(a) == 0 || !slices.EqualFunc(a, b, func(x, y search.Hit) bool { return x.ID == y.ID && x.Score == y.Score }) {
				t.Errorf("%q: the stored base ranks %v, a plain build %v", q, a, b)
			}
		}
	})
}

// BaseNeeded: an index that does not decode, a base or a delta, needs a
// new base; NewBase gives up when its context is done.
func TestBaseNeededUndecodable(t *testing.T) {
	for _, tc := range undecodableIndexes {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.update(func(c *Catalog) {
				if err := c.Settle(); err != nil {
					t.Fatal(err)
				}
				if BaseNeeded(c.tx) {
					t.Fatal("a settled index needs a base")
				}
				plantIndex(t, c, tc.base, tc.delta)
				if !BaseNeeded(c.tx) {
					t.Error("an index that does not decode needs no base")
				}
			})
		})
	}
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for i := range 300 {
		f.write(fmt.Sprintf(".clavain/learnings/l%03d.md", i), fmt.Sprintf("Learning %d.\n", i))
	}
	f.update(func(*Catalog) {})
	f.st.View(func(tx *bolt.Tx) error {
		if _, _, err := NewBase(ctx, store.Catalog(tx)); !errors.Is(err, context.Canceled) {
			t.Errorf("NewBase with its context done: %v", err)
		}
		return nil
	})
}

// A bounded build (Config.MaxWrites, a hook's) of a Whole source writes
// nothing past its bound: it fails with ErrTooManyWrites, counting the
// entries it would write or tombstone, not those of the files it read.
func TestMaxWrites(t *testing.T) {
	f := newFixture(t)
	var facts []string
	for i := range 10 {
		facts = append(facts, fmt.Sprintf("- Fact %d: the spool keeps segment %d.", i, i))
	}
	f.writeMem("facts.md", strings.Join(facts, "\n")+"\n")
	f.update(func(*Catalog) {})
	build := func(max int) error { return buildMaxWrites(f, max) }
	// One fact added to the file of ten: one entry written.
	f.writeMem("facts.md", strings.Join(facts, "\n")+"\n- Fact 10: the spool compacts at night.\n")
	if err := build(1); err != nil {
		t.Fatalf("one entry to write, at most 1: %v", err)
	}
	// Three facts rewritten: three written, three tombstoned.
	for i := range 3 {
		facts[i] += " Revised."
	}
	f.writeMem("facts.md", strings.Join(facts, "\n")+"\n- Fact 10: the spool compacts at night.\n")
	if err := build(5); !errors.Is(err, ErrTooManyWrites) {
		t.Fatalf("six entries to write or tombstone, at most 5: %v", err)
	}
	f.view(func(c *Catalog) {
		if !c.Changed() {
			t.Error("the refused build was stored")
		}
	})
	if err := build(6); err != nil {
		t.Fatalf("six entries to write or tombstone, at most 6: %v", err)
	}
	f.view(func(c *Catalog) {
		if c.Changed() {
			t.Error("the build within its bound was not stored")
		}
	})
}

// buildMaxWrites runs a Build bounded to max writes (Config.MaxWrites) in
// one write transaction of f's store.
func buildMaxWrites(f *fixture, max int) error {
	return f.st.Update(func(tx *bolt.Tx) error {
		cfg := f.cfg()
		cfg.MaxWrites = max
		_, err := Build(store.Catalog(tx), cfg)
		return err
	})
}

// A bounded build refuses as soon as the changed files made so far hold
// more entries to write than its bound, before the next file's are made
// (a whole memory coming in at a session's end), and counts no entry that
// store would not write: at exactly its bound it stores.
func TestMaxWritesEarly(t *testing.T) {
	f := newFixture(t)
	f.update(func(*Catalog) {})
	for _, name := range []string{"a-facts.md", "b-facts.md"} {
		var facts []string
		for i := range 10 {
			facts = append(facts, fmt.Sprintf("- %s fact %d: the spool keeps segment %d.", name, i, i))
		}
		f.writeMem(name, strings.Join(facts, "\n")+"\n")
	}
	build := func(max int) error { return buildMaxWrites(f, max) }
	for _, c := range []struct {
		max   int
		at    string
		other string
	}{{5, "a-facts.md and the files before it", "b-facts.md"}, {19, "b-facts.md and the files before it", "a-facts.md and"}} {
		err := build(c.max)
		if !errors.Is(err, ErrTooManyWrites) || !strings.Contains(err.Error(), c.at) || strings.Contains(err.Error(), c.other) {
			t.Fatalf("twenty entries to write, at most %d: %v, want a refusal at %s", c.max, err, c.at)
		}
	}
	if err := build(20); err != nil {
		t.Fatalf("twenty entries to write, at most 20: %v", err)
	}
	f.view(func(c *Catalog) {
		if c.Changed() {
			t.Error("the build within its bound was not stored")
		}
	})
}

// A build bounded in files (Config.MaxFiles, a hook's) parses at most that
// many changed files of a per-file source, leaves the others' entries as
// they were stored and says so (Partial); builds after it go on until the
// source is whole, and only then is its state trusted again.
func TestMaxFiles(t *testing.T) {
	f := newFixture(t)
	for i := range 5 {
		f.write(fmt.Sprintf(".clavain/learnings/m%d.md", i), fmt.Sprintf("Learning m%d: the spool keeps its segments.\n", i))
	}
	f.update(func(*Catalog) {})
	for i := range 5 {
		f.write(fmt.Sprintf(".clavain/learnings/m%d.md", i), fmt.Sprintf("Learning m%d: the invoice renderer retries.\n", i))
	}
	bounded := func() (partial bool, renderer int) {
		if err := f.st.Update(func(tx *bolt.Tx) error {
			cfg := f.cfg()
			cfg.MaxFiles = 2
			c, err := Build(store.Catalog(tx), cfg)
			if err != nil {
				return err
			}
			partial = c.Partial()
			for _, e := range c.Entries() {
				if strings.Contains(e.Text, "invoice renderer") {
					renderer++
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return partial, renderer
	}
	for i, want := range []struct {
		partial  bool
		renderer int
	}{{true, 2}, {true, 4}, {false, 5}, {false, 5}} {
		if p, n := bounded(); p != want.partial || n != want.renderer {
			t.Fatalf("build %d: partial %v with %d learnings revised, want %v and %d", i+1, p, n, want.partial, want.renderer)
		}
	}
	f.view(func(c *Catalog) {
		if c.Changed() {
			t.Error("after the bounded builds, an unbounded one changed the catalog")
		}
	})
}
