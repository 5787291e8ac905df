// Package search ranks entries of every source by relevance to a query.
//
// # Ranking
//
// Relevance is BM25F (Robertson & Zaragoza): each document has four fields,
// title, tags, symptoms and text, with weights 3, 2, 2 and 1 and length
// normalisation b of 0.5, 0.3, 0.5 and 0.75. For a term t of document d the
// pseudo-frequency is
//
//	tf~(t,d) = Σ_f w_f · tf_f(t,d) / (1 − b_f + b_f · len_f(d) / avglen_f)
//
// and the score of d for a query is Σ_t idf(t) · tf~ / (k1 + tf~), with
// k1 = 1.2 and idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5)). avglen_f is
// the average over the first segment of the base when it was built (see
// Segments): the whole collection's when the collection is one segment;
// N and df are always the collection's as it is. Terms are
// analysed the same way in documents and queries: words split at anything
// that is not a letter or digit, camelCase parts, stopwords dropped, Porter2
// stems, pairs of CJK characters (see analyzer.terms).
//
// Confidence and recency then adjust the relevance a little, so that they
// order documents of about equal relevance without overturning a clearly
// better match: the score is multiplied by 0.9 + 0.2·confidence (0.9 to
// 1.1) and by 1 + 0.1·2^(−age/180 days) (1 to 1.1; undated documents get
// 1). Ties are broken by confidence, then date (newer first), then id.
// Stale documents are ranked like any other and marked in the result.
//
// # Structure
//
// tf~/(k1+tf~) does not depend on the query, so Build computes it once per
// (term, document) and stores it in the posting, quantised to 16 bits. A
// query is then a sum of idf × posting over the postings of its terms into
// one accumulator per document, and a bounded heap for the top results:
// linear in the postings of the query's terms, independent of the rest of
// the index. Encode writes the index as one byte slice (documents, then
// terms sorted, then postings); Decode reads the document table and the
// term table and leaves postings in the buffer until a query asks for them,
// so loading a cached index costs a pass over its terms and documents, not
// an analysis of their text.
//
// # Segments
//
// A collection that changes a little at a time (a solution document
// edited) is indexed as a base over every document (Build) and a delta of
// the documents changed since (BuildDelta), which also names the ids whose
// documents in the base it replaces, removed ones included. The delta's
// weights are normalised by the base's average field lengths, so a changed
// document is weighed as the base weighs the others, and building it
// costs an analysis of the changed documents alone. Stack puts the two
// together: the base's replaced documents are dead, and N and each term's
// df are counted over the documents left at query time, so idf is the
// collection's. Only avglen lags: it is the base's until a new base is
// built (the caller bounds the delta: package catalog builds a new base
// past an eighth of the collection changed). Each segment is encoded
// apart.
//
// A base too large to build at once within a hook's memory is built in
// segments, each over a run of the documents (a Builder each): the first
// normalised by its own average field lengths, every later one by the
// first's (Builder.Normalise), and Merge joins them into the base, which
// takes the first's averages as its own: so every posting of the base,
// and of the deltas over it, is normalised by the same averages, those of
// the first segment (package catalog's segments are runs of 4,096 entries
// in id order, and ids are hashes: a sample of the collection). Merge
// copies each segment's postings as they are; its result is the bytes one
// Builder normalised by the same averages makes of every document.
package search

import (
	"math"
	"slices"
	"sort"
	"time"

	"github.com/intermem/intermem/pkg/source"
)

// BM25F parameters; see the package comment.
const (
	k1 = 1.2

	titleWeight, titleB       = 3.0, 0.5
	tagsWeight, tagsB         = 2.0, 0.3
	symptomsWeight, symptomsB = 2.0, 0.5
	textWeight, textB         = 1.0, 0.75

	recencyHalfLife = 180 * 24 * time.Hour
)

// Doc is what the index knows of one entry.
type Doc struct {
	// ID is the entry's id; results name it.
	ID string
	// Source is the source's name, for the source filter.
	Source string
	// Title, Text, Tags and Symptoms are the fields searched.
	Title    string
	Text     string
	Tags     []string
	Symptoms []string
	// Date is the entry's date for the since/until filters and recency;
	// zero when unknown.
	Date time.Time
	// Confidence is the catalog's confidence in the entry, from 0 to 1.
	Confidence float64
	// Stale marks an entry whose citations no longer hold.
	Stale bool
}

