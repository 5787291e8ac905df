package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/source"
	"github.com/intermem/intermem/pkg/source/sources"
	"github.com/intermem/intermem/pkg/store"
)

// idSource is a per-file source whose ids are written in its files, one
// entry a line ("id text"), so that one id may be in two files and move
// from one to another; a line "!text" is a problem.
type idSource struct{}

func (idSource) Name() string       { return "ids" }
func (idSource) Patterns() []string { return []string{"ids/*.txt"} }

func (idSource) Parse(path string, data []byte) ([]source.Entry, []source.Problem) {
	var (
		es    []source.Entry
		probs []source.Problem
	)
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if text, ok := strings.CutPrefix(line, "!"); ok {
			probs = append(probs, source.Problem{Path: path, Line: i + 1, Message: text})
			continue
		}
		id, text, _ := strings.Cut(line, " ")
		es = append(es, source.Entry{ID: id, Source: "ids", Kind: source.Fact, Path: path, Line: i + 1, EndLine: i + 1, Title: text, Text: text})
	}
	return es, probs
}

// memoFixture is a project of many files, built, then changed: every
// file of the ids source and of the documents rewritten, one id moved
// from a file to another that holds it too and is not changed, one held by
// two changed files, a file renamed (its id in the file of the new name)
// and one removed whose id another file holds — the changes of one
// refresh that a bound on its files cuts in several transactions.
func memoFixture(t *testing.T) (*fixture, *source.Registry) {
	t.Helper()
	reg, err := source.NewRegistry(append(sources.Registry().All(), idSource{})...)
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	name := func(i int) string { return fmt.Sprintf("ids/f%02d.txt", i) }
	body := func(i int, v string) string {
		s := fmt.Sprintf("f%02d-a %s a of %d\nf%02d-b %s b of %d\n", i, v, i, i, v, i)
		switch i {
		case 3: // drops "shared", which file 30 (unchanged) still holds
			if v == "old" {
				s += "shared the spool keeps its segments\n"
			}
		case 30:
			s = "shared the spool keeps its segments\n" + s
		case 5, 25: // both hold "twice", both change
			s += "twice " + v + " retries need jitter\n"
		case 8: // a problem, reported once
			s += "!cannot make sense of this " + v + " line\n"
		case 12: // removed; its id is in file 33
			s += "orphan the cache is keyed by fingerprint\n"
		case 33:
			if v == "new" {
				s += "orphan the cache is keyed by fingerprint\n"
			}
		}
		return s
	}
	for i := range 40 {
		f.write(name(i), body(i, "old"))
	}
	for i := range 6 {
		f.write(fmt.Sprintf("docs/solutions/more/d%d.md", i), fmt.Sprintf("---\ndate: 2026-02-0%d\n---\n# Doc %d\n\nThe old text %d.\n", i+1, i, i))
	}
	f.write("ids/g-renamed.txt", "moved the index is decoded in place\n")
	settleDirs(t, f.root)
	cfg := f.cfg()
	cfg.Registry = reg
	if err := f.st.Update(func(tx *bolt.Tx) error {
		_, err := Build(store.Catalog(tx), cfg)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		if i != 30 && i != 12 {
			f.write(name(i), body(i, "new"))
		}
	}
	for i := range 6 {
		f.write(fmt.Sprintf("docs/solutions/more/d%d.md", i), fmt.Sprintf("---\ndate: 2026-02-0%d\n---\n# Doc %d\n\nThe new text %d.\n", i+1, i, i))
	}
	if err := os.Remove(filepath.Join(f.root, name(12))); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(f.root, "ids/g-renamed.txt"), filepath.Join(f.root, "ids/a-renamed.txt")); err != nil {
		t.Fatal(err)
	}
	settleDirs(t, f.root)
	return f, reg
}

// refreshed is what a refresh in bounded builds did.
type refreshed struct {
	store    map[string]string // every bucket's every key → value
	problems []string          // Fresh of every build, in turn
	txs      int
	reads    int // file records looked up in the store
	parsed   int // files of per-file sources read and parsed
}

// boundedRefresh brings the catalog up to date as a session's end does
// (snapshot.RefreshCatalog): builds of at most max changed files each, in
// write transactions of their own at the same time, until none is
// partial; memo carries what one read to the next. It returns the store
// as it is then.
func boundedRefresh(t *testing.T, f *fixture, reg *source.Registry, max int, memo *Memo) refreshed {
	t.Helper()
	return refreshBetween(t, f, reg, max, memo, nil)
}

