package search

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/intermem/intermem/pkg/source"
)

func TestTerms(t *testing.T) {
	for in, want := range map[string]string{
		"Why does the Stop hook break after publishing?": "stop hook break publish",
		"ErrNoRows HTTPServer es-419 utf8":               "errnorow err row httpserver http server es 419 utf8 utf",
		"snake_case/kebab-case.md don't":                 "snake case kebab case md",
		"記憶の管理 한국어":                                      "記憶 憶の の管 管理 한국 국어",
		"a I x 7 漢":                                      "漢",
		"bad \xff utf8 \xffword":                         "bad utf8 utf word",
	} {
		var got []string
		a := newAnalyzer(0)
		a.terms(in, func(id int32) { got = append(got, a.vocab[id]) })
		if g := strings.Join(got, " "); g != want {
			t.Errorf("terms(%q) = %q, want %q", in, g, want)
		}
	}
	if got := QueryTerms("how do I do it, how?"); len(got) != 0 {
		t.Errorf("a query of stopwords has terms %q", got)
	}
}

var day = func(s string) time.Time { return source.ParseDate(s) }

func docs() []Doc {
	return []Doc{
		{ID: "title", Source: "compound", Title: "Stop hooks break after publish", Text: "The cache path changes.", Date: day("2026-02-12"), Confidence: 0.5},
		{ID: "text", Source: "compound", Title: "Plugin cache pitfalls", Text: "Hooks break when a new version is published mid-session; stop hooks then fail.", Date: day("2026-03-19"), Confidence: 0.5},
		{ID: "memory", Source: "auto-memory", Text: "Stop hook fires when Claude finishes its turn.", Confidence: 0.5},
		{ID: "unrelated", Source: "clavain", Title: "SQLite busy timeout", Text: "Two writers collide.", Date: day("2026-02-12"), Confidence: 0.9},
		{ID: "stale", Source: "clavain", Title: "Stop hooks break after publish", Text: "The cache path changes.", Date: day("2026-02-12"), Confidence: 0.5, Stale: true},
	}
}

func ids(hs []Hit) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.ID)
	}
	return out
}

func TestSearch(t *testing.T) {
	x := Build(docs())
	now := day("2026-06-15")
	// "title" and "stale" have the same text: the tie is broken by id.
	got := ids(x.Search("stop hook broke after publishing", Options{Now: now}))
	if want := []string{"stale", "title", "text", "memory"}; !slices.Equal(got, want) {
		t.Errorf("ranking = %q, want %q", got, want)
	}
	hs := x.Search("stop hook broke after publishing", Options{Now: now, Sources: []string{"compound"}, Limit: 1})
	if got := ids(hs); !slices.Equal(got, []string{"title"}) {
		t.Errorf("compound, limit 1 = %q", got)
	}
	if hs[0].Stale || hs[0].Source != "compound" || hs[0].Relevance <= 0 || hs[0].Score <= hs[0].Relevance*0.9 {
		t.Errorf("hit = %+v", hs[0])
	}
	if got := x.Search("stop", Options{Now: now, Sources: []string{"clavain"}}); len(got) != 1 || !got[0].Stale {
		t.Errorf("clavain: %+v, want the stale one marked", got)
	}
	if got := x.Search("stop", Options{Sources: []string{"nosuch"}}); got != nil {
		t.Errorf("unknown source: %v", got)
	}
	// Dates: undated documents are dropped by either bound; bounds are days.
	got = ids(x.Search("stop hook", Options{Now: now, Since: day("2026-02-12"), Until: time.Date(2026, 2, 12, 23, 0, 0, 0, time.UTC)}))
	if want := []string{"stale", "title"}; !slices.Equal(got, want) {
		t.Errorf("on 2026-02-12 = %q, want %q", got, want)
	}
	got = ids(x.Search("stop hook", Options{Now: now, Since: day("2026-03-01")}))
	if want := []string{"text"}; !slices.Equal(got, want) {
		t.Errorf("since March = %q, want %q", got, want)
	}
	if got := x.Search("the of and", Options{}); len(got) != 0 {
		t.Errorf("stopwords found %v", got)
	}
}

