package screen

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// hiddenName names the invisible characters that are flagged.
func hiddenName(r rune) (string, bool) {
	switch {
	case r == 0x200B:
		return "ZERO WIDTH SPACE", true
	case r == 0x200C:
		return "ZERO WIDTH NON-JOINER", true
	case r == 0x200D:
		return "ZERO WIDTH JOINER", true
	case r == 0x2060:
		return "WORD JOINER", true
	case r >= 0x2061 && r <= 0x2064:
		return "INVISIBLE OPERATOR", true
	case r == 0xFEFF:
		return "ZERO WIDTH NO-BREAK SPACE", true
	case r == 0x180E:
		return "MONGOLIAN VOWEL SEPARATOR", true
	case r == 0x202A:
		return "LEFT-TO-RIGHT EMBEDDING", true
	case r == 0x202B:
		return "RIGHT-TO-LEFT EMBEDDING", true
	case r == 0x202C:
		return "POP DIRECTIONAL FORMATTING", true
	case r == 0x202D:
		return "LEFT-TO-RIGHT OVERRIDE", true
	case r == 0x202E:
		return "RIGHT-TO-LEFT OVERRIDE", true
	case r == 0x2066:
		return "LEFT-TO-RIGHT ISOLATE", true
	case r == 0x2067:
		return "RIGHT-TO-LEFT ISOLATE", true
	case r == 0x2068:
		return "FIRST STRONG ISOLATE", true
	case r == 0x2069:
		return "POP DIRECTIONAL ISOLATE", true
	case r >= 0xE0000 && r <= 0xE007F:
		return "TAG", true
	case r >= 0xE0100 && r <= 0xE01EF:
		return "VARIATION SELECTOR SUPPLEMENT", true
	}
	return "", false
}

// joiningScripts use ZWJ/ZWNJ inside words as part of ordinary spelling.
var joiningScripts = []*unicode.RangeTable{
	unicode.Arabic, unicode.Syriac, unicode.Nko, unicode.Mongolian, unicode.Devanagari,
	unicode.Bengali, unicode.Gurmukhi, unicode.Gujarati, unicode.Oriya, unicode.Tamil,
	unicode.Telugu, unicode.Kannada, unicode.Malayalam, unicode.Sinhala, unicode.Myanmar,
	unicode.Khmer, unicode.Tibetan,
}

func isEmojiPart(r rune) bool {
	return r >= 0x1F000 && r <= 0x1FAFF || r >= 0x2600 && r <= 0x27BF || r >= 0x2B00 && r <= 0x2BFF ||
		r == 0xFE0F || r == 0x20E3 || r >= 0x1F3FB && r <= 0x1F3FF || r >= 0xE0020 && r <= 0xE007F ||
		r == 0x2640 || r == 0x2642 || r == 0x2695 || r == 0x2696 || r == 0x2708 || r == 0x2764
}

// legitimate reports the joiners that ordinary text needs: ZWJ inside an emoji sequence
// (👩‍💻), ZWJ/ZWNJ between letters of a joining script, a BOM at the very start, and tag
// characters that spell a subdivision flag (🏴 + tags + U+E007F).
func legitimate(s string, i int, r rune, prev rune) bool {
	next, _ := utf8.DecodeRuneInString(s[i+utf8.RuneLen(r):])
	switch r {
	case 0xFEFF:
		return i == 0
	case 0x200D:
		if isEmojiPart(prev) && isEmojiPart(next) {
			return true
		}
		fallthrough
	case 0x200C:
		return unicode.In(prev, joiningScripts...) || unicode.In(next, joiningScripts...) ||
			unicode.Is(unicode.Mn, prev) && unicode.In(next, joiningScripts...)
	}
	return false
}

// hiddenChars flags runs of invisible characters: bidi controls (which can make text render
// differently from how it reads), zero-width characters in the middle of text, and Unicode
// tag characters (which can carry a whole hidden ASCII message; Detail decodes it).
func hiddenChars(fs []Flag, s string) []Flag {
	// Every flagged character is encoded with a lead byte E1, E2, EF or F3.
	if strings.IndexByte(s, 0xE1) < 0 && strings.IndexByte(s, 0xE2) < 0 &&
		strings.IndexByte(s, 0xEF) < 0 && strings.IndexByte(s, 0xF3) < 0 {
		return fs
	}
	runStart, runEnd, count := -1, -1, 0
	var names []string
	var tags strings.Builder
	flush := func() {
		if runStart < 0 {
			return
		}
		detail := strings.Join(names, ", ")
		if count > len(names) {
			detail = fmt.Sprintf("%d invisible characters: %s, …", count, detail)
		}
		if tags.Len() > 0 {
			detail += fmt.Sprintf(" (tag characters spell %q)", quote(tags.String()))
		}
		fs = append(fs, Flag{Kind: KindHiddenChar, Detail: detail, Start: runStart, End: runEnd})
		runStart, count, names = -1, 0, names[:0]
		tags.Reset()
	}
	flagEnd := -1 // end of the subdivision flag's tag sequence being walked
	for i := 0; i < len(s); {
		// Skip to the next byte that can start a flagged character.
		for i < len(s) && !leadByte[s[i]] {
			i++
		}
		if i >= len(s) {
			break
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		name, hidden := hiddenName(r)
		if !hidden {
			if runStart >= 0 {
				flush()
			}
			i += size
			continue
		}
		// The character before, skipping tag characters (they follow their base).
		prev := rune(-1)
		for j, k := i, 0; j > 0 && k < 10; k++ { // a flag has at most 8 tags
			p, n := utf8.DecodeLastRuneInString(s[:j])
			j -= n
			if p < 0xE0000 || p > 0xE007F {
				prev = p
				break
			}
		}
		isTag := r >= 0xE0000 && r <= 0xE007F
		if isTag && prev == 0x1F3F4 && i > flagEnd {
			flagEnd = i + flagSequence(s[i:])
		}
		if hidden && (isTag && i < flagEnd || !isTag && legitimate(s, i, r, prev)) {
			hidden = false
		}
		if hidden {
			if runStart < 0 || i != runEnd {
				flush()
				runStart = i
			}
			runEnd = i + utf8.RuneLen(r)
			count++
			if n := fmt.Sprintf("U+%04X %s", r, name); len(names) < 3 && (len(names) == 0 || names[len(names)-1] != n) {
				names = append(names, n)
			}
			if isTag && r >= 0xE0020 && r <= 0xE007E && tags.Len() < maxDetail {
				tags.WriteByte(byte(r - 0xE0000))
			}
		} else if runStart >= 0 {
			flush()
		}
		i += size
	}
	flush()
	return fs
}

// leadByte marks the UTF-8 lead bytes of every flagged character.
var leadByte = func() (t [256]bool) {
	t[0xE1], t[0xE2], t[0xEF], t[0xF3] = true, true, true, true
	return t
}()

// flagSequence returns the byte length of the emoji subdivision-flag tag sequence at the
// start of s (lower-case letter or digit tags ended by U+E007F, as in 🏴 + "gbeng" + cancel),
// the one legitimate use of tag characters, or 0.
func flagSequence(s string) int {
	n := 0
	for j, r := range s {
		switch {
		case r >= 0xE0061 && r <= 0xE007A || r >= 0xE0030 && r <= 0xE0039:
			if n++; n > 7 {
				return 0
			}
		case r == 0xE007F && n >= 2:
			return j + utf8.RuneLen(r)
		default:
			return 0
		}
	}
	return 0
}
