package mdoc

import (
	"strings"
	"testing"
)

func TestMarker(t *testing.T) {
	if got := Marker("0123456789abcdef"); got != "<!-- intermem:0123456789abcdef -->" {
		t.Fatalf("Marker = %q", got)
	}
	for s, want := range map[string]string{
		"<!-- intermem:8ed6945e -->":           "8ed6945e",
		"<!--intermem:0123456789abcdef-->":     "0123456789abcdef",
		"<!--  intermem:0123456789abcdef\t-->": "0123456789abcdef",
		"<!-- intermem:8ed6945 -->":            "", // 7 digits
		"<!-- intermem:8ED6945E -->":           "", // upper case is not ours
		"<!-- intermem -->":                    "", // the old bare form carries no id
	} {
		got := ""
		if m := markerRE.Get().FindStringSubmatch(s); m != nil {
			got = m[1]
		}
		if got != want {
			t.Errorf("MarkerRE on %q: %q, want %q", s, got, want)
		}
	}
}

const markedDoc = "## A <!-- intermem:0123abcd -->\n" + // 1
	"- one <!-- intermem:89abcdef -->\n" + // 2
	"- two <!-- intermem:0123456789abcdef -->\n" + // 3
	"  continued line\n" + // 4
	"  - nested child\n" + // 5
	"  ```go\n" + // 6
	"  code <!-- intermem:ffffffffffffffff -->\n" + // 7: code, not a marker
	"  ```\n" + // 8
	"- three\n" + // 9
	"  last line <!-- intermem:aaaaaaaa -->\n" + // 10: a legacy marker on the last line tags the whole item
	"- `<!-- intermem:bbbbbbbb -->` in a code span\n" + // 11: not a marker
	"\n" + // 12
	"<!-- intermem:cccccccccccccccc -->\n" + // 13: own line, tags the fence after it
	"```sh\n" + // 14
	"make\n" + // 15
	"```\n" + // 16
	"\n" + // 17
	"### Sub\n" + // 18
	"A paragraph <!-- intermem:dddddddd -->\n" + // 19
	"over two lines.\n" + // 20
	"  - child <!-- intermem:eeeeeeee -->\n" // 21: a top-level item after a paragraph, indented 2

func TestMarked(t *testing.T) {
	d := Parse([]byte(markedDoc))
	lines := strings.SplitAfter(markedDoc, "\n")
	span := func(from, to int) string { return strings.Join(lines[from-1:to], "") }
	type want struct {
		id       string
		line     int
		from, to int // 1-based lines of the entry
		heading  bool
		text     string
		section  string
	}
	wants := []want{
		{"0123abcd", 1, 1, 1, true, "A", "A"},
		{"89abcdef", 2, 2, 2, false, "one", "A"},
		{"0123456789abcdef", 3, 3, 8, false, "two\ncontinued line\n- nested child\n```go\ncode <!-- intermem:ffffffffffffffff -->\n```", "A"},
		{"aaaaaaaa", 10, 9, 10, false, "three\nlast line", "A"},
		{"cccccccccccccccc", 13, 13, 16, false, "```sh\nmake\n```", "A"},
		{"dddddddd", 19, 19, 20, false, "A paragraph\nover two lines.", "Sub"},
		{"eeeeeeee", 21, 21, 21, false, "child", "Sub"},
	}
	got := d.Marked()
	if len(got) != len(wants) {
		t.Fatalf("Marked found %d entries, want %d: %+v", len(got), len(wants), got)
	}
	for i, w := range wants {
		g := got[i]
		if g.ID != w.id || g.Line != w.line || g.Heading != w.heading || g.Text != w.text || g.Section != w.section {
			t.Errorf("entry %d:\n got %+v\nwant %+v", i, g, w)
		}
		if s := markedDoc[g.Start:g.End]; s != span(w.from, w.to) {
			t.Errorf("entry %s spans %q, want lines %d-%d", w.id, s, w.from, w.to)
		}
	}
}

func TestMarkedCRLF(t *testing.T) {
	doc := strings.ReplaceAll(markedDoc, "\n", "\r\n")
	got := Parse([]byte(doc)).Marked()
	if len(got) != 7 {
		t.Fatalf("found %d entries", len(got))
	}
	if g := got[2]; g.Text != "two\ncontinued line\n- nested child\n```go\ncode <!-- intermem:ffffffffffffffff -->\n```" || !strings.HasSuffix(doc[g.Start:g.End], "  ```\r\n") {
		t.Errorf("multi-line entry in a CRLF document: %+v", g)
	}
}

