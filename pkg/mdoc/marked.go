package mdoc

import (
	"bytes"
	"strings"

	"github.com/intermem/intermem/pkg/lazyre"
)

// markerRE matches an intermem marker, legacy 8-hex and current 16-hex
// alike; the first group is the id. It is compiled on first use (the hot
// paths use the hand-written scanner, and hooks must not pay for regexp
// compilation at start-up); FuzzMarkerScan holds the two equal.
var markerRE = lazyre.New(`<!--\s*intermem:([0-9a-f]{8,64})\s*-->`)

// StripMarkers removes every intermem marker from s.
func StripMarkers(s string) string { return markerRE.Get().ReplaceAllString(s, "") }

// validID reports whether id is 8 to 64 lower-case hex digits.
func validID(id string) bool {
	if len(id) < 8 || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// Marker returns the marker that tags a promoted entry with id.
func Marker(id string) string { return "<!-- intermem:" + id + " -->" }

// Marked is an entry carrying an intermem marker.
type Marked struct {
	ID         string // hex from the marker
	Line       int    // 1-based line of the marker
	Start, End int    // byte range of the whole entry, whole lines, terminator of the last line included
	Heading    bool   // the marker sits on a section heading; the entry is that line alone
	Text       string // entry text without the marker and the list marker, "\n" line endings
	Section    string // title of the innermost enclosing section
}

// Marked returns every marked entry in document order. Markers inside fenced
// code or inline code spans are text, not markers. The entry a marker tags is
// decided by where the marker sits:
//
//   - on a section heading: that heading line (Heading is true);
//   - on a line of its own: that line plus the unit that follows it directly
//     (a whole list item, or a run of text and fenced code up to a blank
//     line) — this is how a block whose first line opens a fence is marked;
//   - on a line that opens a list item: that item (the outer one if the line
//     opens two, as "- - x" does), with all its continuation lines, nested
//     items and indented fences;
//   - on any other line of a list item (a continuation line, where the
//     original tool put its marker): the innermost item containing it;
//   - anywhere else: the run of text lines and fenced code around the marker,
//     bounded by blank lines, headings, list items and managed-block lines.
func (d *Doc) Marked() []Marked { return d.marked(true, "") }

// marked lists the marked entries, with their text if withText, stopping at
// the first one carrying id unless id is "".
func (d *Doc) marked(withText bool, id string) []Marked {
	var out []Marked
	var bounds map[int]bool
	for i := range d.lines {
		l := &d.lines[i]
		if l.kind == kindBlank || l.kind == kindFence {
			continue
		}
		raw := d.Content[l.start:l.end]
		if !bytes.Contains(raw, []byte("intermem:")) {
			continue
		}
		locs := markerLocs(raw)
		if len(locs) == 0 {
			continue
		}
		if id != "" && !hasID(raw, locs, id) {
			continue
		}
		if bounds == nil {
			bounds = d.boundaryLines()
		}
		first, last, heading, own := d.entryLines(i, onlyMarkers(raw, locs), bounds)
		m := Marked{
			Line:    i + 1,
			Start:   d.lines[first].start,
			End:     d.lines[last].next,
			Heading: heading,
			Section: d.Sections[d.sectionAt(i)].Title,
		}
		switch {
		case !withText:
		case heading:
			m.Text = headingTitle(d.text(i))
		case own && first == last:
		case own:
			m.Text = d.unitText(first+1, last, true)
		default:
			m.Text = d.unitText(first, last, true)
		}
		for _, loc := range locs {
			m.ID = string(raw[loc[2]:loc[3]])
			if id == "" || m.ID == id {
				out = append(out, m)
			}
			if id != "" && m.ID == id {
				return out
			}
		}
	}
	return out
}

func hasID(raw []byte, locs [][4]int, id string) bool {
	for _, loc := range locs {
		if string(raw[loc[2]:loc[3]]) == id {
			return true
		}
	}
	return false
}

// markerLocs returns the markers in s that are not inside an inline code
// span, as [start, end, id start, id end]. It is markerRE's leftmost-first
// matching, written out because it runs on every line that mentions
// "intermem:".
func markerLocs(s []byte) [][4]int {
	var out [][4]int
	var spans [][2]int
	spansDone := false
	for k := 0; ; {
		i := bytes.Index(s[k:], []byte("<!--"))
		if i < 0 {
			return out
		}
		i += k
		end, is, ie, ok := markerAt(s, i)
		if !ok {
			k = i + 1
			continue
		}
		if !spansDone {
			if bytes.IndexByte(s, '`') >= 0 {
				spans = codeSpans(s)
			}
			spansDone = true
		}
		if !inSpans(spans, i) {
			out = append(out, [4]int{i, end, is, ie})
		}
		k = end
	}
}

// markerAt parses the marker that may start at s[i] ("<!--").
func markerAt(s []byte, i int) (end, idStart, idEnd int, ok bool) {
	j := i + 4
	for j < len(s) && isSpaceRE(s[j]) {
		j++
	}
	if !bytes.HasPrefix(s[j:], []byte("intermem:")) {
		return 0, 0, 0, false
	}
	j += len("intermem:")
	idStart = j
	for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] >= 'a' && s[j] <= 'f') {
		j++
	}
	idEnd = j
	if n := idEnd - idStart; n < 8 || n > 64 {
		return 0, 0, 0, false
	}
	for j < len(s) && isSpaceRE(s[j]) {
		j++
	}
	if !bytes.HasPrefix(s[j:], []byte("-->")) {
		return 0, 0, 0, false
	}
	return j + 3, idStart, idEnd, true
}

