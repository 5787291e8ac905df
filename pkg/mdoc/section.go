package mdoc

import (
	"strings"
	"unicode"

	"github.com/adrg/strutil"
	"github.com/adrg/strutil/metrics"
)

// MinTitleSimilarity is the Sorensen-Dice similarity (bigrams, case
// insensitive, on normalized titles) a heading needs to count as a match when
// no heading matches exactly.
const MinTitleSimilarity = 0.7

// BestSection returns the index in d.Sections of the heading that best
// matches title, or -1. Titles are compared normalized: lower case, emphasis
// and code markup dropped, whitespace collapsed, leading "#"s and trailing
// colons trimmed, so "## **Testing**:" matches "testing". In order of preference (the first
// section wins within a tier):
//
//  1. equal normalized titles;
//  2. equal once a trailing parenthetical is dropped from both, so "Landing
//     the Plane" finds "Landing the Plane (Session Completion)";
//  3. the highest Sorensen-Dice bigram similarity (of the full or the
//     shortened forms, whichever is higher) of at least MinTitleSimilarity.
//
// An empty title names the preamble (index 0).
func (d *Doc) BestSection(title string) int {
	want := normTitle(title)
	if want == "" {
		return 0
	}
	wantShort := dropParen(want)
	norms := make([]string, len(d.Sections))
	exactShort := -1
	for k := 1; k < len(d.Sections); k++ {
		norms[k] = normTitle(d.Sections[k].Title)
		switch {
		case norms[k] == want:
			return k
		case exactShort < 0 && norms[k] != "" && dropParen(norms[k]) == wantShort:
			exactShort = k
		}
	}
	if exactShort >= 0 {
		return exactShort
	}
	best, bestScore := -1, 0.0
	dice := &metrics.SorensenDice{NgramSize: 2}
	for k := 1; k < len(d.Sections); k++ {
		have := norms[k]
		if have == "" {
			continue
		}
		sc := max(strutil.Similarity(want, have, dice), strutil.Similarity(wantShort, dropParen(have), dice))
		if sc >= MinTitleSimilarity && sc > bestScore {
			best, bestScore = k, sc
		}
	}
	return best
}

// dropParen drops a trailing parenthetical: "a (b)" -> "a".
func dropParen(s string) string {
	if strings.HasSuffix(s, ")") {
		if k := strings.LastIndex(s, " ("); k > 0 {
			return s[:k]
		}
	}
	return s
}

// normTitle is the form titles are compared in: lower case, no "*", "_" or
// "`", single spaces, no leading "#"s, no trailing colons.
func normTitle(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		switch {
		case r == '*' || r == '_' || r == '`':
			continue
		case unicode.IsSpace(r):
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return strings.TrimRight(strings.TrimLeft(b.String(), "# "), " :：")
}
