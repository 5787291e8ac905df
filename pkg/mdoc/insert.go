package mdoc

import (
	"bytes"
	"errors"
	"strings"
)

var (
	// ErrBadID is returned when an id is not 8 to 64 lower-case hex digits.
	ErrBadID = errors.New("mdoc: id must be 8 to 64 lower-case hex digits")
	// ErrExists is returned when the document already marks an entry with the id.
	ErrExists = errors.New("mdoc: an entry with this id is already in the document")
	// ErrEmptyBlock is returned when the block has no non-blank line.
	ErrEmptyBlock = errors.New("mdoc: empty block")
	// ErrUnsafe is returned when no placement of the block leaves the rest of
	// the document parsing as before and removable to the exact original —
	// e.g. when an unclosed fence earlier in the document would pair with
	// both kinds of fence the block could use.
	ErrUnsafe = errors.New("mdoc: block cannot be inserted without changing the rest of the document")
)

// Insertion is the result of Place.
type Insertion struct {
	Content    []byte // the new document
	Section    string // title of the section used ("" for the preamble)
	Created    bool   // the section was created at the end of the document
	Start, End int    // byte range of all inserted bytes in Content, separators included
	EntryStart int    // start of the entry itself; it runs to End (what Marked reports)
}

// Insert places block into the document as the entry marked with id and
// returns the new content, the title of the section used and whether that
// section was created. It is Place without the error: when Place fails, Insert
// returns the content unchanged, "" and false.
func (d *Doc) Insert(section, block, id string) (out []byte, used string, created bool) {
	ins, err := d.Place(section, block, id)
	if err != nil {
		return d.Content, "", false
	}
	return ins.Content, ins.Section, ins.Created
}

// Place inserts block (markdown lines separated by "\n": a list item with
// indented continuation lines, nested items and fences, a fenced code block,
// or a paragraph) as one entry marked with id.
//
// Where: at the end of the own content (before any subsection) of the
// section BestSection(section) picks, or of a later section with the same
// title if that one cannot take it; when none matches, in a new heading
// "section" appended at the end of the document (level 2, or the level of
// the document's top sections). An empty section names the preamble — or
// the first section when the preamble is empty, as under a "# Title" first
// line — and falls back to the end of the document. The entry never lands
// inside a managed Block: when the end of the section's content is inside
// one, it goes just before the block if the block starts within the
// section's own content, or just after it if the block ends within the
// section; a section wholly inside a block cannot take it.
//
// How: the marker goes at the end of the entry's first line after one
// space, or on a line of its own before the entry when the first line opens
// a fence or is a table's header row — never after a closing fence, never
// as one more cell of a header row (GitHub would render no table). The entry follows the previous
// non-blank line directly when it is a list item and that line, or the line
// right after the insertion point, belongs to a list item too; otherwise one
// blank line separates them. Whatever followed that line (blank lines, a
// heading, the end of the document) then follows the entry unchanged. Lines
// end with d.EOL; a document without a final newline still ends without one
// (an empty document is the exception: it gets terminated lines).
//
// The block is cleaned first: markers in it (outside code) are dropped, line
// endings and trailing spaces trimmed, leading and trailing blank lines and
// common indentation removed, and an unclosed fence closed. If the block is
// not one entry as written (say, two paragraphs), it becomes one list item.
// Every result is verified before it is returned: parsing it finds the entry
// whole and the rest of the document as before, and Remove restores the
// original bytes exactly. If no form of the block passes in the chosen
// section, the entry goes into a new section; if that fails too, Place
// returns ErrUnsafe and the document is left alone.
func (d *Doc) Place(section, block, id string) (Insertion, error) {
	if !validID(id) {
		return Insertion{}, ErrBadID
	}
	old := d.marked(false, "")
	for _, m := range old {
		if m.ID == id {
			return Insertion{}, ErrExists
		}
	}
	forms, err := entryForms(block, id)
	if err != nil {
		return Insertion{}, err
	}
	title := cleanTitle(section)

	type target struct {
		sec int // -1: new section
		p   int
	}
	var targets []target
	k := d.BestSection(title)
	if title == "" && k == 0 && d.Sections[0].BodyEnd == 0 && len(d.Sections) > 1 {
		k = 1 // no preamble to speak of: the first section's own content
	}
	if k > 0 {
		// The match, then any later namesake (say, one intermem created
		// because the first lies inside a managed block).
		name := normTitle(d.Sections[k].Title)
		for j := k; j < len(d.Sections); j++ {
			if j == k || normTitle(d.Sections[j].Title) == name {
				if p, ok := d.insertionPoint(j); ok {
					targets = append(targets, target{j, p})
				}
			}
		}
	} else if k == 0 {
		if p, ok := d.insertionPoint(0); ok {
			targets = append(targets, target{0, p})
		}
	}
	if title != "" {
		targets = append(targets, target{-1, d.endPoint()})
	} else if p := d.endPoint(); p > 0 {
		// No section named: the end of the document will do.
		if _, in := d.outermostBlock(p); !in {
			targets = append(targets, target{d.sectionAt(d.lineAt(p - 1)), p})
		}
	}
	for _, t := range targets {
		for _, f := range forms {
			ins := d.build(t.sec, t.p, f, title)
			if d.verify(ins, id, old) {
				return ins, nil
			}
		}
	}
	return Insertion{}, ErrUnsafe
}

