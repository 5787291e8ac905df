package automem

import "bytes"

// line is one line of a file: [start,end) includes the terminator, text
// ends before the "\n" and any "\r" right before it ("\r\n", or the
// "\r\r\n" of a file converted twice). Only "\n" ends a line, as in
// Claude Code's own split; a "\r" elsewhere is ordinary text.
type line struct {
	start, text, end int // text is the offset where the line's text ends
}

var bom = []byte{0xEF, 0xBB, 0xBF}

// splitLines returns the lines of content. A leading UTF-8 BOM is not part
// of line 1, so no entry or heading range ever includes it and pruning the
// first entry keeps it.
func splitLines(content []byte) []line {
	start := 0
	if bytes.HasPrefix(content, bom) {
		start = len(bom)
	}
	n := bytes.Count(content[start:], []byte{'\n'})
	if len(content) > 0 && content[len(content)-1] != '\n' {
		n++
	}
	lines := make([]line, 0, n)
	for start < len(content) {
		i := bytes.IndexByte(content[start:], '\n')
		if i < 0 {
			lines = append(lines, line{start, len(content), len(content)})
			break
		}
		end := start + i + 1
		text := start + i
		for text > start && content[text-1] == '\r' {
			text--
		}
		lines = append(lines, line{start, text, end})
		start = end
	}
	return lines
}

// isBlankText reports whether s holds only spaces and tabs.
func isBlankText(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != ' ' && s[i] != '\t' {
			return false
		}
	}
	return true
}

// indentOf returns the indentation of s in columns (a tab advances to the
// next multiple of 4, as in CommonMark) and the byte offset of the first
// character that is not a space or tab.
func indentOf(s string) (cols, off int) {
	for off < len(s) {
		switch s[off] {
		case ' ':
			cols++
		case '\t':
			cols += 4 - cols%4
		default:
			return cols, off
		}
		off++
	}
	return cols, off
}

// blockKind classifies a non-blank line by its first characters.
type blockKind uint8

const (
	kText     blockKind = iota
	kHeading            // "#".."######" then space or end
	kItem               // "-", "*", "+", "1." or "1)" then space or end
	kFence              // ``` or ~~~ (3+)
	kThematic           // ---, ***, ___ (spaces allowed)
	kComment            // "<!--"
	kQuote              // ">"
	kTable              // "|"
)

// lineInfo is what classify learns about a line.
type lineInfo struct {
	kind    blockKind
	indent  int  // columns
	off     int  // byte offset of the first non-space character
	level   int  // heading level
	content int  // kItem: byte offset of the item's content after marker and spaces
	fence   byte // kFence: '`' or '~'
	flen    int  // kFence: length of the fence run
}

// classify inspects one line's text (without terminator). Headings, thematic
// breaks, comments, quotes and tables must be indented at most 3 columns;
// list items and fences are recognised at any indentation, because memory
// files nest them freely.
func classify(s string) lineInfo {
	cols, off := indentOf(s)
	li := lineInfo{kind: kText, indent: cols, off: off}
	if off >= len(s) {
		return li
	}
	c := s[off]
	shallow := cols <= 3
	switch c {
	case '#':
		if !shallow {
			return li
		}
		n := 0
		for off+n < len(s) && s[off+n] == '#' {
			n++
		}
		if n <= 6 && (off+n == len(s) || s[off+n] == ' ' || s[off+n] == '\t') {
			li.kind, li.level = kHeading, n
		}
		return li
	case '`', '~':
		n := 0
		for off+n < len(s) && s[off+n] == c {
			n++
		}
		if n >= 3 && (c == '~' || !containsByte(s[off+n:], '`')) {
			li.kind, li.fence, li.flen = kFence, c, n
		}
		return li
	case '<':
		if shallow && len(s)-off >= 4 && s[off:off+4] == "<!--" {
			li.kind = kComment
		}
		return li
	case '>':
		if shallow {
			li.kind = kQuote
		}
		return li
	case '|':
		if shallow {
			li.kind = kTable
		}
		return li
	case '-', '*', '_', '+':
		if shallow && c != '+' && isThematic(s[off:], c) {
			li.kind = kThematic
			return li
		}
		if c == '_' {
			return li
		}
		if off+1 == len(s) || s[off+1] == ' ' || s[off+1] == '\t' {
			li.kind, li.content = kItem, skipSpace(s, off+1)
		}
		return li
	}
	if c >= '0' && c <= '9' {
		n := 0
		for off+n < len(s) && n < 10 && s[off+n] >= '0' && s[off+n] <= '9' {
			n++
		}
		if n <= 9 && off+n < len(s) && (s[off+n] == '.' || s[off+n] == ')') {
			m := off + n + 1
			if m == len(s) || s[m] == ' ' || s[m] == '\t' {
				li.kind, li.content = kItem, skipSpace(s, m)
			}
		}
	}
	return li
}

// isThematic reports whether s is a thematic break made of c: three or more
// c with only spaces and tabs between them.
func isThematic(s string, c byte) bool {
	n := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case c:
			n++
		case ' ', '\t':
		default:
			return false
		}
	}
	return n >= 3
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

func containsByte(s string, c byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return true
		}
	}
	return false
}

// isFenceCloser reports whether s closes a fence of char c and length at
// least n: the run, then only spaces and tabs. Indentation is not limited
// (a closer less or more indented than its opener still closes it), which
// keeps fence matching a pure function of the line and so linear.
func isFenceCloser(s string, c byte, n int) bool {
	_, off := indentOf(s)
	m := 0
	for off+m < len(s) && s[off+m] == c {
		m++
	}
	return m >= n && isBlankText(s[off+m:])
}
