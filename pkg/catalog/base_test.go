package catalog

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/search"
	"github.com/intermem/intermem/pkg/store"
)

// A hook's new base (NewSegment in a read transaction, PutSegment in a
// write one) is the base a command's Settle stores, byte for byte, and
// ranks as a plain build over the entries does (one segment: 307
// entries); it is stored only while needed, and a build's first segment
// only while the catalog is at the generation it was built at.
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
	// A segment built at an older generation is not stored.
	seg := newSegment(t, f.st)
	if seg == nil || !seg.Last() {
		t.Fatal("no segment, or not the last of 307 entries")
	}
	f.update(func(c *Catalog) {
		if err := c.tx.Bump(); err != nil {
			t.Fatal(err)
		}
	})
	if stored, _ := putSegment(t, f.st, seg); stored {
		t.Fatal("a first segment built at an older generation was stored")
	}
	gen++
	seg = newSegment(t, f.st)
	if stored, done := putSegment(t, f.st, seg); !stored || !done {
		t.Fatalf("the base was not stored: %v %v", stored, done)
	}
	if needed() || newSegment(t, f.st) != nil {
		t.Fatal("a base is still needed")
	}
	var base []byte
	f.st.View(func(tx *bolt.Tx) error {
		ct := store.Catalog(tx)
		b, at := ct.Index()
		if at != gen || ct.IndexDelta() != nil || len(ct.IndexChanged()) != 0 || ct.IndexBuild() != nil || ct.IndexSegment(0) != nil {
			t.Errorf("stored: base at %d of %d, delta %d bytes, %d ids changed, build %q",
				at, gen, len(ct.IndexDelta()), len(ct.IndexChanged()), ct.IndexBuild())
		}
		base = slices.Clone(b)
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
// new base; NewSegment gives up when its context is done.
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
		if _, err := NewSegment(ctx, store.Catalog(tx)); !errors.Is(err, context.Canceled) {
			t.Errorf("NewSegment with its context done: %v", err)
		}
		return nil
	})
}

// A bounded build (Config.MaxWrites, a hook's) of a Whole source writes
// the tombstones of what the files it made dropped and at most its bound
// of entries: a file whose entries it did not all write is stored to be
// made again, and the build is partial; the next one goes on with it.
func TestMaxWrites(t *testing.T) {
	f := newFixture(t)
	var facts []string
	for i := range 10 {
		facts = append(facts, fmt.Sprintf("- Fact %d: the spool keeps segment %d.", i, i))
	}
	f.writeMem("facts.md", strings.Join(facts, "\n")+"\n")
	f.update(func(*Catalog) {})
	build := func(max int) bool { return buildPartial(t, f, max, 0) }
	// One fact added to the file of ten: one entry written.
	f.writeMem("facts.md", strings.Join(facts, "\n")+"\n- Fact 10: the spool compacts at night.\n")
	if build(1) {
		t.Fatal("one entry to write, at most 1: partial")
	}
	// Three facts rewritten: three tombstoned, which leave no room at
	// most 2, then three written, two and one.
	for i := range 3 {
		facts[i] += " Revised."
	}
	f.writeMem("facts.md", strings.Join(facts, "\n")+"\n- Fact 10: the spool compacts at night.\n")
	before := liveEntries(t, f)
	for i, want := range []int{len(before) - 3, len(before) - 1} {
		if !build(2) {
			t.Fatalf("build %d of three entries to write and three to tombstone, at most 2: not partial", i+1)
		}
		if got := len(liveEntries(t, f)); got != want {
			t.Errorf("after build %d at most 2: %d live entries, want %d", i+1, got, want)
		}
	}
	if build(2) {
		t.Fatal("the entry left to write, at most 2: partial")
	}
	if got := liveEntries(t, f); len(got) != len(before) {
		t.Errorf("%d live entries, want %d", len(got), len(before))
	}
	f.view(func(c *Catalog) {
		if c.Changed() {
			t.Error("the bounded builds did not bring the memory in")
		}
	})
}

