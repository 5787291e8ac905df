package match

import (
	"bufio"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/adrg/strutil"
)

// pair is the oracle's view of one (query, statement) pair: the score from
// Similarity and the bigram counts from strutil's own multiset
// intersection, never from this package.
type pair struct {
	score     float64
	c, eb, en int // shared bigrams; statement bigrams; statement runes
}

// oracle scores every statement against q. norms are the statements
// already normalized (Similarity(q, e) equals Similarity(q, Normalize(e))
// since Normalize is idempotent), which keeps the all-pairs loop affordable.
type oracle struct {
	nq     string
	qn, qa int
	row    []pair
}

func newOracle(norms []string, q string) *oracle {
	o := &oracle{nq: Normalize(q), row: make([]pair, len(norms))}
	o.qn = utf8.RuneCountInString(o.nq)
	for i, ne := range norms {
		_, c, eb, qa := strutil.NgramIntersection(ne, o.nq, 2)
		o.qa = qa
		o.row[i] = pair{score: Similarity(o.nq, ne), c: c, eb: eb, en: utf8.RuneCountInString(ne)}
	}
	return o
}

func (o *oracle) match(i int, ids []int) Match {
	p := o.row[i]
	m := Match{ID: ids[i], Score: p.score}
	if p.eb > 0 {
		m.Contains = float64(p.c) / float64(p.eb)
	}
	return m
}

// best is the all-pairs reference for Best: the highest score ≥ min, ties
// to the lowest id, then to the first added.
func (o *oracle) best(ids []int, min float64) (Match, bool) {
	bi := -1
	for i, p := range o.row {
		if !(p.score >= min) {
			continue
		}
		if bi >= 0 && (p.score < o.row[bi].score || p.score == o.row[bi].score && ids[i] >= ids[bi]) {
			continue
		}
		bi = i
	}
	if bi < 0 {
		return Match{}, false
	}
	return o.match(bi, ids), true
}

func normsOf(texts []string) []string {
	norms := make([]string, len(texts))
	for i, s := range texts {
		norms[i] = Normalize(s)
	}
	return norms
}

func bruteBest(texts []string, ids []int, q string, min float64) (Match, bool) {
	return newOracle(normsOf(texts), q).best(ids, min)
}

func sameMatch(a, b Match) bool {
	return a.ID == b.ID && math.Float64bits(a.Score) == math.Float64bits(b.Score) &&
		math.Float64bits(a.Contains) == math.Float64bits(b.Contains)
}

func buildIndex(texts []string, ids []int) *Index {
	ix := NewIndex()
	for i, s := range texts {
		ix.Add(ids[i], s)
	}
	return ix
}

// check compares Best, at every threshold in mins, with the all-pairs
// oracle, and reports how many Best answers at a threshold ≥ 0.5
// were a match (below that, any non-empty index answers).
func check(t *testing.T, ix *Index, norms []string, ids []int, q string, mins []float64) int {
	t.Helper()
	o := newOracle(norms, q)
	hits := 0
	for _, min := range mins {
		got, gok := ix.Best(q, min)
		want, wok := o.best(ids, min)
		if gok != wok || gok && !sameMatch(got, want) {
			t.Fatalf("Best(%q, %v) = %+v, %v; all-pairs = %+v, %v", q, min, got, gok, want, wok)
		}
		if gok && min >= 0.5 {
			hits++
		}
	}
	return hits
}

// vocabulary for the random property tests: ASCII and non-ASCII words,
// one-rune and empty words, markdown that Normalize rewrites, and words
// that share many bigrams.
var testVocab = []string{
	"go", "test", "tests", "testing", "run", "build", "make", "the", "a", "i", "x", "",
	"always", "never", "prefer", "use", "config", "configuration", "error", "errors",
	"café", "naïve", "straße", "日本", "語", "😀", "ß", "é", "ΣΟΦΊΑ", "测试", "테스트",
	"**bold**", "`code`", "_em_", "~~old~~", "[link](x.md)", "<!-- intermem:0123456789abcdef -->",
	"- ", "1.", "#", ">", ".", ";", "aa", "aaa", "abab", "baba", "src/main.go", "max_retries",
	"\t", "\r\n", "\xff", "İ",
}

func randWords(r *rand.Rand, n int) string {
	var sb strings.Builder
	for i := range n {
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(testVocab[r.IntN(len(testVocab))])
	}
	return sb.String()
}