// tagFields are the entry fields searched as tags: what the entry is about,
// in the source's own words (module: Type Checking, root_cause:
// cache_invalidation).
var tagFields = []string{"module", "component", "problem_type", "root_cause", "category", "context", "file"}

// FromEntry returns the Doc of an entry with a neutral confidence (0.5); the
// catalog sets Confidence and Stale from its overlay.
func FromEntry(e *source.Entry) Doc {
	tags := append([]string(nil), e.Tags...)
	for _, k := range tagFields {
		if v := e.Fields[k]; v != "" {
			tags = append(tags, v)
		}
	}
	return Doc{
		ID: e.ID, Source: e.Source, Title: e.Title, Text: e.Text,
		Tags: tags, Symptoms: e.Symptoms, Date: e.Date(), Confidence: 0.5,
	}
}

// docMeta is what a query needs of a document besides its postings.
type docMeta struct {
	id     string
	source uint16
	days   int32 // days since the Unix epoch, plus one; 0 when undated
	conf   uint16
	stale  bool
}

// posting is one document holding one term, with its precomputed weight
// tf~/(k1+tf~) quantised to 1/65535.
type posting struct {
	doc uint32
	w   uint16
}

// Index is an immutable search index over a set of Docs: one segment
// (Build, BuildDelta, Decode), or a delta stacked on its base (Stack).
type Index struct {
	docs    []docMeta
	sources []string
	// A built index holds its postings by term number; a decoded one keeps
	// them encoded in blob, located by dict.
	byTerm map[string]int32
	lists  [][]posting
	dict   []termRef
	blob   string
	// avg is the average length of each field that the postings' weights
	// were normalised by: the segment's own (Build), or its base's
	// (BuildDelta).
	avg [4]float64
	// replaced are the ids, sorted, whose documents in the base this
	// segment replaces (a delta; nil for a base).
	replaced []string
	// under is the base a delta is stacked on (Stack), and dead marks its
	// documents that the delta replaces; nil for a single segment.
	under *Index
	dead  []bool
}

// termRef locates a decoded term and its postings in Index.blob.
type termRef struct {
	term       string
	off, count uint32 // byte offset of its postings in blob, and how many
}

// Len returns the number of documents: of a stacked index, the base's
// that the delta does not replace and the delta's.
func (x *Index) Len() int {
	n := len(x.docs)
	if x.under != nil {
		n += len(x.under.docs)
		for _, d := range x.dead {
			if d {
				n--
			}
		}
	}
	return n
}

// Build indexes docs. Their order is the index's document order.
//
// Three passes: the first analyses every field of every document into
// term numbers (one slice for the whole collection) and sums field
// lengths (Builder.Add, as each document comes); the second counts each
// term's documents, which places every term's postings in one flat array;
// the third, once the average lengths are known, accumulates each
// document's pseudo-frequencies in a dense array indexed by term number
// and writes one posting per distinct term into its term's run, in
// document order.
func Build(docs []Doc) *Index {
	b := NewBuilder()
	b.size(docs)
	for i := range docs {
		b.Add(&docs[i])
	}
	return b.Index()
}

// BuildDelta indexes docs as a delta over base (Stack): the documents of
// the ids replaced (sorted or not; every document of base with one of them
// is dropped) and any new ones, their weights normalised by base's average
// field lengths, so that a stacked index ranks a changed document as the
// base ranks the others. With a nil or empty base it is Build that also
// replaces.
func BuildDelta(base *Index, docs []Doc, replaced []string) *Index {
	b := NewBuilder()
	if base != nil && len(base.docs) > 0 {
		b.avgOf = &base.avg
	}
	ids := slices.Clone(replaced)
	slices.Sort(ids)
	b.x.replaced = slices.Compact(ids)
	b.size(docs)
	for i := range docs {
		b.Add(&docs[i])
	}
	return b.Index()
}