// refreshBetween is boundedRefresh calling between, when not nil, after
// the transaction of each build.
func refreshBetween(t *testing.T, f *fixture, reg *source.Registry, max int, memo *Memo, between func(st *store.Store)) refreshed {
	t.Helper()
	var r refreshed
	cfg := f.cfg()
	cfg.Registry, cfg.MaxFiles, cfg.Memo = reg, max, memo
	st := copyStore(t, f)
	defer st.Close()
	for partial := true; partial; {
		if between != nil && r.txs > 0 {
			between(st)
		}
		if err := st.Update(func(tx *bolt.Tx) error {
			c, err := Build(store.Catalog(tx), cfg)
			if err != nil {
				return err
			}
			partial = c.Partial()
			r.reads += c.reads
			for _, p := range c.Fresh() {
				r.problems = append(r.problems, fmt.Sprintf("%s:%d: %s", p.Path, p.Line, p.Message))
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if r.txs++; r.txs > 1000 {
			t.Fatal("the refresh does not end")
		}
	}
	r.store = dumpStore(t, st)
	return r
}

// copyStore opens a copy of the fixture's store as it is: each refresh
// starts from the same, over the same files.
func copyStore(t *testing.T, f *fixture) *store.Store {
	t.Helper()
	copied := filepath.Join(t.TempDir(), "intermem.db")
	if err := f.st.View(func(tx *bolt.Tx) error { return tx.CopyFile(copied, 0o600) }); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(copied, store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// dumpStore returns every key and value of every bucket of st.
func dumpStore(t *testing.T, st *store.Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	var walk func(prefix string, b *bolt.Bucket) error
	walk = func(prefix string, b *bolt.Bucket) error {
		return b.ForEach(func(k, v []byte) error {
			if v == nil {
				return walk(prefix+string(k)+"/", b.Bucket(k))
			}
			out[prefix+string(k)] = string(v)
			return nil
		})
	}
	if err := st.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error { return walk(string(name)+"/", b) })
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// diffStores lists the keys whose values differ, but those skip names.
func diffStores(a, b map[string]string, skip func(key string) bool) []string {
	var diff []string
	for k, v := range a {
		if w, ok := b[k]; (!ok || w != v) && !skip(k) {
			diff = append(diff, fmt.Sprintf("%q: %.200q ≠ %.200q", k, v, w))
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok && !skip(k) {
			diff = append(diff, fmt.Sprintf("%q: missing ≠ %.200q", k, b[k]))
		}
	}
	slices.Sort(diff)
	return diff
}

// A refresh cut in transactions by a bound on its files (Config.MaxFiles)
// stores, with a Memo carried from one to the next, what it stores without
// (every bucket, byte for byte) and reports the same problems, once; and
// what a refresh in one transaction stores, but for the generation, which
// each transaction that writes an entry bumps. With the Memo, each file's
// record is looked up about once: once in the first walk, and once more
// after the build that parsed it stored it; without, once a transaction.
func TestMemoRefreshIsRefresh(t *testing.T) {
	f, reg := memoFixture(t)
	one := boundedRefresh(t, f, reg, 0, nil)
	if one.txs != 1 {
		t.Fatalf("an unbounded refresh took %d transactions", one.txs)
	}
	for _, p := range []string{"ids/f08.txt:3: cannot make sense of this new line"} {
		if n := slices.Index(one.problems, p); n < 0 {
			t.Fatalf("the unbounded refresh did not report %q: %q", p, one.problems)
		}
	}
	for _, max := range []int{1, 2, 7, 32} {
		t.Run(fmt.Sprintf("max %d", max), func(t *testing.T) {
			plain := boundedRefresh(t, f, reg, max, nil)
			memo := boundedRefresh(t, f, reg, max, new(Memo))
			if plain.txs != memo.txs {
				t.Errorf("%d transactions without a memo, %d with", plain.txs, memo.txs)
			}
			if d := diffStores(plain.store, memo.store, func(string) bool { return false }); len(d) > 0 {
				t.Errorf("with a memo, the store differs:\n%s", strings.Join(d, "\n"))
			}
			if !slices.Equal(plain.problems, memo.problems) {
				t.Errorf("problems reported without a memo %q, with %q", plain.problems, memo.problems)
			}
			generation := func(k string) bool { return k == "catalog/generation" }
			if d := diffStores(one.store, memo.store, generation); len(d) > 0 {
				t.Errorf("bounded, the store differs from an unbounded refresh's:\n%s", strings.Join(d, "\n"))
			}
			slices.Sort(memo.problems)
			want := slices.Sorted(slices.Values(one.problems))
			if !slices.Equal(memo.problems, want) {
				t.Errorf("bounded, problems reported %q, unbounded %q", memo.problems, want)
			}
			// 40 + 1 files of ids, 6 + 2 documents, 2 learnings, a log, 2
			// memory files: every one looked up at the first walk, the
			// changed ones again after they were stored.
			files := 54
			if memo.reads > 2*files+memo.txs {
				t.Errorf("%d file records looked up with a memo in %d transactions, want at most %d", memo.reads, memo.txs, 2*files+memo.txs)
			}
			if memo.txs > 2 && plain.reads <= 2*files+memo.txs {
				t.Errorf("only %d file records looked up without a memo in %d transactions: the test does not tell", plain.reads, plain.txs)
			}
			t.Logf("%d transactions: %d file records looked up without a memo, %d with", memo.txs, plain.reads, memo.reads)
		})
	}
}

// A Memo stands only for the write transaction right after the one that
// filled it, once that one committed: after a rollback, or a transaction
// that wrote the store in between — here a forged record of a file that
// did not change, which drops the id "shared" that a changed file dropped
// too, so that no file holds it any more — the next build reads every
// record from the store again, and the refresh stores what one without a
// memo stores (the id tombstoned), never what the memo held.
func TestMemoStandsForTheNextCommit(t *testing.T) {
	f, reg := memoFixture(t)
	forge := func(st *store.Store) {
		if err := st.Update(func(tx *bolt.Tx) error {
			ct := store.Catalog(tx)
			rec, ok := ct.File(store.FileKey("ids", "ids/f30.txt"))
			if !ok {
				t.Fatal("no record of ids/f30.txt")
			}
			rec.IDs = slices.DeleteFunc(rec.IDs, func(id string) bool { return id == "shared" })
			return ct.PutFile(&rec)
		}); err != nil {
			t.Fatal(err)
		}
	}
	plain := refreshBetween(t, f, reg, 2, nil, forge)
	memo := refreshBetween(t, f, reg, 2, new(Memo), forge)
	if d := diffStores(plain.store, memo.store, func(string) bool { return false }); len(d) > 0 {
		t.Errorf("with a memo and a write between its transactions, the store differs:\n%s", strings.Join(d, "\n"))
	}
	if memo.reads < plain.reads/2 {
		t.Errorf("%d file records looked up with a memo and a write between transactions, %d without", memo.reads, plain.reads)
	}
	var shared store.CatalogEntry
	key := "catalog_entries/" + "shared\x00ids"
	if raw, ok := memo.store[key]; !ok {
		t.Fatalf("no entry %q stored", key)
	} else if err := json.Unmarshal([]byte(raw), &shared); err != nil {
		t.Fatal(err)
	} else if shared.Gone.IsZero() {
		t.Error("the id no file holds after the forged record was not tombstoned")
	}

	// A build rolled back, then another transaction committed: the next
	// build (whose transaction's id is the rolled back one's plus one)
	// reads every record again.
	st := copyStore(t, f)
	defer st.Close()
	m := new(Memo)
	build := func(rollback bool) (reads int) {
		cfg := f.cfg()
		cfg.Registry, cfg.MaxFiles, cfg.Memo = reg, 2, m
		errRollback := errors.New("rolled back")
		if err := st.Update(func(tx *bolt.Tx) error {
			c, err := Build(store.Catalog(tx), cfg)
			if err != nil {
				return err
			}
			if !c.Partial() {
				t.Fatal("a build of 2 files was not partial")
			}
			reads = c.reads
			if rollback {
				return errRollback
			}
			return nil
		}); err != nil && !errors.Is(err, errRollback) {
			t.Fatal(err)
		}
		return reads
	}
	first := build(false)
	if next := build(true); next > first/4 {
		t.Errorf("the build after a committed one looked up %d records, the first %d", next, first)
	}
	forge(st)
	if again := build(false); again < first*3/4 {
		t.Errorf("the build after one rolled back looked up %d records, the first %d", again, first)
	}
	if next := build(false); next > first/4 {
		t.Errorf("the build after a committed one looked up %d records, the first %d", next, first)
	}
}
