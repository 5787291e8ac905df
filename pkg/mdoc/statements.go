package mdoc

import (
	"bytes"
	"strings"

	"github.com/intermem/intermem/pkg/lazyre"
)

// Statement is a unit of text that says something: a list item or a
// paragraph.
type Statement struct {
	Line    int    // 1-based line where it starts
	Text    string // as Marked.Text, but with markers kept: list marker removed, continuation dedented, "\n" line endings
	Section string // title of the innermost enclosing section
}

// Statements returns the text units that dedup compares against, outside
// fenced code and managed blocks: every list item, whole (nested items are
// part of their parent's text and are also reported on their own), and every
// paragraph — a run of text lines bounded by blank lines, headings, list
// items and fences. Lines made only of HTML comments are not statements.
// Markers are kept; normalization is the caller's business.
func (d *Doc) Statements() []Statement { return d.statements(true) }

// AllStatements is Statements including the text inside other tools'
// managed blocks: everything Claude Code reads when it loads the document.
// Dedup uses it — a rule another tool keeps in its block is already said —
// while edits stay outside those blocks.
func (d *Doc) AllStatements() []Statement { return d.statements(false) }

func (d *Doc) statements(skipBlocks bool) []Statement {
	var out []Statement
	inBlock := d.blockLineMask()
	if !skipBlocks {
		inBlock = make([]bool, len(d.lines))
	}
	bounds := d.boundaryLines()
	for i := 0; i < len(d.lines); i++ {
		l := &d.lines[i]
		if inBlock[i] {
			continue
		}
		sec := d.Sections[d.sectionAt(i)].Title
		if l.itemStart && l.item >= 0 && d.items[l.item].first == i {
			// "- - x" opens two items: report the outer one, up to any
			// managed block inside it.
			last := d.items[d.entryItem(i)].last
			for k := i + 1; k <= last; k++ {
				if inBlock[k] {
					last = k - 1
					break
				}
			}
			out = append(out, Statement{Line: i + 1, Text: d.unitText(i, last, false), Section: sec})
			continue
		}
		if l.item >= 0 || l.kind != kindText && l.kind != kindHTML || bounds[i] {
			continue
		}
		if i > 0 && d.runLine(i-1, bounds) {
			continue // not the first line of its paragraph
		}
		last := i
		for last+1 < len(d.lines) && !inBlock[last+1] && d.runLine(last+1, bounds) {
			last++
		}
		if last == i && l.kind == kindHTML && isCommentOnly(d.text(i)) {
			continue
		}
		out = append(out, Statement{Line: i + 1, Text: d.unitText(i, last, false), Section: sec})
		i = last
	}
	return out
}

// runLine reports whether line j continues a paragraph.
func (d *Doc) runLine(j int, bounds map[int]bool) bool {
	l := &d.lines[j]
	return l.item < 0 && !bounds[j] && (l.kind == kindText || l.kind == kindHTML)
}

// blockLineMask marks the lines inside managed blocks, boundaries included.
func (d *Doc) blockLineMask() []bool {
	m := make([]bool, len(d.lines))
	for _, b := range d.Blocks {
		for i := d.lineAt(b.Start); i < len(d.lines) && d.lines[i].start < b.End; i++ {
			m[i] = true
		}
	}
	return m
}

func isCommentOnly(s []byte) bool {
	t := strings.TrimSpace(string(s))
	return strings.HasPrefix(t, "<!--") && strings.HasSuffix(t, "-->") && strings.Count(t, "-->") == 1
}

// importRE is Claude Code's import pattern: "@" at the start of a line or
// after whitespace, then the path up to the next unescaped whitespace.
var importRE = lazyre.New(`(?:^|\s)@((?:[^\s\\]|\\ )+)`)

// Imports returns the paths of the @path imports, in order and without
// duplicates, as Claude Code reads them: "@" at the start of a line or after
// whitespace, outside fenced code and inline code spans; "\ " is an escaped
// space. The paths are returned as written (relative to the importing file,
// absolute, or "~/…").
func (d *Doc) Imports() []string {
	var out []string
	seen := map[string]bool{}
	for i := range d.lines {
		l := &d.lines[i]
		if l.kind == kindBlank || l.kind == kindFence {
			continue
		}
		s := d.Content[l.start:l.end]
		if bytes.IndexByte(s, '@') < 0 {
			continue
		}
		if spans := codeSpans(s); len(spans) > 0 {
			b := []byte(string(s))
			for _, sp := range spans {
				for k := sp[0]; k < sp[1]; k++ {
					b[k] = ' '
				}
			}
			s = b
		}
		for _, m := range importRE.Get().FindAllSubmatch(s, -1) {
			p := strings.ReplaceAll(string(m[1]), `\ `, " ")
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}

// codeSpans returns the byte ranges of the inline code spans on one line: a
// run of n backticks up to the next run of exactly n backticks. A backslash
// escapes a backtick outside a span; a run with no partner is literal.
// Spans that continue onto the next line are not recognized.
func codeSpans(s []byte) [][2]int {
	var spans [][2]int
	for i := 0; i < len(s); {
		switch s[i] {
		case '\\':
			i += 2
			continue
		case '`':
		default:
			i++
			continue
		}
		n := i
		for n < len(s) && s[n] == '`' {
			n++
		}
		run := n - i
		closed := false
		for j := n; j < len(s); {
			if s[j] != '`' {
				j++
				continue
			}
			k := j
			for k < len(s) && s[k] == '`' {
				k++
			}
			if k-j == run {
				spans = append(spans, [2]int{i, k})
				i, closed = k, true
				break
			}
			j = k
		}
		if !closed {
			i = n
		}
	}
	return spans
}

func inSpans(spans [][2]int, off int) bool {
	for _, sp := range spans {
		if sp[0] <= off && off < sp[1] {
			return true
		}
	}
	return false
}
