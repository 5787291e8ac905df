package automem

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode"
)

// parser holds the state of one Parse call.
type parser struct {
	f     *File
	src   string // the content as one string: entry texts are substrings of it
	lines []line

	// noCloser[c] > 0 means a search for a closer of a fence of char c and
	// length noCloser[c] already reached EOF without success, so no later
	// opener of that char and at least that length can be closed either.
	noCloser [2]int
	// noCommentEnd is the line after which no "-->" exists, or -1.
	noCommentEnd int

	section string // title of the nearest heading so far
	norm    []byte // scratch buffer for normalized entry text
	ids     []byte // hex ids of the entries emitted so far, 16 bytes each
	dropped int    // warnings over maxWarnings
}

// item is the list item or table being collected.
type item struct {
	open         bool
	table        bool
	first, last  int  // line indexes
	markerIndent int  // columns before the list marker
	content      int  // byte offset of the content on the first line
	blank        bool // a blank line followed the last line of the item
	afterFence   bool // the item's last line closed a fence
}

func (p *parser) text(i int) string {
	return p.src[p.lines[i].start:p.lines[i].text]
}

// maxWarnings caps the warnings of one file: a file of ten thousand stray
// fences needs one line saying so, not ten thousand.
const maxWarnings = 50

func (p *parser) warnf(format string, args ...any) {
	if len(p.f.Warnings) < maxWarnings {
		p.f.Warnings = append(p.f.Warnings, fmt.Sprintf(format, args...))
	} else {
		p.dropped++
	}
}

// finish records how many warnings the cap dropped.
func (p *parser) finish() {
	if p.dropped > 0 {
		p.f.Warnings = append(p.f.Warnings, fmt.Sprintf("%d more warnings not shown", p.dropped))
	}
}

// fenceEnd returns the index of the line closing the fence opened at line i,
// or -1 when there is none before EOF. The memo makes repeated failures
// cost nothing, so a file full of unclosed openers is still linear.
func (p *parser) fenceEnd(i int, li lineInfo) int {
	k := 0
	if li.fence == '~' {
		k = 1
	}
	if p.noCloser[k] > 0 && li.flen >= p.noCloser[k] {
		return -1
	}
	for j := i + 1; j < len(p.lines); j++ {
		if isFenceCloser(p.text(j), li.fence, li.flen) {
			return j
		}
	}
	if p.noCloser[k] == 0 || li.flen < p.noCloser[k] {
		p.noCloser[k] = li.flen
	}
	return -1
}

// commentEnd returns the index of the line holding the "-->" that closes an
// HTML comment opened at line i, i itself for a one-line comment, or -1.
func (p *parser) commentEnd(i int, li lineInfo) int {
	if strings.Contains(p.text(i)[li.off+4:], "-->") {
		return i
	}
	if p.noCommentEnd >= 0 && i >= p.noCommentEnd {
		return -1
	}
	for j := i + 1; j < len(p.lines); j++ {
		if strings.Contains(p.text(j), "-->") {
			return j
		}
	}
	p.noCommentEnd = i
	return -1
}

// block returns the last line of the multi-line block (fence or comment)
// opened at line i, or i when the line opens nothing. An opener without a
// closer is not a block: it is recorded as a warning and the line is text.
func (p *parser) block(i int, li lineInfo) int {
	switch li.kind {
	case kFence:
		if j := p.fenceEnd(i, li); j >= 0 {
			return j
		}
		run := strings.Repeat(string(li.fence), min(li.flen, 8))
		if li.flen > 8 {
			run += "…"
		}
		p.warnf("line %d: unclosed %s fence treated as text", i+1, run)
	case kComment:
		if j := p.commentEnd(i, li); j >= 0 {
			return j
		}
		p.warnf("line %d: unclosed <!-- comment treated as text", i+1)
	}
	return i
}

