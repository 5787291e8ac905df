package match

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

// benchVocab is the vocabulary of the synthetic documents: the words of
// real CLAUDE.md / AGENTS.md rules, drawn with a Zipf law so common words
// ("the", "to", "use") dominate as they do in real text and bigram
// frequencies are realistically skewed.
var benchVocab = strings.Fields(`
the to a and of in for is use run be with on that not this when it from as or
by are test tests file files before after always never prefer do must should
go build make check add new code change changes commit commits branch main pr
review api server client config configuration setting settings error errors
log logs logging debug value values type types function functions method class
module package import imports path paths directory dir project repo repository
user users data database db query queries table schema migration migrations
cache request response json yaml toml env environment variable variables secret
key keys token tokens auth session hook hooks plugin plugins memory context
prompt model agent agents tool tools command commands script scripts shell bash
python node npm pnpm yarn uv pip pytest ruff mypy lint linter format formatter
docker compose container image deploy deployment staging production release
version tag ci workflow job jobs pipeline github action actions issue issues
docs documentation readme claude md markdown section heading list item line
lines text string strings number int bool null empty default option options flag
flags argument arguments output input stdin stdout stderr exit status code
return returns handle handles retry retries timeout timeouts async await sync
thread threads lock locks race concurrent parallel queue worker workers event
events stream streams fetch http https url port host local remote ssh git rebase
merge squash push pull fetch stash diff patch fix bug bugs feature features
refactor rename move delete remove create update write read open close save
load parse render template component components state props style css html
frontend backend service services handler handlers route routes middleware
validate validation schema pydantic model models field fields serialize
never commit secrets keep small focused explicit clear simple avoid duplicate
`)

type benchGen struct {
	r     *rand.Rand
	vocab []string
	zipf  *rand.Zipf
}

// newBenchGen builds the vocabulary: benchVocab, most frequent first, then
// 4,000 pseudo-words made of random syllables standing in for the
// identifiers, names and jargon of real files, drawn with a Zipf law. The
// tail matters: with the 400 common words alone, almost every statement
// scores ≥ 0.5 against some other, while in the real corpus fewer than 10%
// do, and real files have three times as many distinct bigrams. With the
// tail, both match the corpus (TestBenchDataRealistic).
func newBenchGen(seed uint64) *benchGen {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	vocab := append([]string(nil), benchVocab...)
	onsets := strings.Fields("b c d f g h j k l m n p r s t v w z br ch cl cr dr fl gr kr pl pr sh st str th tr")
	vowels := strings.Fields("a e i o u y ai ea ee ie io oo ou")
	codas := []string{"", "", "", "n", "r", "s", "t", "x", "ck", "ng", "st", "nd", "rm"}
	for range 4000 {
		var sb strings.Builder
		for range 1 + r.IntN(3) {
			sb.WriteString(onsets[r.IntN(len(onsets))])
			sb.WriteString(vowels[r.IntN(len(vowels))])
		}
		sb.WriteString(codas[r.IntN(len(codas))])
		vocab = append(vocab, sb.String())
	}
	return &benchGen{r: r, vocab: vocab, zipf: rand.NewZipf(r, 1.05, 8, uint64(len(vocab)-1))}
}

func (g *benchGen) word() string { return g.vocab[g.zipf.Uint64()] }

// statement returns one list item of 60–140 characters, sometimes with
// inline code, emphasis, a path, a flag, a number or punctuation, as real
// instruction files have.
func (g *benchGen) statement() string {
	var sb strings.Builder
	sb.WriteString("- ")
	target := 60 + g.r.IntN(81)
	for sb.Len() < target {
		w := g.word()
		switch g.r.IntN(30) {
		case 0:
			w = "`" + w + "`"
		case 1:
			w = "**" + w + "**"
		case 2:
			w = "`src/" + w + "/" + g.word() + ".go`"
		case 3:
			w = "`--" + w + "-" + g.word() + "`"
		case 4:
			w = w + "_" + g.word()
		case 5:
			w = w + ","
		case 6:
			w = "(" + w + ")"
		case 7:
			w = strconv.Itoa(g.r.IntN(1000))
		}
		sb.WriteString(w)
		sb.WriteByte(' ')
	}
	return strings.TrimSpace(sb.String()) + "."
}

// nearDuplicate rewrites one or two words of s: the kind of drift between a
// memory entry and the line it was promoted to.
func (g *benchGen) nearDuplicate(s string) string {
	w := strings.Fields(s)
	for range 1 + g.r.IntN(2) {
		i := 1 + g.r.IntN(len(w)-1)
		switch g.r.IntN(3) {
		case 0:
			w[i] = g.word()
		case 1:
			w = append(w[:i], w[i+1:]...)
		default:
			w = append(w[:i], append([]string{g.word()}, w[i:]...)...)
		}
		if len(w) < 3 {
			break
		}
	}
	return strings.Join(w, " ")
}

// benchData returns n statements and q queries, 5% of them near-duplicates
// of a statement.
func benchData(n, q int) (stmts, queries []string) {
	g := newBenchGen(42)
	stmts = make([]string, n)
	for i := range stmts {
		stmts[i] = g.statement()
	}
	queries = make([]string, q)
	for i := range queries {
		if i%20 == 0 {
			queries[i] = g.nearDuplicate(stmts[g.r.IntN(n)])
		} else {
			queries[i] = g.statement()
		}
	}
	return stmts, queries
}

