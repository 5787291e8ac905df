package match

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
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

const (
	asciiGrams = 128 * 128      // ASCII bigrams a<<7|b
	noGram     = math.MaxUint32 // a query bigram no statement has
	sigWords   = 16             // signature size in 64-bit words: 1,024 bits
	noLimit    = 1 << 30        // above any bigram count; hi+1 still fits an int32

	// prefixSlack is how many query bigram occurrences are read beyond the shortest
	// prefix the prefix bound allows. With the shortest prefix, sharing
	// one bigram is enough to pass the count bound, so it prunes nothing;
	// with two more, a candidate must share three of the occurrences read,
	// which unrelated statements rarely do, and the signature checks saved
	// cost more than the extra reads (about −20% instructions per query
	// for Best on the benchmark data; 0, 4 and 8 do worse).
	prefixSlack = 2
)

// Index holds existing statements for exact and fuzzy lookup.
//
// Add must not run concurrently with anything else. Once the statements
// are added, Exact and Best are safe for concurrent use. The
// first Best after an Add builds the postings (linear in the
// index size), so add everything first, then query.
type Index struct {
	ids   []int    // caller id, by statement number
	runes []int32  // normalized length in runes
	nbs   []int32  // number of bigrams: max(runes-1, 0)
	off   []uint32 // grams[off[s]:off[s+1]]: statement s's bigram ids, equal ids adjacent
	grams []uint32
	sigs  []uint64 // sigs[s*sigWords:][:sigWords]: bit id%1024 set for each bigram id of s
	sigN  []uint16 // bits set in s's signature

	// Bigram ids are dense, in order of first appearance.
	ascii *[asciiGrams]uint32 // ASCII bigram a<<7|b → id+1, 0 if unseen; allocated on first use
	dict  map[uint64]uint32   // other bigram r1<<32|r2 → id
	df    []int32             // by bigram id: statements holding it

	exact       map[uint64]int // Key → lowest id
	lowest      int            // statement with the lowest id, first added on ties; -1 if none
	lowestEmpty int            // same among statements that normalize to ""; -1 if none

	// Built lazily after the last Add, under mu; frozen is set
	// (atomically, after the build) when they are current.
	mu      sync.Mutex
	frozen  atomic.Bool
	postOff []uint32 // postS[postOff[g]:postOff[g+1]]: statements holding bigram g,
	postS   []int32  // ordered by bigram count then statement number
	postP   []uint16 // parallel to postS: the statement's bigram occurrences ranked before g (saturated)
	rank    []uint32 // by bigram id: position in the global order (df, then id)
	maxNB   int      // largest bigram count

	buf  []rune   // Add's scratch: normalized text
	tmp  []uint32 // Add's scratch: bigram ids in text order
	cnt  []int32  // Add's scratch: occurrences per bigram id, zero between calls
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
// add is set; without add an unseen bigram is noGram. ASCII pairs, the vast
// majority, skip the map.
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
	ix.df = append(ix.df, 0)
	ix.cnt = append(ix.cnt, 0)
	return uint32(len(ix.df) - 1)
}

func sigBit(id uint32) (word int, mask uint64) {
	return int(id>>6) % sigWords, 1 << (id & 63)
}

// Add adds an existing statement under the caller's id. Ids should be
// unique; if not, ties between equal ids go to the statement added first.
func (ix *Index) Add(id int, text string) {
	ix.frozen.Store(false)
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

	// Group equal bigram ids by counting, in two linear passes: sorting
	// would cost a third of the build.
	ix.tmp = ix.tmp[:0]
	for i := 1; i < len(rs); i++ {
		g := ix.gramID(rs[i-1], rs[i], true)
		ix.tmp = append(ix.tmp, g)
		ix.cnt[g]++
	}
	ix.sigs = append(ix.sigs, make([]uint64, sigWords)...)
	sig := ix.sigs[s*sigWords:]
	for _, g := range ix.tmp {
		c := ix.cnt[g]
		if c == 0 {
			continue // already emitted
		}
		ix.cnt[g] = 0
		for range c {
			ix.grams = append(ix.grams, g)
		}
		ix.df[g]++
		w, m := sigBit(g)
		sig[w] |= m
	}
	n := 0
	for _, w := range sig[:sigWords] {
		n += bits.OnesCount64(w)
	}
	ix.sigN = append(ix.sigN, uint16(n))
	ix.off = append(ix.off, uint32(len(ix.grams)))
	ix.nbs = append(ix.nbs, int32(len(ix.tmp)))
}

