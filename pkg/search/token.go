package search

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/intermem/intermem/pkg/lazy"
)

// maxFieldBytes is the most bytes of one field that are indexed. Longer
// texts are indexed by their start: a relevant document says what it is
// about early, and the cap bounds the cost of a hostile one.
const maxFieldBytes = 64 << 10

// analyzer turns text into index terms, numbered in order of first
// appearance. It memoizes each lower-cased word's term number: most words
// repeat across a collection, and stemming is the costliest part of
// analysis, so a repeated word costs one map lookup.
type analyzer struct {
	words map[string]int32 // lower-cased word → term number, -1 for a stopword
	ids   map[string]int32 // term → term number
	vocab []string         // term number → term
	buf   []byte
}

// maxMemo bounds the word memo, against a hostile text of endless distinct
// words.
const maxMemo = 1 << 18

// newAnalyzer returns an analyzer whose memo is sized for about size
// distinct words: a collection's thousands, a query's few (a map made for
// thousands is a quarter of a megabyte, cleared page by page).
func newAnalyzer(size int) *analyzer {
	return &analyzer{words: make(map[string]int32, size), ids: make(map[string]int32, size)}
}

// id returns the number of a term, numbering it if it is new.
func (a *analyzer) id(term string) int32 {
	if id, ok := a.ids[term]; ok {
		return id
	}
	id := int32(len(a.vocab))
	term = strings.Clone(term)
	a.ids[term] = id
	a.vocab = append(a.vocab, term)
	return id
}

// terms calls emit with the number of every index term of text, in order:
//
//   - a word is a run of letters and digits, lower-cased; anything else,
//     apostrophes, underscores, dashes, dots and slashes included, separates
//     words, so snake_case, kebab-case and paths split into their words;
//   - a word written in camelCase or PascalCase also yields its parts
//     (ErrNoRows: errnorows, err, no, rows);
//   - words of one byte and English stopwords are dropped; the others are
//     stemmed (Porter2);
//   - runs of Han, Hiragana, Katakana or Hangul, which are not separated by
//     spaces, yield their overlapping pairs of characters (a lone character
//     yields itself).
func (a *analyzer) terms(text string, emit func(int32)) {
	if len(text) > maxFieldBytes {
		text = text[:maxFieldBytes]
	}
	for i := 0; i < len(text); {
		if c := text[i]; c < utf8.RuneSelf {
			if !isAlnumASCII(c) {
				i++
				continue
			}
			j := i + 1
			for j < len(text) && isAlnumASCII(text[j]) {
				j++
			}
			if j == len(text) || text[j] < utf8.RuneSelf {
				a.word(text[i:j], emit)
				i = j
				continue
			}
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case isCJK(r):
			// Overlapping pairs: p0 and p1 are the starts of the previous
			// two runes of the run.
			p0, p1, j := -1, i, i+size
			for j < len(text) {
				r2, s2 := utf8.DecodeRuneInString(text[j:])
				if !isCJK(r2) {
					break
				}
				p0, p1 = p1, j
				j += s2
				emit(a.id(text[p0:j]))
			}
			if p0 < 0 {
				emit(a.id(text[i:j]))
			}
			i = j
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			j := i
			for j < len(text) {
				r2, s2 := utf8.DecodeRuneInString(text[j:])
				if !(unicode.IsLetter(r2) || unicode.IsDigit(r2)) || isCJK(r2) {
					break
				}
				j += s2
			}
			a.word(text[i:j], emit)
			i = j
		default:
			i += size
		}
	}
}

// word emits the terms of one word as written: the word, then its camelCase
// parts when it has any. A part starts at an upper-case letter after a
// lower-case letter or a digit, at the last upper-case letter of a run that
// a lower-case letter follows (HTTPServer: http, server), and where letters
// and digits meet.
func (a *analyzer) word(w string, emit func(int32)) {
	a.emitWord(w, emit)
	if !mayHaveParts(w) {
		return
	}
	start, split := 0, false
	prev, psize := utf8.DecodeRuneInString(w)
	for i := psize; i < len(w); {
		r, size := utf8.DecodeRuneInString(w[i:])
		next, _ := utf8.DecodeRuneInString(w[i+size:])
		if unicode.IsUpper(r) && (unicode.IsLower(prev) || unicode.IsDigit(prev)) ||
			unicode.IsUpper(r) && unicode.IsUpper(prev) && unicode.IsLower(next) ||
			unicode.IsDigit(r) != unicode.IsDigit(prev) {
			a.emitWord(w[start:i], emit)
			start, split = i, true
		}
		prev = r
		i += size
	}
	if split {
		a.emitWord(w[start:], emit)
	}
}

func isAlnumASCII(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// mayHaveParts reports whether w could split into camelCase parts: it has
// an upper-case letter or a non-ASCII byte after its first byte, or both
// letters and digits.
func mayHaveParts(w string) bool {
	digits, letters := false, false
	for i := 0; i < len(w); i++ {
		c := w[i]
		switch {
		case c >= utf8.RuneSelf || (i > 0 && c >= 'A' && c <= 'Z'):
			return true
		case c >= '0' && c <= '9':
			digits = true
		default:
			letters = true
		}
	}
	return digits && letters
}

// emitWord lower-cases, drops stopwords and one-byte words, and stems.
func (a *analyzer) emitWord(w string, emit func(int32)) {
	if len(w) < 2 {
		return
	}
	lw := w
	for i := 0; i < len(w); i++ {
		if c := w[i]; c >= utf8.RuneSelf {
			lw = strings.ToLower(w)
			break
		} else if c >= 'A' && c <= 'Z' {
			a.buf = append(a.buf[:0], w...)
			for j := i; j < len(a.buf); j++ {
				if c := a.buf[j]; c >= 'A' && c <= 'Z' {
					a.buf[j] = c + 'a' - 'A'
				}
			}
			if id, ok := a.words[string(a.buf)]; ok {
				if id >= 0 {
					emit(id)
				}
				return
			}
			lw = string(a.buf)
			break
		}
	}
	id, ok := a.words[lw]
	if !ok {
		id = -1
		if !stopwords.Get()[lw] {
			id = a.id(Stem(lw))
		}
		if len(a.words) < maxMemo {
			a.words[strings.Clone(lw)] = id
		}
	}
	if id >= 0 {
		emit(id)
	}
}

func isCJK(r rune) bool {
	return r >= 0x2E80 && (unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r))
}

// stopwords are dropped from documents and queries: the Snowball English
// list, the contractions' stems that splitting at apostrophes leaves, and
// the words of a question ("how do I", "why does"). Built on first use
// (package lazy): the hooks link this package and most of their runs
// search nothing.
var stopwords = lazy.New(buildStopwords)

func buildStopwords() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
		a about above after again against all am an and any are as at be because
		been before being below between both but by can cannot could did do does
		doing down during each few for from further had has have having he her
		here hers herself him himself his how i if in into is it its itself just
		let me more most my myself no nor not of off on once only or other ought
		our ours ourselves out over own same shall she should so some such than
		that the their theirs them themselves then there these they this those
		through to too under until up very was we were what when where which
		while who whom why will with would you your yours yourself yourselves
		aren couldn didn doesn don hadn hasn haven isn mustn shan shouldn wasn
		weren won wouldn ll ve re
		also get gets got may might must us whether yet`) {
		m[w] = true
	}
	return m
}