// isSpaceRE is RE2's \s.
func isSpaceRE(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\f' || b == '\r' }

// ownLine reports whether line s holds only markers and whitespace.
func ownLine(s []byte) bool {
	if !bytes.Contains(s, []byte("intermem:")) {
		return false
	}
	return onlyMarkers(s, markerLocs(s))
}

// onlyMarkers reports whether the markers at locs are all there is on s.
func onlyMarkers(s []byte, locs [][4]int) bool {
	if len(locs) == 0 {
		return false
	}
	prev := 0
	for _, loc := range locs {
		if !isBlank(s[prev:loc[0]]) {
			return false
		}
		prev = loc[1]
	}
	return isBlank(s[prev:])
}

// entryLines returns the first and last line index of the entry tagged by a
// marker on line i, whether that line is a section heading and whether the
// marker stands on a line of its own.
func (d *Doc) entryLines(i int, ownLine bool, bounds map[int]bool) (first, last int, heading, own bool) {
	l := &d.lines[i]
	if l.kind == kindHeading {
		return i, i, true, false
	}
	if ownLine {
		j := i + 1
		if j < len(d.lines) && d.unitStart(j, bounds) {
			lj := &d.lines[j]
			if lj.itemStart && lj.item >= 0 {
				if t := d.entryItem(j); d.items[t].parent == int(l.item) {
					return i, d.items[t].last, false, true
				}
			}
			if l.item < 0 && lj.item < 0 {
				_, last = d.run(j, bounds, false)
				return i, last, false, true
			}
		}
		if l.item < 0 {
			return i, i, false, true
		}
	}
	if l.item >= 0 {
		it := d.items[d.entryItem(i)]
		return it.first, it.last, false, false
	}
	first, last = d.run(i, bounds, true)
	return first, last, false, false
}

// entryItem returns the item a marker on line i (inside a list item) tags:
// on a line that opens items, the outermost item opened there ("- - x"
// opens two); on any other line, the innermost item containing it.
func (d *Doc) entryItem(i int) int {
	t := int(d.lines[i].item)
	if d.lines[i].itemStart {
		for p := d.items[t].parent; p >= 0 && d.items[p].first == i; p = d.items[p].parent {
			t = p
		}
	}
	return t
}

// unitStart reports whether line j can begin the unit that an own-line marker
// tags.
func (d *Doc) unitStart(j int, bounds map[int]bool) bool {
	l := &d.lines[j]
	return l.kind != kindBlank && l.kind != kindHeading && !bounds[j] && !ownLine(d.Content[l.start:l.end])
}

// run returns the extent of the run of text lines around line i (only forward
// when back is false): lines outside list items that are neither blank,
// headings, thematic breaks, managed-block lines nor own-line markers; fenced
// code blocks inside the run are taken whole.
func (d *Doc) run(i int, bounds map[int]bool, back bool) (first, last int) {
	ok := func(j int) bool {
		l := &d.lines[j]
		if l.item >= 0 || bounds[j] {
			return false
		}
		switch l.kind {
		case kindBlank, kindHeading, kindBreak:
			return false
		}
		return l.kind == kindFence || !ownLine(d.Content[l.start:l.end])
	}
	first, last = i, i
	if back {
		for first > 0 && ok(first-1) {
			first--
		}
	}
	for last+1 < len(d.lines) && ok(last+1) {
		last++
	}
	return first, last
}

// unitText renders lines first..last as entry text: for a list item the
// marker is dropped and continuation lines lose the item's indentation; line
// endings become "\n" and trailing whitespace goes. stripMarkers removes
// intermem markers (and the space before them) outside fenced code.
func (d *Doc) unitText(first, last int, stripMarkers bool) string {
	var b strings.Builder
	dedent := 0
	if l := &d.lines[first]; l.itemStart && l.item >= 0 {
		dedent = d.items[d.entryItem(first)].contentCol
	}
	for i := first; i <= last; i++ {
		l := &d.lines[i]
		var s []byte
		if dedent > 0 {
			s = d.Content[d.columnOffset(i, dedent):l.end]
		} else {
			s = d.Content[l.start:l.end]
		}
		if stripMarkers && l.kind != kindFence && bytes.Contains(s, []byte("intermem:")) {
			s = stripMarkerBytes(s)
		}
		if i > first {
			b.WriteByte('\n')
		}
		b.Write(bytes.TrimRight(s, " \t\r"))
	}
	return b.String()
}

// stripMarkerBytes removes markers outside inline code spans.
func stripMarkerBytes(s []byte) []byte {
	locs := markerLocs(s)
	if len(locs) == 0 {
		return s
	}
	var out []byte
	prev := 0
	for _, loc := range locs {
		st := loc[0]
		for st > prev && (s[st-1] == ' ' || s[st-1] == '\t') {
			st--
		}
		out = append(out, s[prev:st]...)
		prev = loc[1]
	}
	return append(out, s[prev:]...)
}

// columnOffset returns the byte offset on line i where column col starts,
// skipping at most col columns of leading whitespace. For the first line of
// a list item the marker counts as whitespace.
func (d *Doc) columnOffset(i, col int) int {
	l := &d.lines[i]
	c := d.Content
	p, at := l.start, 0
	if l.itemStart && l.item >= 0 && d.items[l.item].first == i {
		// Skip indentation, marker(s) and the spaces after them up to the
		// content column of the innermost item opened here.
		p = l.ws
		at = l.indent
		for at < col && p < l.end {
			switch c[p] {
			case '\t':
				at += 4 - at%4
			default:
				at++
			}
			p++
		}
		return p
	}
	for p < l.end && at < col {
		switch c[p] {
		case ' ':
			at++
		case '\t':
			at += 4 - at%4
		default:
			return p
		}
		p++
	}
	return p
}

// Remove deletes the entry marked with id — the whole entry, every line of it
// — and returns the new content and the entry's bytes as they were. One blank
// line goes with it so that no doubled blank line is left: the one before the
// entry, unless the entry is a list item or a heading and a list item follows
// it directly (the blank line then separates that item from what precedes). If the entry ran to the end of a document without a
// final newline, the terminator before it goes too, so the result still ends
// without one. With removeEmptySection, a section left with nothing but blank
// lines loses its heading the same way (pass it only for sections intermem
// created). Every other byte is preserved. ok is false if no entry carries id.
func (d *Doc) Remove(id string, removeEmptySection bool) (out []byte, removed []byte, ok bool) {
	if !validID(id) {
		return d.Content, nil, false
	}
	ms := d.marked(false, id)
	if len(ms) == 0 {
		return d.Content, nil, false
	}
	out, removed = d.remove(ms[0], removeEmptySection)
	return out, removed, true
}

func (d *Doc) remove(m Marked, removeEmptySection bool) (out, removed []byte) {
	removed = d.Content[m.Start:m.End]
	cs, ce := d.widenCut(d.lineAt(m.Start), d.lineAt(m.End-1))
	out = splice(d.Content, cs, ce, nil)
	if !removeEmptySection || m.Heading {
		return out, removed
	}
	s := d.Sections[d.sectionAt(d.lineAt(m.Start))]
	if s.Level == 0 {
		return out, removed
	}
	// Is everything left between the heading line and the section end blank?
	lo := min(d.lines[s.Line-1].next, cs)
	if ce > s.End || !isBlankText(d.Content[lo:cs]) || !isBlankText(d.Content[ce:s.End]) {
		return out, removed
	}
	nd := Parse(out)
	hi := nd.lineAt(s.Start)
	if hi >= len(nd.lines) || nd.lines[hi].start != s.Start || nd.lines[hi].kind != kindHeading {
		return out, removed
	}
	hs, he := nd.widenCut(hi, hi)
	return splice(out, hs, he, nil), removed
}

// widenCut returns the byte range to delete for lines first..last: the lines
// themselves, the blank line before them unless they are a list item or a
// heading that a list item follows directly, and, when they end an
// unterminated document, the line terminator before them.
func (d *Doc) widenCut(first, last int) (start, end int) {
	start, end = d.lines[first].start, d.lines[last].next
	listNext := last+1 < len(d.lines) && d.lines[last+1].itemStart
	keepBlank := listNext && (d.lines[first].itemStart || d.lines[first].kind == kindHeading)
	if first > 0 && d.lines[first-1].kind == kindBlank && !keepBlank {
		first--
		start = d.lines[first].start
	}
	if end == len(d.Content) && (end == 0 || d.Content[end-1] != '\n') && first > 0 {
		start = d.lines[first-1].end
	}
	return start, end
}

func isBlankText(b []byte) bool { return isBlank(bytes.ReplaceAll(b, []byte{'\n'}, nil)) }

// splice returns a new slice: c[:start] + ins + c[end:].
func splice(c []byte, start, end int, ins []byte) []byte {
	out := make([]byte, 0, len(c)-(end-start)+len(ins))
	out = append(out, c[:start]...)
	out = append(out, ins...)
	return append(out, c[end:]...)
}