func TestRemove(t *testing.T) {
	const id = "0123456789abcdef"
	m := " " + Marker(id)
	for _, tc := range []struct {
		name        string
		doc, want   string
		removeEmpty bool
	}{{
		name: "multi-line item between items",
		doc:  "## A\n- one\n- two" + m + "\n  continued\n  - child\n\n  ```go\n  x\n  ```\n- three\n",
		want: "## A\n- one\n- three\n",
	}, {
		name: "item between blank lines takes one blank line with it",
		doc:  "## A\n\nIntro.\n\n- entry" + m + "\n  more\n\n## B\n",
		want: "## A\n\nIntro.\n\n## B\n",
	}, {
		name: "a list item right after keeps the blank line before",
		doc:  "Intro.\n\n- entry" + m + "\n  more\n- other\n",
		want: "Intro.\n\n- other\n",
	}, {
		name: "own-line marker and its fence",
		doc:  "## A\n- x\n\n" + Marker(id) + "\n```sh\n# not a heading\n\nmake\n```\n\n## B\n",
		want: "## A\n- x\n\n## B\n",
	}, {
		name: "legacy marker after the code, whole item goes",
		doc:  "- run:\n  ```\n  make\n  ```" + m + "\n- keep\n",
		want: "- keep\n",
	}, {
		name: "last entry of a document without a final newline",
		doc:  "## A\n- x\n- y" + m,
		want: "## A\n- x",
	}, {
		name: "last entry after a blank line, no final newline",
		doc:  "para\n\n- y" + m,
		want: "para",
	}, {
		name:        "emptied created section goes",
		doc:         "## A\n- x\n\n## New\n\n- e" + m + "\n",
		want:        "## A\n- x\n",
		removeEmpty: true,
	}, {
		name: "emptied section stays unless asked",
		doc:  "## A\n- x\n\n## New\n\n- e" + m + "\n",
		want: "## A\n- x\n\n## New\n",
	}, {
		name:        "section with other content stays",
		doc:         "## New\n\n- e" + m + "\n- user's own\n",
		want:        "## New\n\n- user's own\n",
		removeEmpty: true,
	}, {
		name:        "section with a subsection stays",
		doc:         "## New\n\n- e" + m + "\n\n### Sub\n- s\n",
		want:        "## New\n\n### Sub\n- s\n",
		removeEmpty: true,
	}, {
		name:        "emptied section at the end of a document without a final newline",
		doc:         "para\n\n## New\n\n- e" + m,
		want:        "para",
		removeEmpty: true,
	}, {
		name: "marked heading: the line alone",
		doc:  "- x\n\n### Lock" + m + "\n- fact\n",
		want: "- x\n\n- fact\n",
	}, {
		name: "a line opening two items: the outer one goes",
		doc:  "- - x" + m + "\n    more\n  - y\n- z\n",
		want: "- z\n",
	}, {
		name: "CRLF",
		doc:  "## A\r\n- x\r\n- two" + m + "\r\n  more\r\n\r\n## B\r\n",
		want: "## A\r\n- x\r\n\r\n## B\r\n",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			d := Parse([]byte(tc.doc))
			out, removed, ok := d.Remove(id, tc.removeEmpty)
			if !ok {
				t.Fatalf("Remove: not found")
			}
			if string(out) != tc.want {
				t.Errorf("Remove\n got %q\nwant %q", out, tc.want)
			}
			if !strings.Contains(string(removed), Marker(id)) {
				t.Errorf("removed %q does not hold the marker", removed)
			}
			if strings.Contains(string(out), "\n\n\n") {
				t.Errorf("doubled blank line left: %q", out)
			}
		})
	}
}

func TestRemoveMissing(t *testing.T) {
	doc := []byte("- x <!-- intermem:0123456789abcdef -->\n")
	out, removed, ok := Parse(doc).Remove("fedcba9876543210", true)
	if ok || removed != nil || string(out) != string(doc) {
		t.Fatalf("Remove of an unknown id: ok=%v removed=%q out=%q", ok, removed, out)
	}
}

func TestMarkedInterverseLegacy(t *testing.T) {
	// The original tool's 8-hex markers on bullets and headings, in a real
	// file; every one must be found, and removing any of them takes exactly
	// its line.
	doc := readCorpus(t, "mistakeknot__Interverse@5376599__AGENTS.md")
	want := strings.Count(string(doc), "<!-- intermem:")
	if want != 39 {
		t.Fatalf("the corpus file has %d markers, expected 39", want)
	}
	d := Parse(doc)
	ms := d.Marked()
	if len(ms) != want {
		t.Fatalf("Marked found %d of %d markers", len(ms), want)
	}
	headings := 0
	for _, m := range ms {
		entry := string(doc[m.Start:m.End])
		if strings.Count(entry, "\n") != 1 || !strings.HasSuffix(entry, Marker(m.ID)+"\n") {
			t.Errorf("entry %s is not its single marked line: %q", m.ID, entry)
		}
		if m.Heading {
			headings++
			if !strings.HasPrefix(entry, "### ") {
				t.Errorf("entry %s marked as heading: %q", m.ID, entry)
			}
		} else if !strings.HasPrefix(entry, "- ") || m.Text != strings.TrimSuffix(entry[2:], " "+Marker(m.ID)+"\n") {
			t.Errorf("entry %s: text %q from %q", m.ID, m.Text, entry)
		}
		out, _, ok := d.Remove(m.ID, false)
		if !ok || len(out) != len(doc)-len(entry) {
			t.Errorf("Remove(%s) took %d bytes, want %d", m.ID, len(doc)-len(out), len(entry))
		}
	}
	if headings != 6 {
		t.Errorf("%d marked headings, want 6", headings)
	}
	if ms[0].Section != "Cross-Cutting Lessons (not covered by any single guide)" || ms[2].Section != "Git Credential Lock" {
		t.Errorf("sections: %q, %q", ms[0].Section, ms[2].Section)
	}
}