// insertionPoint returns where an entry goes in section k: the end of its own
// content, moved out of any managed block. ok is false when the section
// cannot take an entry.
func (d *Doc) insertionPoint(k int) (p int, ok bool) {
	s := d.Sections[k]
	contentStart := s.Start
	if k > 0 {
		contentStart = d.lines[s.Line-1].next
	}
	p = s.BodyEnd
	b, in := d.outermostBlock(p)
	switch {
	case !in:
		return p, true
	case b.Start >= contentStart:
		// Just before the block, right after the last non-blank line.
		i := d.lineAt(b.Start)
		for i > 0 && d.lines[i-1].kind == kindBlank && d.lines[i-1].start >= contentStart {
			i--
		}
		return d.lines[i].start, true
	case b.End <= s.End:
		return b.End, true
	}
	return 0, false
}

// endPoint is where a new section goes: right after the last non-blank line.
func (d *Doc) endPoint() int {
	for i := len(d.lines) - 1; i >= 0; i-- {
		if d.lines[i].kind != kindBlank {
			return d.lines[i].next
		}
	}
	return 0
}

// newLevel is the level of a created section: 1 if the document has several
// H1s (it is a collection of top-level sections), else the smallest level
// below a lone H1 title, else 2.
func (d *Doc) newLevel() int {
	h1, min := 0, 7
	for _, s := range d.Sections[1:] {
		if s.Level == 1 {
			h1++
		} else if s.Level < min {
			min = s.Level
		}
	}
	switch {
	case h1 > 1:
		return 1
	case min == 7:
		return 2
	}
	return min
}

