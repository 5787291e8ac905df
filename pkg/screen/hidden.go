package screen

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	lazyval "github.com/intermem/intermem/pkg/lazy"
)

// hiddenName names the invisible characters that are flagged: bidi controls and marks,
// zero-width and format characters, characters that render as nothing (fillers, the soft
// hyphen, the grapheme joiner), tag characters, variation selectors (those U+FE00–U+FE0F
// only in a run, see hiddenChars) and control characters (C0 but tab, newline and the CR
// of a CRLF; DEL; C1), which a terminal obeys and a reader never sees.
func hiddenName(r rune) (string, bool) {
	switch {
	case r < 0x20 || r >= 0x7F && r <= 0x9F:
		return controlName(r), true
	case r < 0xAD:
		return "", false
	}
	switch r {
	case 0xAD:
		return "SOFT HYPHEN", true
	case 0x34F:
		return "COMBINING GRAPHEME JOINER", true
	case 0x61C:
		return "ARABIC LETTER MARK", true
	case 0x115F, 0x1160, 0x3164, 0xFFA0:
		return "HANGUL FILLER", true
	case 0x17B4, 0x17B5:
		return "KHMER INHERENT VOWEL", true
	case 0x180E:
		return "MONGOLIAN VOWEL SEPARATOR", true
	case 0x200B:
		return "ZERO WIDTH SPACE", true
	case 0x200C:
		return "ZERO WIDTH NON-JOINER", true
	case 0x200D:
		return "ZERO WIDTH JOINER", true
	case 0x200E:
		return "LEFT-TO-RIGHT MARK", true
	case 0x200F:
		return "RIGHT-TO-LEFT MARK", true
	case 0x202A:
		return "LEFT-TO-RIGHT EMBEDDING", true
	case 0x202B:
		return "RIGHT-TO-LEFT EMBEDDING", true
	case 0x202C:
		return "POP DIRECTIONAL FORMATTING", true
	case 0x202D:
		return "LEFT-TO-RIGHT OVERRIDE", true
	case 0x202E:
		return "RIGHT-TO-LEFT OVERRIDE", true
	case 0x2028:
		return "LINE SEPARATOR", true
	case 0x2029:
		return "PARAGRAPH SEPARATOR", true
	case 0x2060:
		return "WORD JOINER", true
	case 0x2066:
		return "LEFT-TO-RIGHT ISOLATE", true
	case 0x2067:
		return "RIGHT-TO-LEFT ISOLATE", true
	case 0x2068:
		return "FIRST STRONG ISOLATE", true
	case 0x2069:
		return "POP DIRECTIONAL ISOLATE", true
	case 0xFEFF:
		return "ZERO WIDTH NO-BREAK SPACE", true
	}
	switch {
	case r >= 0x180B && r <= 0x180F:
		return "MONGOLIAN FREE VARIATION SELECTOR", true
	case r >= 0x2061 && r <= 0x2064:
		return "INVISIBLE OPERATOR", true
	case r >= 0x206A && r <= 0x206F:
		return "DEPRECATED FORMAT CHARACTER", true
	case r >= 0xFE00 && r <= 0xFE0F:
		return "VARIATION SELECTOR", true
	case r >= 0xFFF9 && r <= 0xFFFB:
		return "INTERLINEAR ANNOTATION", true
	case r >= 0x1BCA0 && r <= 0x1BCA3:
		return "SHORTHAND FORMAT CONTROL", true
	case r >= 0x1D173 && r <= 0x1D17A:
		return "MUSICAL SYMBOL FORMAT CONTROL", true
	case r >= 0xE0000 && r <= 0xE007F:
		return "TAG", true
	case r >= 0xE0100 && r <= 0xE01EF:
		return "VARIATION SELECTOR SUPPLEMENT", true
	}
	return "", false
}

// controlName names a control character: the ones that start terminal sequences by name.
func controlName(r rune) string {
	switch r {
	case 0x07:
		return "BELL"
	case 0x08:
		return "BACKSPACE"
	case 0x0D:
		return "CARRIAGE RETURN"
	case 0x1B:
		return "ESCAPE"
	case 0x7F:
		return "DELETE"
	case 0x90:
		return "DEVICE CONTROL STRING"
	case 0x9B:
		return "CONTROL SEQUENCE INTRODUCER"
	case 0x9D:
		return "OPERATING SYSTEM COMMAND"
	}
	return "CONTROL CHARACTER"
}

// joiningScripts use ZWJ/ZWNJ inside words as part of ordinary spelling
// (built on first use: unicode's tables are variables, so a package-level
// slice of them is copied at every process's start).
var joiningScripts = lazyval.New(buildJoiningScripts)