// perturb applies a few random edits: rune deletion, insertion and
// substitution, word swaps, appended or dropped words, case changes, and
// added markers.
func perturb(r *rand.Rand, s string) string {
	for range 1 + r.IntN(3) {
		rs := []rune(s)
		switch r.IntN(8) {
		case 0:
			if len(rs) > 0 {
				i := r.IntN(len(rs))
				rs = append(rs[:i], rs[i+1:]...)
			}
		case 1:
			i := r.IntN(len(rs) + 1)
			rs = append(rs[:i], append([]rune{[]rune("xyzé語 ")[r.IntN(6)]}, rs[i:]...)...)
		case 2:
			if len(rs) > 0 {
				rs[r.IntN(len(rs))] = []rune("qwj ")[r.IntN(4)]
			}
		case 3:
			w := strings.Fields(string(rs))
			if len(w) > 1 {
				i := r.IntN(len(w) - 1)
				w[i], w[i+1] = w[i+1], w[i]
			}
			rs = []rune(strings.Join(w, " "))
		case 4:
			rs = append(rs, []rune(" "+randWords(r, 1+r.IntN(4)))...)
		case 5:
			if w := strings.Fields(string(rs)); len(w) > 1 {
				rs = []rune(strings.Join(w[:len(w)-1], " "))
			}
		case 6:
			rs = []rune(strings.ToUpper(string(rs)))
		case 7:
			rs = []rune("- " + string(rs) + " <!-- intermem:fedcba9876543210 -->")
		}
		s = string(rs)
	}
	return s
}

// TestBestOracleRandom checks Best against the all-pairs oracle on random
// statements and queries that are edits of them: 4 rounds of 240 statements
// × 40 queries is 38,400 pairs, each query at five thresholds.
func TestBestOracleRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	pairs, hits := 0, 0
	for range 4 {
		var texts []string
		var ids []int
		for i := range 240 {
			var s string
			if i > 0 && r.IntN(3) == 0 {
				s = perturb(r, texts[r.IntN(len(texts))])
			} else {
				s = randWords(r, r.IntN(12))
			}
			texts = append(texts, s)
			ids = append(ids, r.IntN(400)) // duplicate ids exercise the tie rule
		}
		ix := buildIndex(texts, ids)
		norms := normsOf(texts)
		for range 40 {
			var q string
			switch r.IntN(4) {
			case 0:
				q = randWords(r, r.IntN(10))
			case 1:
				q = texts[r.IntN(len(texts))]
			default:
				q = perturb(r, texts[r.IntN(len(texts))])
			}
			hits += check(t, ix, norms, ids, q, []float64{-1, 0, 0.5, 0.8, 0.95, 1, 1.5, math.NaN()})
			pairs += len(texts)
		}
	}
	if pairs < 5000 {
		t.Fatalf("only %d pairs", pairs)
	}
	// Guard against a vacuous run: most queries are edits, so the high
	// thresholds must have found matches too.
	if hits < 200 {
		t.Fatalf("only %d matches over %d pairs: the generator does not exercise Best", hits, pairs)
	}
	t.Logf("%d pairs, %d matching answers", pairs, hits)
}

// TestBestUntabulated runs the oracle comparison with the per-length
// tables off, so need and rest take their computed path, as they do for
// statements more than 65,536 bigrams apart in length.
func TestBestUntabulated(t *testing.T) {
	defer func(m int) { tabMax = m }(tabMax)
	for _, m := range []int{0, 3} {
		tabMax = m
		r := rand.New(rand.NewPCG(11, 12))
		var texts []string
		for i := range 200 {
			if i > 0 && r.IntN(2) == 0 {
				texts = append(texts, perturb(r, texts[r.IntN(len(texts))]))
			} else {
				texts = append(texts, randWords(r, r.IntN(14)))
			}
		}
		ids := make([]int, len(texts))
		for i := range ids {
			ids[i] = i
		}
		ix := buildIndex(texts, ids)
		norms := normsOf(texts)
		hits := 0
		for range 60 {
			q := perturb(r, texts[r.IntN(len(texts))])
			hits += check(t, ix, norms, ids, q, []float64{0, 0.5, 0.8, 0.95})
		}
		if hits < 50 {
			t.Fatalf("tabMax %d: only %d matches", m, hits)
		}
	}
}

// TestAddAfterQuery checks that an Add after queries is seen by the next
// query, including one with the same text (prepared queries are reused).
func TestAddAfterQuery(t *testing.T) {
	ix := NewIndex()
	ix.Add(1, "never push to the main branch directly")
	q := "Always run go vet before committing"
	if _, ok := ix.Best(q, 0.8); ok {
		t.Fatal("matched before the statement was added")
	}
	ix.Add(2, "- always run `go vet` before committing.")
	ix.Add(3, "always run go vet and go test before committing any change")
	if m, ok := ix.Best(q, 0.8); !ok || m.ID != 2 || m.Score != 1 {
		t.Fatalf("after Add: Best = %+v, %v; want statement 2 with score 1", m, ok)
	}
	if id, ok := ix.Exact(q); !ok || id != 2 {
		t.Fatalf("after Add: Exact = %d, %v; want 2", id, ok)
	}
}