// build renders the insertion of entry form f at offset p (in section sec, or
// in a new section titled title when sec < 0).
func (d *Doc) build(sec, p int, f form, title string) Insertion {
	created := sec < 0
	eol := d.EOL
	var b strings.Builder
	unterminated := p == len(d.Content) && p > 0 && d.Content[p-1] != '\n'
	if unterminated {
		// A last line ending in a lone "\r" would lose it to a "\n" (the
		// two read as one terminator), so it gets a whole "\r\n".
		if d.Content[p-1] == '\r' {
			b.WriteString("\r\n")
		} else {
			b.WriteString(eol)
		}
	}
	if p > 0 {
		// No blank line inside a list: when the entry is a list item and the
		// line before it, or the line it goes in front of, is one too.
		prevList := d.lines[d.lineAt(p-1)].item >= 0
		nextList := p < len(d.Content) && d.lines[d.lineAt(p)].itemStart
		if created || !(f.list && (prevList || nextList)) {
			b.WriteString(eol)
		}
	}
	used := title
	if created {
		b.WriteString(strings.Repeat("#", d.newLevel()) + " " + title + eol + eol)
	} else {
		used = d.Sections[sec].Title
	}
	entryStart := p + b.Len()
	b.WriteString(strings.Join(f.lines, eol))
	if !unterminated {
		b.WriteString(eol)
	}
	ins := b.String()
	return Insertion{
		Content:    splice(d.Content, p, p, []byte(ins)),
		Section:    used,
		Created:    created,
		Start:      p,
		End:        p + len(ins),
		EntryStart: entryStart,
	}
}

