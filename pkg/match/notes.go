package match

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/intermem/intermem/pkg/lazy"
)

// Kinds of note Notes.Find reports.
const (
	// KindSimilar: the candidate says what an existing statement says, in
	// other words (a paraphrase).
	KindSimilar = "similar"
	// KindRefines: the candidate says what an existing statement says and
	// adds to it.
	KindRefines = "refines"
	// KindNarrower: an existing statement already says what the candidate
	// says, and more.
	KindNarrower = "narrower"
)

// The thresholds of Notes.Find, on the token weights described there. They
// were chosen on the labelled set in testdata/notes (see notes_test.go,
// which asserts the false-note rate, recall and precision they give) and
// are deliberately strict: a wrong note costs a person's attention on every
// plan, a missed one costs nothing that exact dedup did not already catch.
const (
	// similarMin is the least weighted Dice coefficient of a paraphrase.
	similarMin = 0.5
	// containMin is the least share of one side's weight found in the
	// other for it to count as contained (refines, narrower).
	containMin = 0.8
	// containFloor is the least share of the containing side's weight that
	// the contained side must cover: a six-word line is not "narrower"
	// than a sixty-word sentence that happens to hold its words.
	containFloor = 0.3
	// minShared is the least number of distinct tokens a note rests on.
	minShared = 3
	// longer is how much more weight one unit must have than the other
	// for a containment to be a refinement rather than a paraphrase.
	longer = 1.5
)

// Notes finds, for a plan's candidate, the existing statement it repeats in
// other words, refines, or is narrower than. Exact duplicates and
// near-identical wording are the business of Index; Notes works at the
// level of single statements and of words:
//
//   - Units. Each existing text (a list item, a paragraph) is split into
//     units: one per table row (header and separator rows dropped), one
//     per sentence or semicolon clause of a paragraph or list item, nested
//     list items on their own, and, for a text of several sentences that is
//     not a table, the whole text as one more unit; fenced code is left out.
//     A candidate is split the same way. So an 88-row commands table is 88
//     short units, not one long text that contains every common word.
//   - Tokens. A unit's tokens are its words after Normalize: lower-case,
//     markdown stripped, split at anything that is not a letter, digit or
//     inner underscore (paths and flags fall apart into their words), minus
//     stopwords, one-letter words and file extensions, each English word
//     reduced by a light suffix stemmer (stem), every negation (never,
//     don't, not, nothing…) read as "not". Runs of Han or Kana, written without spaces,
//     become overlapping character pairs; Korean, written with spaces, is
//     read as words. A unit is the set of its tokens.
//   - Weights. A token weighs ln(1 + N/df), N the number of units and df
//     those holding it (a token no unit holds weighs ln(1 + N)): a word
//     every row of a table repeats counts for little, a rare name for a
//     lot. W(X) is the total weight of a set, I = W(Q ∩ E) what a
//     candidate unit Q and an existing unit E share.
//   - Notes. Sharing fewer than minShared tokens is never a note. E is
//     contained in Q when I/W(E) ≥ containMin, I/W(Q) ≥ containFloor and
//     W(Q) > W(E); then Q refines E (says it, and more) if it is also
//     clearly longer (W(Q) ≥ longer·W(E)) or not similar. Likewise Q is
//     narrower than E. Otherwise Q is similar to E when the weighted Dice
//     coefficient 2I/(W(Q)+W(E)) ≥ similarMin. A candidate of several
//     units is also compared whole; and when the best note is that one of
//     its sentences is similar to E while the whole holds E (I/W(E) ≥
//     containMin) and says clearly more (W(Q) ≥ longer·W(E)), the note is
//     "refines". The note with the highest Dice coefficient wins, ties
//     going to the lowest id, then the unit added first.
//
// Only units sharing one of the query's heavier tokens are ever scored (an
// inverted index from tokens to units, and a bound described on relate),
// so a query costs the postings of its rarer tokens. It is a lexical method: a paraphrase that shares few words with
// what it paraphrases ("PRs" for "pull requests") is not found.
//
// A Notes is not safe for concurrent use: add everything, then query.
type Notes struct {
	units []noteUnit
	dict  map[string]int32 // token → id
	df    []int32          // by token id: units holding it
	post  [][]int32        // by token id: units holding it, in order

	frozen bool
	w      []float64 // by token id: weight, set by freeze
	unseen float64   // weight of a token no unit holds
	wsum   []float64 // by unit: W(unit)

	// relate's scratch, by unit, zero between calls.
	acc     []float64
	cnt     []int32
	touched []int32
}

