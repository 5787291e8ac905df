package search

import "github.com/intermem/intermem/pkg/lazy"

// Stem returns the Porter2 (Snowball English) stem of a lower-case word.
// Words of two letters or fewer, and words with anything but ASCII letters
// and apostrophes, are returned unchanged: digits, identifiers with
// underscores and non-English words are matched as written.
//
// The algorithm is the one published as "The English (Porter2) stemming
// algorithm" by Martin Porter: exceptional forms, R1/R2 regions (with the
// gener/commun/arsen prefixes), then steps 0, 1a, 1b, 1c, 2, 3, 4 and 5. In
// each step only the longest matching suffix is considered; when its
// condition fails the step does nothing.
func Stem(word string) string {
	if len(word) <= 2 {
		return word
	}
	for i := 0; i < len(word); i++ {
		c := word[i]
		if (c < 'a' || c > 'z') && c != '\'' {
			return word
		}
	}
	if s, ok := exceptions.Get()[word]; ok {
		return s
	}
	w := []byte(word)
	// Remove an initial apostrophe; mark y as a consonant (Y) where it
	// starts the word or follows a vowel.
	if w[0] == '\'' {
		w = w[1:]
	}
	if len(w) <= 2 {
		return string(w)
	}
	if w[0] == 'y' {
		w[0] = 'Y'
	}
	for i := 1; i < len(w); i++ {
		if w[i] == 'y' && isVowel(w[i-1]) {
			w[i] = 'Y'
		}
	}
	r1, r2 := regions(w)

	w = step0(w)
	w = step1a(w)
	if _, ok := exceptions1a.Get()[string(w)]; ok {
		return restoreY(w)
	}
	w = step1b(w, r1)
	w = step1c(w)
	w = step2(w, r1)
	w = step3(w, r1, r2)
	w = step4(w, r2)
	w = step5(w, r1, r2)
	return restoreY(w)
}

var exceptions = lazy.New(buildExceptions)

func buildExceptions() map[string]string {
	return map[string]string{
		"skis": "ski", "skies": "sky", "dying": "die", "lying": "lie", "tying": "tie",
		"idly": "idl", "gently": "gentl", "ugly": "ugli", "early": "earli", "only": "onli",
		"singly": "singl",
		"sky":    "sky", "news": "news", "howe": "howe", "atlas": "atlas", "cosmos": "cosmos",
		"bias": "bias", "andes": "andes",
	}
}

var exceptions1a = lazy.New(buildExceptions1a)

func buildExceptions1a() map[string]bool {
	return map[string]bool{
		"inning": true, "outing": true, "canning": true, "herring": true, "earring": true,
		"proceed": true, "exceed": true, "succeed": true,
	}
}

func restoreY(w []byte) string {
	for i, c := range w {
		if c == 'Y' {
			w[i] = 'y'
		}
	}
	return string(w)
}

func isVowel(c byte) bool {
	switch c {
	case 'a', 'e', 'i', 'o', 'u', 'y':
		return true
	}
	return false
}

func isDouble(w []byte) bool {
	n := len(w)
	if n < 2 || w[n-1] != w[n-2] {
		return false
	}
	switch w[n-1] {
	case 'b', 'd', 'f', 'g', 'm', 'n', 'p', 'r', 't':
		return true
	}
	return false
}

func isLiEnding(c byte) bool {
	switch c {
	case 'c', 'd', 'e', 'g', 'h', 'k', 'm', 'n', 'r', 't':
		return true
	}
	return false
}

// regions returns the starts of R1 and R2.
func regions(w []byte) (int, int) {
	var r1 int
	switch {
	case hasPrefix(w, "gener"), hasPrefix(w, "arsen"):
		r1 = 5
	case hasPrefix(w, "commun"):
		r1 = 6
	default:
		r1 = regionAfter(w, 0)
	}
	return r1, regionAfter(w, r1)
}

// regionAfter returns the position after the first non-vowel that follows a
// vowel, at or after start.
func regionAfter(w []byte, start int) int {
	for i := start + 1; i < len(w); i++ {
		if !isVowel(w[i]) && isVowel(w[i-1]) {
			return i + 1
		}
	}
	return len(w)
}

func hasPrefix(w []byte, p string) bool { return len(w) >= len(p) && string(w[:len(p)]) == p }
func hasSuffix(w []byte, s string) bool { return len(w) >= len(s) && string(w[len(w)-len(s):]) == s }

// shortSyllableAt reports whether the word ending at end (exclusive) ends in
// a short syllable.
func shortSyllableAt(w []byte, end int) bool {
	if end == 2 {
		return isVowel(w[0]) && !isVowel(w[1])
	}
	if end < 3 {
		return false
	}
	c := w[end-1]
	return !isVowel(w[end-3]) && isVowel(w[end-2]) && !isVowel(c) && c != 'w' && c != 'x' && c != 'Y'
}

func isShort(w []byte, r1 int) bool { return r1 >= len(w) && shortSyllableAt(w, len(w)) }

