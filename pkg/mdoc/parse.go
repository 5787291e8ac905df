package mdoc

import (
	"bytes"
	"sort"
)

// Doc is a parsed markdown document. Parse never copies or modifies Content;
// every edit returns a new byte slice and leaves the Doc untouched.
type Doc struct {
	Content      []byte
	EOL          string // dominant line ending: "\r\n" or "\n" (default "\n")
	FinalNewline bool   // Content ends with a line terminator
	Sections     []Section
	Blocks       []Block // managed regions of other tools, where we must never insert

	lines  []line
	items  []listItem
	fences []fence
}

// Section is a heading and the content it governs. Sections[0] is always a
// synthetic level-0 preamble covering the content before the first heading
// (it may be empty).
type Section struct {
	Level   int    // 1..6; 0 for the preamble
	Title   string // heading text without "#"s, closing "#"s, surrounding space and trailing HTML comments
	Line    int    // 1-based line of the heading (1 for the preamble)
	Start   int    // byte offset of the heading line (0 for the preamble)
	BodyEnd int    // just past the last non-blank line of the section's own content (before its first subsection), or past the heading line when there is none
	End     int    // where the next heading of the same or a higher level starts, or len(Content)
}

// Block is a region managed by another tool, delimited by an opener and a
// closer line, e.g. "<!-- OPENSPEC:START -->" … "<!-- OPENSPEC:END -->".
// Start is the offset of the opener line, End is just past the closer line
// (its terminator included). Blocks may nest.
type Block struct {
	Name       string
	Start, End int
}

type lineKind uint8

const (
	kindText    lineKind = iota // paragraph text, blockquote, table row, indented code
	kindBlank                   // only spaces and tabs
	kindHeading                 // an ATX heading that starts a section (not inside a list item)
	kindFence                   // part of a fenced code block: opener, content or closer
	kindHTML                    // starts with '<' (comment, tag)
	kindBreak                   // thematic break
)

// line is one line of the document. end excludes the terminator ("\n" or
// "\r\n"); next is the offset of the following line (len(Content) for an
// unterminated last line).
type line struct {
	start, end, next int
	ws               int // offset of the first non-whitespace byte (== end when blank)
	indent           int // columns of leading whitespace, tabs expanded to stops of 4
	kind             lineKind
	level            int8  // heading level for kindHeading
	item             int32 // innermost list item containing the line, or -1
	itemStart        bool  // the line opens list item `item`
	openerLike       bool  // looks like a fence opener but found no closer: plain text
}

// listItem is a list item; first and last are the indexes of its first and
// last non-blank lines.
type listItem struct {
	first, last int
	contentCol  int
	parent      int
}

type fence struct{ open, close int } // line indexes, inclusive

// Parse parses content. It never panics and never fails: anything it does not
// understand is paragraph text.
func Parse(content []byte) *Doc {
	d := &Doc{Content: content, EOL: "\n"}
	d.splitLines()
	d.scanContainers()
	d.findBlocks()
	d.buildSections()
	return d
}

func (d *Doc) splitLines() {
	c := d.Content
	d.FinalNewline = len(c) > 0 && c[len(c)-1] == '\n'
	crlf, lf := 0, 0
	n := bytes.Count(c, []byte{'\n'}) + 1
	d.lines = make([]line, 0, n)
	for start := 0; start < len(c); {
		i := bytes.IndexByte(c[start:], '\n')
		var end, next int
		if i < 0 {
			end, next = len(c), len(c)
		} else {
			end, next = start+i, start+i+1
			if end > start && c[end-1] == '\r' {
				end--
				crlf++
			} else {
				lf++
			}
		}
		l := line{start: start, end: end, next: next, item: -1}
		col, ws := 0, start
		for ; ws < end; ws++ {
			switch c[ws] {
			case ' ':
				col++
				continue
			case '\t':
				col += 4 - col%4
				continue
			}
			break
		}
		l.ws, l.indent = ws, col
		if isBlank(c[ws:end]) {
			l.kind, l.ws = kindBlank, end
		}
		d.lines = append(d.lines, l)
		start = next
	}
	if crlf > lf {
		d.EOL = "\r\n"
	}
}

// isBlank reports whether b holds only whitespace. A stray '\r' counts as
// whitespace so that a CRLF line and its LF twin classify alike.
func isBlank(b []byte) bool {
	for _, ch := range b {
		if ch != ' ' && ch != '\t' && ch != '\r' && ch != '\f' && ch != '\v' {
			return false
		}
	}
	return true
}

