package mdoc

import (
	"fmt"
	"strings"
	"testing"
)

// sectionList renders sections as "level:line:title" for compact comparison.
func sectionList(d *Doc) string {
	var b []string
	for _, s := range d.Sections {
		b = append(b, fmt.Sprintf("%d:%d:%s", s.Level, s.Line, s.Title))
	}
	return strings.Join(b, " | ")
}

func TestParseLineEndings(t *testing.T) {
	for _, tc := range []struct {
		in    string
		eol   string
		final bool
	}{
		{"", "\n", false},
		{"a", "\n", false},
		{"a\n", "\n", true},
		{"a\r\nb\r\n", "\r\n", true},
		{"a\r\nb\r\nc", "\r\n", false},
		{"a\r\nb\nc\n", "\n", true},     // tie goes to "\n"
		{"a\r\nb\r\nc\n", "\r\n", true}, // dominant
	} {
		d := Parse([]byte(tc.in))
		if d.EOL != tc.eol || d.FinalNewline != tc.final {
			t.Errorf("Parse(%q): EOL %q final %v, want %q %v", tc.in, d.EOL, d.FinalNewline, tc.eol, tc.final)
		}
	}
}

func TestParseSections(t *testing.T) {
	doc := "intro\n" + // 1
		"\n" + // 2
		"# Title #\n" + // 3
		"\n" + // 4
		"text\n" + // 5
		"\n" + // 6
		"## Build <!-- intermem:0123abcd -->\n" + // 7
		"- one\n" + // 8
		"### Deep ###\n" + // 9
		"  #### indented\n" + // 10: a heading, no list item is open
		"- item\n" + // 11
		"  # inside the item\n" + // 12: a heading inside a list item is not a section
		"####### seven\n" + // 13: not a heading
		"#nospace\n" + // 14: not a heading
		"    # code\n" + // 15: indented code
		"##\n" + // 16: empty heading
		"## C# and F#\n" // 17
	d := Parse([]byte(doc))
	want := "0:1: | 1:3:Title | 2:7:Build | 3:9:Deep | 4:10:indented | 2:16: | 2:17:C# and F#"
	if got := sectionList(d); got != want {
		t.Fatalf("sections\n got %s\nwant %s", got, want)
	}
	off := func(line int) int { // byte offset of a 1-based line
		return len(strings.Join(strings.SplitAfter(doc, "\n")[:line-1], ""))
	}
	checks := []struct {
		k            int
		bodyEnd, end int // as 1-based line numbers: the offset where that line starts
	}{
		{0, 2, 3},   // preamble: own content "intro", ends at "# Title"
		{1, 6, 18},  // Title: own content "text"; the only H1, runs to the end
		{2, 9, 16},  // Build: own content "- one"; runs to "##" (16)
		{3, 10, 16}, // Deep
		{4, 16, 16}, // indented: own content through line 15
		{5, 17, 17}, // empty heading: BodyEnd past its own line
	}
	for _, c := range checks {
		s := d.Sections[c.k]
		if s.BodyEnd != off(c.bodyEnd) || s.End != min(off(c.end), len(doc)) {
			t.Errorf("section %d %q: BodyEnd %d End %d, want %d %d", c.k, s.Title, s.BodyEnd, s.End, off(c.bodyEnd), min(off(c.end), len(doc)))
		}
	}
	if s := d.Sections[6]; s.End != len(doc) || s.BodyEnd != len(doc) {
		t.Errorf("last section: BodyEnd %d End %d, want %d", s.BodyEnd, s.End, len(doc))
	}
}

func TestParseFencesHideHeadings(t *testing.T) {
	doc := "# A\n" +
		"```bash\n" +
		"# a shell comment\n" +
		"## another\n" +
		"```\n" +
		"~~~~\n" +
		"# tilde fence\n" +
		"~~~\n" + // too short to close
		"```\n" + // wrong char
		"~~~~~\n" +
		"#[derive(Debug)]\n" +
		"- item\n" +
		"  ```rust\n" +
		"  # in an item's fence\n" +
		"\n" +
		"  ```\n" +
		"- nested\n" +
		"  - child\n" +
		"    ```\n" +
		"    # in a nested item's fence\n" +
		"    ```\n" +
		"## B\n"
	d := Parse([]byte(doc))
	if got, want := sectionList(d), "0:1: | 1:1:A | 2:22:B"; got != want {
		t.Fatalf("sections\n got %s\nwant %s", got, want)
	}
	if len(d.fences) != 4 {
		t.Errorf("found %d fences, want 4", len(d.fences))
	}
}

func TestParseUnclosedFenceIsText(t *testing.T) {
	// CommonMark would let the first fence run to the end and hide every
	// heading after it; we treat an opener without a closer as text.
	doc := "## A\n\n```xml\n<x>\n\n## B\n- y\n\n### C\n~~~\n"
	d := Parse([]byte(doc))
	if got, want := sectionList(d), "0:1: | 2:1:A | 2:6:B | 3:9:C"; got != want {
		t.Fatalf("sections\n got %s\nwant %s", got, want)
	}
	// A fence in a list item that its container ends before it closes is
	// not a fence either: the heading after it counts.
	doc = "- item\n  ```\n  code\n# H\n  ```\n"
	d = Parse([]byte(doc))
	if got, want := sectionList(d), "0:1: | 1:4:H"; got != want {
		t.Fatalf("sections\n got %s\nwant %s", got, want)
	}
}