type noteUnit struct {
	id   int
	text string
	toks []int32 // distinct, sorted
}

// Note is what Find reports.
type Note struct {
	// ID is the caller's id of the existing text holding the unit.
	ID int
	// Unit is the existing unit (a sentence, a table row) as written.
	Unit string
	// Kind is KindSimilar, KindRefines or KindNarrower.
	Kind string
	// Score is the weighted Dice coefficient of the two units.
	Score float64
}

// NewNotes returns an empty Notes.
func NewNotes() *Notes { return &Notes{dict: map[string]int32{}} }

// Add adds the units of an existing text under the caller's id.
func (n *Notes) Add(id int, text string) {
	n.frozen = false
	us, table := units(text)
	if len(us) > 1 && !table {
		// The whole statement too: a candidate may say all of it.
		us = append(us, strings.Join(us, " "))
	}
	for _, u := range us {
		var ids []int32
		for _, t := range Tokens(u) {
			k, ok := n.dict[t]
			if !ok {
				k = int32(len(n.df))
				n.dict[t] = k
				n.df = append(n.df, 0)
				n.post = append(n.post, nil)
			}
			ids = append(ids, k)
		}
		slices.Sort(ids)
		ids = slices.Compact(ids)
		if len(ids) == 0 {
			continue
		}
		s := int32(len(n.units))
		for _, k := range ids {
			n.df[k]++
			n.post[k] = append(n.post[k], s)
		}
		n.units = append(n.units, noteUnit{id: id, text: u, toks: ids})
	}
}

func (n *Notes) freeze() {
	if n.frozen {
		return
	}
	N := float64(len(n.units))
	n.w = make([]float64, len(n.df))
	for k, d := range n.df {
		n.w[k] = math.Log1p(N / float64(d))
	}
	n.unseen = math.Log1p(N)
	n.wsum = make([]float64, len(n.units))
	n.acc, n.cnt = nil, nil
	for s, u := range n.units {
		for _, k := range u.toks {
			n.wsum[s] += n.w[k]
		}
	}
	n.frozen = true
}

// Find returns the best note for text, if any.
func (n *Notes) Find(text string) (Note, bool) {
	if len(n.units) == 0 {
		return Note{}, false
	}
	n.freeze()
	var best Note
	found := false
	bestUnit := int32(-1)
	qs := Units(text)
	if len(qs) > 1 {
		// The whole candidate too: it may contain an existing unit and
		// add to it.
		qs = append(qs, strings.Join(qs, " "))
	}
	for _, q := range qs {
		n.relate(n.query(q), func(s int32, kind string, dice float64) {
			u := &n.units[s]
			if !found || dice > best.Score || dice == best.Score && (u.id < best.ID || u.id == best.ID && s < bestUnit) {
				best, bestUnit, found = Note{ID: u.id, Unit: u.text, Kind: kind, Score: dice}, s, true
			}
		})
	}
	if found && best.Kind == KindSimilar && len(qs) > 1 {
		// A sentence of the candidate repeats the unit, and the whole
		// candidate holds it and says clearly more: it refines it.
		whole := n.query(qs[len(qs)-1])
		in, we := n.shared(whole, bestUnit), n.wsum[bestUnit]
		if in >= containMin*we && whole.w >= longer*we {
			best.Kind = KindRefines
		}
	}
	return best, found
}