// Builder is Build one document at a time, for a caller that reads the
// documents from a store: each is analysed as it is added and only its
// term numbers are kept, never its text, so the collection is never held
// whole (at 20,000 entries its texts are most of what a build would hold).
type Builder struct {
	x        *Index
	srcIndex map[string]uint16
	a        *analyzer
	toks     []int32
	lens     [][4]uint32
	total    [4]float64
	avgOf    *[4]float64
}

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder {
	return &Builder{x: &Index{}, srcIndex: map[string]uint16{}, a: newAnalyzer(4096)}
}

// size makes room for docs: their metadata, and their terms at about one
// in six bytes of text.
func (b *Builder) size(docs []Doc) {
	n := 0
	for i := range docs {
		n += min(len(docs[i].Text), maxFieldBytes) + len(docs[i].Title)
	}
	b.toks = slices.Grow(b.toks, n/6+16)
	b.lens = slices.Grow(b.lens, len(docs))
	b.x.docs = slices.Grow(b.x.docs, len(docs))
}

// Add indexes d as the next document; d is not kept.
func (b *Builder) Add(d *Doc) {
	x := b.x
	s, ok := b.srcIndex[d.Source]
	if !ok {
		s = uint16(len(x.sources))
		b.srcIndex[d.Source] = s
		x.sources = append(x.sources, d.Source)
	}
	x.docs = append(x.docs, docMeta{id: d.ID, source: s, days: dayNumber(d.Date), conf: quantise(d.Confidence), stale: d.Stale})
	add := func(id int32) { b.toks = append(b.toks, id) }
	var lens [4]uint32
	for f := range 4 {
		start := len(b.toks)
		switch f {
		case 0:
			b.a.terms(d.Title, add)
		case 1:
			for _, t := range d.Tags {
				b.a.terms(t, add)
			}
		case 2:
			for _, t := range d.Symptoms {
				b.a.terms(t, add)
			}
		case 3:
			b.a.terms(d.Text, add)
		}
		lens[f] = uint32(len(b.toks) - start)
		b.total[f] += float64(lens[f])
	}
	b.lens = append(b.lens, lens)
}

// Index returns the index of the documents added; the Builder is not used
// after.
func (b *Builder) Index() *Index {
	x, a, toks, lens, total, docs := b.x, b.a, b.toks, b.lens, b.total, b.x.docs
	var avg [4]float64
	for f := range avg {
		avg[f] = max(total[f]/float64(max(len(docs), 1)), 1)
	}
	if b.avgOf != nil {
		avg = *b.avgOf
	}
	x.avg = avg
	weights := [4]float64{titleWeight, tagsWeight, symptomsWeight, textWeight}
	bs := [4]float64{titleB, tagsB, symptomsB, textB}
	// Each term's document frequency first (seen[t] is the last document
	// that held t, plus one), so that the postings are one flat array,
	// sized exactly, each term's run starting at the sum of the df before
	// it; then the pseudo-frequencies, document by document, written
	// straight into their term's run, in document order.
	df := make([]uint32, len(a.vocab)+1)
	seen := make([]uint32, len(a.vocab))
	off := 0
	for i := range docs {
		n := int(lens[i][0] + lens[i][1] + lens[i][2] + lens[i][3])
		for _, id := range toks[off : off+n] {
			if seen[id] != uint32(i)+1 {
				seen[id] = uint32(i) + 1
				df[id+1]++
			}
		}
		off += n
	}
	for i := 1; i < len(df); i++ {
		df[i] += df[i-1] // df[t] is now where term t's postings start
	}
	flat := make([]posting, df[len(a.vocab)])
	next := seen // reused: where term t's next posting goes
	copy(next, df[:len(a.vocab)])
	acc := make([]float64, len(a.vocab))
	var touched []int32
	off = 0
	for i := range docs {
		for f := range 4 {
			n := int(lens[i][f])
			w := weights[f] / (1 - bs[f] + bs[f]*float64(n)/avg[f])
			for _, id := range toks[off : off+n] {
				if acc[id] == 0 {
					touched = append(touched, id)
				}
				acc[id] += w
			}
			off += n
		}
		for _, id := range touched {
			v := acc[id]
			flat[next[id]] = posting{doc: uint32(i), w: quantise(v / (k1 + v))}
			next[id]++
			acc[id] = 0
		}
		touched = touched[:0]
	}
	x.lists = make([][]posting, len(a.vocab))
	for t := range x.lists {
		x.lists[t] = flat[df[t]:df[t+1]:df[t+1]]
	}
	x.byTerm = a.ids
	return x
}

