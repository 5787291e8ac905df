package match

import (
	"cmp"
	"math"
	"slices"
	"sync"
)

// Match is one existing statement found for a query.
type Match struct {
	// ID is the caller's id of the existing statement.
	ID int
	// Score is Similarity(query, existing), bit for bit.
	Score float64
	// Contains is the fraction of the existing statement's bigrams
	// (as a multiset) found in the query: common/bigrams(existing). It is
	// about 1 when the query contains the existing text and adds more, and
	// 0 when the existing statement has no bigram (fewer than 2 runes).
	Contains float64
}

// Kinds of refinement reported by Index.Refinement.
const (
	// KindRefines means the query contains the existing statement and adds
	// to it: the query is a more complete version.
	KindRefines = "refines"
	// KindNarrower means the existing statement already contains the query
	// and says more: the query adds nothing.
	KindNarrower = "narrower"
)

// MinRefinementRunes is the normalized length, in runes, below which a
// statement is never reported as contained in another by Refinement: a
// heading-sized fragment such as "testing" is contained in half of any
// document, and calling every candidate a refinement of it is noise.
const MinRefinementRunes = 10

const (
	asciiGrams = 128 * 128      // ASCII bigrams a<<7|b
	noGram     = math.MaxUint32 // a query bigram no statement has
)

// Index holds existing statements for exact and fuzzy lookup.
//
// Add must not run concurrently with anything else; once the index is
// built, Exact, Best and Refinement are safe for concurrent use.
type Index struct {
	ids   []int    // caller id, by statement number
	runes []int32  // normalized length in runes
	off   []uint32 // grams[off[s]:off[s+1]]: statement s's bigram ids, sorted, repeated per occurrence
	grams []uint32

	// post maps a bigram id to the statements holding it, one entry per
	// occurrence, in ascending statement order (so repeats are adjacent).
	post  [][]int32
	ascii *[asciiGrams]uint32 // ASCII bigram a<<7|b → id+1, 0 if unseen; allocated on first use
	dict  map[uint64]uint32   // other bigram r1<<32|r2 → id

	exact       map[uint64]int // Key → lowest id
	lowest      int            // statement with the lowest id, first added on ties; -1 if none
	lowestEmpty int            // same among statements that normalize to ""; -1 if none

	refMu    sync.Mutex
	refStale bool
	refPost  [][]int32 // bigram id → statements whose containment prefix holds it

	buf  []rune // Add's scratch
	pool sync.Pool
}

// NewIndex returns an empty index.
func NewIndex() *Index {
	return &Index{
		off:         []uint32{0},
		dict:        map[uint64]uint32{},
		exact:       map[uint64]int{},
		lowest:      -1,
		lowestEmpty: -1,
	}
}

// Len reports the number of statements added.
func (ix *Index) Len() int { return len(ix.ids) }

// gramID returns the id of bigram (a, b), assigning the next free one if
// add is set; without add an unseen bigram is noGram. Ids are dense so the
// postings are a slice; ASCII pairs, the vast majority, skip the map.
func (ix *Index) gramID(a, b rune, add bool) uint32 {
	if uint32(a) < 128 && uint32(b) < 128 {
		if ix.ascii == nil {
			if !add {
				return noGram
			}
			ix.ascii = new([asciiGrams]uint32)
		}
		p := &ix.ascii[uint32(a)<<7|uint32(b)]
		if *p != 0 {
			return *p - 1
		}
		if !add {
			return noGram
		}
		*p = ix.newGram() + 1
		return *p - 1
	}
	k := uint64(uint32(a))<<32 | uint64(uint32(b))
	if id, ok := ix.dict[k]; ok {
		return id
	}
	if !add {
		return noGram
	}
	id := ix.newGram()
	ix.dict[k] = id
	return id
}

func (ix *Index) newGram() uint32 {
	ix.post = append(ix.post, nil)
	return uint32(len(ix.post) - 1)
}