// TestBoosts checks that confidence and recency order equally relevant
// documents but do not overturn a clearly better match.
func TestBoosts(t *testing.T) {
	now := day("2026-06-15")
	x := Build([]Doc{
		{ID: "a-old-low", Title: "retry jitter", Date: day("2024-01-01"), Confidence: 0.2},
		{ID: "b-new-low", Title: "retry jitter", Date: day("2026-06-01"), Confidence: 0.2},
		{ID: "c-old-high", Title: "retry jitter", Date: day("2024-01-01"), Confidence: 0.9},
		{ID: "d-weak-best", Text: "a retry happens", Date: day("2026-06-14"), Confidence: 1},
		{ID: "e", Text: "filler one"}, {ID: "f", Text: "filler two"}, {ID: "g", Text: "filler three"},
	})
	got := ids(x.Search("retry jitter", Options{Now: now}))
	if want := []string{"c-old-high", "b-new-low", "a-old-low", "d-weak-best"}; !slices.Equal(got, want) {
		t.Errorf("ranking = %q, want %q", got, want)
	}
}

func TestEncodeDecode(t *testing.T) {
	x := Build(docs())
	data := x.Encode()
	y, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if y.Len() != x.Len() || !slices.Equal(y.Encode(), data) {
		t.Fatalf("re-encoded index differs")
	}
	for _, q := range []string{"stop hook broke after publishing", "sqlite", "cache", "nothing"} {
		a := x.Search(q, Options{Now: day("2026-06-15")})
		b := y.Search(q, Options{Now: day("2026-06-15")})
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("%q: built %v, decoded %v", q, a, b)
		}
	}
	z, err := DecodeShared(data)
	if err != nil || !slices.Equal(z.Encode(), data) {
		t.Fatalf("DecodeShared: %v", err)
	}
	for _, bad := range [][]byte{nil, []byte("IMSX\x02"), data[:len(data)-1], append(append([]byte(nil), data...), 0)} {
		if _, err := Decode(bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("Decode(%d bytes) = %v, want ErrCorrupt", len(bad), err)
		}
		if _, err := DecodeShared(bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("DecodeShared(%d bytes) = %v, want ErrCorrupt", len(bad), err)
		}
	}
}

func FuzzDecode(f *testing.F) {
	base := Build(docs())
	f.Add(base.Encode())
	f.Add(Build(nil).Encode())
	f.Add(BuildDelta(base, docs()[1:3], []string{"memory", "text", "title"}).Encode())
	f.Fuzz(func(t *testing.T, data []byte) {
		x, err := Decode(data)
		if err != nil {
			return
		}
		// Whatever decodes searches without panicking, alone and as a
		// delta over a base (or a base under one).
		for _, y := range []*Index{x, Stack(base, x), Stack(x, base)} {
			for _, r := range x.dict {
				y.Search(r.term, Options{Limit: 3})
			}
			y.Search("stop hook cache", Options{Limit: 3})
			y.Len()
		}
		x.Encode()
	})
}

func FuzzSearch(f *testing.F) {
	f.Add("Stop hooks break", "why does the stop hook break after publish")
	f.Add("記憶 ErrNoRows", "\xff\xfe HTTPServer")
	f.Fuzz(func(t *testing.T, text, query string) {
		x := Build([]Doc{{ID: "a", Text: text, Title: query}, {ID: "b", Text: query}})
		hs := x.Search(query, Options{Limit: 5})
		for _, h := range hs {
			if h.Score < 0 || h.Doc < 0 || h.Doc > 1 {
				t.Fatalf("hit %+v", h)
			}
		}
		y, err := Decode(x.Encode())
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(y.Search(query, Options{Limit: 5})) != fmt.Sprint(hs) {
			t.Fatal("decoded index answers differently")
		}
	})
}