func buildJoiningScripts() []*unicode.RangeTable {
	return []*unicode.RangeTable{
		unicode.Arabic, unicode.Syriac, unicode.Nko, unicode.Mongolian, unicode.Devanagari,
		unicode.Bengali, unicode.Gurmukhi, unicode.Gujarati, unicode.Oriya, unicode.Tamil,
		unicode.Telugu, unicode.Kannada, unicode.Malayalam, unicode.Sinhala, unicode.Myanmar,
		unicode.Khmer, unicode.Tibetan,
	}
}

func isEmojiPart(r rune) bool {
	return r >= 0x1F000 && r <= 0x1FAFF || r >= 0x2600 && r <= 0x27BF || r >= 0x2B00 && r <= 0x2BFF ||
		r == 0xFE0F || r == 0x20E3 || r >= 0x1F3FB && r <= 0x1F3FF || r >= 0xE0020 && r <= 0xE007F ||
		r == 0x2640 || r == 0x2642 || r == 0x2695 || r == 0x2696 || r == 0x2708 || r == 0x2764
}

// rtlScripts are written right to left; a bidi mark beside their letters is ordinary
// typography.
var rtlScripts = lazyval.New(buildRTLScripts)

func buildRTLScripts() []*unicode.RangeTable {
	return []*unicode.RangeTable{unicode.Hebrew, unicode.Arabic, unicode.Syriac, unicode.Thaana, unicode.Nko}
}

// legitimate reports the invisible characters that ordinary text needs: ZWJ inside an
// emoji sequence (👩‍💻), ZWJ/ZWNJ between letters of a joining script, a BOM at the very
// start, a bidi mark (LRM, RLM, ALM) beside a right-to-left letter, the CR of a CRLF, and a
// variation selector right after a visible character (⚠️). Tag characters that spell a
// subdivision flag are handled by the caller.
func legitimate(s string, i, size int, r rune, prev rune) bool {
	next, _ := utf8.DecodeRuneInString(s[i+size:])
	switch r {
	case 0x0D:
		return next == '\n'
	case 0xFEFF:
		return i == 0
	case 0x200E, 0x200F, 0x61C:
		return prev >= 0 && unicode.In(prev, rtlScripts.Get()...) || unicode.In(next, rtlScripts.Get()...)
	case 0x200D:
		if isEmojiPart(prev) && isEmojiPart(next) {
			return true
		}
		fallthrough
	case 0x200C:
		return unicode.In(prev, joiningScripts.Get()...) || unicode.In(next, joiningScripts.Get()...) ||
			unicode.Is(unicode.Mn, prev) && unicode.In(next, joiningScripts.Get()...)
	}
	if r >= 0xFE00 && r <= 0xFE0F {
		_, prevHidden := hiddenName(prev)
		return prev > ' ' && !prevHidden && !unicode.IsSpace(prev)
	}
	return false
}

// hiddenChars flags runs of invisible characters: bidi controls (which can make text render
// differently from how it reads), zero-width characters in the middle of text, Unicode tag
// characters (which can carry a whole hidden ASCII message; Detail decodes it), runs of
// variation selectors (which can too) and control characters (a terminal obeys ESC and C1
// sequences; a reader sees nothing).
func hiddenChars(fs []Flag, s string) []Flag {
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
		if hidden && (isTag && i < flagEnd || !isTag && legitimate(s, i, size, r, prev)) {
			hidden = false
		}
		if hidden {
			if runStart < 0 || i != runEnd {
				flush()
				runStart = i
			}
			runEnd = i + size
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

// leadByte marks the first byte of every flagged character: the control bytes but tab
// and newline, and the UTF-8 lead bytes C2 (C1, soft hyphen), CD (U+034F), D8 (U+061C),
// E1, E2, E3, EF, F0 and F3. None is a continuation byte, so skipping to one never lands
// inside a character.
var leadByte = [256]bool{ // written out: a table built by a call runs at every process start (TestLeadByte)
	0x00: true, 0x01: true, 0x02: true, 0x03: true, 0x04: true, 0x05: true, 0x06: true,
	0x07: true, 0x08: true, 0x0B: true, 0x0C: true, 0x0D: true, 0x0E: true, 0x0F: true,
	0x10: true, 0x11: true, 0x12: true, 0x13: true, 0x14: true, 0x15: true, 0x16: true,
	0x17: true, 0x18: true, 0x19: true, 0x1A: true, 0x1B: true, 0x1C: true, 0x1D: true,
	0x1E: true, 0x1F: true, 0x7F: true, 0xC2: true, 0xCD: true, 0xD8: true, 0xE1: true,
	0xE2: true, 0xE3: true, 0xEF: true, 0xF0: true, 0xF3: true,
}

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
