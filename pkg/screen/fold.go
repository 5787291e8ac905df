package screen

import (
	"slices"
	"strings"
	"unicode/utf8"

	lazyval "github.com/intermem/intermem/pkg/lazy"
)

// Disguised text
//
// The line rules read ASCII keywords, so an attacker can write "ｉｇｎｏｒｅ ｐｒｅｖｉｏｕｓ
// ｉｎｓｔｒｕｃｔｉｏｎｓ" (fullwidth), "іgnоre" (Cyrillic і and о), 𝐢𝐠𝐧𝐨𝐫𝐞 (mathematical
// bold) or "ig\u00adnore" (a soft hyphen inside the word): a model reads each as the
// English word, a keyword scan does not; and Unicode tag characters spell ASCII that a
// model may read although nobody sees it. disguised folds such text to ASCII — look-alike
// letters to the letters they imitate, invisible characters removed — and runs the rules
// again on the folded copy, mapping each flag back to the original bytes. It costs nothing
// for text without a foldable character.

// disguised adds the flags that only the folded form of s raises. Only the lines holding a
// look-alike letter or a flagged invisible character (fs holds the hidden-char flags) are
// folded and screened again.
func disguised(fs []Flag, s string) []Flag {
	n := len(fs)
	lineEnd := -1 // end of the last line screened
	screenLine := func(i int) {
		if i < lineEnd {
			return
		}
		ls := strings.LastIndexByte(s[:i], '\n') + 1
		le := strings.IndexByte(s[i:], '\n')
		if le < 0 {
			le = len(s)
		} else {
			le += i
		}
		lineEnd = le + 1
		folded, offs := fold(s[ls:le])
		if offs == nil {
			return
		}
		var more []Flag
		more = comments(more, folded)
		more = lineRules(more, folded)
	next:
		for _, f := range more {
			f.Start, f.End = ls+offs[f.Start], ls+offs[f.End]
			if f.Start >= f.End {
				continue
			}
			for _, g := range fs[:n] {
				if g.Kind == f.Kind && g.Start < f.End && f.Start < g.End {
					continue next // the plain text says it already
				}
			}
			f.Detail += " (disguised with look-alike or invisible characters)"
			fs = append(fs, f)
		}
	}
	hidden := make([]int, 0, 4)
	for _, f := range fs[:n] {
		if f.Kind == KindHiddenChar {
			hidden = append(hidden, f.Start)
		}
	}
	slices.Sort(hidden)
	h := 0
	for i := 0; i < len(s); {
		c := s[i]
		for h < len(hidden) && hidden[h] <= i {
			screenLine(hidden[h])
			h++
		}
		if c < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if _, ok := foldRune(r); ok {
			screenLine(i)
		}
		i += size
	}
	for ; h < len(hidden); h++ {
		screenLine(hidden[h])
	}
	return fs
}

// fold returns s with look-alike letters replaced by the ASCII they imitate and invisible
// characters removed, and offs, where offs[i] is the offset in s of the character that
// gave byte i of the folded text (offs[len(folded)] == len(s)); offs is nil when nothing
// folds.
func fold(s string) (string, []int) {
	first := -1
	for i, r := range s {
		if r < utf8.RuneSelf {
			continue
		}
		if _, ok := foldRune(r); ok {
			first = i
			break
		}
		if _, hidden := hiddenName(r); hidden && r != 0xFE0E && r != 0xFE0F {
			first = i
			break
		}
	}
	if first < 0 {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	offs := make([]int, 0, len(s)+1)
	b.WriteString(s[:first])
	for i := range first {
		offs = append(offs, i)
	}
	for i, r := range s[first:] {
		i += first
		if r >= utf8.RuneSelf {
			if c, ok := foldRune(r); ok {
				b.WriteByte(c)
				offs = append(offs, i)
				continue
			}
			if _, hidden := hiddenName(r); hidden {
				continue
			}
		}
		n := b.Len()
		b.WriteRune(r)
		for range b.Len() - n {
			offs = append(offs, i)
		}
	}
	offs = append(offs, len(s))
	return b.String(), offs
}

// lookAlike maps Cyrillic, Greek and Latin letters that render like an ASCII letter (the
// common entries of Unicode's confusables list) to it. Built on first use (package lazy),
// not at program start: the hooks link this package and most of their runs screen nothing.
var lookAlike = lazyval.New(buildLookAlike)

func buildLookAlike() map[rune]byte {
	return map[rune]byte{
		// Cyrillic
		'а': 'a', 'в': 'b', 'е': 'e', 'о': 'o', 'р': 'p', 'с': 'c', 'у': 'y', 'х': 'x', 'ѕ': 's',
		'і': 'i', 'ј': 'j', 'ԁ': 'd', 'ӏ': 'l', 'һ': 'h', 'ԛ': 'q', 'ԝ': 'w', 'ո': 'n', 'ь': 'b',
		'А': 'A', 'В': 'B', 'Е': 'E', 'К': 'K', 'М': 'M', 'Н': 'H', 'О': 'O', 'Р': 'P', 'С': 'C',
		'Т': 'T', 'Х': 'X', 'Ѕ': 'S', 'І': 'I', 'Ј': 'J', 'Ү': 'Y', 'Ԛ': 'Q', 'Ԝ': 'W',
		// Greek
		'α': 'a', 'ο': 'o', 'ν': 'v', 'ι': 'i', 'ρ': 'p', 'κ': 'k', 'υ': 'u', 'τ': 't',
		'Α': 'A', 'Β': 'B', 'Ε': 'E', 'Ζ': 'Z', 'Η': 'H', 'Ι': 'I', 'Κ': 'K', 'Μ': 'M', 'Ν': 'N',
		'Ο': 'O', 'Ρ': 'P', 'Τ': 'T', 'Υ': 'Y', 'Χ': 'X',
		// Latin
		'ɡ': 'g', 'ı': 'i', 'ȷ': 'j', 'ʟ': 'L', 'ɪ': 'I', 'ᴀ': 'A', 'ᴇ': 'E', 'ᴏ': 'O',
		'\u3000': ' ', '\u00A0': ' ', '\u2002': ' ', '\u2003': ' ', '\u2009': ' ', '\u202F': ' ',
	}
}

// foldRune returns the ASCII character r imitates.
func foldRune(r rune) (byte, bool) {
	switch {
	case r >= 0xFF01 && r <= 0xFF5E: // fullwidth ASCII
		return byte(r - 0xFF01 + '!'), true
	case r >= 0x1D400 && r <= 0x1D6A3: // mathematical alphanumeric letters, 13 styles of A–Z a–z
		k := (r - 0x1D400) % 52
		if k < 26 {
			return byte('A' + k), true
		}
		return byte('a' + k - 26), true
	case r >= 0x1D7CE && r <= 0x1D7FF: // mathematical digits
		return byte('0' + (r-0x1D7CE)%10), true
	case r >= 0x24B6 && r <= 0x24CF: // circled capitals
		return byte('A' + r - 0x24B6), true
	case r >= 0x24D0 && r <= 0x24E9: // circled small letters
		return byte('a' + r - 0x24D0), true
	case r >= 0xE0020 && r <= 0xE007E: // tag characters spell ASCII
		return byte(r - 0xE0000), true
	}
	if r < 0x530 || r >= 0x1D00 && r < 0x1D80 || r >= 0x2000 && r < 0x2030 || r == 0x3000 {
		c, ok := lookAlike.Get()[r]
		return c, ok
	}
	return 0, false
}