// buildPartial runs a Build bounded to max writes (Config.MaxWrites) and
// fileMax a per-file source's (Config.MaxFileWrites) in one write
// transaction of f's store, and reports whether it was partial.
func buildPartial(t *testing.T, f *fixture, max, fileMax int) bool {
	t.Helper()
	partial := false
	if err := f.st.Update(func(tx *bolt.Tx) error {
		cfg := f.cfg()
		cfg.MaxWrites, cfg.MaxFileWrites = max, fileMax
		c, err := Build(store.Catalog(tx), cfg)
		if c != nil {
			partial = c.Partial()
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return partial
}

// liveEntries returns the ids of f's live catalog entries.
func liveEntries(t *testing.T, f *fixture) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for k, v := range dumpStore(t, f.st) {
		if strings.HasPrefix(k, "catalog_entries/") && !strings.Contains(v, `"gone"`) {
			out[k] = true
		}
	}
	return out
}

// The bound on a per-file source's writes (Config.MaxFileWrites) leaves
// auto-memory's (MaxWrites) as it is: a memory change of six entries is
// partial at most five whatever the per-file bound, and whole at most six
// when a per-file source may write one.
func TestMaxFileWritesLeavesAutoMemorysBound(t *testing.T) {
	f := newFixture(t)
	var facts []string
	for i := range 6 {
		facts = append(facts, fmt.Sprintf("- Fact %d: the spool keeps segment %d.", i, i))
	}
	f.update(func(*Catalog) {})
	f.writeMem("facts.md", strings.Join(facts, "\n")+"\n")
	if !buildPartial(t, f, 5, 100) {
		t.Fatal("six entries to write, at most 5, a per-file source's 100: not partial")
	}
	f.writeMem("facts.md", strings.Join(facts, "\n")+"\n- Fact 6: the spool compacts at night.\n")
	if buildPartial(t, f, 6, 1) {
		t.Fatal("two entries left to write, at most 6, a per-file source's 1: partial")
	}
	f.view(func(c *Catalog) {
		if c.Changed() {
			t.Error("the build within its bound was not stored")
		}
	})
}

// A bounded build leaves the changed memory files after the one that
// reached its bound as stored, before their entries are made (a whole
// memory coming in at a session's end), and counts no entry that store
// would not write: at exactly its bound it is whole.
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
	records := func() (a, b bool) {
		d := dumpStore(t, f.st)
		for k := range d {
			a = a || strings.Contains(k, "a-facts.md")
			b = b || strings.Contains(k, "b-facts.md")
		}
		return a, b
	}
	before := len(liveEntries(t, f))
	if !buildPartial(t, f, 5, 0) {
		t.Fatal("twenty entries to write, at most 5: not partial")
	}
	if a, b := records(); !a || b {
		t.Errorf("at most 5: a-facts.md stored %v, b-facts.md %v; want the first alone", a, b)
	}
	if n := len(liveEntries(t, f)) - before; n != 5 {
		t.Errorf("at most 5: %d entries written", n)
	}
	if buildPartial(t, f, 15, 0) {
		t.Fatal("fifteen entries left to write, at most 15: partial")
	}
	if n := len(liveEntries(t, f)) - before; n != 20 {
		t.Errorf("%d entries written, want 20", n)
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

// newSegment builds the next segment of the base the store's index needs,
// as a hook does (snapshot.SettleBase), in a read transaction.
func newSegment(t *testing.T, st *store.Store) (seg *Segment) {
	t.Helper()
	if err := st.View(func(tx *bolt.Tx) error {
		var err error
		seg, err = NewSegment(context.Background(), store.Catalog(tx))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return seg
}

// putSegment stores seg as a hook does, in a write transaction.
func putSegment(t *testing.T, st *store.Store, seg *Segment) (stored, done bool) {
	t.Helper()
	if err := st.Update(func(tx *bolt.Tx) error {
		var err error
		stored, done, err = PutSegment(store.Catalog(tx), seg)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return stored, done
}

// A base built a segment at a time and cut after k segments (a session's
// end out of time) is finished by the next session's end from where it
// stopped: with nothing changed between, it is the uncut build's base
// byte for byte, which is Settle's; a read-only search between ranks as
// the finished base does; entries changed, added and removed between are
// searched as they now are (the delta of the ids changed since the build
// began), as over a base Settle builds afresh; a damaged stored segment
// starts the build over.
func TestBaseResumes(t *testing.T) {
	defer func(n int) { segmentDocs = n }(segmentDocs)
	segmentDocs = 40
	f := newFixture(t)
	for i := range 150 {
		f.write(fmt.Sprintf(".clavain/learnings/l%03d.md", i), fmt.Sprintf("Learning %d: the worker pool drains queue %d before shutdown.\n", i, i%9))
	}
	upgrade := func() {
		f.update(func(c *Catalog) { plantIndex(t, c, "IMSX\x01an older format", "") })
	}
	// hook runs session ends' segments until the base is stored or
	// segments have been stored.
	hook := func(segments int) (n int) {
		for n < segments {
			seg := newSegment(t, f.st)
			if seg == nil {
				return n
			}
			stored, done := putSegment(t, f.st, seg)
			if !stored {
				t.Fatalf("segment %d not stored", n)
			}
			n++
			if done {
				return n
			}
		}
		return n
	}
	stored := func() (base []byte) {
		f.st.View(func(tx *bolt.Tx) error {
			ct := store.Catalog(tx)
			b, at := ct.Index()
			if at != ct.Generation() || ct.IndexBuild() != nil || ct.IndexSegment(0) != nil {
				t.Errorf("the base is at %d of %d, a build is left: %q", at, ct.Generation(), ct.IndexBuild())
			}
			base = slices.Clone(b)
			return nil
		})
		return base
	}
	queries := []string{"worker pool drains queue 3", "learning 42 shutdown", "quarantine flakes"}
	ranked := func() string {
		var out []string
		f.view(func(c *Catalog) {
			for _, q := range queries {
				hits, err := c.Search(Query{Text: q, Limit: 12, Now: f.now})
				if err != nil {
					t.Fatal(err)
				}
				for _, h := range hits {
					out = append(out, fmt.Sprintf("%s %s %.6f", q, h.Path, h.Score))
				}
			}
		})
		return strings.Join(out, "\n")
	}

	upgrade()
	if n := hook(100); n != 4 {
		t.Fatalf("%d segments for 157 entries of 40", n)
	}
	uncut, want := stored(), ranked()
	upgrade()
	f.update(func(c *Catalog) {
		if err := c.Settle(); err != nil {
			t.Fatal(err)
		}
	})
	if !slices.Equal(stored(), uncut) {
		t.Fatal("Settle's base is not the hook's")
	}
	for k := 1; k < 4; k++ {
		upgrade()
		if n := hook(k); n != k {
			t.Fatalf("cut after %d segments: %d stored", k, n)
		}
		if got := ranked(); got != want {
			t.Errorf("cut after %d: a search between ranks\n%s\nwant\n%s", k, got, want)
		}
		if n := hook(100); n != 4-k {
			t.Errorf("cut after %d: finished in %d more, want %d", k, n, 4-k)
		}
		if !slices.Equal(stored(), uncut) {
			t.Errorf("cut after %d: the base finished is not the uncut build's", k)
		}
	}

	// A damaged segment: the build starts over.
	upgrade()
	hook(2)
	f.st.Update(func(tx *bolt.Tx) error {
		ct := store.Catalog(tx)
		seg := slices.Clone(ct.IndexSegment(1))
		seg[len(seg)-3] ^= 0xff
		return ct.PutIndexSegment(1, seg, slices.Clone(ct.IndexBuild()))
	})
	if got := ranked(); got != want {
		t.Errorf("a damaged segment: a search between ranks\n%s\nwant\n%s", got, want)
	}
	if seg := newSegment(t, f.st); seg == nil {
		t.Fatal("no segment")
	} else if stored, done := putSegment(t, f.st, seg); !stored || done {
		t.Fatalf("the third segment: stored %v, done %v", stored, done)
	}
	if seg := newSegment(t, f.st); seg == nil {
		t.Fatal("no segment")
	} else if stored, _ := putSegment(t, f.st, seg); stored {
		t.Fatal("a damaged segment was merged")
	}
	if n := hook(100); n != 4 || !slices.Equal(stored(), uncut) {
		t.Errorf("started over: %d segments, the uncut build's base: %v", n, slices.Equal(stored(), uncut))
	}

	// Entries changed, added and removed while the build is cut.
	upgrade()
	hook(2)
	for i := range 10 {
		f.write(fmt.Sprintf(".clavain/learnings/l%03d.md", i*15), fmt.Sprintf("Learning %d: quarantine flakes before the merge.\n", i))
	}
	f.write(".clavain/learnings/l150.md", "Learning 150: quarantine flakes in CI.\n")
	if err := os.Remove(filepath.Join(f.root, ".clavain/learnings/l149.md")); err != nil {
		t.Fatal(err)
	}
	f.update(func(*Catalog) {})
	between := ranked()
	hook(100)
	resumed := ranked()
	if resumed != between {
		t.Errorf("after the changes, a search between ranks\n%s\nfinished\n%s", between, resumed)
	}
	if !strings.Contains(resumed, "quarantine flakes .clavain/learnings/l150.md") || !strings.Contains(resumed, "quarantine flakes .clavain/learnings/l000.md") {
		t.Errorf("the changed and added entries are not found:\n%s", resumed)
	}
	upgrade()
	f.update(func(c *Catalog) {
		if err := c.Settle(); err != nil {
			t.Fatal(err)
		}
	})
	paths := func(s string) []string {
		var out []string
		for _, l := range strings.Split(s, "\n") {
			if f := strings.Fields(l); len(f) > 1 {
				out = append(out, f[len(f)-2])
			}
		}
		slices.Sort(out)
		return out
	}
	if fresh := ranked(); !slices.Equal(paths(fresh), paths(resumed)) {
		t.Errorf("resumed over changes finds\n%s\na fresh base\n%s", resumed, fresh)
	}
}

// FuzzDecodeBuild: a build's record read as hostile bytes never panics,
// and what decodes is a record (a segment at least, averages of at least
// one) that encodes and decodes back to itself.
func FuzzDecodeBuild(f *testing.F) {
	f.Add(encodeBuild(&baseBuild{gen: 7, avg: [4]float64{3.5, 2, 1, 40.25}, segs: 2, after: "0123456789abcdef\x00clavain"}))
	f.Add(encodeBuild(&baseBuild{avg: [4]float64{1, 1, 1, 1}, segs: 1}))
	f.Add([]byte(buildMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := decodeBuild(data)
		if err != nil {
			if !errors.Is(err, errBuildCorrupt) {
				t.Fatalf("error %v is not errBuildCorrupt", err)
			}
			return
		}
		if b.segs < 1 || b.avg[0] < 1 || b.avg[3] < 1 {
			t.Fatalf("decoded %+v", b)
		}
		c, err := decodeBuild(encodeBuild(b))
		if err != nil || *c != *b {
			t.Fatalf("%+v encodes to %+v, %v", b, c, err)
		}
	})
}