// text returns the bytes of line i from its first non-blank byte.
func (d *Doc) text(i int) []byte { return d.Content[d.lines[i].ws:d.lines[i].end] }

// scanContainers classifies every line, tracking list items the way
// CommonMark does (content column, lazy continuation) and fenced code blocks
// with one deliberate deviation: a fence that finds no closing line before
// its container ends is not a fence at all, so it cannot swallow the rest of
// the document.
func (d *Doc) scanContainers() {
	var (
		stack    []int // open list items, innermost last
		lastPara bool  // previous line was paragraph text (enables lazy continuation)
		memo     = fenceMemo{}
	)
	base := func() int {
		if len(stack) == 0 {
			return 0
		}
		return d.items[stack[len(stack)-1]].contentCol
	}
	top := func() int32 {
		if len(stack) == 0 {
			return -1
		}
		return int32(stack[len(stack)-1])
	}
	for i := 0; i < len(d.lines); i++ {
		l := &d.lines[i]
		if l.kind == kindBlank {
			lastPara = false
			continue
		}
		s := d.text(i)
		// How many open items does this line continue by indentation?
		matched := 0
		for matched < len(stack) && l.indent >= d.items[stack[matched]].contentCol {
			matched++
		}
		if matched < len(stack) {
			mbase := 0
			if matched > 0 {
				mbase = d.items[stack[matched-1]].contentCol
			}
			// The paragraph being continued is inside an unmatched item, so
			// anything that can start a block outside it does (even an
			// ordered item not starting at 1, as in commonmark.js).
			if lastPara && !(l.indent-mbase <= 3 && startsBlock(s)) {
				// Lazy continuation: the paragraph goes on, every container stays open.
				l.item = top()
				continue
			}
			stack = stack[:matched]
			lastPara = false
		}
		rel := l.indent - base()
		if rel >= 4 {
			// Indented code, or paragraph continuation after text.
			l.item = top()
			continue
		}
		if r := fenceRunOf(s); r.n > 0 {
			if j := d.findCloser(i, base(), r, &memo); j > 0 {
				d.markFence(i, j, top())
				i = j
				lastPara = false
				continue
			}
			l.openerLike = true
			l.item = top()
			lastPara = true
			continue
		}
		switch {
		case atxLevel(s) > 0:
			if len(stack) == 0 {
				l.kind, l.level = kindHeading, int8(atxLevel(s))
			}
			l.item = top()
			lastPara = false
			continue
		case isBreak(s):
			l.kind = kindBreak
			l.item = top()
			lastPara = false
			continue
		}
		if m := listMarker(s); m > 0 && !(lastPara && !canInterrupt(s, m)) {
			i = d.openItems(i, &stack, &lastPara, &memo)
			continue
		}
		l.item = top()
		if s[0] == '<' {
			l.kind = kindHTML
			lastPara = false
			continue
		}
		lastPara = true
	}
	// Extend every item over its last non-blank line (children included).
	for i := range d.lines {
		if d.lines[i].kind == kindBlank {
			continue
		}
		for t := int(d.lines[i].item); t >= 0; t = d.items[t].parent {
			if i > d.items[t].last {
				d.items[t].last = i
			}
		}
	}
}

// openItems opens the list item (or items, for "- - x") that start on line i
// and classifies what follows the marker. It returns the index of the last
// line it consumed (a fence opened on the item's first line runs further).
func (d *Doc) openItems(i int, stack *[]int, lastPara *bool, memo *fenceMemo) int {
	l := &d.lines[i]
	c := d.Content
	pos, col := l.ws, l.indent
	for {
		m := listMarker(c[pos:l.end])
		pos += m
		col += m
		// Spaces after the marker decide the content column (1..4; 5+ means
		// indented code, which counts as one).
		sp, p := 0, pos
		for p < l.end && (c[p] == ' ' || c[p] == '\t') {
			if c[p] == '\t' {
				sp += 4 - (col+sp)%4
			} else {
				sp++
			}
			p++
		}
		cc := col + sp
		if p == l.end || sp > 4 {
			cc = col + 1
			if p != l.end {
				p = pos + 1
			}
		}
		parent := -1
		if len(*stack) > 0 {
			parent = (*stack)[len(*stack)-1]
		}
		d.items = append(d.items, listItem{first: i, last: i, contentCol: cc, parent: parent})
		t := len(d.items) - 1
		*stack = append(*stack, t)
		l.item, l.itemStart = int32(t), true
		rest := c[p:l.end]
		pos, col = p, cc
		if len(rest) == 0 || sp > 4 {
			*lastPara = false
			return i
		}
		if r := fenceRunOf(rest); r.n > 0 {
			if j := d.findCloser(i, cc, r, memo); j > 0 {
				d.markFence(i, j, int32(t))
				*lastPara = false
				return j
			}
			l.openerLike = true
			*lastPara = true
			return i
		}
		if listMarker(rest) > 0 && !isBreak(rest) {
			continue // "- - x": a nested item on the same line
		}
		*lastPara = atxLevel(rest) == 0 && !isBreak(rest) && rest[0] != '<'
		return i
	}
}

