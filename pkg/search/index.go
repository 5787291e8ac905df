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
// k1 = 1.2 and idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5)). Terms are
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
package search

import (
	"math"
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

// Index is an immutable search index over a set of Docs.
type Index struct {
	docs    []docMeta
	sources []string
	// A built index holds its postings by term number; a decoded one keeps
	// them encoded in blob, located by dict.
	byTerm map[string]int32
	lists  [][]posting
	dict   []termRef
	blob   string
}

// termRef locates a decoded term and its postings in Index.blob.
type termRef struct {
	term       string
	off, count uint32 // byte offset of its postings in blob, and how many
}

// Len returns the number of documents.
func (x *Index) Len() int { return len(x.docs) }

// Build indexes docs. Their order is the index's document order.
//
// Two passes: the first analyses every field of every document into term
// numbers (one slice for the whole collection) and sums field lengths; the
// second, once the average lengths are known, accumulates each document's
// pseudo-frequencies in a dense array indexed by term number and emits one
// posting per distinct term; a counting sort then groups the postings by
// term, in document order, in one allocation.
func Build(docs []Doc) *Index {
	x := &Index{docs: make([]docMeta, len(docs))}
	srcIndex := map[string]uint16{}
	a := newAnalyzer(4096)
	size := 0
	for i := range docs {
		size += min(len(docs[i].Text), maxFieldBytes) + len(docs[i].Title)
	}
	toks := make([]int32, 0, size/6+16)
	lens := make([][4]uint32, len(docs))
	var total [4]float64
	add := func(id int32) { toks = append(toks, id) }
	for i := range docs {
		d := &docs[i]
		s, ok := srcIndex[d.Source]
		if !ok {
			s = uint16(len(x.sources))
			srcIndex[d.Source] = s
			x.sources = append(x.sources, d.Source)
		}
		x.docs[i] = docMeta{id: d.ID, source: s, days: dayNumber(d.Date), conf: quantise(d.Confidence), stale: d.Stale}
		for f := range 4 {
			start := len(toks)
			switch f {
			case 0:
				a.terms(d.Title, add)
			case 1:
				for _, t := range d.Tags {
					a.terms(t, add)
				}
			case 2:
				for _, t := range d.Symptoms {
					a.terms(t, add)
				}
			case 3:
				a.terms(d.Text, add)
			}
			lens[i][f] = uint32(len(toks) - start)
			total[f] += float64(len(toks) - start)
		}
	}
	var avg [4]float64
	for f := range avg {
		avg[f] = max(total[f]/float64(max(len(docs), 1)), 1)
	}
	weights := [4]float64{titleWeight, tagsWeight, symptomsWeight, textWeight}
	bs := [4]float64{titleB, tagsB, symptomsB, textB}
	// Pseudo-frequencies, document by document, into one flat list of
	// (term, posting); then a counting sort by term makes every term's
	// postings one contiguous run, in document order.
	type pair struct {
		term int32
		p    posting
	}
	acc := make([]float64, len(a.vocab))
	df := make([]uint32, len(a.vocab)+1)
	var touched []int32
	pairs := make([]pair, 0, len(toks)) // at most one per token
	off := 0
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
			pairs = append(pairs, pair{id, posting{doc: uint32(i), w: quantise(v / (k1 + v))}})
			df[id+1]++
			acc[id] = 0
		}
		touched = touched[:0]
	}
	for i := 1; i < len(df); i++ {
		df[i] += df[i-1] // df[t] is now where term t's postings start
	}
	flat := make([]posting, len(pairs))
	next := append([]uint32(nil), df[:len(a.vocab)]...)
	for _, p := range pairs {
		flat[next[p.term]] = p.p
		next[p.term]++
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
	// Doc is the document's position in the slice given to Build.
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
	keepSource := x.sourceFilter(opt.Sources)
	if keepSource == nil {
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

	n := float64(len(x.docs))
	acc := make([]float32, len(x.docs))
	var touched []uint32
	for _, t := range QueryTerms(query) {
		ps := x.postings(t)
		if len(ps) == 0 {
			continue
		}
		df := float64(len(ps))
		idf := float32(math.Log(1 + (n-df+0.5)/(df+0.5)))
		for _, p := range ps {
			if acc[p.doc] == 0 {
				touched = append(touched, p.doc)
			}
			acc[p.doc] += idf * float32(p.w) / 65535
		}
	}
	nowDay := dayNumber(now)
	h := make(hitHeap, 0, limit+1)
	for _, d := range touched {
		m := &x.docs[d]
		if !keepSource[m.source] {
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
		hit := Hit{Doc: int(d), ID: m.id, Source: x.sources[m.source], Score: score, Relevance: rel, Confidence: conf, Stale: m.stale}
		h.push(hit, x, limit)
	}
	return h.sorted(x)
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
func better(a, b *Hit, x *Index) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	if a.Confidence != b.Confidence {
		return a.Confidence > b.Confidence
	}
	if da, db := x.docs[a.Doc].days, x.docs[b.Doc].days; da != db {
		return da > db
	}
	return a.ID < b.ID
}

// hitHeap keeps the best limit hits: a min-heap by better, worst on top.
type hitHeap []Hit

func (h *hitHeap) push(hit Hit, x *Index, limit int) {
	s := *h
	if len(s) == limit {
		if !better(&hit, &s[0], x) {
			return
		}
		s[0] = hit
		s.down(0, x)
		return
	}
	s = append(s, hit)
	for i := len(s) - 1; i > 0; {
		parent := (i - 1) / 2
		if !better(&s[parent], &s[i], x) {
			break
		}
		s[parent], s[i] = s[i], s[parent]
		i = parent
	}
	*h = s
}

func (h hitHeap) down(i int, x *Index) {
	for {
		l, worst := 2*i+1, i
		if l < len(h) && better(&h[worst], &h[l], x) {
			worst = l
		}
		if r := l + 1; r < len(h) && better(&h[worst], &h[r], x) {
			worst = r
		}
		if worst == i {
			return
		}
		h[i], h[worst] = h[worst], h[i]
		i = worst
	}
}

func (h hitHeap) sorted(x *Index) []Hit {
	out := []Hit(h)
	sort.Slice(out, func(i, j int) bool { return better(&out[i], &out[j], x) })
	return out
}
