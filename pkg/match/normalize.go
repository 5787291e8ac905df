package match

import (
	"unicode"
	"unicode/utf8"
)

// Normalize maps text to its dedup form. The steps, in this order, are:
//
//  1. decode UTF-8 (every invalid byte becomes U+FFFD, exactly as a []rune
//     conversion does, so the fuzzy metric sees the same runes), lower-case
//     each rune (unicode.ToLower) and drop every '*' and '`';
//  2. drop each run of '_' unless it is a single '_' between two letters or
//     digits (snake_case identifiers keep their underscore: CommonMark does not
//     treat intraword '_' as emphasis), then drop each run of two or more '~'
//     (strikethrough and ~~~ fences; a lone '~' as in ~/.claude stays);
//  3. replace each HTML comment "<!--" … "-->" (it may span lines) by a space;
//     this removes our own <!-- intermem:… --> markers and other tools'
//     markers such as <!-- rule:232 -->. An unterminated "<!--" is kept as
//     text: treating it as a comment to the end would make "a <!-- b" and
//     "a <!-- c" exact duplicates, and exact duplicates are skipped silently;
//  4. turn each link [text](url) into " text  url " (the four brackets become
//     spaces); text holds no '[' or ']', url no whitespace, brackets or
//     parentheses;
//  5. on every line (split at \n and \r, so CRLF is fine), strip leading
//     whitespace and block markers, repeatedly: '-', '+' (and '*', already
//     gone) bullets, "1." / "1)" numbering, '#'…'######' headings — each only
//     when followed by whitespace or the end of the line — and '>' quotes;
//  6. collapse every run of Unicode whitespace (line breaks included) to one
//     space, then repeatedly trim trailing spaces and '.', ';', ':' and strip
//     leading markers again until neither changes anything.
//
// Every replacement that removes structure inserts a space rather than
// joining its neighbours, and the only deletions that join neighbours (step 1
// and 2) run first, so no later step can create a construct an earlier step
// would have removed: Normalize is idempotent (FuzzNormalize checks it). Each
// step is one left-to-right pass, so the whole is linear in len(s), and it
// never panics, whatever the bytes.
func Normalize(s string) string {
	return string(appendNormalized(nil, s))
}

// Key is the exact-dedup key of s: the 64-bit FNV-1a hash of the UTF-8 bytes
// of Normalize(s).
//
// FNV-1a rather than a truncated SHA-256 because Key is an in-memory lookup
// key, never persisted and never an identity (entry identity is the full
// SHA-256 kept elsewhere): it must be fast and allocation-free, and its 64
// bits make an accidental collision among, say, 10^4 existing statements and
// 10^3 candidates about 10^7/2^64 ≈ 5·10^-13 likely. A crafted collision could
// only make the crafted text itself be skipped, which is no security concern.
func Key(s string) uint64 {
	return keyOfRunes(appendNormalized(nil, s))
}

const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
)

// keyOfRunes hashes the UTF-8 encoding of rs with FNV-1a without building
// the string.
func keyOfRunes(rs []rune) uint64 {
	h := uint64(fnvOffset64)
	var buf [utf8.UTFMax]byte
	for _, r := range rs {
		if r < utf8.RuneSelf {
			h ^= uint64(r)
			h *= fnvPrime64
			continue
		}
		n := utf8.EncodeRune(buf[:], r)
		for _, b := range buf[:n] {
			h ^= uint64(b)
			h *= fnvPrime64
		}
	}
	return h
}

// appendNormalized appends the runes of Normalize(s) to dst[:0]'s backing
// array and returns the result; it reuses dst's capacity so the index can
// normalize thousands of statements without allocating per statement.
func appendNormalized(dst []rune, s string) []rune {
	b := dst[:0]
	// Step 1: decode, lower-case, drop '*' and '`', and note which of the
	// characters the later steps act on occur: a step whose trigger is
	// absent would change nothing, and most statements have no '~', '<' or
	// '[' at all.
	var underscore, tilde, lt, bracket bool
	for _, r := range s { // invalid bytes decode as utf8.RuneError
		switch {
		case r >= 'a' && r <= 'z' || r == ' ':
		case r == '*' || r == '`':
			continue
		case r >= 'A' && r <= 'Z':
			r += 'a' - 'A'
		case r == '_':
			underscore = true
		case r == '~':
			tilde = true
		case r == '<':
			lt = true
		case r == '[':
			bracket = true
		case r >= utf8.RuneSelf:
			r = unicode.ToLower(r)
		}
		b = append(b, r)
	}
	if underscore {
		b = dropUnderscores(b)
	}
	if tilde {
		b = dropTildeRuns(b)
	}
	if lt {
		b = blankComments(b)
	}
	if bracket {
		blankLinks(b)
	}
	b = stripLinesAndCollapse(b)
	return trimEnds(b)
}