// Exact reports the id of an existing statement with the same Key as text
// (the lowest such id).
func (ix *Index) Exact(text string) (id int, ok bool) {
	id, ok = ix.exact[Key(text)]
	return id, ok
}

// runs calls f for each distinct bigram id of statement s with its count.
func (ix *Index) runs(s int32, f func(g uint32, n int)) {
	eg := ix.grams[ix.off[s]:ix.off[s+1]]
	for i := 0; i < len(eg); {
		j := i + 1
		for j < len(eg) && eg[j] == eg[i] {
			j++
		}
		f(eg[i], j-i)
		i = j
	}
}

// freeze builds the postings: for each bigram, the statements holding it,
// ordered by their bigram count, so a length window is one contiguous run
// found by binary search, each with its position in the statement's own
// rarest-first order. A counting
// sort by length, a sort of the distinct bigrams, and two passes over the
// postings: linear in the index size.
func (ix *Index) freeze() {
	if ix.frozen.Load() {
		return
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.frozen.Load() {
		return
	}
	n := len(ix.ids)
	maxNB := 0
	for _, nb := range ix.nbs {
		maxNB = max(maxNB, int(nb))
	}
	ix.maxNB = maxNB
	start := make([]int32, maxNB+2)
	for _, nb := range ix.nbs {
		start[nb+1]++
	}
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
	order := make([]int32, n)
	for s, nb := range ix.nbs {
		order[start[nb]] = int32(s)
		start[nb]++
	}

	// The global order: rarest first (fewest statements), ties by id.
	byRank := make([]uint32, len(ix.df))
	for g := range byRank {
		byRank[g] = uint32(g)
	}
	slices.SortFunc(byRank, func(a, b uint32) int {
		return cmp.Or(cmp.Compare(ix.df[a], ix.df[b]), cmp.Compare(a, b))
	})
	ix.rank = make([]uint32, len(ix.df))
	for r, g := range byRank {
		ix.rank[g] = uint32(r)
	}

	// Postings in length order, with each statement's count of the bigram.
	ix.postOff = make([]uint32, len(ix.df)+1)
	for g, d := range ix.df {
		ix.postOff[g+1] = ix.postOff[g] + uint32(d)
	}
	fill := slices.Clone(ix.postOff[:len(ix.df)])
	ix.postS = make([]int32, ix.postOff[len(ix.df)])
	counts := make([]uint32, len(ix.postS))
	for _, s := range order {
		ix.runs(s, func(g uint32, n int) {
			ix.postS[fill[g]] = s
			counts[fill[g]] = uint32(n)
			fill[g]++
		})
	}

	// Positions: walking the bigrams in rank order and adding each
	// statement's count as its bigram comes up gives, for every posting,
	// the statement's occurrences of rarer bigrams — no per-statement sort.
	ix.postP = make([]uint16, len(ix.postS))
	pos := make([]int32, n)
	for _, g := range byRank {
		for j := ix.postOff[g]; j < ix.postOff[g+1]; j++ {
			s := ix.postS[j]
			p := pos[s]
			ix.postP[j] = uint16(min(p, math.MaxUint16))
			pos[s] = p + int32(counts[j])
		}
	}
	ix.frozen.Store(true)
}

// postings returns the statements holding bigram g whose bigram count is
// in [lo, hi], and for each the number of its bigram occurrences that come
// before g in the global order.
func (ix *Index) postings(g uint32, lo, hi int) ([]int32, []uint16) {
	a, b := ix.postOff[g], ix.postOff[g+1]
	pl := ix.postS[a:b]
	i, _ := slices.BinarySearchFunc(pl, lo, func(s int32, lo int) int { return cmp.Compare(int(ix.nbs[s]), lo) })
	j, _ := slices.BinarySearchFunc(pl[i:], hi+1, func(s int32, hi int) int { return cmp.Compare(int(ix.nbs[s]), hi) })
	return pl[i : i+j], ix.postP[a:b][i : i+j]
}

// diceScore is strutil's Sørensen–Dice expression, for a query of qa bigrams
// and a statement of eb bigrams sharing c, where at least one has a bigram.
func diceScore(c, qa, eb int) float64 { return 2 * float64(c) / float64(qa+eb) }

// query is the per-call state, pooled so a query allocates nothing.
type query struct {
	text   string // the query prepared below, for the index of gen statements
	gen    int
	q      []rune
	keys   []uint64          // rank<<32 | id of the distinct known bigrams
	dist   []dgram           // distinct known bigrams, rarest first
	cum    []int             // cum[i]: unknown + query occurrences of dist[:i]
	lim    []int             // lim[i]: largest statement bigram count for which dist[i] is read
	sigPre [sigWords + 1]int // sigPre[i]: bits set in sig[:i]

	// The threshold: a statement of eb bigrams can qualify only if it
	// shares at least need(eb) bigram occurrences with the query.
	qa       int
	minScore float64 // need(eb) = least c with diceScore(c, qa, eb) ≥ minScore
	fixed    int     // if > 0, need(eb) = fixed instead
	tabLo    int
	needTab  []int32 // need(tabLo+i)
	restTab  []int32 // rest(tabLo+i)
	unknown  int     // bigram occurrences no statement has
	known    int     // the others
	qcnt     []int32 // by bigram id: occurrences in the query; zero outside dist
	sig      [sigWords]uint64
	sigOnes  int // bits set in sig

	acc     []int32 // by statement: gather's count, zero between calls
	touched []int32
}

type dgram struct {
	id     uint32
	qc, df int32 // occurrences in the query; statements holding it
}

func (ix *Index) getQuery(text string) *query {
	qu, _ := ix.pool.Get().(*query)
	if qu == nil {
		qu = &query{}
	}
	if len(qu.acc) < len(ix.ids) {
		qu.acc = make([]int32, len(ix.ids))
	}
	if qu.gen == len(ix.ids) && qu.text == text {
		return qu // the same text again: prepared already
	}
	for _, d := range qu.dist {
		qu.qcnt[d.id] = 0
	}
	if len(qu.qcnt) < len(ix.df) {
		qu.qcnt = make([]int32, len(ix.df))
	}
	qu.text, qu.gen = text, len(ix.ids)
	qu.q = appendNormalized(qu.q, text)
	qu.keys = qu.keys[:0]
	qu.unknown, qu.known = 0, 0
	qu.sig = [sigWords]uint64{}
	for i := 1; i < len(qu.q); i++ {
		g := ix.gramID(qu.q[i-1], qu.q[i], false)
		if g == noGram {
			qu.unknown++
			continue
		}
		qu.known++
		if qu.qcnt[g] == 0 {
			qu.keys = append(qu.keys, uint64(ix.rank[g])<<32|uint64(g))
			w, m := sigBit(g)
			qu.sig[w] |= m
		}
		qu.qcnt[g]++
	}
	for i, w := range qu.sig {
		qu.sigPre[i+1] = qu.sigPre[i] + bits.OnesCount64(w)
	}
	qu.sigOnes = qu.sigPre[sigWords]
	// The global order of freeze; the positional filter relies on it.
	slices.Sort(qu.keys)
	qu.dist = qu.dist[:0]
	qu.cum = append(qu.cum[:0], qu.unknown)
	for _, k := range qu.keys {
		g := uint32(k)
		qu.dist = append(qu.dist, dgram{id: g, qc: qu.qcnt[g], df: ix.df[g]})
		qu.cum = append(qu.cum, qu.cum[len(qu.cum)-1]+int(qu.qcnt[g]))
	}
	return qu
}

func (ix *Index) putQuery(qu *query) { ix.pool.Put(qu) }

// gather reads, for each query bigram dist[i] in order, the postings of
// the statements with lo ≤ bigrams ≤ min(hi, lim[i]), lists each statement
// met in qu.touched and accumulates in qu.acc the query occurrences of the
// bigrams it was met under (an upper bound on what it shares through
// them). lim must not increase. The caller resets qu.acc to 0 for every
// touched statement.
//
// Positional filter: when a statement of eb bigrams is met under dist[i],
// every query bigram ranked before dist[i] has been read for its length,
// so what it shares through those is at most its acc a; its own pos
// occurrences ranked before dist[i] are either counted in a or not in the
// query at all. So it shares at most a + min(query occurrences of dist[i:],
// eb − pos). Below need(eb), it is marked dead (acc −1) and skipped after.
func (ix *Index) gather(qu *query, lo, hi int) {
	qu.touched = qu.touched[:0]
	needTab := qu.needTab
	if lo != qu.tabLo || min(hi, ix.maxNB)-lo >= len(needTab) {
		needTab = nil // not tabulated: compute
	}
	for i, d := range qu.dist {
		top := min(hi, qu.lim[i])
		if top < lo {
			break
		}
		left := int32(qu.known - (qu.cum[i] - qu.unknown))
		sl, pl := ix.postings(d.id, lo, top)
		for j, s := range sl {
			a := qu.acc[s]
			if a < 0 {
				continue
			}
			if a == 0 {
				qu.touched = append(qu.touched, s)
			}
			eb := ix.nbs[s]
			var need int32
			if needTab != nil {
				need = needTab[int(eb)-lo]
			} else {
				need = int32(qu.need(int(eb)))
			}
			if a+min(left, eb-int32(pl[j])) < need {
				qu.acc[s] = -1
				continue
			}
			qu.acc[s] = a + d.qc
		}
	}
}

// setDice makes need(eb) the least c with diceScore(c, qa, eb) ≥ minScore:
// the float test itself, so the integer threshold cannot disagree with it.
func (qu *query) setDice(qa int, minScore float64) {
	qu.qa, qu.minScore, qu.fixed = qa, minScore, 0
}

func (qu *query) needSlow(eb int) int {
	if qu.fixed > 0 {
		return qu.fixed
	}
	qa, m := qu.qa, qu.minScore
	c := max(0, int(math.Ceil(m*float64(qa+eb)/2)))
	for c > 0 && diceScore(c-1, qa, eb) >= m {
		c--
	}
	for c < qa+eb && diceScore(c, qa, eb) < m {
		c++
	}
	return c
}

// need is the least number of shared bigram occurrences with which a
// statement of eb bigrams can qualify.
func (qu *query) need(eb int) int {
	if i := eb - qu.tabLo; i >= 0 && i < len(qu.needTab) {
		return int(qu.needTab[i])
	}
	return qu.needSlow(eb)
}

// tabMax caps the tables of tabulate: a query against statements of wildly
// different lengths must not allocate per possible length. A variable so
// the tests can force the computed path.
var tabMax = 1 << 16

// tabulate makes need and rest one load each for eb in [lo, hi] (the first
// tabMax of them; beyond, they are computed).
func (qu *query) tabulate(lo, hi int) {
	qu.tabLo = lo
	qu.needTab = qu.needTab[:0]
	qu.restTab = qu.restTab[:0]
	hi = min(hi, lo+tabMax-1)
	k := len(qu.lim) // lim[:k] ≥ eb
	for eb := lo; eb <= hi; eb++ {
		for k > 0 && qu.lim[k-1] < eb {
			k--
		}
		qu.restTab = append(qu.restTab, int32(qu.known-(qu.cum[k]-qu.unknown)))
		qu.needTab = append(qu.needTab, int32(qu.needSlow(eb)))
	}
}

// rest is the number of known query occurrences gather did not read for a
// statement of eb bigrams: those of every dist[i] with lim[i] < eb.
func (qu *query) rest(eb int) int {
	if i := eb - qu.tabLo; i >= 0 && i < len(qu.restTab) {
		return int(qu.restTab[i])
	}
	// lim is non-increasing: find the first i with lim[i] < eb.
	k, _ := slices.BinarySearchFunc(qu.lim, eb, func(l, eb int) int {
		if l >= eb {
			return -1
		}
		return 1
	})
	return qu.known - (qu.cum[k] - qu.unknown)
}

// sigAtLeast reports whether the signature bound on the bigram
// occurrences statement s shares with the query reaches need. A query
// bigram can only be shared if its bit is set in s's signature. With w(b)
// the query occurrences whose bigram maps to bit b, shared ≤ Σ_{b in both}
// w(b) ≤ |Q∧S| + Σ_{b in Q}(w(b)−1) = |Q∧S| + known − |Q|; the same
// from s's side gives shared ≤ |Q∧S| + eb − |S|; and shared ≤ eb.
// Words are read four at a time from the last, where the later (on the
// whole rarer) bigram ids fall, and the loop stops once the answer is sure:
// sixteen AND+POPCNT at most instead of reading a hundred counts.
func (ix *Index) sigAtLeast(qu *query, s int32, need int) bool {
	if need > int(ix.nbs[s]) {
		return false
	}
	// popcount(Q∧S) must reach this:
	target := need - min(qu.known-qu.sigOnes, int(ix.nbs[s])-int(ix.sigN[s]))
	if target <= 0 {
		return true
	}
	sig := (*[sigWords]uint64)(ix.sigs[int(s)*sigWords:])
	n := 0
	for i := sigWords - 4; i >= 0; i -= 4 {
		n += bits.OnesCount64(qu.sig[i+3]&sig[i+3]) + bits.OnesCount64(qu.sig[i+2]&sig[i+2]) +
			bits.OnesCount64(qu.sig[i+1]&sig[i+1]) + bits.OnesCount64(qu.sig[i]&sig[i])
		if n >= target {
			return true
		}
		if n+qu.sigPre[i] < target {
			return false
		}
	}
	return false
}

// common is the exact multiset intersection size of the query and
// statement s: Σ over s's bigrams of min(count in s, count in query).
func (ix *Index) common(qu *query, s int32) int {
	eg := ix.grams[ix.off[s]:ix.off[s+1]]
	c := 0
	for i := 0; i < len(eg); {
		g := eg[i]
		j := i + 1
		for j < len(eg) && eg[j] == g {
			j++
		}
		c += min(j-i, int(qu.qcnt[g]))
		i = j
	}
	return c
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
// that is ≥ minScore, ties going to the lowest id. It returns exactly what a
// scan of every statement with Similarity would, without scoring most of
// them; see the package documentation for the pruning and why it is exact.
func (ix *Index) Best(text string, minScore float64) (Match, bool) {
	if !(minScore <= 1) || len(ix.ids) == 0 { // no score exceeds 1; NaN matches nothing
		return Match{}, false
	}
	ix.freeze()
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

	// Only statements sharing a bigram score above 0; with minScore ≤ 0
	// they are all read. Otherwise a statement of eb bigrams needs
	// eb ∈ [lo, hi] and, sharing c ≤ min(qa, eb), c ≥ minScore·(qa+eb)/2.
	// Every bound is rounded outward by one, so float error cannot prune.
	lo, hi := 1, noLimit
	qu.lim = qu.lim[:0]
	if minScore <= 0 {
		for range qu.dist {
			qu.lim = append(qu.lim, noLimit)
		}
	} else {
		lo = max(1, int(math.Floor(float64(qa)*minScore/(2-minScore)))-1)
		if h := math.Ceil(float64(qa)*(2-minScore)/minScore) + 1; h < noLimit {
			hi = int(h)
		}
		// Prefix bound, per statement length: a statement of eb bigrams
		// shares ≥ t(eb) = ⌈minScore·(qa+eb)/2⌉ occurrences, so it shares
		// one of the rarest bigrams holding the first qa−t(eb)+1 query
		// occurrences (with no bigram, the rest hold at most t(eb)−1).
		// dist[i] is among those while cum[i] ≤ qa−t(eb), i.e. for
		// eb ≤ 2·(qa−cum[i]+1)/minScore − qa; read prefixSlack more
		// occurrences than that, and one more eb for rounding.
		for i := range qu.dist {
			l := 2*float64(qa-qu.cum[i]+1+prefixSlack)/minScore - float64(qa) + 1
			qu.lim = append(qu.lim, int(math.Max(-1, math.Min(l, noLimit))))
		}
	}
	qu.setDice(qa, minScore)
	qu.tabulate(lo, min(hi, ix.maxNB))
	ix.gather(qu, lo, hi)

	var best Match
	var bs int32
	found := false
	for _, s := range qu.touched {
		a := int(qu.acc[s])
		qu.acc[s] = 0
		if a < 0 {
			continue
		}
		eb := int(ix.nbs[s])
		// Upper bounds on the shared count, cheapest first. Division
		// rounding is monotone, so a bound's score bounds the score.
		need := qu.need(eb)
		ub := min(a+qu.rest(eb), eb)
		if ub < need || found && diceScore(ub, qa, eb) < best.Score || !ix.sigAtLeast(qu, s, need) {
			continue
		}
		c := ix.common(qu, s)
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