// noteQuery is a query unit: its distinct known tokens, heaviest (rarest)
// first, and its weight, unknown tokens included.
type noteQuery struct {
	ids []int32
	w   float64
}

func (n *Notes) query(q string) noteQuery {
	var qq noteQuery
	toks := Tokens(q)
	slices.Sort(toks)
	toks = slices.Compact(toks)
	for _, t := range toks {
		if k, ok := n.dict[t]; ok {
			qq.ids = append(qq.ids, k)
			qq.w += n.w[k]
		} else {
			qq.w += n.unseen
		}
	}
	slices.SortFunc(qq.ids, func(a, b int32) int {
		if c := cmp.Compare(n.df[a], n.df[b]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return qq
}

// shared is I, the weight unit s shares with the query.
func (n *Notes) shared(q noteQuery, s int32) float64 {
	in := 0.0
	toks := n.units[s].toks
	for _, k := range q.ids {
		if _, ok := slices.BinarySearch(toks, k); ok {
			in += n.w[k]
		}
	}
	return in
}

// relate calls f for each unit the query unit has a note for.
//
// Every note needs I ≥ W(Q)/4 (similar: 2I ≥ (W(Q)+W(E))/2; narrower:
// I ≥ containMin·W(Q); refines: I ≥ containFloor·W(Q)), so a unit sharing
// none of the query's heaviest tokens, those whose weight keeps the rest
// below W(Q)/4, cannot have one: only their postings are read, and the
// rest of I is added by looking the lighter tokens up in each unit met.
func (n *Notes) relate(q noteQuery, f func(s int32, kind string, dice float64)) {
	if len(q.ids) < minShared {
		return
	}
	head, rest := len(q.ids), 0.0
	for head > 0 && rest+n.w[q.ids[head-1]] < q.w/4 {
		head--
		rest += n.w[q.ids[head]]
	}
	if n.acc == nil {
		n.acc = make([]float64, len(n.units))
		n.cnt = make([]int32, len(n.units))
	}
	n.touched = n.touched[:0]
	for _, k := range q.ids[:head] {
		for _, s := range n.post[k] {
			if n.cnt[s] == 0 {
				n.touched = append(n.touched, s)
			}
			n.acc[s] += n.w[k]
			n.cnt[s]++
		}
	}
	for _, s := range n.touched {
		in, count := n.acc[s], int(n.cnt[s])
		n.acc[s], n.cnt[s] = 0, 0
		toks := n.units[s].toks
		for _, k := range q.ids[head:] {
			if _, ok := slices.BinarySearch(toks, k); ok {
				in += n.w[k]
				count++
			}
		}
		if count < minShared {
			continue
		}
		we := n.wsum[s]
		dice := 2 * in / (q.w + we)
		// Containment decides when one side is clearly longer; otherwise
		// two units sharing most of their weight say the same thing.
		refines := in >= containMin*we && in >= containFloor*q.w && q.w > we
		narrower := in >= containMin*q.w && in >= containFloor*we && we > q.w
		switch {
		case refines && (dice < similarMin || q.w >= longer*we):
			f(s, KindRefines, dice)
		case narrower && (dice < similarMin || we >= longer*q.w):
			f(s, KindNarrower, dice)
		case dice >= similarMin:
			f(s, KindSimilar, dice)
		}
	}
}

// Units splits a markdown text (a list item with its nested items, or a
// paragraph) into the units Notes compares: table rows, sentences, nested
// items. See Notes.
func Units(text string) []string {
	us, _ := units(text)
	return us
}

// units is Units, and whether the text holds a table row.
func units(text string) (units []string, table bool) {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	var para []string
	flush := func() {
		if len(para) > 0 {
			units = append(units, sentences(strings.Join(para, " "))...)
			para = para[:0]
		}
	}
	fence := ""
	for i, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case fence != "":
			if strings.HasPrefix(t, fence) {
				fence = ""
			}
			continue
		case strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
			flush()
			fence = t[:3]
			continue
		case t == "":
			flush()
		case strings.HasPrefix(t, "|"):
			flush()
			if tableSeparator(t) || i+1 < len(lines) && tableSeparator(strings.TrimSpace(lines[i+1])) {
				continue // the separator, or the header row above it
			}
			if row := strings.TrimSpace(strings.Trim(t, "|")); row != "" {
				units = append(units, row)
				table = true
			}
		case listStart(t):
			flush()
			para = append(para, t)
		default:
			para = append(para, t)
		}
	}
	flush()
	return units, table
}

func tableSeparator(t string) bool {
	return strings.HasPrefix(t, "|") && strings.Contains(t, "-") && strings.Trim(t, "|-: \t") == ""
}

// listStart reports whether a trimmed line opens a list item.
func listStart(t string) bool {
	if len(t) >= 2 && (t[0] == '-' || t[0] == '*' || t[0] == '+') && (t[1] == ' ' || t[1] == '\t') {
		return true
	}
	i := 0
	for i < len(t) && i < 9 && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	return i > 0 && i+1 < len(t) && (t[i] == '.' || t[i] == ')') && (t[i+1] == ' ' || t[i+1] == '\t')
}

// sentences splits a paragraph after '.', '!' or '?' followed by a space
// and an upper-case letter, a digit or markup that opens a sentence (`, *,
// ", [), and after the full-width 。！？. Abbreviations such as "e.g. the"
// stay whole because a lower-case word follows them.
func sentences(p string) []string {
	var out []string
	start := 0
	for i := 0; i < len(p); {
		r, size := utf8.DecodeRuneInString(p[i:])
		end := i + size
		switch r {
		case '。', '！', '？':
			out = appendSentence(out, p[start:end])
			start = end
		case ';':
			// Clauses joined by a semicolon are statements of their own.
			if end < len(p) && p[end] == ' ' {
				out = appendSentence(out, p[start:i])
				start = end
			}
		case '.', '!', '?':
			j := end
			for j < len(p) && p[j] == ' ' {
				j++
			}
			if j > end && j < len(p) {
				next, _ := utf8.DecodeRuneInString(p[j:])
				if unicode.IsUpper(next) || unicode.IsDigit(next) || strings.ContainsRune("`*\"[", next) {
					out = appendSentence(out, p[start:end])
					start = j
				}
			}
		}
		i = end
	}
	return appendSentence(out, p[start:])
}

func appendSentence(out []string, s string) []string {
	if s = strings.TrimSpace(s); s != "" {
		out = append(out, s)
	}
	return out
}

// Tokens returns the tokens of a unit, in order, with repeats: see Notes.
// A short word right after a dot inside a name is a file extension or a
// domain (hooks.md, node.js, example.com) and is left out.
func Tokens(unit string) []string {
	rs := appendNormalized(nil, unit)
	var out []string
	stop, neg := stopwords.Get(), negations.Get()
	isWord := func(r rune) bool {
		if r < utf8.RuneSelf {
			return 'a' <= r && r <= 'z' || '0' <= r && r <= '9' || r == '_' || 'A' <= r && r <= 'Z'
		}
		return unicode.IsLetter(r) || unicode.IsDigit(r)
	}
	isCJK := func(r rune) bool {
		return r >= 0x2e80 && unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana)
	}
	for i := 0; i < len(rs); {
		r := rs[i]
		switch {
		case isCJK(r):
			j := i
			for j < len(rs) && isCJK(rs[j]) {
				j++
			}
			if j-i == 1 {
				out = append(out, string(rs[i]))
			}
			for k := i + 1; k < j; k++ {
				out = append(out, string(rs[k-1:k+1]))
			}
			i = j
		case isWord(r):
			j := i
			for j < len(rs) && isWord(rs[j]) && !isCJK(rs[j]) {
				j++
			}
			w := strings.Trim(string(rs[i:j]), "_")
			ext := i >= 2 && rs[i-1] == '.' && isWord(rs[i-2]) && j-i <= 4
			i = j
			switch {
			case w == "" || ext || stop[w]:
			case neg[w]:
				out = append(out, "not")
			case isASCII(w):
				if len(w) >= 2 {
					out = append(out, stem(w))
				}
			default:
				out = append(out, w)
			}
		default:
			i++
		}
	}
	return out
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// stem reduces an English word to a crude stem, so that inflections meet:
// plurals (-s, -es, -ies), -ing, -ed, -ly, -ment and -ation, a doubled
// final consonant left by -ing/-ed ("running", "stopped"), and a final
// silent e ("cache", "caching" and "cached" all become "cach"). A suffix
// is removed only if what remains has three letters or more and a vowel.
// It is deliberately light: it never merges words that differ in meaning
// more than their inflection does (no -er, no -ive).
func stem(w string) string {
	if len(w) <= 3 {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:len(w)-1]
	}
	for _, suf := range []string{"ing", "ed"} {
		if strings.HasSuffix(w, suf) && stemOK(w[:len(w)-len(suf)]) {
			w = undouble(w[:len(w)-len(suf)])
			break
		}
	}
	for _, suf := range []string{"ly", "ment"} {
		if strings.HasSuffix(w, suf) && stemOK(w[:len(w)-len(suf)]) {
			w = w[:len(w)-len(suf)]
			break
		}
	}
	if strings.HasSuffix(w, "ation") && stemOK(w[:len(w)-5]) {
		w = w[:len(w)-5] + "at"
	}
	if strings.HasSuffix(w, "e") && stemOK(w[:len(w)-1]) {
		w = w[:len(w)-1]
	}
	return w
}