func isWord(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r >= 'A' && r <= 'Z'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// asciiSpace marks the ASCII runes unicode.IsSpace accepts.
var asciiSpace = [utf8.RuneSelf]bool{' ': true, '\t': true, '\n': true, '\r': true, '\v': true, '\f': true}

// isSpace is unicode.IsSpace with an inlinable ASCII path.
func isSpace(r rune) bool {
	if uint32(r) < utf8.RuneSelf {
		return asciiSpace[r]
	}
	return unicode.IsSpace(r)
}

// dropUnderscores removes every run of '_' except a single '_' between two
// word runes. Non-underscore runes are all kept, so a run's neighbours in
// the output are its neighbours in the input.
func dropUnderscores(b []rune) []rune {
	w := 0
	for i := 0; i < len(b); {
		if b[i] != '_' {
			b[w] = b[i]
			w++
			i++
			continue
		}
		j := i
		for j < len(b) && b[j] == '_' {
			j++
		}
		if j-i == 1 && w > 0 && isWord(b[w-1]) && j < len(b) && isWord(b[j]) {
			b[w] = '_'
			w++
		}
		i = j
	}
	return b[:w]
}

// dropTildeRuns removes every run of two or more '~'.
func dropTildeRuns(b []rune) []rune {
	w := 0
	for i := 0; i < len(b); {
		if b[i] != '~' {
			b[w] = b[i]
			w++
			i++
			continue
		}
		j := i
		for j < len(b) && b[j] == '~' {
			j++
		}
		if j-i == 1 {
			b[w] = '~'
			w++
		}
		i = j
	}
	return b[:w]
}

// blankComments replaces each "<!--" … "-->" by one space. The closing
// "-->" must start after the opening "<!--" ends. Once an opening has no
// closing, no later opening can have one either, so the scan stops there and
// the rest is kept as text.
func blankComments(b []rune) []rune {
	w := 0
	i := 0
	for i < len(b) {
		if b[i] == '<' && i+3 < len(b) && b[i+1] == '!' && b[i+2] == '-' && b[i+3] == '-' {
			end := -1
			for k := i + 4; k+2 < len(b); k++ {
				if b[k] == '-' && b[k+1] == '-' && b[k+2] == '>' {
					end = k + 3
					break
				}
			}
			if end < 0 {
				break
			}
			b[w] = ' '
			w++
			i = end
			continue
		}
		b[w] = b[i]
		w++
		i++
	}
	for ; i < len(b); i++ {
		b[w] = b[i]
		w++
	}
	return b[:w]
}

// blankLinks turns each [text](url) into spaces around text and url, in
// place. Because brackets only ever become spaces, positions never move and
// the scan decides every link on the final text: an outer "[a [b](c) d](e)"
// is recognized once the inner link has been blanked, so the result holds
// no link and a second pass changes nothing.
func blankLinks(b []rune) {
	var opens []int // '[' not yet followed by any bracket
	closeAt, parenAt := -1, -1
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case parenAt >= 0: // inside a candidate url
			if c == ')' {
				o := opens[len(opens)-1]
				opens = opens[:len(opens)-1]
				b[o], b[closeAt], b[parenAt], b[i] = ' ', ' ', ' ', ' '
				closeAt, parenAt = -1, -1
				continue
			}
			if !isSpace(c) && c != '(' && c != '[' && c != ']' {
				continue
			}
			// Not a link after all: the ']' stays, so every open '[' before
			// it now has a bracket inside its text.
			opens = opens[:0]
			closeAt, parenAt = -1, -1
		case closeAt >= 0: // right after a ']' that closes an open '['
			if c == '(' {
				parenAt = i
				continue
			}
			opens = opens[:0]
			closeAt = -1
		}
		switch c {
		case '[':
			opens = append(opens, i)
		case ']':
			if len(opens) > 0 {
				closeAt = i
			}
		}
	}
}

// markerLen reports the length of the block marker at b[i:] (a bullet,
// numbering, heading or quote), or 0. end is the end of the current line.
func markerLen(b []rune, i, end int) int {
	atBreak := func(k int) bool { return k >= end || isSpace(b[k]) }
	switch c := b[i]; {
	case c == '>':
		return 1
	case c == '-' || c == '+' || c == '*':
		if atBreak(i + 1) {
			return 1
		}
	case c == '#':
		k := i
		for k < end && b[k] == '#' {
			k++
		}
		if k-i <= 6 && atBreak(k) {
			return k - i
		}
	case c >= '0' && c <= '9':
		k := i
		for k < end && k-i < 10 && b[k] >= '0' && b[k] <= '9' {
			k++
		}
		if k-i <= 9 && k < end && (b[k] == '.' || b[k] == ')') && atBreak(k+1) {
			return k + 1 - i
		}
	}
	return 0
}

// skipMarkers returns the index of the first rune of b[i:end] that is
// neither whitespace nor part of a leading block marker.
func skipMarkers(b []rune, i, end int) int {
	for i < end {
		if isSpace(b[i]) {
			i++
			continue
		}
		n := markerLen(b, i, end)
		if n == 0 {
			break
		}
		i += n
	}
	return i
}

// stripLinesAndCollapse strips leading markers on every line and collapses
// whitespace runs (line breaks included) to single spaces, in place. The
// write index never passes the read index, so one buffer suffices.
func stripLinesAndCollapse(b []rune) []rune {
	w := 0
	pendingSpace := false
	for i := 0; i < len(b); {
		end := i
		for end < len(b) && b[end] != '\n' && b[end] != '\r' {
			end++
		}
		for k := skipMarkers(b, i, end); k < end; k++ {
			if isSpace(b[k]) {
				pendingSpace = w > 0
				continue
			}
			if pendingSpace {
				b[w] = ' '
				w++
				pendingSpace = false
			}
			b[w] = b[k]
			w++
		}
		pendingSpace = w > 0
		i = end + 1
	}
	return b[:w]
}

// trimEnds trims trailing spaces and sentence punctuation and leading
// markers until neither changes anything: trimming "1." alone leaves "1",
// and stripping a marker can empty the string, so the two must alternate.
// Each round removes at least one rune or ends, so the total is linear.
func trimEnds(b []rune) []rune {
	for {
		n := len(b)
		for len(b) > 0 {
			switch b[len(b)-1] {
			case ' ', '.', ';', ':':
				b = b[:len(b)-1]
				continue
			}
			break
		}
		if k := skipMarkers(b, 0, len(b)); k > 0 {
			b = b[:copy(b, b[k:])] // keep b's start so callers can reuse it
		}
		if len(b) == n {
			return b
		}
	}
}