func quantise(v float64) uint16 {
	return uint16(math.Round(math.Max(0, math.Min(1, v)) * 65535))
}

func dayNumber(t time.Time) int32 {
	if t.IsZero() {
		return 0
	}
	return int32(t.Unix()/86400) + 1
}

// postings returns the postings of a term.
func (x *Index) postings(t string) []posting {
	if x.byTerm != nil {
		if id, ok := x.byTerm[t]; ok {
			return x.lists[id]
		}
		return nil
	}
	i := sort.Search(len(x.dict), func(i int) bool { return x.dict[i].term >= t })
	if i == len(x.dict) || x.dict[i].term != t {
		return nil
	}
	return decodePostings(x.blob, x.dict[i], len(x.docs))
}

// Options filter and bound a search.
type Options struct {
	// Sources keeps only documents of these sources; empty keeps all.
	Sources []string
	// Since and Until keep only documents dated within [Since, Until],
	// compared by calendar day (UTC); undated documents are dropped when
	// either is set. Zero means unbounded.
	Since, Until time.Time
	// Limit is the most results returned; 0 means 10.
	Limit int
	// Now is the time recency is measured from; zero means time.Now().
	Now time.Time
}

// Hit is one search result.
type Hit struct {
	// Doc is the document's position in the slice given to Build (of a
	// stacked index: the base's documents, then the delta's).
	Doc int
	ID  string
	// Source is the document's source.
	Source string
	// Score is the final score: relevance adjusted by confidence and recency.
	Score float64
	// Relevance is the BM25F score alone.
	Relevance  float64
	Confidence float64
	Stale      bool
	days       int32 // the document's day number, for ties
}

// QueryTerms returns the terms a query is searched by, in order, without
// repeats: what is left of it once analysed. A query of stopwords alone has
// none.
func QueryTerms(query string) []string {
	var out []string
	seen := map[int32]bool{}
	a := newAnalyzer(0)
	a.terms(query, func(id int32) {
		if !seen[id] {
			seen[id] = true
			out = append(out, a.vocab[id])
		}
	})
	return out
}

// Stack returns base with delta over it, ranked as one collection: the
// documents of base whose ids delta replaces are dropped, and N and every
// term's df are counted over the documents left (see the package comment).
// base is a single segment (Build or Decode); a hit's Doc numbers base's
// documents first, then delta's.
func Stack(base, delta *Index) *Index {
	y := *delta
	y.under = base.segment()
	y.dead = make([]bool, len(y.under.docs))
	if len(delta.replaced) > 0 {
		for i := range y.under.docs {
			_, y.dead[i] = slices.BinarySearch(delta.replaced, y.under.docs[i].id)
		}
	}
	return &y
}

// segment returns x without what it is stacked on.
func (x *Index) segment() *Index {
	if x.under == nil {
		return x
	}
	y := *x
	y.under, y.dead = nil, nil
	return &y
}