func stemOK(s string) bool {
	return len(s) >= 3 && strings.ContainsAny(s, "aeiouy")
}

// undouble drops one of a doubled final consonant other than l, s or z
// ("runn" → "run", but "install", "pass" stay).
func undouble(w string) string {
	n := len(w)
	if n >= 2 && w[n-1] == w[n-2] && !strings.ContainsRune("aeioulsz", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}

// stopwords are function words of English and of the other languages the
// corpus is written in (Portuguese, Spanish), after Normalize, before
// stemming. Words that carry meaning in a technical fact (not, never, no,
// only, all) are kept. Built on first use (package lazy), not at program
// start: every hook links this package and most runs compare no notes.
var stopwords = lazy.New(buildStopwords)

func buildStopwords() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
		a an the and or but if then else so than that this these those there here
		is are was were be been being am do does did done doing has have had having
		of to in on at by for with from into onto out over under about as via per
		it its it's they them their theirs we us our you your he she his her him i me my
		what which who whom whose when where why how
		can could should would will shall may might must
		also just too very much more most some any each every other such same own
		up down off again once both either yet still even
		get gets got use uses used using make makes made see
		e g eg ie etc vs
		de da do das dos em no na nos nas um uma uns umas para por com sem que se
		o os as ao aos e é ou mas como mais muito já sim
		el la los las del al y en con sin por para un una es son lo le les`) {
		m[w] = true
	}
	return m
}

// negations all become the token "not", so that "never push to main" and
// "don't push to main" share it. Contractions arrive split at the
// apostrophe ("don't" is "don" and "t"). Built on first use.
var negations = lazy.New(buildNegations)

func buildNegations() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`no not never none nothing neither nor cannot
		don doesn didn isn aren wasn weren won wouldn shouldn mustn haven hasn
		não nunca nada nenhum nenhuma nem nunca jamais ninguno ninguna`) {
		m[w] = true
	}
	return m
}