// TestScoreEveryPair checks the fast score of every pair, not only the
// best: a one-statement index with min = -1 always returns that statement.
func TestScoreEveryPair(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var texts []string
	for range 80 {
		if len(texts) > 0 && r.IntN(2) == 0 {
			texts = append(texts, perturb(r, texts[r.IntN(len(texts))]))
		} else {
			texts = append(texts, randWords(r, r.IntN(8)))
		}
	}
	for _, e := range texts {
		ix := NewIndex()
		ix.Add(7, e)
		for _, q := range texts {
			got, ok := ix.Best(q, -1)
			want := newOracle([]string{Normalize(e)}, q).match(0, []int{7})
			if want.Score != Similarity(q, e) {
				t.Fatalf("oracle on normalized text differs from Similarity(%q, %q)", q, e)
			}
			if !ok || !sameMatch(got, want) {
				t.Fatalf("pair (%q, %q): got %+v, %v; want %+v", q, e, got, ok, want)
			}
		}
	}
}

func TestBestEdgeCases(t *testing.T) {
	texts := []string{"<!-- intermem:0123456789abcdef -->", "x", "", "ab", "ab", "- Ab."}
	ids := []int{5, 4, 3, 9, 2, 2}
	ix := buildIndex(texts, ids)
	for _, q := range []string{"", "x", "y", "ab", "AB", "abc", "ba", "<!-- rule:1 -->"} {
		check(t, ix, normsOf(texts), ids, q, []float64{-1, 0, 0.5, 0.8, 1, 2})
	}
	// Two empty statements: "" against "" scores 1, the lowest id wins.
	if m, ok := ix.Best("  ", 1); !ok || m.ID != 3 || m.Score != 1 {
		t.Errorf("Best(empty) = %+v, %v; want id 3 score 1", m, ok)
	}
	// "ab" twice under ids 9 and 2, and "- Ab." normalizing to "ab" under 2.
	if m, ok := ix.Best("ab", 0.8); !ok || m.ID != 2 || m.Score != 1 || m.Contains != 1 {
		t.Errorf("Best(ab) = %+v, %v; want id 2 score 1", m, ok)
	}
	// Equal ids and equal scores: the statement added first wins, which
	// shows in Contains. "ab" shares 1 of its 1 bigram with "abcd" and
	// "abcxyz" 2 of its 5: both score 2·1/(3+1) = 2·2/(3+5) = 0.5.
	for _, order := range [][]string{{"ab", "abcxyz"}, {"abcxyz", "ab"}} {
		tie := buildIndex(order, []int{1, 1})
		want := Similarity("abcd", order[0])
		got, ok := tie.Best("abcd", 0.5)
		if !ok || got.Score != 0.5 || want != 0.5 || got.Contains != newOracle([]string{order[0]}, "abcd").match(0, []int{1}).Contains {
			t.Errorf("tie among %q: got %+v, want the first added", order, got)
		}
		check(t, tie, order, []int{1, 1}, "abcd", []float64{0, 0.5})
	}

	empty := NewIndex()
	if _, ok := empty.Best("anything", 0); ok {
		t.Error("empty index found a match")
	}
	if _, ok := empty.Exact("anything"); ok {
		t.Error("empty index found an exact match")
	}
}

func TestBestFindsNearDuplicate(t *testing.T) {
	ix := NewIndex()
	ix.Add(1, "- Run `go test ./...` before every commit <!-- intermem:0123456789abcdef -->")
	ix.Add(2, "- Never commit generated files under dist/")
	ix.Add(3, "## Testing")
	m, ok := ix.Best("Run go test ./... before each commit.", 0.8)
	if !ok || m.ID != 1 || m.Score < 0.8 || m.Score >= 1 {
		t.Fatalf("Best = %+v, %v; want statement 1 with 0.8 ≤ score < 1", m, ok)
	}
	if _, ok := ix.Best("Deploy with the blue-green script", 0.8); ok {
		t.Fatal("unrelated text matched")
	}
}

