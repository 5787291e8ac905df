package mdoc

import (
	"bytes"
	"sort"
	"strings"
)

// findBlocks pairs the opener and closer lines of other tools' managed
// regions. Candidates are lines outside fenced code, indented at most three
// spaces, that consist of exactly one HTML comment or one custom-element tag:
//
//	<!-- NAME:START --> … <!-- NAME:END -->        (also BEGIN, "-", "_" or " " separators)
//	<!-- NAME-v1 -->     … <!-- end-NAME -->         (also "END NAME")
//	<!-- NAME: note -->  … <!-- /NAME -->
//	<claude-mem-context> … </claude-mem-context>    (tag names with a hyphen)
//
// A closer named X pairs with the nearest unpaired opener whose text starts
// with X followed by a non-alphanumeric byte (or nothing). Openers are kept on
// a stack so that pairs nest; an opener that is never closed is not a block,
// and neither are openers left unpaired inside a closed block.
func (d *Doc) findBlocks() {
	type opener struct {
		text string // comment text, or tag name
		tag  bool
		line int
	}
	var stack []opener
	for i := range d.lines {
		l := &d.lines[i]
		if l.kind == kindBlank || l.kind == kindFence || l.indent > 3 {
			continue
		}
		s := bytes.TrimRight(d.text(i), " \t")
		if len(s) < 3 || s[0] != '<' {
			continue
		}
		name, isTag, closer, ok := blockLine(s)
		if !ok {
			continue
		}
		if !closer {
			stack = append(stack, opener{name, isTag, i})
			continue
		}
		for k := len(stack) - 1; k >= 0; k-- {
			o := stack[k]
			if o.tag != isTag || !opens(o.text, name, isTag) {
				continue
			}
			d.Blocks = append(d.Blocks, Block{Name: name, Start: d.lines[o.line].start, End: l.next})
			stack = stack[:k]
			break
		}
	}
	sort.Slice(d.Blocks, func(a, b int) bool { return d.Blocks[a].Start < d.Blocks[b].Start })
}

// blockLine classifies a candidate line s (trimmed). For a closer it returns
// the block name; for an opener the comment text or tag name.
func blockLine(s []byte) (name string, tag, closer, ok bool) {
	if bytes.HasPrefix(s, []byte("<!--")) {
		if !bytes.HasSuffix(s, []byte("-->")) || len(s) < 7 {
			return "", false, false, false
		}
		inner := s[4 : len(s)-3]
		if bytes.Contains(inner, []byte("-->")) || len(markerLocs(s)) > 0 {
			return "", false, false, false // two comments on one line, or our own marker
		}
		t := strings.TrimSpace(string(inner))
		if t == "" {
			return "", false, false, false
		}
		if n := closerName(t); n != "" {
			return n, false, true, true
		}
		return t, false, false, true
	}
	// Custom element: <name attrs> or </name>, name containing a hyphen.
	if s[len(s)-1] != '>' {
		return "", false, false, false
	}
	inner := s[1 : len(s)-1]
	closer = len(inner) > 0 && inner[0] == '/'
	if closer {
		inner = bytes.TrimSpace(inner[1:])
	}
	n := 0
	for n < len(inner) && (isAlnum(inner[n]) || inner[n] == '-' || inner[n] == '_' || inner[n] == '.' || inner[n] == ':') {
		n++
	}
	if n == 0 || !isAlpha(inner[0]) || bytes.IndexByte(inner[:n], '-') < 0 {
		return "", false, false, false
	}
	if n < len(inner) && (closer || (inner[n] != ' ' && inner[n] != '\t') || bytes.HasSuffix(inner, []byte("/"))) {
		return "", false, false, false
	}
	return string(inner[:n]), true, closer, true
}

// closerName returns the name a closing comment text refers to, or "".
func closerName(t string) string {
	lower := strings.ToLower(t)
	switch {
	case strings.HasPrefix(t, "/"):
		return strings.TrimSpace(t[1:])
	case len(t) > 4 && strings.HasPrefix(lower, "end") && isSep(t[3]):
		return strings.TrimSpace(t[4:])
	case len(t) > 4 && strings.HasSuffix(lower, "end") && isSep(t[len(t)-4]):
		return strings.TrimSpace(t[:len(t)-4])
	}
	return ""
}

// opens reports whether an opener with text o is closed by a closer named
// name: tags by equal names, comments by a prefix ending on a word boundary.
func opens(o, name string, tag bool) bool {
	if tag {
		return o == name
	}
	if len(o) < len(name) || !strings.EqualFold(o[:len(name)], name) {
		return false
	}
	return len(o) == len(name) || !isAlnum(o[len(name)])
}

func isSep(b byte) bool   { return b == ':' || b == '-' || b == '_' || b == ' ' }
func isAlpha(b byte) bool { return b|0x20 >= 'a' && b|0x20 <= 'z' }
func isAlnum(b byte) bool { return isAlpha(b) || (b >= '0' && b <= '9') }

// outermostBlock returns the outermost managed block strictly containing
// offset p (Start < p < End).
func (d *Doc) outermostBlock(p int) (Block, bool) {
	for _, b := range d.Blocks { // sorted by Start: the first hit is outermost
		if b.Start < p && p < b.End {
			return b, true
		}
		if b.Start >= p {
			break
		}
	}
	return Block{}, false
}

// boundaryLines returns the set of line indexes that open or close a managed
// block.
func (d *Doc) boundaryLines() map[int]bool {
	m := make(map[int]bool, 2*len(d.Blocks))
	for _, b := range d.Blocks {
		m[d.lineAt(b.Start)] = true
		m[d.lineAt(b.End-1)] = true
	}
	return m
}