func TestParseManyUnclosedFencesIsLinear(t *testing.T) {
	// Every opener has an info string, so none can close another: each would
	// scan to the end of the document without the memo.
	doc := strings.Repeat("```go\n", 20000) + "# end\n"
	d := Parse([]byte(doc))
	if got, want := sectionList(d), "0:1: | 1:20001:end"; got != want {
		t.Fatalf("sections: %s", got)
	}
}

func TestParseListItems(t *testing.T) {
	doc := "- a\n" + // 0
		"  cont\n" + // 1
		"lazy\n" + // 2: lazy continuation of a
		"  - b\n" + // 3: child of a
		"\n" + // 4
		"    b para\n" + // 5: b's paragraph after a blank line
		"1. one\n" + // 6
		"   - under one\n" + // 7
		"10) ten\n" + // 8: contentCol 4
		"\n" + // 9
		"para\n" + // 10
		"2. not an item (cannot interrupt a paragraph)\n" + // 11
		"* * *\n" + // 12: thematic break
		"- - x\n" // 13: two items on one line
	d := Parse([]byte(doc))
	type exp struct {
		line, last, col, parent int
	}
	want := []exp{{0, 5, 2, -1}, {3, 5, 4, 0}, {6, 7, 3, -1}, {7, 7, 5, 2}, {8, 8, 4, -1}, {13, 13, 2, -1}, {13, 13, 4, 5}}
	if len(d.items) != len(want) {
		t.Fatalf("%d items, want %d: %+v", len(d.items), len(want), d.items)
	}
	for i, w := range want {
		it := d.items[i]
		if it.first != w.line || it.last != w.last || it.contentCol != w.col || it.parent != w.parent {
			t.Errorf("item %d: %+v, want first=%d last=%d col=%d parent=%d", i, it, w.line, w.last, w.col, w.parent)
		}
	}
	if d.lines[11].item != -1 || d.lines[11].itemStart {
		t.Errorf("line 12 should be paragraph text")
	}
	if d.lines[12].kind != kindBreak {
		t.Errorf("line 13 should be a thematic break")
	}
}

func TestParseBlocks(t *testing.T) {
	doc := "<!-- OPENSPEC:START -->\n" + // 1
		"# OpenSpec\n" + // 2
		"<!-- OPENSPEC:END -->\n" + // 3
		"<!-- improv:brain:begin -->\n" + // 4
		"<!-- improv:rules:begin -->\n" + // 5
		"rules\n" + // 6
		"<!-- improv:rules:end -->\n" + // 7
		"<!-- improv:brain:end -->\n" + // 8
		"<!-- bv-agent-instructions-v1 -->\n" + // 9
		"```\n<!-- end-bv-agent-instructions -->\n```\n" + // 10-12: inside a fence, not a closer
		"<!-- end-bv-agent-instructions -->\n" + // 13
		"<!-- braindump: rules extracted from PR review patterns -->\n" + // 14
		"<!-- rule:232 -->\n" + // 15
		"- rule\n" + // 16
		"<!-- /braindump -->\n" + // 17
		"<claude-mem-context>\n" + // 18
		"| a | b |\n" + // 19
		"</claude-mem-context>\n" + // 20
		"<!-- lonely:start -->\n" + // 21: never closed
		"<!-- other:end -->\n" + // 22: closes nothing
		"<details>\n</details>\n" + // 23-24: not a custom element
		"<!-- intermem:0123456789abcdef -->\n" // 25: our marker is not a block line
	d := Parse([]byte(doc))
	var got []string
	for _, b := range d.Blocks {
		got = append(got, fmt.Sprintf("%s:%d-%d", b.Name, d.lineAt(b.Start)+1, d.lineAt(b.End-1)+1))
	}
	want := "OPENSPEC:1-3 improv:brain:4-8 improv:rules:5-7 bv-agent-instructions:9-13 braindump:14-17 claude-mem-context:18-20"
	if strings.Join(got, " ") != want {
		t.Fatalf("blocks\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	if b := d.Blocks[0]; b.Start != 0 || b.End != len("<!-- OPENSPEC:START -->\n# OpenSpec\n<!-- OPENSPEC:END -->\n") {
		t.Errorf("OPENSPEC block range [%d,%d)", b.Start, b.End)
	}
}

func TestParseNeverPanics(t *testing.T) {
	for _, s := range []string{"", "\n", "\r", "\r\n", "-", "- ", "1.", "```", "~~~\n~~", "#", "<", "<!--", "<!---->", "- - - x", "\t-\tx", ">", "<a-b>"} {
		d := Parse([]byte(s))
		_ = d.Marked()
		_ = d.Statements()
		_ = d.Imports()
	}
}