// synthetic returns n documents shaped like a real project's: short memory
// facts, mid-sized learnings and long solution documents, over a vocabulary
// drawn from the corpus, so that term frequencies are Zipf-like.
func synthetic(tb testing.TB, n int) []Doc {
	c := collection(tb)
	var vocab []string
	for _, d := range c.docs {
		vocab = append(vocab, strings.Fields(d.Title+" "+d.Text)...)
	}
	r := rand.New(rand.NewPCG(1, 2))
	zipf := rand.NewZipf(r, 1.1, 1, uint64(len(vocab)-1))
	words := func(k int) string {
		var b strings.Builder
		for range k {
			b.WriteString(vocab[zipf.Uint64()])
			b.WriteByte(' ')
		}
		return b.String()
	}
	out := make([]Doc, n)
	for i := range out {
		d := Doc{ID: fmt.Sprintf("%016x", r.Uint64()), Confidence: r.Float64(), Date: day("2025-01-01").AddDate(0, 0, r.IntN(600))}
		switch i % 10 {
		case 0: // a solution document
			d.Source, d.Title, d.Text = "compound", words(8), words(600)
			d.Tags, d.Symptoms = strings.Fields(words(5)), []string{words(10), words(10)}
		case 1, 2: // a learning or an observation
			d.Source, d.Title, d.Text = "clavain", words(10), words(60)
		default: // an auto-memory fact
			d.Source, d.Text = "auto-memory", words(25)
		}
		out[i] = d
	}
	return out
}

var benchQueries = []string{
	"why does the stop hook break after publish",
	"mypy indexing error on collections",
	"database is locked when two hooks write at once",
	"plugin cache",
	"git credential lock permission denied for claude-user",
}

