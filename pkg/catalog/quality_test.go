package catalog

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/source"
	"github.com/intermem/intermem/pkg/source/automemory"
	"github.com/intermem/intermem/pkg/source/clavain"
	"github.com/intermem/intermem/pkg/source/compound"
	"github.com/intermem/intermem/pkg/source/sourcetest"
	"github.com/intermem/intermem/pkg/store"
)

// Search quality through the catalog: pkg/search's labelled set (queries
// written as a user would ask them, over the corpus's solutions, learnings
// and auto-memory) run against the entries as the catalog keeps them —
// parsed by the real sources, redacted and screened, stored in a real
// bbolt file, the index encoded into the store by one Build and decoded
// in place by the next, ranked with the overlay's confidence — which is
// what `intermem search` and memory_search answer from.
//
// The corpus comes from many repositories, and a project has one of each
// source; so each repository's files are laid out under a directory of
// their own and read by the real parsers through prefixed, which keeps
// the repository in the entry's path (two repositories each have a
// docs/solutions/patterns/critical-patterns.md).

// Floors: the figures measured through the catalog (see the test's log),
// rounded down, so a change that makes search worse fails.
const (
	catalogMinRecallAt5 = 0.97
	catalogMinMRR       = 0.96
)

var qualityNow = time.Date(2026, 6, 15, 0, 0, 0, 0, time.UTC)

// prefixed is a real source read below per-repository directories:
// "<dir>/<owner>__<repo>/<path as in the repository>".
type prefixed struct {
	inner source.Source
	pats  []string
	// keyed re-keys ids by the whole path, as the inner source keys by its
	// path (documents); auto-memory keeps its text-hash ids.
	keyed bool
}

func (p prefixed) Name() string       { return p.inner.Name() }
func (p prefixed) Patterns() []string { return p.pats }

func (p prefixed) Parse(path string, data []byte) ([]source.Entry, []source.Problem) {
	parts := strings.SplitN(path, "/", 3)
	if len(parts) < 3 {
		return nil, nil
	}
	inner := parts[2]
	if !p.keyed {
		inner = automemory.Prefix + filepath.Base(inner)
	}
	es, probs := p.inner.Parse(inner, data)
	for i := range es {
		es[i].Path = path
		if p.keyed {
			es[i].ID = source.ID(p.inner.Name(), path)
		}
	}
	return es, probs
}

// key is the quality set's name of an entry: "owner/repo:path" for a
// solution, "learning:path", "memory:owner/repo:path" for auto-memory
// (a label adds "#text it contains").
func key(e *source.Entry) string {
	parts := strings.SplitN(e.Path, "/", 3)
	if len(parts) == 3 && (parts[0] == "sol" || parts[0] == "mem") {
		owner, repo, _ := strings.Cut(parts[1], "__")
		k := owner + "/" + repo + ":" + parts[2]
		if parts[0] == "mem" {
			k = "memory:" + k
		}
		return k
	}
	return "learning:" + e.Path
}

func matches(label string, e *Entry) bool {
	if !strings.HasPrefix(label, "memory:") {
		return key(&e.Entry) == label
	}
	file, sub, hasSub := strings.Cut(label, "#")
	return key(&e.Entry) == file && (!hasSub || strings.Contains(e.Text, sub))
}

type labelledQuery struct {
	text     string
	relevant []string
}

func readQueries(t *testing.T) []labelledQuery {
	f, err := os.Open("../search/testdata/queries.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var qs []labelledQuery
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "? "):
			qs = append(qs, labelledQuery{text: line[2:]})
		case strings.HasPrefix(line, "+ "):
			qs[len(qs)-1].relevant = append(qs[len(qs)-1].relevant, line[2:])
		}
	}
	return qs
}

func TestQualityThroughCatalog(t *testing.T) {
	root := t.TempDir()
	put := func(rel string, data []byte) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		// Settled files: a file modified within RacyWindow is read again.
		old := time.Now().Add(-time.Hour)
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range sourcetest.Corpus(t, "../../testdata/corpus") {
		var dir string
		switch f.Kind {
		case "solutions-learnings":
			dir = "sol"
		case "auto-memory":
			dir = "mem"
		default:
			continue
		}
		data, err := os.ReadFile(f.File)
		if err != nil {
			t.Fatal(err)
		}
		owner, repo, _ := strings.Cut(f.Repo, "/")
		put(dir+"/"+owner+"__"+repo+"/"+f.Path, data)
	}
	for _, fx := range sourcetest.Fixtures(t, "../search/testdata/learnings.txtar") {
		put(fx.Name, fx.Data)
	}
	reg, err := source.NewRegistry(
		prefixed{inner: compound.Source{}, pats: []string{"sol/*/**/*.md"}, keyed: true},
		prefixed{inner: automemory.Source{}, pats: []string{"mem/*/**/*.md"}},
		clavain.Source{},
	)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(filepath.Join(t.TempDir(), "intermem.db"), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cfg := Config{Env: source.Env{Root: root}, Registry: reg, Now: qualityNow}
	// One writable Build stores the entries and the encoded index...
	if err := st.Update(func(tx *bolt.Tx) error {
		c, err := Build(store.Catalog(tx), cfg)
		if err != nil {
			return err
		}
		_, err = c.Index()
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// ...and a read-only one, as intermem search runs, ranks from them.
	qs := readQueries(t)
	if len(qs) < 40 {
		t.Fatalf("%d queries, want at least 40", len(qs))
	}
	var recall, mrr float64
	var docs int
	err = st.View(func(tx *bolt.Tx) error {
		c, err := Build(store.Catalog(tx), cfg)
		if err != nil {
			return err
		}
		if c.Changed() {
			t.Errorf("the read-only Build found changes: the stored catalog is not current")
		}
		all := c.Entries()
		docs = len(all)
		for _, q := range qs {
			for _, l := range q.relevant {
				n := 0
				for i := range all {
					if matches(l, &all[i]) {
						n++
					}
				}
				if n != 1 {
					t.Fatalf("label %q matches %d entries", l, n)
				}
			}
			hits, err := c.Search(Query{Text: q.text, Limit: 10, Now: qualityNow})
			if err != nil {
				return err
			}
			found, first := 0, 0
			for rank := range hits {
				for _, l := range q.relevant {
					if matches(l, &hits[rank].Entry) {
						if rank < 5 {
							found++
						}
						if first == 0 {
							first = rank + 1
						}
					}
				}
			}
			r := float64(found) / float64(len(q.relevant))
			recall += r
			if first > 0 {
				mrr += 1 / float64(first)
			}
			if r < 1 {
				var top []string
				for _, h := range hits[:min(5, len(hits))] {
					top = append(top, key(&h.Entry.Entry))
				}
				t.Logf("recall@5 %.2f, first relevant at %d: %q\n\ttop: %s", r, first, q.text, strings.Join(top, "\n\t     "))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	recall /= float64(len(qs))
	mrr /= float64(len(qs))
	t.Logf("through the catalog: %d queries over %d entries: recall@5 %.3f, MRR %.3f", len(qs), docs, recall, mrr)
	if recall < catalogMinRecallAt5 || mrr < catalogMinMRR {
		t.Errorf("recall@5 %.3f, MRR %.3f; floors %.2f and %.2f", recall, mrr, catalogMinRecallAt5, catalogMinMRR)
	}
}
