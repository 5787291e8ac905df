package automem

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxDest bounds how far a link destination is read. Sibling file names are
// short (filesystems cap them at 255 bytes); the bound keeps link search
// linear on adversarial lines such as "](](](…".
const maxDest = 512

// codeSkipper skips inline code spans. Its memo records, per backtick-run
// length, the offset from which no closing run exists, so a line full of
// unmatched backticks costs one scan per run length, not one per run.
type codeSkipper struct {
	noClose [8]int // offset+1 from which no run of exactly n+1 backticks exists
}

// skip returns the offset just past the code span that starts with the
// backtick run at s[i], or just past the run when it has no closer.
func (c *codeSkipper) skip(s string, i int) int {
	n := 0
	for i+n < len(s) && s[i+n] == '`' {
		n++
	}
	j := i + n
	if n > len(c.noClose) {
		return j
	}
	if f := c.noClose[n-1]; f != 0 && j >= f-1 {
		return j
	}
	for k := j; k < len(s); {
		idx := strings.IndexByte(s[k:], '`')
		if idx < 0 {
			break
		}
		k += idx
		m := 0
		for k+m < len(s) && s[k+m] == '`' {
			m++
		}
		if m == n {
			return k + m
		}
		k += m
	}
	c.noClose[n-1] = j + 1
	return j
}

// leadingPointer reports whether an item's first-line content begins with a
// link to a sibling memory file — a markdown link or a back-ticked name,
// optionally after emoji, bold or italic markers — and returns the target.
func leadingPointer(s string) (string, bool) {
	i := skipDecoration(s)
	if i >= len(s) {
		return "", false
	}
	switch s[i] {
	case '[':
		var cs codeSkipper
		if dest, ok := linkAt(s, i, true, &cs); ok {
			return siblingMD(dest)
		}
	case '`':
		n := 0
		for i+n < len(s) && s[i+n] == '`' {
			n++
		}
		if k := strings.Index(s[i+n:], s[i:i+n]); k >= 0 {
			name := strings.TrimSpace(s[i+n : i+n+k])
			if !strings.ContainsAny(name, " \t") {
				return siblingMD(name)
			}
		}
	}
	return "", false
}

// skipDecoration skips what may precede a pointer's link: spaces, emphasis
// markers and emoji (symbols, variation selectors, joiners, keycaps).
func skipDecoration(s string) int {
	i := 0
	for i < len(s) {
		c := s[i]
		if c == ' ' || c == '\t' || c == '*' || c == '_' {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			return i
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || !(unicode.In(r, unicode.So, unicode.Sk) || r == 0xFE0E || r == 0xFE0F || r == 0x200D || r == 0x20E3) {
			return i
		}
		i += size
	}
	return i
}

// linkAt parses an inline link whose "[" is s[i] and returns its raw
// destination. The link text may contain balanced brackets and code spans
// (`[$ x: result[["error"]]; …](f.md)`). With lenient set, text whose
// brackets never balance is ended by the first "](" that opens a valid
// destination.
func linkAt(s string, i int, lenient bool, cs *codeSkipper) (string, bool) {
	depth := 0
	for j := i; j < len(s); {
		for j < len(s) && !linkTextSpecial[s[j]] {
			j++
		}
		if j >= len(s) {
			break
		}
		switch s[j] {
		case '\\':
			j += 2
			continue
		case '`':
			j = cs.skip(s, j)
			continue
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				if j+1 < len(s) && s[j+1] == '(' {
					return destAt(s, j+2)
				}
				return "", false
			}
		}
		j++
	}
	if !lenient {
		return "", false
	}
	for k := i + 1; ; {
		idx := strings.Index(s[k:], "](")
		if idx < 0 {
			return "", false
		}
		k += idx
		if dest, ok := destAt(s, k+2); ok {
			return dest, true
		}
		k += 2
	}
}

// linkTextSpecial marks the bytes linkAt must look at inside link text.
var linkTextSpecial = [256]bool{'\\': true, '`': true, '[': true, ']': true}

// destStop marks the bytes that end or complicate a plain destination.
var destStop = [256]bool{'\\': true, '(': true, ')': true, ' ': true, '\t': true}

// destAt parses a link destination and optional title starting at s[i]
// (just after "(") up to the closing ")".
func destAt(s string, i int) (string, bool) {
	limit := min(len(s), i+maxDest)
	i = skipSpace(s[:limit], i)
	if i >= limit {
		return "", false
	}
	var dest string
	if s[i] == '<' {
		k := strings.IndexByte(s[i+1:limit], '>')
		if k < 0 {
			return "", false
		}
		dest = s[i+1 : i+1+k]
		i += k + 2
	} else {
		start, depth := i, 0
	loop:
		for ; i < limit; i++ {
			if !destStop[s[i]] {
				continue
			}
			switch s[i] {
			case '\\':
				i++
			case '(':
				depth++
				if depth > 32 { // CommonMark's own nesting limit
					return "", false
				}
			case ')':
				if depth == 0 {
					break loop
				}
				depth--
			case ' ', '\t':
				break loop
			}
		}
		if i >= limit {
			return "", false
		}
		dest = s[start:i]
	}
	i = skipSpace(s[:limit], i)
	if i < limit && (s[i] == '"' || s[i] == '\'' || s[i] == '(') {
		closer := s[i]
		if closer == '(' {
			closer = ')'
		}
		k := strings.IndexByte(s[i+1:limit], closer)
		if k < 0 {
			return "", false
		}
		i = skipSpace(s[:limit], i+k+2)
	}
	if i >= limit || s[i] != ')' {
		return "", false
	}
	return dest, true
}

// siblingMD reports whether a link destination names a memory file in the
// same directory: a ".md" name with no scheme, no drive and no "/" beyond a
// leading "./". It returns the name without "./" and without "#fragment".
func siblingMD(dest string) (string, bool) {
	if k := strings.IndexByte(dest, '#'); k >= 0 {
		dest = dest[:k]
	}
	for strings.HasPrefix(dest, "./") {
		dest = dest[2:]
	}
	if len(dest) <= len(".md") || !strings.EqualFold(dest[len(dest)-3:], ".md") {
		return "", false
	}
	for i := 0; i < len(dest); i++ {
		if c := dest[i]; c == '/' || c == '\\' || c == ':' {
			return "", false
		}
	}
	return dest, true
}

// firstSiblingLink returns the target of the first markdown link in s that
// points to a sibling memory file, ignoring code spans; "" if none. Brackets
// are matched with a stack in one pass, so the search is linear even on a
// line of a hundred thousand "[".
func firstSiblingLink(s string) string {
	if !strings.Contains(s, "](") {
		return ""
	}
	var cs codeSkipper
	var stack [16]int
	open := stack[:0] // positions of unmatched "["
	for i := 0; i < len(s); {
		switch s[i] {
		case '\\':
			i += 2
			continue
		case '`':
			i = cs.skip(s, i)
			continue
		case '[':
			open = append(open, i)
		case ']':
			if len(open) > 0 {
				open = open[:len(open)-1]
				if i+1 < len(s) && s[i+1] == '(' {
					if dest, ok := destAt(s, i+2); ok {
						if name, ok := siblingMD(dest); ok {
							return name
						}
					}
				}
			}
		}
		i++
	}
	return ""
}
