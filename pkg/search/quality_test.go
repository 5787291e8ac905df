package search

import (
	"bufio"
	"fmt"
	"os"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/source/clavain"
	"github.com/intermem/intermem/pkg/source/compound"
	"github.com/intermem/intermem/pkg/source/sourcetest"
)

const corpusDir = "../../testdata/corpus"

// Quality floors: the measured figures (see TestQuality's log) rounded down,
// so a change that makes search worse fails.
const (
	minRecallAt5 = 0.95
	minMRR       = 0.94
)

// qualityNow is the fixed "now" of the quality set: recency must not make
// the figures depend on the day the test runs.
var qualityNow = time.Date(2026, 6, 15, 0, 0, 0, 0, time.UTC)

// labelled is the quality collection: the docs and, for each, its key in
// testdata/queries.txt.
type labelled struct {
	docs []Doc
	keys []string
}

// collection builds the docs of the quality set: every solution document
// and auto-memory file of the corpus, and the learnings of
// testdata/learnings.txtar, through the real parsers. Auto-memory entries
// are mapped the way a catalog would: facts are searched by their text with
// their section as a tag, topic files by their description as title and
// their body as text; index pointers are navigation, not knowledge, and are
// left out.
func collection(t testing.TB) labelled {
	var c labelled
	add := func(key string, d Doc) {
		d.ID = key // the corpus holds two docs/solutions/patterns/critical-patterns.md
		c.docs = append(c.docs, d)
		c.keys = append(c.keys, key)
	}
	for _, f := range sourcetest.Corpus(t, corpusDir) {
		if f.Kind != "solutions-learnings" && f.Kind != "auto-memory" {
			continue
		}
		data, err := os.ReadFile(f.File)
		if err != nil {
			t.Fatal(err)
		}
		switch f.Kind {
		case "solutions-learnings":
			es, _ := compound.Source{}.Parse(f.Path, data)
			for i := range es {
				add(f.Repo+":"+f.Path, FromEntry(&es[i]))
			}
		case "auto-memory":
			for _, e := range automem.Parse(path.Base(f.Path), data).Entries {
				key := fmt.Sprintf("memory:%s:%s#%d", f.Repo, f.Path, e.StartLine)
				d := Doc{Source: "auto-memory", Text: e.Text, Confidence: 0.5}
				switch e.Kind {
				case automem.Pointer:
					continue
				case automem.Memory:
					d.Title, d.Tags = e.Description, []string{e.Name, e.Type}
				default:
					d.Tags = []string{e.Section}
				}
				add(key, d)
			}
		}
	}
	for _, f := range sourcetest.Fixtures(t, "testdata/learnings.txtar") {
		es, _ := clavain.Source{}.Parse(f.Name, f.Data)
		for i := range es {
			add("learning:"+f.Name, FromEntry(&es[i]))
		}
	}
	return c
}

type query struct {
	text     string
	relevant []string
}

func readQueries(t testing.TB) []query {
	f, err := os.Open("testdata/queries.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var qs []query
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "? "):
			qs = append(qs, query{text: line[2:]})
		case strings.HasPrefix(line, "+ "):
			qs[len(qs)-1].relevant = append(qs[len(qs)-1].relevant, line[2:])
		}
	}
	return qs
}

// matches reports whether the doc with key is the document label names.
func (c *labelled) matches(label string, i int) bool {
	key := c.keys[i]
	if !strings.HasPrefix(label, "memory:") {
		return key == label
	}
	file, sub, hasSub := strings.Cut(label, "#")
	if !strings.HasPrefix(key, file+"#") {
		return false
	}
	return !hasSub || strings.Contains(c.docs[i].Text, sub)
}

func TestQuality(t *testing.T) {
	c := collection(t)
	qs := readQueries(t)
	if len(qs) < 40 {
		t.Fatalf("%d queries, want at least 40", len(qs))
	}
	// Every label names exactly one document.
	for _, q := range qs {
		for _, l := range q.relevant {
			n := 0
			for i := range c.keys {
				if c.matches(l, i) {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("label %q matches %d documents", l, n)
			}
		}
	}
	x := Build(c.docs)
	var recall, mrr float64
	for _, q := range qs {
		hits := x.Search(q.text, Options{Limit: 10, Now: qualityNow})
		found, first := 0, 0
		for rank, h := range hits {
			for _, l := range q.relevant {
				if c.matches(l, h.Doc) {
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
				top = append(top, c.keys[h.Doc])
			}
			t.Logf("recall@5 %.2f, first relevant at %d: %q\n\ttop: %s", r, first, q.text, strings.Join(top, "\n\t     "))
		}
	}
	recall /= float64(len(qs))
	mrr /= float64(len(qs))
	t.Logf("%d queries over %d documents: recall@5 %.3f, MRR %.3f", len(qs), len(c.docs), recall, mrr)
	if recall < minRecallAt5 || mrr < minMRR {
		t.Errorf("recall@5 %.3f, MRR %.3f; floors %.2f and %.2f", recall, mrr, minRecallAt5, minMRR)
	}
}