func hasVowel(w []byte) bool {
	for _, c := range w {
		if isVowel(c) {
			return true
		}
	}
	return false
}

func step0(w []byte) []byte {
	for _, s := range []string{"'s'", "'s", "'"} {
		if hasSuffix(w, s) {
			return w[:len(w)-len(s)]
		}
	}
	return w
}

func step1a(w []byte) []byte {
	switch {
	case hasSuffix(w, "sses"):
		return w[:len(w)-2]
	case hasSuffix(w, "ied"), hasSuffix(w, "ies"):
		if len(w) > 4 {
			return append(w[:len(w)-3], 'i')
		}
		return w[:len(w)-1]
	case hasSuffix(w, "us"), hasSuffix(w, "ss"):
		return w
	case hasSuffix(w, "s"):
		// Delete if a vowel occurs before the letter preceding the s.
		if len(w) >= 3 && hasVowel(w[:len(w)-2]) {
			return w[:len(w)-1]
		}
	}
	return w
}

func step1b(w []byte, r1 int) []byte {
	for _, s := range []string{"eedly", "eed"} {
		if hasSuffix(w, s) {
			if len(w)-len(s) >= r1 {
				return append(w[:len(w)-len(s)], 'e', 'e')
			}
			return w
		}
	}
	for _, s := range []string{"ingly", "edly", "ing", "ed"} {
		if !hasSuffix(w, s) {
			continue
		}
		stem := w[:len(w)-len(s)]
		if !hasVowel(stem) {
			return w
		}
		w = stem
		switch {
		case hasSuffix(w, "at"), hasSuffix(w, "bl"), hasSuffix(w, "iz"):
			return append(w, 'e')
		case isDouble(w):
			return w[:len(w)-1]
		case isShort(w, r1):
			return append(w, 'e')
		}
		return w
	}
	return w
}

func step1c(w []byte) []byte {
	n := len(w)
	if n > 2 && (w[n-1] == 'y' || w[n-1] == 'Y') && !isVowel(w[n-2]) {
		w[n-1] = 'i'
	}
	return w
}

// step2 suffixes, longest first within each shared ending.
var step2List = []struct{ suf, rep string }{
	{"ization", "ize"}, {"ational", "ate"}, {"fulness", "ful"}, {"ousness", "ous"},
	{"iveness", "ive"}, {"tional", "tion"}, {"biliti", "ble"}, {"lessli", "less"},
	{"entli", "ent"}, {"ation", "ate"}, {"alism", "al"}, {"aliti", "al"},
	{"ousli", "ous"}, {"iviti", "ive"}, {"fulli", "ful"}, {"enci", "ence"},
	{"anci", "ance"}, {"abli", "able"}, {"izer", "ize"}, {"ator", "ate"},
	{"alli", "al"}, {"bli", "ble"}, {"ogi", "og"}, {"li", ""},
}

func step2(w []byte, r1 int) []byte {
	for _, e := range step2List {
		if !hasSuffix(w, e.suf) {
			continue
		}
		stem := w[:len(w)-len(e.suf)]
		if len(stem) < r1 {
			return w
		}
		switch e.suf {
		case "ogi":
			if !hasSuffix(stem, "l") {
				return w
			}
		case "li":
			if len(stem) == 0 || !isLiEnding(stem[len(stem)-1]) {
				return w
			}
		}
		return append(stem, e.rep...)
	}
	return w
}

var step3List = []struct{ suf, rep string }{
	{"ational", "ate"}, {"tional", "tion"}, {"alize", "al"}, {"icate", "ic"},
	{"iciti", "ic"}, {"ative", ""}, {"ical", "ic"}, {"ness", ""}, {"ful", ""},
}

func step3(w []byte, r1, r2 int) []byte {
	for _, e := range step3List {
		if !hasSuffix(w, e.suf) {
			continue
		}
		stem := w[:len(w)-len(e.suf)]
		if len(stem) < r1 || (e.suf == "ative" && len(stem) < r2) {
			return w
		}
		return append(stem, e.rep...)
	}
	return w
}

var step4List = []string{
	"ement", "ance", "ence", "able", "ible", "ment", "ant", "ent", "ism", "ate",
	"iti", "ous", "ive", "ize", "ion", "al", "er", "ic",
}

func step4(w []byte, r2 int) []byte {
	for _, s := range step4List {
		if !hasSuffix(w, s) {
			continue
		}
		stem := w[:len(w)-len(s)]
		if len(stem) < r2 {
			return w
		}
		if s == "ion" && !hasSuffix(stem, "s") && !hasSuffix(stem, "t") {
			return w
		}
		return stem
	}
	return w
}

func step5(w []byte, r1, r2 int) []byte {
	n := len(w)
	switch {
	case n > 0 && w[n-1] == 'e':
		if n-1 >= r2 || (n-1 >= r1 && !shortSyllableAt(w, n-1)) {
			return w[:n-1]
		}
	case n > 1 && w[n-1] == 'l' && w[n-2] == 'l':
		if n-1 >= r2 {
			return w[:n-1]
		}
	}
	return w
}