func (d *Doc) markFence(open, close int, item int32) {
	d.fences = append(d.fences, fence{open, close})
	for k := open; k <= close; k++ {
		d.lines[k].kind = kindFence
		d.lines[k].item = item
	}
}

// fenceRun describes the delimiter run of a fence opener.
type fenceRun struct {
	ch byte
	n  int
}

// fenceRunOf reports the opener run of s (which starts at its first
// non-blank byte): three or more backticks or tildes; a backtick opener's
// info string may not contain a backtick.
func fenceRunOf(s []byte) fenceRun {
	if len(s) < 3 || (s[0] != '`' && s[0] != '~') {
		return fenceRun{}
	}
	n := 0
	for n < len(s) && s[n] == s[0] {
		n++
	}
	if n < 3 || (s[0] == '`' && bytes.IndexByte(s[n:], '`') >= 0) {
		return fenceRun{}
	}
	return fenceRun{s[0], n}
}

// fenceMemo remembers failed closer searches so that a document full of
// unclosed openers is still scanned in linear time: a search for a closer of
// char ch and length >= n from line `from` that stopped at line `stop` without
// success fails again for any later opener before `stop` with the same char,
// container column and a length >= n.
type fenceMemo map[[2]int]struct{ from, stop, n int }

// findCloser returns the line index of the closing fence for the opener on
// line i, or -1. The opener sits in a container whose content starts at column
// base; a non-blank line indented less than base ends the container and with
// it any chance of closing.
func (d *Doc) findCloser(i, base int, r fenceRun, memo *fenceMemo) int {
	key := [2]int{int(r.ch), base}
	if m, ok := (*memo)[key]; ok && i > m.from && i < m.stop && r.n >= m.n {
		return -1
	}
	for j := i + 1; j < len(d.lines); j++ {
		lj := &d.lines[j]
		if lj.kind == kindBlank {
			continue
		}
		if lj.indent < base {
			(*memo)[key] = struct{ from, stop, n int }{i, j, r.n}
			return -1
		}
		if lj.indent-base > 3 {
			continue
		}
		s := d.text(j)
		k := 0
		for k < len(s) && s[k] == r.ch {
			k++
		}
		if k >= r.n && isBlank(s[k:]) {
			return j
		}
	}
	(*memo)[key] = struct{ from, stop, n int }{i, len(d.lines), r.n}
	return -1
}

// atxLevel returns the level of an ATX heading starting at s, or 0.
func atxLevel(s []byte) int {
	n := 0
	for n < len(s) && s[n] == '#' {
		n++
	}
	if n == 0 || n > 6 {
		return 0
	}
	if n < len(s) && s[n] != ' ' && s[n] != '\t' {
		return 0
	}
	return n
}

// isBreak reports a thematic break: three or more of the same '-', '*' or '_'
// with only spaces or tabs between them.
func isBreak(s []byte) bool {
	if len(s) == 0 || (s[0] != '-' && s[0] != '*' && s[0] != '_') {
		return false
	}
	n := 0
	for _, ch := range s {
		switch ch {
		case s[0]:
			n++
		case ' ', '\t', '\r':
		default:
			return false
		}
	}
	return n >= 3
}