// Search returns the documents that hold any of the query's terms, best
// first, at most opt.Limit of them.
func (x *Index) Search(query string, opt Options) []Hit {
	limit := opt.Limit
	if limit <= 0 {
		limit = 10
	}
	now := opt.Now
	if now.IsZero() {
		now = time.Now()
	}
	// The segments, base first, and where each one's documents start in
	// the numbering of hits.
	segs, first := []*Index{x}, []uint32{0}
	if x.under != nil {
		segs, first = []*Index{x.under, x}, []uint32{0, uint32(len(x.under.docs))}
	}
	keepSource := make([][]bool, len(segs))
	kept := false
	for i, sg := range segs {
		keepSource[i] = sg.sourceFilter(opt.Sources)
		kept = kept || keepSource[i] != nil
	}
	if !kept {
		return nil
	}
	since, until := int32(math.MinInt32), int32(math.MaxInt32)
	if !opt.Since.IsZero() {
		since = dayNumber(opt.Since.UTC().Truncate(24 * time.Hour))
	}
	if !opt.Until.IsZero() {
		until = dayNumber(opt.Until.UTC().Truncate(24 * time.Hour))
	}
	dated := !opt.Since.IsZero() || !opt.Until.IsZero()

	// live reports whether document doc of segment i counts: a base's
	// document that the delta replaces does not, for N, df or a hit.
	live := func(i int, doc uint32) bool { return i > 0 || x.dead == nil || !x.dead[doc] }
	n := float64(x.Len())
	total := len(x.docs)
	if x.under != nil {
		total += len(x.under.docs)
	}
	acc := make([]float32, total)
	var touched []uint32
	lists := make([][]posting, len(segs))
	for _, t := range QueryTerms(query) {
		df := 0
		for i, sg := range segs {
			lists[i] = sg.postings(t)
			for _, p := range lists[i] {
				if live(i, p.doc) {
					df++
				}
			}
		}
		if df == 0 {
			continue
		}
		idf := float32(math.Log(1 + (n-float64(df)+0.5)/(float64(df)+0.5)))
		for i, ps := range lists {
			for _, p := range ps {
				if !live(i, p.doc) {
					continue
				}
				d := first[i] + p.doc
				if acc[d] == 0 {
					touched = append(touched, d)
				}
				acc[d] += idf * float32(p.w) / 65535
			}
		}
	}
	nowDay := dayNumber(now)
	h := make(hitHeap, 0, limit+1)
	for _, d := range touched {
		i := len(segs) - 1
		for d < first[i] {
			i--
		}
		sg := segs[i]
		m := &sg.docs[d-first[i]]
		if keepSource[i] == nil || !keepSource[i][m.source] {
			continue
		}
		if dated && (m.days == 0 || m.days < since || m.days > until) {
			continue
		}
		rel := float64(acc[d])
		conf := float64(m.conf) / 65535
		score := rel * (0.9 + 0.2*conf)
		if m.days != 0 {
			age := float64(max(nowDay-m.days, 0)) * 24 * float64(time.Hour)
			score *= 1 + 0.1*math.Exp2(-age/float64(recencyHalfLife))
		}
		hit := Hit{Doc: int(d), ID: m.id, Source: sg.sources[m.source], Score: score, Relevance: rel, Confidence: conf, Stale: m.stale, days: m.days}
		h.push(hit, limit)
	}
	return h.sorted()
}

// sourceFilter returns which source numbers a search keeps, or nil when
// none of the named sources is in the index.
func (x *Index) sourceFilter(names []string) []bool {
	keep := make([]bool, len(x.sources))
	if len(names) == 0 {
		for i := range keep {
			keep[i] = true
		}
		return keep
	}
	any := false
	for i, s := range x.sources {
		for _, want := range names {
			if s == want {
				keep[i], any = true, true
			}
		}
	}
	if !any {
		return nil
	}
	return keep
}

// better orders hits: score, then confidence, then date, then id.
func better(a, b *Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	if a.Confidence != b.Confidence {
		return a.Confidence > b.Confidence
	}
	if a.days != b.days {
		return a.days > b.days
	}
	return a.ID < b.ID
}

// hitHeap keeps the best limit hits: a min-heap by better, worst on top.
type hitHeap []Hit

func (h *hitHeap) push(hit Hit, limit int) {
	s := *h
	if len(s) == limit {
		if !better(&hit, &s[0]) {
			return
		}
		s[0] = hit
		s.down(0)
		return
	}
	s = append(s, hit)
	for i := len(s) - 1; i > 0; {
		parent := (i - 1) / 2
		if !better(&s[parent], &s[i]) {
			break
		}
		s[parent], s[i] = s[i], s[parent]
		i = parent
	}
	*h = s
}

func (h hitHeap) down(i int) {
	for {
		l, worst := 2*i+1, i
		if l < len(h) && better(&h[worst], &h[l]) {
			worst = l
		}
		if r := l + 1; r < len(h) && better(&h[worst], &h[r]) {
			worst = r
		}
		if worst == i {
			return
		}
		h[i], h[worst] = h[worst], h[i]
		i = worst
	}
}

func (h hitHeap) sorted() []Hit {
	out := []Hit(h)
	sort.Slice(out, func(i, j int) bool { return better(&out[i], &out[j]) })
	return out
}