// Add adds an existing statement under the caller's id. Ids should be
// unique; if not, ties between equal ids go to the statement added first.
func (ix *Index) Add(id int, text string) {
	ix.buf = appendNormalized(ix.buf, text)
	rs := ix.buf
	s := len(ix.ids)
	ix.ids = append(ix.ids, id)
	ix.runes = append(ix.runes, int32(min(len(rs), math.MaxInt32)))

	k := keyOfRunes(rs)
	if cur, ok := ix.exact[k]; !ok || id < cur {
		ix.exact[k] = id
	}
	if ix.lowest < 0 || id < ix.ids[ix.lowest] {
		ix.lowest = s
	}
	if len(rs) == 0 && (ix.lowestEmpty < 0 || id < ix.ids[ix.lowestEmpty]) {
		ix.lowestEmpty = s
	}

	start := len(ix.grams)
	for i := 1; i < len(rs); i++ {
		ix.grams = append(ix.grams, ix.gramID(rs[i-1], rs[i], true))
	}
	g := ix.grams[start:]
	slices.Sort(g)
	for _, gid := range g {
		ix.post[gid] = append(ix.post[gid], int32(s))
	}
	ix.off = append(ix.off, uint32(len(ix.grams)))
	ix.refStale = true
}

// Exact reports the id of an existing statement with the same Key as text
// (the lowest such id).
func (ix *Index) Exact(text string) (id int, ok bool) {
	id, ok = ix.exact[Key(text)]
	return id, ok
}

// nb is the number of bigrams of statement s.
func (ix *Index) nb(s int32) int { return int(ix.off[s+1] - ix.off[s]) }

// common is the multiset intersection size of a query's sorted bigram ids
// and statement s's: Σ min(count in query, count in s), by merging.
func (ix *Index) common(qg []uint32, s int32) int {
	eg := ix.grams[ix.off[s]:ix.off[s+1]]
	c, i, j := 0, 0, 0
	for i < len(qg) && j < len(eg) {
		switch {
		case qg[i] < eg[j]:
			i++
		case qg[i] > eg[j]:
			j++
		default:
			c++
			i++
			j++
		}
	}
	return c
}

// diceScore is strutil's Sørensen–Dice expression, for a query of qa bigrams
// and a statement of eb bigrams sharing c, where at least one has a bigram.
func diceScore(c, qa, eb int) float64 { return 2 * float64(c) / float64(qa+eb) }

// query is the per-call state, pooled so a query allocates nothing.
type query struct {
	q       []rune
	qg      []uint32 // sorted bigram ids, noGram for bigrams no statement has
	dist    []dgram  // distinct known bigrams, rarest first
	unknown int      // occurrences of noGram in qg
	acc     []int32  // per statement: shared bigrams accumulated; 0 = untouched
	touched []int32
}

type dgram struct {
	id     uint32
	qc, df int32 // occurrences in the query; postings length
}

func (ix *Index) getQuery(text string) *query {
	qu, _ := ix.pool.Get().(*query)
	if qu == nil {
		qu = &query{}
	}
	if len(qu.acc) < len(ix.ids) {
		qu.acc = make([]int32, len(ix.ids))
	}
	qu.q = appendNormalized(qu.q, text)
	qu.qg = qu.qg[:0]
	for i := 1; i < len(qu.q); i++ {
		qu.qg = append(qu.qg, ix.gramID(qu.q[i-1], qu.q[i], false))
	}
	slices.Sort(qu.qg)
	qu.dist = qu.dist[:0]
	qu.unknown = 0
	for i := 0; i < len(qu.qg); {
		j := i + 1
		for j < len(qu.qg) && qu.qg[j] == qu.qg[i] {
			j++
		}
		if id := qu.qg[i]; id == noGram {
			qu.unknown += j - i
		} else {
			qu.dist = append(qu.dist, dgram{id: id, qc: int32(j - i), df: int32(len(ix.post[id]))})
		}
		i = j
	}
	slices.SortFunc(qu.dist, func(a, b dgram) int {
		return cmp.Or(cmp.Compare(a.df, b.df), cmp.Compare(a.id, b.id))
	})
	return qu
}

func (ix *Index) putQuery(qu *query) { ix.pool.Put(qu) }

// prefix returns how many of qu.dist (rarest first) must be scanned so that
// every statement sharing at least t bigram occurrences with the query
// shares one of them, and the number of known query occurrences left out.
// Bigrams no statement has come first for free. Proof: a statement sharing
// nothing with the scanned bigrams can only share the occurrences left out,
// and there are at most qa-p = t-1 of those.
func (qu *query) prefix(qa, t int) (k, rest int) {
	p := qa - t + 1
	got := qu.unknown
	for k < len(qu.dist) && got < p {
		got += int(qu.dist[k].qc)
		k++
	}
	for _, d := range qu.dist[k:] {
		rest += int(d.qc)
	}
	return k, rest
}