// scan walks lines [first, len) once, recording headings and (when emit is
// set) entries. See the package documentation for the rules.
func (p *parser) scan(first int, emit bool) {
	p.noCommentEnd = -1
	// Size Entries and Headings once: every entry starts on a line that
	// begins with a marker, a digit or "|", every heading on one that
	// begins with "#" (nearly always at column 0).
	n, h := 0, 0
	for _, l := range p.lines[first:] {
		if l.start < l.text {
			switch c := p.src[l.start]; c {
			case '-', '*', '+', '|', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
				n++
			case '#':
				h++
			}
		}
	}
	if h > 0 {
		p.f.Headings = make([]Heading, 0, h)
	}
	if emit {
		p.f.Entries = make([]Entry, 0, n)
		p.ids = make([]byte, 0, 16*n)
	}
	var it item
	closeItem := func() {
		if it.open && emit {
			p.emit(&it)
		}
		it = item{}
	}
	for i := first; i < len(p.lines); i++ {
		s := p.text(i)
		if isBlankText(s) {
			if it.table {
				closeItem()
			} else if it.open {
				it.blank = true
			}
			continue
		}
		li := classify(s)

		if it.open && it.table {
			if li.kind == kTable {
				it.last = i
				continue
			}
			closeItem()
		}

		if it.open {
			if li.indent > it.markerIndent {
				// Indented: a nested item, a continuation line or an
				// indented fence, all part of the item.
				if li.kind == kFence || li.kind == kComment {
					j := p.block(i, li)
					it.afterFence = j > i && li.kind == kFence
					i = j
				} else {
					it.afterFence = false
				}
				it.last, it.blank = i, false
				continue
			}
			switch {
			case li.kind == kFence && !it.blank:
				// A fence right under an item, even at column 0, carries
				// the item's payload (its command or snippet).
				if j := p.block(i, li); j > i {
					it.last, it.afterFence, i = j, true, j
					continue
				}
				// Unclosed, so plain text: a lazy continuation unless
				// the item ended with a fence.
				if !it.afterFence {
					it.last = i
					continue
				}
				closeItem()
				continue
			case (li.kind == kText || li.kind == kTable) && !it.blank && !it.afterFence:
				it.last = i // lazy continuation
				continue
			}
			closeItem()
		}

		switch li.kind {
		case kHeading:
			title := headingTitle(s[li.off+li.level:])
			p.f.Headings = append(p.f.Headings, Heading{
				Level: li.level,
				Title: title,
				Line:  i + 1,
				Start: p.lines[i].start,
				End:   p.lines[i].end,
			})
			p.section = title
		case kItem:
			it = item{open: true, first: i, last: i, markerIndent: li.indent, content: li.content}
		case kTable:
			it = item{open: true, table: true, first: i, last: i}
		case kFence, kComment:
			i = p.block(i, li)
		}
	}
	closeItem()
	// One string holds every id: one allocation instead of one per entry.
	ids := string(p.ids)
	for k := range p.f.Entries {
		p.f.Entries[k].ID = ids[16*k : 16*k+16]
	}
}

// join returns the text of lines a..b (a ≤ b), starting at offset from in
// line a, with every line terminator as "\n": a "\r" is dropped only where
// it is part of the terminator. Without CRLF the text is the substring
// src[from:…] (inPlace) and costs no allocation.
func (p *parser) join(a, b, from int) (text string, inPlace bool) {
	crlf := false
	for k := a; k < b; k++ {
		if p.lines[k].end-p.lines[k].text > 1 {
			crlf = true
			break
		}
	}
	if !crlf {
		return p.src[from:p.lines[b].text], true
	}
	var sb strings.Builder
	sb.Grow(p.lines[b].text - from)
	for k := a; k <= b; k++ {
		start := p.lines[k].start
		if k == a {
			start = from
		}
		sb.WriteString(p.src[start:p.lines[k].text])
		if k < b {
			sb.WriteByte('\n')
		}
	}
	return sb.String(), false
}

// headingTitle trims an ATX heading's text: surrounding space, a closing
// "#" sequence and a trailing HTML comment (such as an intermem marker).
func headingTitle(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasSuffix(s, "-->") {
		if k := strings.LastIndex(s, "<!--"); k >= 0 {
			s = strings.TrimSpace(s[:k])
		}
	}
	t := strings.TrimRight(s, "#")
	if t == "" {
		return ""
	}
	if len(t) < len(s) && (t[len(t)-1] == ' ' || t[len(t)-1] == '\t') {
		s = strings.TrimSpace(t)
	}
	return s
}

// emit turns the collected item into an Entry, unless its text is empty.
func (p *parser) emit(it *item) {
	first, last := p.lines[it.first], p.lines[it.last]
	textStart := first.start
	if !it.table {
		textStart += it.content
	}
	// Text is trimmed. When it is a substring of the content that
	// normalization would leave as it is (most one-line entries), it is
	// hashed in place; otherwise its normalized copy is.
	joined, inPlace := p.join(it.first, it.last, textStart)
	left := strings.TrimLeftFunc(joined, unicode.IsSpace)
	text := strings.TrimRightFunc(left, unicode.IsSpace)
	var sum [sha256.Size]byte
	hashed := false
	if inPlace {
		a := textStart + len(joined) - len(left)
		if raw := p.f.Content[a : a+len(text)]; isNormalized(raw) {
			if len(raw) == 0 {
				return
			}
			sum, hashed = sha256.Sum256(raw), true
		}
	}
	if !hashed {
		p.norm = appendNormalized(p.norm[:0], text)
		if len(p.norm) == 0 {
			return
		}
		sum = sha256.Sum256(p.norm)
	}
	p.ids = hex.AppendEncode(p.ids, sum[:8])
	e := Entry{
		Kind:      Fact,
		File:      p.f.Name,
		Section:   p.section,
		Text:      text,
		Start:     first.start,
		End:       last.end,
		StartLine: it.first + 1,
		EndLine:   it.last + 1,
	}
	if !it.table {
		if target, ok := leadingPointer(p.src[first.start+it.content : first.text]); ok {
			e.Kind, e.Link = Pointer, target
		}
	}
	if e.Kind == Fact {
		e.Link = firstSiblingLink(text)
	}
	p.f.Entries = append(p.f.Entries, e)
}