// verify checks an insertion: the new document has exactly the old sections
// (plus the created one), blocks and marked entries, the new entry is found
// whole at the place it was written, and removing it restores the original.
func (d *Doc) verify(ins Insertion, id string, old []Marked) bool {
	nd := Parse(ins.Content)
	if len(nd.Sections) != len(d.Sections)+b2i(ins.Created) || len(nd.Blocks) != len(d.Blocks) {
		return false
	}
	for k, s := range d.Sections {
		if ns := nd.Sections[k]; ns.Level != s.Level || ns.Title != s.Title {
			return false
		}
	}
	if ins.Created && nd.Sections[len(nd.Sections)-1].Title != ins.Section {
		return false
	}
	for k, b := range d.Blocks {
		if nd.Blocks[k].Name != b.Name {
			return false
		}
	}
	// Every old entry is where it was, shifted by the insertion if after it,
	// and just as long; the new one is exactly the inserted entry.
	ms := nd.marked(false, "")
	if len(ms) != len(old)+1 {
		return false
	}
	var mine *Marked
	k := 0
	shift := ins.End - ins.Start
	for i := range ms {
		if ms[i].ID == id && mine == nil {
			mine = &ms[i]
			continue
		}
		o, n := old[k], ms[i]
		switch {
		case o.Start >= ins.Start:
			o.Start, o.End = o.Start+shift, o.End+shift
		case o.End == len(d.Content) && ins.Start == len(d.Content) && !d.FinalNewline:
			o.End += len(d.EOL) // its last line got the terminator it lacked
		}
		if n.ID != o.ID || n.Start != o.Start || n.End != o.End || n.Heading != o.Heading {
			return false
		}
		k++
	}
	out, _ := nd.remove(*mine, ins.Created)
	return bytes.Equal(out, d.Content)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// cleanTitle turns a requested section name into heading text: one line,
// single spaces, no leading "#"s, no trailing closing sequence.
func cleanTitle(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	s = strings.TrimSpace(strings.TrimLeft(s, "#"))
	// A trailing " #" run or HTML comment would not survive parsing; what
	// is left after dropping one might end in another ("a # #").
	for {
		t := headingTitle([]byte("## " + s))
		if t == s {
			return s
		}
		s = t
	}
}

// form is a candidate rendering of the entry, marker included.
type form struct {
	lines []string
	list  bool // the first rendered line is a list item
}

// entryForms cleans block and returns the renderings to try, best first:
// the block as written (if it is one entry), then as one list item, then as
// a list item whose continuation lines are indented four columns or more;
// each also with its fences switched between backticks and tildes. The
// later forms exist for documents with an unclosed fence before the
// insertion point: a fence of the other kind, or one indented past the
// three columns a closer may have, cannot pair with it.
func entryForms(block, id string) ([]form, error) {
	lines := cleanBlock(block)
	if len(lines) == 0 {
		return nil, ErrEmptyBlock
	}
	var forms []form
	seen := map[string]bool{}
	for _, ls := range [][]string{lines, listify(lines, 0), listify(lines, 4)} {
		ls = closeFences(ls)
		for _, v := range [][]string{ls, switchFences(ls)} {
			if v == nil || seen[strings.Join(v, "\n")] {
				continue
			}
			seen[strings.Join(v, "\n")] = true
			if f, ok := render(v, id); ok {
				forms = append(forms, f)
			}
		}
	}
	if len(forms) == 0 {
		return nil, ErrUnsafe
	}
	return forms, nil
}

// cleanBlock splits block into lines and cleans them (see Place). Markers
// are dropped only where they would be markers: a fence or code span that
// shows one keeps it.
func cleanBlock(block string) []string {
	block = strings.ReplaceAll(block, "\r\n", "\n")
	block = strings.ReplaceAll(block, "\r", "\n")
	lines := strings.Split(block, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t\f\v")
	}
	lines = trimBlankLines(lines)
	if len(lines) == 0 {
		return nil
	}
	// Dedent by the first line's indentation: the same leading whitespace,
	// or as many columns of spaces.
	if lead := lines[0][:len(lines[0])-len(strings.TrimLeft(lines[0], " \t"))]; lead != "" {
		n := indentCols(lead)
		for i, l := range lines {
			if strings.HasPrefix(l, lead) {
				lines[i] = l[len(lead):]
				continue
			}
			k := 0
			for k < n && k < len(l) && l[k] == ' ' {
				k++
			}
			lines[i] = l[k:]
		}
	}
	if strings.Contains(block, "intermem:") {
		d := Parse([]byte(strings.Join(lines, "\n")))
		for i := range lines {
			if d.lines[i].kind != kindFence && strings.Contains(lines[i], "intermem:") {
				lines[i] = strings.TrimRight(string(stripMarkerBytes([]byte(lines[i]))), " \t")
			}
		}
		lines = trimBlankLines(lines)
	}
	return lines
}

func trimBlankLines(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// listify makes lines one list item: the first line gets a "- " unless it is
// already a list item, and every later line is indented to the item's
// content column, or to minCol if that is more (keeping relative
// indentation).
func listify(lines []string, minCol int) []string {
	out := append([]string(nil), lines...)
	d := Parse([]byte(out[0]))
	col := 2
	if len(d.lines) == 1 && d.lines[0].itemStart && d.items[0].first == 0 {
		col = d.items[0].contentCol
	} else {
		out[0] = "- " + out[0]
	}
	minIndent := -1
	for _, l := range out[1:] {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if n := indentCols(l); minIndent < 0 || n < minIndent {
			minIndent = n
		}
	}
	if shift := max(col, minCol) - minIndent; minIndent >= 0 && shift > 0 {
		pad := strings.Repeat(" ", shift)
		for i := 1; i < len(out); i++ {
			if strings.TrimSpace(out[i]) != "" {
				out[i] = pad + out[i]
			}
		}
	}
	return out
}

func indentCols(s string) int {
	col := 0
	for _, ch := range []byte(s) {
		switch ch {
		case ' ':
			col++
		case '\t':
			col += 4 - col%4
		default:
			return col
		}
	}
	return col
}

// closeFences appends closing lines for fences the block opens but never
// closes, so that a renderer that lets an unclosed fence run to the end of
// the document cannot swallow what follows the entry.
func closeFences(lines []string) []string {
	for range 4 {
		d := Parse([]byte(strings.Join(lines, "\n")))
		i := -1
		for k := range d.lines {
			if d.lines[k].openerLike {
				i = k
				break
			}
		}
		if i < 0 {
			return lines
		}
		col, r := fenceAt(lines[i])
		if r.n == 0 {
			return lines
		}
		lines = append(append([]string(nil), lines...), strings.Repeat(" ", col)+strings.Repeat(string(r.ch), r.n))
	}
	return lines
}

// fenceAt finds the fence run on an opener line (after indentation and list
// markers) and returns its column.
func fenceAt(s string) (col int, r fenceRun) {
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case ch == '`' || ch == '~':
			return col, fenceRunOf([]byte(s[i:]))
		case ch == '\t':
			col += 4 - col%4
		default:
			col++
		}
	}
	return 0, fenceRun{}
}