// gather accumulates, in qu.acc, the bigram occurrences each statement with
// lo ≤ bigrams ≤ hi shares with qu.dist[:k], and lists them in qu.touched.
func (ix *Index) gather(qu *query, k, lo, hi int) {
	qu.touched = qu.touched[:0]
	for _, d := range qu.dist[:k] {
		pl := ix.post[d.id]
		for i := 0; i < len(pl); {
			s := pl[i]
			j := i + 1
			for j < len(pl) && pl[j] == s {
				j++
			}
			ec := int32(j - i)
			i = j
			if eb := ix.nb(s); eb < lo || eb > hi {
				continue
			}
			if qu.acc[s] == 0 {
				qu.touched = append(qu.touched, s)
			}
			qu.acc[s] += min(d.qc, ec)
		}
	}
}

// better orders results: higher score, then lower id, then added first.
func (ix *Index) better(score float64, s int32, found bool, best Match, bs int32) bool {
	switch {
	case !found:
		return true
	case score != best.Score:
		return score > best.Score
	case ix.ids[s] != best.ID:
		return ix.ids[s] < best.ID
	}
	return s < bs
}

func contains(c, eb int) float64 {
	if eb == 0 {
		return 0
	}
	return float64(c) / float64(eb)
}

// Best returns the existing statement with the highest Similarity to text
// that is ≥ minScore, ties going to the lowest id. It returns exactly what a scan
// of every statement with Similarity would, without scoring most of them;
// see the package documentation for the pruning and why it is exact.
func (ix *Index) Best(text string, minScore float64) (Match, bool) {
	if !(minScore <= 1) || len(ix.ids) == 0 { // no score exceeds 1; NaN matches nothing
		return Match{}, false
	}
	qu := ix.getQuery(text)
	defer ix.putQuery(qu)
	qn := len(qu.q)
	if qn < 2 {
		// No query bigram: every score is 0 except "" against "", which is 1.
		if qn == 0 && ix.lowestEmpty >= 0 {
			return Match{ID: ix.ids[ix.lowestEmpty], Score: 1}, true
		}
		if minScore <= 0 {
			return Match{ID: ix.ids[ix.lowest]}, true
		}
		return Match{}, false
	}
	qa := qn - 1

	// Only statements sharing a bigram score above 0. For minScore > 0 the
	// length filter and the prefix bound below keep most of them unread.
	lo, hi, t := 1, math.MaxInt32, 1
	if minScore > 0 {
		lo = max(1, int(math.Floor(float64(qa)*minScore/(2-minScore)))-1)
		if h := math.Ceil(float64(qa)*(2-minScore)/minScore) + 1; h < math.MaxInt32 {
			hi = int(h)
		}
		t = max(1, int(math.Ceil(minScore*float64(qa+lo)/2))-1)
	}
	k, rest := qu.prefix(qa, t)
	ix.gather(qu, k, lo, hi)

	var best Match
	var bs int32
	found := false
	for _, s := range qu.touched {
		a := int(qu.acc[s])
		qu.acc[s] = 0
		eb := ix.nb(s)
		ub := diceScore(a+min(rest, eb-a), qa, eb) // rounding is monotone, so score ≤ ub
		if ub < minScore || found && ub < best.Score {
			continue
		}
		c := a
		if rest > 0 {
			c = ix.common(qu.qg, s)
		}
		score := diceScore(c, qa, eb)
		if score >= minScore && ix.better(score, s, found, best, bs) {
			best, bs, found = Match{ID: ix.ids[s], Score: score, Contains: contains(c, eb)}, s, true
		}
	}
	if !found && minScore <= 0 {
		return Match{ID: ix.ids[ix.lowest]}, true
	}
	return best, found
}