// reportCPU adds a cpu-ns/op metric: process CPU time per iteration since
// start, GC included.
func reportCPU(b *testing.B, start time.Duration) {
	if end, ok := cpuTime(); ok {
		b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
	}
}

func startCPU(b *testing.B) time.Duration {
	b.ReportAllocs()
	b.ResetTimer()
	t, _ := cpuTime()
	return t
}

func BenchmarkIndexBuild10k(b *testing.B) {
	stmts, _ := benchData(10000, 0)
	start := startCPU(b)
	for b.Loop() {
		ix := NewIndex()
		for i, s := range stmts {
			ix.Add(i, s)
		}
		ix.Best(stmts[0], 0.8) // the first query builds the postings: count it
	}
	reportCPU(b, start)
}

// benchBest runs the 1,000 queries against the 10,000 statements per
// iteration: ns/op is the total for all 1,000.
func benchBest(b *testing.B, min float64) {
	stmts, queries := benchData(10000, 1000)
	ix := NewIndex()
	for i, s := range stmts {
		ix.Add(i, s)
	}
	ix.Best("", min) // build the postings outside the timing (BenchmarkIndexBuild10k counts it)
	found := 0
	start := startCPU(b)
	for b.Loop() {
		found = 0
		for _, q := range queries {
			if _, ok := ix.Best(q, min); ok {
				found++
			}
		}
	}
	reportCPU(b, start)
	b.ReportMetric(float64(found), "matches")
}

func BenchmarkBest1000x10k(b *testing.B)      { benchBest(b, 0.8) }
func BenchmarkBest1000x10kMin05(b *testing.B) { benchBest(b, 0.5) }
func BenchmarkBest1000x10kMin095(b *testing.B) {
	benchBest(b, 0.95)
}

// BenchmarkPlan1000x10k is what a promotion plan does per candidate:
// Exact, then Best at the fuzzy threshold, then, without a match, the
// statement-level notes.
func BenchmarkPlan1000x10k(b *testing.B) {
	stmts, queries := benchData(10000, 1000)
	ix := NewIndex()
	nt := NewNotes()
	for i, s := range stmts {
		ix.Add(i, s)
		nt.Add(i, s)
	}
	ix.Best("", 0.8) // build the postings outside the timing
	nt.Find("")
	start := startCPU(b)
	for b.Loop() {
		for _, q := range queries {
			if _, ok := ix.Exact(q); ok {
				continue
			}
			if _, ok := ix.Best(q, 0.8); !ok {
				nt.Find(q)
			}
		}
	}
	reportCPU(b, start)
}

// BenchmarkAllPairsOracle scores 100 queries against 1,000 statements with
// Similarity, the way the original tool did, for comparison: ns/op is the
// total for the 100,000 pairs.
func BenchmarkAllPairsOracle(b *testing.B) {
	stmts, queries := benchData(1000, 100)
	start := startCPU(b)
	for b.Loop() {
		for _, q := range queries {
			best := -1.0
			for _, s := range stmts {
				if v := Similarity(q, s); v > best {
					best = v
				}
			}
		}
	}
	reportCPU(b, start)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e5, "ns/pair")
}

func BenchmarkNormalize(b *testing.B) {
	stmts, _ := benchData(1000, 0)
	start := startCPU(b)
	for b.Loop() {
		for _, s := range stmts {
			Normalize(s)
		}
	}
	reportCPU(b, start)
}

// TestBenchDataRealistic keeps the benchmark text honest: measured the way
// the benchmarks use it, the synthetic statements must look like the real
// list items of the corpus. For each, 150 statements are queried against
// 450 others (no near-duplicates): the share whose best match reaches 0.5
// must be small, as in the corpus (about 10%), not near 100% as with a
// small vocabulary; and the number of distinct bigrams must be of the
// corpus's order.
func TestBenchDataRealistic(t *testing.T) {
	items := corpusItems(t)
	var ascii []string // the generator writes ASCII; compare like with like
	for _, s := range items {
		if strings.IndexFunc(s, func(r rune) bool { return r >= 0x80 }) < 0 {
			ascii = append(ascii, s)
		}
	}
	if len(ascii) < 600 {
		t.Fatalf("only %d ASCII list items in the corpus", len(ascii))
	}
	measure := func(stmts, queries []string) (share float64, grams int) {
		ix := NewIndex()
		for i, s := range stmts {
			ix.Add(i, s)
		}
		n := 0
		for _, q := range queries {
			if _, ok := ix.Best(q, 0.5); ok {
				n++
			}
		}
		return float64(n) / float64(len(queries)), len(ix.df)
	}
	g := newBenchGen(7)
	synth := make([]string, 600)
	for i := range synth {
		synth[i] = g.statement()
	}
	cs, cg := measure(ascii[:450], ascii[450:600])
	ss, sg := measure(synth[:450], synth[450:600])
	t.Logf("share with a match ≥ 0.5: corpus %.2f, synthetic %.2f; distinct bigrams: corpus %d, synthetic %d", cs, ss, cg, sg)
	if ss > 0.3 || ss > 3*cs+0.05 {
		t.Errorf("synthetic statements are too alike: %.0f%% have a match ≥ 0.5 (corpus %.0f%%)", 100*ss, 100*cs)
	}
	if 2*sg < cg {
		t.Errorf("synthetic text has %d distinct bigrams, the corpus %d", sg, cg)
	}
}