// listMarker returns the width of the list marker at the start of s ("-",
// "*", "+", or 1-9 digits followed by "." or ")"), which must be followed by
// whitespace or the end of the line; 0 if there is none.
func listMarker(s []byte) int {
	if len(s) == 0 {
		return 0
	}
	n := 0
	switch s[0] {
	case '-', '*', '+':
		n = 1
	default:
		for n < len(s) && n < 10 && s[n] >= '0' && s[n] <= '9' {
			n++
		}
		if n == 0 || n > 9 || n >= len(s) || (s[n] != '.' && s[n] != ')') {
			return 0
		}
		n++
	}
	if n < len(s) && s[n] != ' ' && s[n] != '\t' {
		return 0
	}
	return n
}

// canInterrupt reports whether the list item at s (marker width m) may
// interrupt a paragraph: it must not be empty, and an ordered one must start
// at 1 (CommonMark).
func canInterrupt(s []byte, m int) bool {
	if isBlank(s[m:]) {
		return false
	}
	if s[0] >= '0' && s[0] <= '9' {
		return string(bytes.TrimLeft(s[:m-1], "0")) == "1"
	}
	return true
}

// startsBlock reports whether s (at its first non-blank byte) opens a block
// outside the paragraph a lazy line would continue. Any line starting with
// '<' counts, so that a managed-block opener is never swallowed.
func startsBlock(s []byte) bool {
	if fenceRunOf(s).n > 0 || atxLevel(s) > 0 || isBreak(s) || listMarker(s) > 0 {
		return true
	}
	return s[0] == '<' || s[0] == '>'
}

func (d *Doc) buildSections() {
	pre := Section{Level: 0, Line: 1, Start: 0, BodyEnd: 0, End: len(d.Content)}
	d.Sections = append(d.Sections[:0], pre)
	for i := range d.lines {
		l := &d.lines[i]
		if l.kind != kindHeading {
			continue
		}
		d.Sections = append(d.Sections, Section{
			Level: int(l.level),
			Title: headingTitle(d.text(i)),
			Line:  i + 1,
			Start: l.start,
		})
	}
	// Own content runs from the end of the heading line to the next heading of
	// any level; End runs to the next heading of the same or a higher level.
	for k := range d.Sections {
		s := &d.Sections[k]
		from := 0
		if k > 0 {
			from = s.Line // index of the line after the heading
		}
		ownEnd := len(d.lines)
		if k+1 < len(d.Sections) {
			ownEnd = d.Sections[k+1].Line - 1
		}
		s.BodyEnd = s.Start
		if k > 0 {
			s.BodyEnd = d.lines[s.Line-1].next
		}
		for i := ownEnd - 1; i >= from; i-- {
			if d.lines[i].kind != kindBlank {
				s.BodyEnd = d.lines[i].next
				break
			}
		}
		s.End = len(d.Content)
		for j := k + 1; j < len(d.Sections); j++ {
			if k == 0 || d.Sections[j].Level <= s.Level {
				s.End = d.Sections[j].Start
				break
			}
		}
	}
}

// headingTitle extracts the title of the ATX heading s: the text after the
// opening "#"s, without trailing HTML comments (intermem markers and the
// like), the optional closing "#" sequence and surrounding whitespace.
func headingTitle(s []byte) string {
	n := atxLevel(s)
	t := bytes.TrimSpace(s[n:])
	for bytes.HasSuffix(t, []byte("-->")) {
		k := bytes.LastIndex(t, []byte("<!--"))
		if k < 0 {
			break
		}
		t = bytes.TrimSpace(t[:k])
	}
	// Closing sequence: "#"s preceded by a space (or making up the whole text).
	k := len(t)
	for k > 0 && t[k-1] == '#' {
		k--
	}
	if k == 0 {
		t = t[:0]
	} else if k < len(t) && (t[k-1] == ' ' || t[k-1] == '\t') {
		t = bytes.TrimSpace(t[:k])
	}
	return string(t)
}

// lineAt returns the index of the line containing byte offset off (the last
// line for off == len(Content)).
func (d *Doc) lineAt(off int) int {
	i := sort.Search(len(d.lines), func(i int) bool { return d.lines[i].next > off })
	if i == len(d.lines) && i > 0 {
		return i - 1
	}
	return i
}

// sectionAt returns the index of the innermost section containing line i.
func (d *Doc) sectionAt(i int) int {
	// Sections[1:] are ordered by Line; the preamble (Line 1) precedes them
	// all, so "the last section whose heading is at or before i" is monotonic.
	k := sort.Search(len(d.Sections), func(k int) bool { return k > 0 && d.Sections[k].Line-1 > i })
	return max(k-1, 0)
}