// Refinement reports whether text looks like a refinement of an existing
// statement. With q and e the normalized query and existing statement,
// |x| a length in runes, bigrams(x) = |x|-1 and c their shared bigrams
// (multiset), a statement qualifies as
//
//   - "refines" (the query contains e and adds to it) when
//     |e| ≥ MinRefinementRunes, 10·c ≥ 9·bigrams(e) (Contains ≥ 0.9) and
//     5·|q| ≥ 6·|e| (q at least 1.2 times as long);
//   - "narrower" (e already contains the query and says more) when
//     |q| ≥ MinRefinementRunes, 10·c ≥ 9·bigrams(q) and 5·|e| ≥ 6·|q|.
//
// The integer forms avoid rounding at the 0.9 and 1.2 boundaries. Among the
// qualifying statements the one with the highest Score wins, ties going to
// the lowest id. The returned Match has Score and Contains as in Best (for
// "narrower", Contains is still the fraction of e's bigrams in q).
//
// The first call after an Add builds a secondary index, so build the index
// fully before querying it.
func (ix *Index) Refinement(text string) (m Match, kind string, ok bool) {
	ix.ensureRefinementIndex()
	qu := ix.getQuery(text)
	defer ix.putQuery(qu)
	qn := len(qu.q)
	qa := qn - 1

	var best Match
	var bs int32
	found := false
	consider := func(s int32, c int, k string) {
		eb := ix.nb(s)
		score := diceScore(c, qa, eb)
		if ix.better(score, s, found, best, bs) {
			best, bs, found, kind = Match{ID: ix.ids[s], Score: score, Contains: contains(c, eb)}, s, true, k
		}
	}

	// Narrower: q is ≥ 90% contained in e, so e shares ≥ ⌈0.9·qa⌉ bigram
	// occurrences with q: the prefix bound of Best applies with that t.
	if qn >= MinRefinementRunes {
		t := (9*qa + 9) / 10
		k, rest := qu.prefix(qa, t)
		lo := (6*qn+4)/5 - 1 // |e| ≥ ⌈1.2·|q|⌉
		ix.gather(qu, k, lo, math.MaxInt32)
		for _, s := range qu.touched {
			a := int(qu.acc[s])
			qu.acc[s] = 0
			if 10*(a+rest) < 9*qa {
				continue
			}
			c := a
			if rest > 0 {
				c = ix.common(qu.qg, s)
			}
			if 10*c >= 9*qa {
				consider(s, c, KindNarrower)
			}
		}
	}

	// Refines: e is ≥ 90% contained in q. Each qualifying e was posted
	// under the rarest bigrams of its own containment prefix, one of which
	// q must have.
	if 5*qn >= 6*MinRefinementRunes { // else no e is both long enough and 1.2× shorter
		qu.touched = qu.touched[:0]
		for _, d := range qu.dist {
			for _, s := range ix.refPost[d.id] {
				if qu.acc[s] != 0 {
					continue
				}
				qu.acc[s] = 1
				qu.touched = append(qu.touched, s)
				if en := int(ix.runes[s]); 5*qn < 6*en {
					continue
				}
				eb := ix.nb(s)
				if c := ix.common(qu.qg, s); 10*c >= 9*eb {
					consider(s, c, KindRefines)
				}
			}
		}
		for _, s := range qu.touched {
			qu.acc[s] = 0
		}
	}
	if !found {
		return Match{}, "", false
	}
	return best, kind, true
}

// ensureRefinementIndex (re)builds refPost after Adds. Statement e is
// posted under the distinct bigrams of its shortest prefix, rarest first,
// that holds u+1 of its bigram occurrences, u = bigrams(e) - ⌈0.9·bigrams(e)⌉.
// If 10·c ≥ 9·bigrams(e), at most u of e's occurrences are unmatched by the
// query, so at least one bigram of that prefix is in the query. Any order
// is correct; rarest first keeps the posting lists short.
func (ix *Index) ensureRefinementIndex() {
	ix.refMu.Lock()
	defer ix.refMu.Unlock()
	if !ix.refStale && ix.refPost != nil {
		return
	}
	ix.refPost = make([][]int32, len(ix.post))
	var ds []dgram
	for s := range int32(len(ix.ids)) {
		if int(ix.runes[s]) < MinRefinementRunes {
			continue
		}
		eg := ix.grams[ix.off[s]:ix.off[s+1]]
		ds = ds[:0]
		for i := 0; i < len(eg); {
			j := i + 1
			for j < len(eg) && eg[j] == eg[i] {
				j++
			}
			ds = append(ds, dgram{id: eg[i], qc: int32(j - i), df: int32(len(ix.post[eg[i]]))})
			i = j
		}
		slices.SortFunc(ds, func(a, b dgram) int {
			return cmp.Or(cmp.Compare(a.df, b.df), cmp.Compare(a.id, b.id))
		})
		eb := len(eg)
		need := eb - (9*eb+9)/10 + 1
		for _, d := range ds {
			if need <= 0 {
				break
			}
			ix.refPost[d.id] = append(ix.refPost[d.id], s)
			need -= int(d.qc)
		}
	}
	ix.refStale = false
}
