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
	level   int    // its level (0: none yet)
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
	marker       int  // byte offset of the list marker on the first line
	content      int  // byte offset of the content on the first line
	blank        bool // a blank line followed the last line of the item
	afterFence   bool // the item's last line closed a fence
}

// para is the paragraph being collected: consecutive lines of text outside
// any item.
type para struct {
	open, blank bool // blank: a blank line followed its last line
	first, last int  // line indexes
	off         int  // byte offset of the text on the first line
}

// group is a lead-in paragraph with the list, table or fence it
// introduces: one entry, so that promoting never separates a sentence
// ending in "Fixes:" from its fixes.
type group struct {
	open        bool
	first, last int // line indexes, lead-in through the last block line
	off         int // byte offset of the lead-in's text on its first line
	list        bool
	ordered     bool   // the list is numbered
	items       []item // the list's items, in case they are pointers
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
	var (
		it  item  // the list item or table being collected
		par para  // the paragraph being collected
		grp group // a lead-in and what it introduces
	)
	closeGroup := func() {
		if grp.open && emit {
			p.emitGroup(&grp)
		}
		grp = group{items: grp.items[:0]}
	}
	closeItem := func() {
		switch {
		case !it.open:
		case grp.open:
			grp.items = append(grp.items, it)
			grp.last = it.last
			if it.table {
				closeGroup()
			}
		case emit:
			p.emit(&it)
		}
		it = item{}
	}
	closePara := func() {
		if par.open && emit && (p.boldLead(&par) || p.sectionText(&par)) {
			p.emitSpan(par.first, par.last, par.off)
		}
		par = para{}
	}
	for i := first; i < len(p.lines); i++ {
		s := p.text(i)
		if isBlankText(s) {
			if it.table {
				closeItem()
			} else if it.open {
				it.blank = true
			}
			if par.open {
				par.blank = true
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
				closeGroup()
				continue
			case (li.kind == kText || li.kind == kTable) && !it.blank && !it.afterFence:
				it.last = i // lazy continuation
				continue
			}
			closeItem()
		}

		// A list goes on with another item of its kind; anything else
		// ends what a lead-in introduced.
		if grp.open && !(grp.list && li.kind == kItem && isOrdered(s, li) == grp.ordered) {
			closeGroup()
		}

		if par.open {
			if li.kind == kText && !par.blank {
				par.last = i // the paragraph goes on
				continue
			}
			// A paragraph ending in a colon leads in to the list, table or
			// fence after it, and so does a bold-lead paragraph right
			// above one ("**File:** `x`" over its list). Other text right
			// above a list ("Last updated May." under a title) does not:
			// it would make the whole list one entry.
			leads := (li.kind == kItem || li.kind == kTable || li.kind == kFence && p.fenceEnd(i, li) > i) &&
				(p.endsWithColon(par.last) || !par.blank && p.boldLead(&par))
			if leads {
				grp = group{open: true, first: par.first, last: par.last, off: par.off, items: grp.items[:0],
					list: li.kind == kItem, ordered: li.kind == kItem && isOrdered(s, li)}
				par = para{}
			} else {
				closePara()
			}
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
			p.section, p.level = title, li.level
		case kItem:
			it = item{open: true, first: i, last: i, markerIndent: li.indent, marker: li.off, content: li.content}
		case kTable:
			it = item{open: true, table: true, first: i, last: i}
		case kFence, kComment:
			j := p.block(i, li)
			switch {
			case grp.open:
				grp.last = j
				closeGroup()
			case li.kind == kFence && j > i && p.level >= 2 && emit:
				// A fence of its own in a section: the section's title
				// says what it is ("## How to start the bot" over the
				// command), as a lead-in would.
				p.emitSpan(i, j, li.off)
			}
			i = j
		case kText:
			if li.indent <= 3 {
				par = para{open: true, first: i, last: i, off: li.off}
			}
		}
	}
	closeItem()
	closeGroup()
	closePara()
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

// emit turns the collected list item or table into an Entry, unless its
// text is empty.
func (p *parser) emit(it *item) {
	first := p.lines[it.first]
	if it.table {
		p.emitText(it.first, it.last, first.start, "", false)
		return
	}
	p.emitText(it.first, it.last, first.start+it.content, p.src[first.start+it.marker:first.start+it.content], true)
}

// emitSpan emits lines a..b as one paragraph-shaped entry (a bold-lead
// paragraph, or a lead-in with what it introduces) whose text starts at
// byte off of line a.
func (p *parser) emitSpan(a, b, off int) {
	p.emitText(a, b, p.lines[a].start+off, "", false)
}

// emitGroup emits a lead-in and what it introduces as one entry, unless the
// list is made of pointers: an index's "Topic files:" above its pointer
// lines is a label, and each pointer stays a pointer.
func (p *parser) emitGroup(g *group) {
	for k := range g.items {
		it := &g.items[k]
		if it.table {
			continue
		}
		first := p.lines[it.first]
		if _, ok := pointerTarget(p.src[first.start+it.content : first.text]); ok {
			for k := range g.items {
				p.emit(&g.items[k])
			}
			return
		}
	}
	p.emitSpan(g.first, g.last, g.off)
}

// emitText turns lines a..b, starting at byte offset textStart of line a,
// into an Entry, unless the text is empty. marker is the list marker as
// written ("" for a table or a paragraph); item says whether the first
// line may be a pointer.
func (p *parser) emitText(a, b, textStart int, marker string, item bool) {
	first, last := p.lines[a], p.lines[b]
	// Text is trimmed. When it is a substring of the content that
	// normalization would leave as it is (most one-line entries), it is
	// hashed in place; otherwise its normalized copy is.
	joined, inPlace := p.join(a, b, textStart)
	left := strings.TrimLeftFunc(joined, unicode.IsSpace)
	text := strings.TrimRightFunc(left, unicode.IsSpace)
	var sum [sha256.Size]byte
	hashed := false
	if inPlace {
		at := textStart + len(joined) - len(left)
		if raw := p.f.Content[at : at+len(text)]; isNormalized(raw) {
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
		Marker:    strings.TrimSpace(marker),
		Start:     first.start,
		End:       last.end,
		StartLine: a + 1,
		EndLine:   b + 1,
	}
	if item {
		if target, ok := pointerTarget(p.src[textStart:first.text]); ok {
			e.Kind, e.Link = Pointer, target
		}
	}
	if e.Kind == Fact {
		e.Link = firstSiblingLink(text)
	}
	p.f.Entries = append(p.f.Entries, e)
}

// boldLead reports whether a paragraph is an entry of its own: it opens,
// after optional emoji, with a bold run ("**Rule:** text", "**Title.**
// text", "__x__ y") and says something beyond that label. A bold line
// alone is a label (a heading in all but name), not an entry.
func (p *parser) boldLead(pa *para) bool {
	first := p.lines[pa.first]
	s := p.src[first.start+pa.off : first.text]
	i := skipEmoji(s)
	if i+2 > len(s) || (s[i:i+2] != "**" && s[i:i+2] != "__") {
		return false
	}
	k := strings.Index(s[i+2:], s[i:i+2])
	if k <= 0 {
		return false
	}
	if pa.last > pa.first {
		return true
	}
	rest := strings.TrimLeft(s[i+2+k+2:], " \t:：.—–-")
	return strings.TrimSpace(rest) != ""
}

// sectionText reports whether a plain paragraph is an entry: one under a
// section heading (level 2 or deeper), saying something in a sentence.
// What precedes the first section (a title's blurb, "Auto-memory index,
// keep it short.") describes the file, and a line wholly in italics or
// bold is a caption or a label; neither is remembered knowledge.
func (p *parser) sectionText(pa *para) bool {
	if p.level < 2 {
		return false
	}
	for i := pa.first; i <= pa.last; i++ {
		if !emphasized(strings.TrimSpace(p.text(i))) {
			return true
		}
	}
	return false
}

// emphasized reports whether a line is wholly in italics or bold.
func emphasized(s string) bool {
	for _, m := range []string{"**", "__", "*", "_"} {
		if len(s) > 2*len(m) && strings.HasPrefix(s, m) && strings.HasSuffix(s, m) {
			return true
		}
	}
	return false
}

// endsWithColon reports whether line i's text ends with a colon, before
// any closing emphasis: "Fixes:", "**Steps:**", "**结论：**".
func (p *parser) endsWithColon(i int) bool {
	s := strings.TrimRight(p.text(i), " \t*_")
	return strings.HasSuffix(s, ":") || strings.HasSuffix(s, "：")
}

// isOrdered reports whether the item line s is numbered ("1.", "2)").
func isOrdered(s string, li lineInfo) bool {
	c := s[li.off]
	return c >= '0' && c <= '9'
}