func TestExact(t *testing.T) {
	ix := NewIndex()
	ix.Add(10, "- foo <!-- intermem:0123456789abcdef -->")
	ix.Add(4, "* Foo")
	ix.Add(7, "- Use `make build`.")
	ix.Add(3, "Different text entirely")
	if id, ok := ix.Exact("foo"); !ok || id != 4 {
		t.Errorf("Exact(foo) = %d, %v; want 4 (lowest of 10 and 4)", id, ok)
	}
	if id, ok := ix.Exact("1. **Foo** <!-- rule:232 -->"); !ok || id != 4 {
		t.Errorf("Exact(marked foo) = %d, %v; want 4", id, ok)
	}
	if id, ok := ix.Exact("use make build"); !ok || id != 7 {
		t.Errorf("Exact(use make build) = %d, %v; want 7", id, ok)
	}
	for _, q := range []string{"foo bar", "fo", "use make", "use make build now", "<!-- foo -->"} {
		if id, ok := ix.Exact(q); ok {
			t.Errorf("Exact(%q) = %d, want no match", q, id)
		}
	}
	if ix.Len() != 4 {
		t.Errorf("Len = %d, want 4", ix.Len())
	}
}

func TestConcurrentQueries(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var texts []string
	var ids []int
	for i := range 200 {
		texts = append(texts, randWords(r, 3+r.IntN(10)))
		ids = append(ids, i)
	}
	ix := buildIndex(texts, ids)
	queries := make([]string, 40)
	want := make([]Match, len(queries))
	wantOK := make([]bool, len(queries))
	for i := range queries {
		queries[i] = perturb(r, texts[r.IntN(len(texts))])
		want[i], wantOK[i] = bruteBest(texts, ids, queries[i], 0.5)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range queries {
				i := (i + g) % len(queries)
				got, ok := ix.Best(queries[i], 0.5)
				if ok != wantOK[i] || ok && !sameMatch(got, want[i]) {
					t.Errorf("concurrent Best(%q) = %+v, want %+v", queries[i], got, want[i])
				}
				ix.Exact(queries[i])
			}
		})
	}
	wg.Wait()
}

var listItem = regexp.MustCompile(`^\s*([-*+]|\d+[.)])\s+\S`)

// corpusItems reads every list-item line of the real CLAUDE.md / AGENTS.md
// files in the shared corpus.
func corpusItems(t testing.TB) []string {
	t.Helper()
	dir := filepath.Join("..", "..", "testdata", "corpus", "claude-agents-md")
	files, _ := filepath.Glob(filepath.Join(dir, "*.md"))
	if len(files) == 0 {
		t.Fatal("the vendored corpus is part of the repository")
	}
	var items []string
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if listItem.MatchString(sc.Text()) {
				items = append(items, sc.Text())
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	if len(items) < 200 {
		t.Fatalf("only %d list items in %s", len(items), dir)
	}
	return items
}

func TestBestOracleCorpus(t *testing.T) {
	items := corpusItems(t)
	ids := make([]int, len(items))
	for i := range ids {
		ids[i] = i
	}
	ix := buildIndex(items, ids)
	norms := normsOf(items)
	r := rand.New(rand.NewPCG(9, 10))
	n := 40
	if testing.Short() {
		n = 15
	}
	hits := 0
	for range n {
		q := perturb(r, items[r.IntN(len(items))])
		hits += check(t, ix, norms, ids, q, []float64{0.5, 0.8, 0.95})
	}
	// Unperturbed items are exact duplicates of themselves.
	for range 20 {
		i := r.IntN(len(items))
		id, ok := ix.Exact(items[i])
		if !ok || Key(items[id]) != Key(items[i]) {
			t.Fatalf("Exact(%q) = %d, %v", items[i], id, ok)
		}
	}
	if hits == 0 {
		t.Fatal("no perturbed corpus item matched its original")
	}
	t.Logf("%d list items, %d queries, %d matching answers", len(items), n, hits)
}

func FuzzBest(f *testing.F) {
	f.Add("run go test\nnever push to main\n- Foo <!-- intermem:0123456789abcdef -->", "Run go tests", uint8(200))
	f.Add("a\nab\n\nabab", "ba", uint8(0))
	f.Add("日本語のテスト\n테스트", "日本語テスト", uint8(128))
	f.Add("x\xff\ny", "\xfe", uint8(255))
	f.Fuzz(func(t *testing.T, stmts, q string, m uint8) {
		texts := strings.Split(stmts, "\n")
		if len(texts) > 64 {
			texts = texts[:64]
		}
		ids := make([]int, len(texts))
		for i := range ids {
			ids[i] = (i * 7) % 5 // duplicates on purpose
		}
		ix := buildIndex(texts, ids)
		min := float64(m)/200 - 0.1 // -0.1 … 1.175
		check(t, ix, normsOf(texts), ids, q, []float64{min, 0.8})
	})
}