// cpuTime reports, besides wall time, the process's CPU time per operation:
// on a shared machine wall time measures the neighbours as much as the code.
func cpuTime(b *testing.B) func() {
	runtime.GC() // the garbage of the setup is not the benchmark's
	var before syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	b.ResetTimer()
	return func() {
		b.StopTimer()
		var after syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &after)
		used := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
		b.ReportMetric(float64(used.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

func BenchmarkBuild20k(b *testing.B) {
	ds := synthetic(b, 20000)
	defer cpuTime(b)()
	for range b.N {
		Build(ds)
	}
}

func BenchmarkBuild2k(b *testing.B) {
	ds := synthetic(b, 2000)
	defer cpuTime(b)()
	for range b.N {
		Build(ds)
	}
}

func BenchmarkSearch20k(b *testing.B) {
	x := Build(synthetic(b, 20000))
	defer cpuTime(b)()
	for i := range b.N {
		x.Search(benchQueries[i%len(benchQueries)], Options{Limit: 10})
	}
}

func BenchmarkDecode20k(b *testing.B) {
	data := Build(synthetic(b, 20000)).Encode()
	b.SetBytes(int64(len(data)))
	defer cpuTime(b)()
	for range b.N {
		if _, err := Decode(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeSearch20k is what a search command pays after reading the
// cached index from the store: decode, then one query.
func BenchmarkDecodeSearch20k(b *testing.B) {
	data := Build(synthetic(b, 20000)).Encode()
	defer cpuTime(b)()
	for i := range b.N {
		x, err := Decode(data)
		if err != nil {
			b.Fatal(err)
		}
		x.Search(benchQueries[i%len(benchQueries)], Options{Limit: 10})
	}
}

// BenchmarkBuildCorpus builds the index of the quality collection: the
// corpus's solutions and auto-memory and the learnings fixtures.
func BenchmarkBuildCorpus(b *testing.B) {
	ds := collection(b).docs
	defer cpuTime(b)()
	for range b.N {
		Build(ds)
	}
}

// TestStack: a delta over a base ranks as one collection. Every document
// here has two words in its text, so the base's average length is the
// union's and a stacked index must score exactly as a Build of what is
// left: b's old text is gone (delta, c), its new text found (gamma), N and
// df counted without the replaced documents.
func TestStack(t *testing.T) {
	now := day("2026-06-15")
	base := Build([]Doc{
		{ID: "a", Source: "compound", Text: "alpha beta", Confidence: 0.5},
		{ID: "b", Source: "compound", Text: "alpha delta", Confidence: 0.5},
		{ID: "c", Source: "clavain", Text: "epsilon zeta", Confidence: 0.5},
		{ID: "d", Source: "clavain", Text: "gamma eta", Confidence: 0.5},
	})
	newB := Doc{ID: "b", Source: "compound", Text: "alpha gamma", Confidence: 0.9}
	delta := BuildDelta(base, []Doc{newB}, []string{"c", "b", "c"})
	for name, x := range map[string]*Index{"built": Stack(base, delta), "decoded": decodedStack(t, base, delta)} {
		if x.Len() != 3 {
			t.Errorf("%s: Len %d, want 3", name, x.Len())
		}
		for q, want := range map[string][]string{
			"alpha":   {"b", "a"}, // equal relevance: b's confidence is higher
			"gamma":   {"b", "d"},
			"delta":   nil, // b's old text
			"epsilon": nil, // c, replaced by nothing
		} {
			if got := ids(x.Search(q, Options{Now: now})); !slices.Equal(got, want) {
				t.Errorf("%s: %q = %q, want %q", name, q, got, want)
			}
		}
		if got := x.Search("zeta", Options{Sources: []string{"clavain"}}); len(got) != 0 {
			t.Errorf("%s: zeta in clavain = %v", name, got)
		}
		union := Build([]Doc{
			{ID: "a", Source: "compound", Text: "alpha beta", Confidence: 0.5},
			newB,
			{ID: "d", Source: "clavain", Text: "gamma eta", Confidence: 0.5},
		})
		for _, q := range []string{"alpha", "gamma eta", "alpha beta gamma"} {
			a, b := x.Search(q, Options{Now: now}), union.Search(q, Options{Now: now})
			if len(a) != len(b) {
				t.Fatalf("%s: %q: %d hits stacked, %d in the union", name, q, len(a), len(b))
			}
			for i := range a {
				if a[i].ID != b[i].ID || a[i].Score != b[i].Score || a[i].Relevance != b[i].Relevance {
					t.Errorf("%s: %q hit %d: stacked %+v, union %+v", name, q, i, a[i], b[i])
				}
			}
		}
	}
	// A delta is normalised by its base's average lengths, not its own.
	long := BuildDelta(base, []Doc{{ID: "e", Text: "alpha beta gamma delta epsilon zeta"}}, nil)
	if long.avg != base.avg || Build(nil).avg != [4]float64{1, 1, 1, 1} {
		t.Errorf("delta averages %v, base %v", long.avg, base.avg)
	}
}

func decodedStack(t *testing.T, base, delta *Index) *Index {
	t.Helper()
	b, err := DecodeShared(base.Encode())
	if err != nil {
		t.Fatal(err)
	}
	d, err := Decode(delta.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.replaced, []string{"b", "c"}) || d.avg != base.avg {
		t.Fatalf("decoded delta: replaced %q, averages %v of %v", d.replaced, d.avg, base.avg)
	}
	return Stack(b, d)
}

// BenchmarkDelta20k is what a change costs over a stored 20,000-document
// base: decode the base, index one changed document as a delta, stack
// them (what a session's end stores, and a search's index when no writer
// stored it).
func BenchmarkDelta20k(b *testing.B) {
	ds := synthetic(b, 20000)
	data := Build(ds).Encode()
	changed := ds[10]
	changed.Text += " invoice renderer backoff"
	defer cpuTime(b)()
	for range b.N {
		base, err := DecodeShared(data)
		if err != nil {
			b.Fatal(err)
		}
		Stack(base, BuildDelta(base, []Doc{changed}, []string{changed.ID})).Encode()
	}
}

// BenchmarkStackSearch20k is a query over a decoded base with a one-
// document delta, against BenchmarkDecodeSearch20k's base alone.
func BenchmarkStackSearch20k(b *testing.B) {
	ds := synthetic(b, 20000)
	data := Build(ds).Encode()
	changed := ds[10]
	changed.Text += " invoice renderer backoff"
	base, _ := DecodeShared(data)
	delta := BuildDelta(base, []Doc{changed}, []string{changed.ID}).Encode()
	defer cpuTime(b)()
	for i := range b.N {
		base, err := DecodeShared(data)
		if err != nil {
			b.Fatal(err)
		}
		d, err := DecodeShared(delta)
		if err != nil {
			b.Fatal(err)
		}
		Stack(base, d).Search(benchQueries[i%len(benchQueries)], Options{Limit: 10})
	}
}