// switchFences returns lines with every fence's delimiters switched between
// backticks and tildes, long enough not to be closed by its content; nil if
// there is no fence or a switch is impossible (an info string with a
// backtick).
func switchFences(lines []string) []string {
	d := Parse([]byte(strings.Join(lines, "\n")))
	if len(d.fences) == 0 {
		return nil
	}
	out := append([]string(nil), lines...)
	for _, f := range d.fences {
		_, r := fenceAt(out[f.open])
		to := byte('~')
		if r.ch == '~' {
			to = '`'
		}
		n := 3
		for k := f.open + 1; k < f.close; k++ {
			t := strings.TrimLeft(out[k], " \t")
			m := 0
			for m < len(t) && t[m] == to {
				m++
			}
			if m >= n {
				n = m + 1
			}
		}
		open := out[f.open]
		at := strings.IndexByte(open, r.ch)
		info := open[at+r.n:]
		if to == '`' && strings.IndexByte(info, '`') >= 0 {
			return nil
		}
		out[f.open] = open[:at] + strings.Repeat(string(to), n) + info
		cl := out[f.close]
		at = strings.IndexByte(cl, r.ch)
		out[f.close] = cl[:at] + strings.Repeat(string(to), n)
	}
	return out
}

// render adds the marker and checks that the result, parsed alone, is exactly
// one marked entry spanning every line.
func render(lines []string, id string) (form, bool) {
	if lines == nil {
		return form{}, false
	}
	d := Parse([]byte(lines[0]))
	first := d.lines[0]
	var out []string
	if first.kind == kindFence || first.openerLike || tableHeader(lines) {
		out = append([]string{Marker(id)}, lines...)
	} else {
		out = append([]string(nil), lines...)
		out[0] += " " + Marker(id)
	}
	text := strings.Join(out, "\n")
	pd := Parse([]byte(text))
	ms := pd.marked(false, "")
	if len(ms) != 1 || ms[0].ID != id || ms[0].Start != 0 || ms[0].End != len(text) || ms[0].Heading {
		return form{}, false
	}
	return form{lines: out, list: pd.lines[0].itemStart}, true
}

// tableHeader reports whether lines open with a GitHub table: a header row
// and a delimiter row of as many cells. A marker at the end of the header
// row would be one more cell there, and GitHub would show no table at all;
// such an entry is marked on a line of its own before it, an HTML comment
// GFM ends at its own line.
func tableHeader(lines []string) bool {
	if len(lines) < 2 || !strings.Contains(lines[0], "|") {
		return false
	}
	delim := tableCells(lines[1])
	if len(delim) == 0 || len(delim) == 1 && !strings.Contains(lines[1], "|") {
		return false
	}
	for _, c := range delim {
		c = strings.TrimSuffix(strings.TrimPrefix(c, ":"), ":")
		if c == "" || strings.Trim(c, "-") != "" {
			return false
		}
	}
	return len(tableCells(lines[0])) == len(delim)
}

// tableCells splits a table row into its cells, trimmed, as GFM does: an
// outer pipe at either end is no cell boundary, and a backslash-escaped
// pipe is cell text.
func tableCells(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(row, "|")
	if strings.HasSuffix(row, "|") && !strings.HasSuffix(row, "\\|") {
		row = row[:len(row)-1]
	}
	var cells []string
	start := 0
	for i := 0; i < len(row); i++ {
		switch row[i] {
		case '\\':
			i++
		case '|':
			cells = append(cells, strings.TrimSpace(row[start:i]))
			start = i + 1
		}
	}
	return append(cells, strings.TrimSpace(row[start:]))
}
