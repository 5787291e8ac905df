package mdoc

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

const testID = "0123456789abcdef"

var mk = Marker(testID)

// checkPlace runs Place and the checks every accepted insertion must pass,
// computed independently of how Place builds its result.
func checkPlace(t *testing.T, doc, section, block string) Insertion {
	t.Helper()
	d := Parse([]byte(doc))
	ins, err := d.Place(section, block, testID)
	if err != nil {
		if len(doc) > 500 {
			doc = doc[:500] + "…"
		}
		t.Fatalf("Place(%q, %q) into %q: %v", section, block, doc, err)
	}
	out := string(ins.Content)

	// The output is the original with one contiguous run of bytes added:
	// the common prefix and suffix cover the original.
	delta := len(out) - len(doc)
	if delta <= 0 {
		t.Fatalf("output is not longer than the original")
	}
	lcp := 0
	for lcp < len(doc) && out[lcp] == doc[lcp] {
		lcp++
	}
	lcs := 0
	for lcs < len(doc) && out[len(out)-1-lcs] == doc[len(doc)-1-lcs] {
		lcs++
	}
	if lcp+lcs < len(doc) {
		t.Fatalf("output is not the original plus one inserted run:\n%q", out)
	}
	inserted := out[min(lcp, ins.Start) : min(lcp, ins.Start)+delta]

	// Inserted line endings follow the document (a last line ending in a
	// lone CR is terminated with CRLF).
	if strings.HasSuffix(doc, "\r") {
		inserted = strings.Replace(inserted, "\r\n", "\n", 1)
	}
	if d.EOL == "\r\n" && strings.Count(inserted, "\n") != strings.Count(inserted, "\r\n") {
		t.Errorf("LF inserted into a CRLF document: %q", inserted)
	}
	if d.EOL == "\n" && strings.Contains(inserted, "\r") {
		t.Errorf("CR inserted into an LF document: %q", inserted)
	}
	if doc != "" && d.FinalNewline != strings.HasSuffix(out, "\n") {
		t.Errorf("final newline changed: %v -> %v", d.FinalNewline, !d.FinalNewline)
	}

	// The entry is found whole, marker on its first line, outside blocks.
	nd := Parse(ins.Content)
	var mine []Marked
	for _, m := range nd.Marked() {
		if m.ID == testID {
			mine = append(mine, m)
		}
	}
	if len(mine) != 1 {
		t.Fatalf("found the marker %d times in\n%s", len(mine), out)
	}
	m := mine[0]
	if !strings.Contains(inserted, out[m.Start:m.End]) {
		t.Errorf("entry %q is not inside the inserted text %q", out[m.Start:m.End], inserted)
	}
	firstLine, _, _ := strings.Cut(out[m.Start:m.End], "\n")
	if !strings.Contains(firstLine, mk) {
		t.Errorf("marker is not on the entry's first line %q", firstLine)
	}
	for _, b := range nd.Blocks {
		if b.Start < m.Start && m.Start < b.End {
			t.Errorf("entry inside managed block %s", b.Name)
		}
	}
	// It lies in the section Place reports (or one of its subsections).
	inSection := false
	for _, s := range nd.Sections {
		if s.Title == ins.Section && s.Start <= m.Start && m.Start < max(s.End, s.Start+1) {
			inSection = true
		}
	}
	if !inSection {
		t.Errorf("entry is not in section %q", ins.Section)
	}

	// Removing it gives the original back, byte for byte.
	back, _, ok := nd.Remove(testID, ins.Created)
	if !ok || string(back) != doc {
		t.Fatalf("Remove did not restore the original:\nwant %q\n got %q", doc, back)
	}
	return ins
}

func TestPlace(t *testing.T) {
	const base = "# Title\n\n## Build\n\n- make build\n\n## Test\n\n- go test ./...\n"
	for _, tc := range []struct {
		name, doc, section, block string
		want, used                string
		created                   bool
	}{{
		name:    "matching section, after its last item",
		doc:     base,
		section: "Build",
		block:   "- run `make lint` first",
		want:    "# Title\n\n## Build\n\n- make build\n- run `make lint` first " + mk + "\n\n## Test\n\n- go test ./...\n",
		used:    "Build",
	}, {
		name:    "fuzzy-matched section",
		doc:     base,
		section: "tests",
		block:   "- use -race",
		want:    "# Title\n\n## Build\n\n- make build\n\n## Test\n\n- go test ./...\n- use -race " + mk + "\n",
		used:    "Test",
	}, {
		name:    "normalized match: emphasis and a colon",
		doc:     "## **Conventions**:\n\nWrite tests.\n",
		section: "conventions",
		block:   "- errors wrap with %w",
		want:    "## **Conventions**:\n\nWrite tests.\n\n- errors wrap with %w " + mk + "\n",
		used:    "**Conventions**:",
	}, {
		name:    "new section at the end",
		doc:     base,
		section: "Gotchas",
		block:   "- the cache survives `go clean`",
		want:    base + "\n## Gotchas\n\n- the cache survives `go clean` " + mk + "\n",
		used:    "Gotchas",
		created: true,
	}, {
		name:    "new section keeps trailing blank lines after it",
		doc:     "## A\n- x\n\n\n",
		section: "B",
		block:   "- y",
		want:    "## A\n- x\n\n## B\n\n- y " + mk + "\n\n\n",
		used:    "B",
		created: true,
	}, {
		name:    "new top-level section in a document of H1s",
		doc:     "# One\ntext\n# Two\ntext\n",
		section: "Three",
		block:   "- z",
		want:    "# One\ntext\n# Two\ntext\n\n# Three\n\n- z " + mk + "\n",
		used:    "Three",
		created: true,
	}, {
		name:    "empty document",
		doc:     "",
		section: "Notes",
		block:   "- first",
		want:    "## Notes\n\n- first " + mk + "\n",
		used:    "Notes",
		created: true,
	}, {
		name:    "own content ends before a subsection",
		doc:     "## A\nIntro.\n\n### A1\n- deep\n",
		section: "A",
		block:   "- x",
		want:    "## A\nIntro.\n\n- x " + mk + "\n\n### A1\n- deep\n",
		used:    "A",
	}, {
		name:    "empty section",
		doc:     "## A\n## B\n",
		section: "A",
		block:   "- x",
		want:    "## A\n\n- x " + mk + "\n## B\n",
		used:    "A",
	}, {
		name:    "no section named: first section when there is no preamble",
		doc:     "# Guide\n\nSome words.\n\n## A\n- a\n",
		section: "",
		block:   "- x",
		want:    "# Guide\n\nSome words.\n\n- x " + mk + "\n\n## A\n- a\n",
		used:    "Guide",
	}, {
		name:    "no section named: headless list",
		doc:     "- [a](a.md) — one\n- [b](b.md) — two\n",
		section: "",
		block:   "- x",
		want:    "- [a](a.md) — one\n- [b](b.md) — two\n- x " + mk + "\n",
		used:    "",
	}, {
		name:    "CRLF document",
		doc:     "# T\r\n\r\n## A\r\n- x\r\n\r\n## B\r\n- y\r\n",
		section: "A",
		block:   "- new\n  second line",
		want:    "# T\r\n\r\n## A\r\n- x\r\n- new " + mk + "\r\n  second line\r\n\r\n## B\r\n- y\r\n",
		used:    "A",
	}, {
		name:    "CRLF block into an LF document",
		doc:     "## A\n- x\n",
		section: "A",
		block:   "- new\r\n  second line\r\n",
		want:    "## A\n- x\n- new " + mk + "\n  second line\n",
		used:    "A",
	}, {
		name:    "no final newline, existing section",
		doc:     "## A\n- x",
		section: "A",
		block:   "- y",
		want:    "## A\n- x\n- y " + mk,
		used:    "A",
	}, {
		name:    "no final newline, new section",
		doc:     "## A\n- x",
		section: "B",
		block:   "- y\n  more",
		want:    "## A\n- x\n\n## B\n\n- y " + mk + "\n  more",
		used:    "B",
		created: true,
	}, {
		name:    "last line ends in a lone CR: it stays content",
		doc:     "#\r",
		section: "N",
		block:   "- x",
		want:    "#\r\r\n\n## N\n\n- x " + mk,
		used:    "N",
		created: true,
	}, {
		name:    "section ends in a managed block: after it",
		doc:     "## Setup\n\n- install go\n\n<!-- bv-agent-instructions-v1 -->\n- bv stuff\n<!-- end-bv-agent-instructions -->\n\n## Next\n",
		section: "Setup",
		block:   "- x",
		want:    "## Setup\n\n- install go\n\n<!-- bv-agent-instructions-v1 -->\n- bv stuff\n<!-- end-bv-agent-instructions -->\n\n- x " + mk + "\n\n## Next\n",
		used:    "Setup",
	}, {
		name:    "section's content ends inside a managed block: before it",
		doc:     "## Landing\n\n- push\n\n<!-- bv-v1 -->\n---\n\n## Beads\n\nUse bd.\n<!-- end-bv -->\n\n## Lessons\n",
		section: "Landing",
		block:   "- x",
		want:    "## Landing\n\n- push\n- x " + mk + "\n\n<!-- bv-v1 -->\n---\n\n## Beads\n\nUse bd.\n<!-- end-bv -->\n\n## Lessons\n",
		used:    "Landing",
	}, {
		name:    "heading inside a managed block that ends within the section: after the block",
		doc:     "## Landing\n\n- push\n\n<!-- bv-v1 -->\n## Beads\n\nUse bd.\n\n### Sub\n- s\n<!-- end-bv -->\n\n## Lessons\n",
		section: "Beads",
		block:   "- x",
		want:    "## Landing\n\n- push\n\n<!-- bv-v1 -->\n## Beads\n\nUse bd.\n\n### Sub\n- s\n<!-- end-bv -->\n\n- x " + mk + "\n\n## Lessons\n",
		used:    "Beads",
	}, {
		name:    "section wholly inside a managed block: a new section instead",
		doc:     "Read src/.\n\n<claude-mem-context>\n### Dec 4\n| a |\n### Dec 5\n| b |\n</claude-mem-context>",
		section: "Dec 4",
		block:   "- x",
		want:    "Read src/.\n\n<claude-mem-context>\n### Dec 4\n| a |\n### Dec 5\n| b |\n</claude-mem-context>\n\n### Dec 4\n\n- x " + mk,
		used:    "Dec 4",
		created: true,
	}, {
		name:    "whole file is a managed block",
		doc:     "<!-- OPENSPEC:START -->\n# OpenSpec Instructions\n\n- a\n\n<!-- OPENSPEC:END -->",
		section: "OpenSpec Instructions",
		block:   "- x",
		want:    "<!-- OPENSPEC:START -->\n# OpenSpec Instructions\n\n- a\n\n<!-- OPENSPEC:END -->\n\n- x " + mk,
		used:    "OpenSpec Instructions",
	}, {
		name:    "first line opens a fence: marker on its own line",
		doc:     "## A\n- x\n",
		section: "A",
		block:   "```sh\nmake test\n```",
		want:    "## A\n- x\n\n" + mk + "\n```sh\nmake test\n```\n",
		used:    "A",
	}, {
		name:    "list item whose first line opens a fence",
		doc:     "## A\n- x\n",
		section: "A",
		block:   "- ```sh\n  make test\n  ```",
		want:    "## A\n- x\n\n" + mk + "\n- ```sh\n  make test\n  ```\n",
		used:    "A",
	}, {
		name:    "nested bullets and an indented fence",
		doc:     "## A\n\nIntro paragraph.\n",
		section: "A",
		block:   "- parent\n  - child one\n  - child two\n\n  ```go\n  x := 1\n  ```\n  tail",
		want:    "## A\n\nIntro paragraph.\n\n- parent " + mk + "\n  - child one\n  - child two\n\n  ```go\n  x := 1\n  ```\n  tail\n",
		used:    "A",
	}, {
		name:    "paragraph block",
		doc:     "## A\n- x\n",
		section: "A",
		block:   "Prefer table tests.\nThey read well.",
		want:    "## A\n- x\n\nPrefer table tests. " + mk + "\nThey read well.\n",
		used:    "A",
	}, {
		name:    "two paragraphs become one list item",
		doc:     "## A\n- x\n",
		section: "A",
		block:   "First.\n\nSecond.",
		want:    "## A\n- x\n- First. " + mk + "\n\n  Second.\n",
		used:    "A",
	}, {
		name:    "a fence and a following bullet become one list item",
		doc:     "## A\n",
		section: "A",
		block:   "```sh\nmake\n```\n\n- then deploy",
		want:    "## A\n\n" + mk + "\n- ```sh\n  make\n  ```\n\n  - then deploy\n",
		used:    "A",
	}, {
		name:    "block cleanup: indentation, blank lines, stale markers, trailing space",
		doc:     "## A\n- x\n",
		section: "A",
		block:   "\n\n   - y <!-- intermem:89abcdef -->   \n     more\t\n\n",
		want:    "## A\n- x\n- y " + mk + "\n  more\n",
		used:    "A",
	}, {
		name:    "block indented with a tab",
		doc:     "## A\n- x\n",
		section: "A",
		block:   "\t- y\n\t  more",
		want:    "## A\n- x\n- y " + mk + "\n  more\n",
		used:    "A",
	}, {
		name:    "unclosed fence in the block gets closed",
		doc:     "## A\n",
		section: "A",
		block:   "```sh\nmake",
		want:    "## A\n\n" + mk + "\n```sh\nmake\n```\n",
		used:    "A",
	}, {
		name:    "after an unclosed backtick fence the block's fence uses tildes",
		doc:     "## A\n\n```xml\n<x>\n\n## B\n\n- y\n",
		section: "B",
		block:   "```sh\nmake\n```",
		want:    "## A\n\n```xml\n<x>\n\n## B\n\n- y\n\n" + mk + "\n~~~sh\nmake\n~~~\n",
		used:    "B",
	}, {
		name:    "heading text in the requested title is cleaned",
		doc:     "## A\n",
		section: "  ## Deploy   notes # ##\n",
		block:   "- x",
		want:    "## A\n\n## Deploy notes\n\n- x " + mk + "\n",
		used:    "Deploy notes",
		created: true,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			ins := checkPlace(t, tc.doc, tc.section, tc.block)
			if string(ins.Content) != tc.want {
				t.Errorf("content\n got %q\nwant %q", ins.Content, tc.want)
			}
			if ins.Section != tc.used || ins.Created != tc.created {
				t.Errorf("section %q created %v, want %q %v", ins.Section, ins.Created, tc.used, tc.created)
			}
			out, used, created := Parse([]byte(tc.doc)).Insert(tc.section, tc.block, testID)
			if !bytes.Equal(out, ins.Content) || used != ins.Section || created != ins.Created {
				t.Errorf("Insert disagrees with Place")
			}
		})
	}
}

func TestPlaceErrors(t *testing.T) {
	doc := "## A\n- x " + Marker("89abcdef") + "\n"
	d := Parse([]byte(doc))
	for _, tc := range []struct {
		block, id string
		want      error
	}{
		{"- y", "0123", ErrBadID},
		{"- y", "0123456789ABCDEF", ErrBadID},
		{"- y", "89abcdef", ErrExists},
		{"\n  \n", testID, ErrEmptyBlock},
		{"<!-- intermem:0123abcd -->", testID, ErrEmptyBlock},
	} {
		if _, err := d.Place("A", tc.block, tc.id); !errors.Is(err, tc.want) {
			t.Errorf("Place(%q, %q): %v, want %v", tc.block, tc.id, err, tc.want)
		}
		out, used, created := d.Insert("A", tc.block, tc.id)
		if !bytes.Equal(out, []byte(doc)) || used != "" || created {
			t.Errorf("refused Insert(%q, %q) changed something", tc.block, tc.id)
		}
	}
}

func TestPlaceAfterUnclosedFencesOfBothKinds(t *testing.T) {
	// Any fence at the top level would pair with one of the stray openers;
	// a fence indented four columns in a list item cannot.
	ins := checkPlace(t, "```\n~~~\n", "", "```sh\nmake\n```")
	if want := "```\n~~~\n\n" + mk + "\n- ```sh\n    make\n    ```\n"; string(ins.Content) != want {
		t.Errorf("got %q\nwant %q", ins.Content, want)
	}
}

func TestPlaceWalledInSectionTwice(t *testing.T) {
	// The first "Dec 4" lies inside a managed block; the section created for
	// the first entry must take the second one rather than spawn another.
	doc := "<claude-mem-context>\n### Dec 4\n| a |\n### Dec 5\n| b |\n</claude-mem-context>\n"
	one := checkPlace(t, doc, "Dec 4", "- first")
	two, err := Parse(one.Content).Place("Dec 4", "- second", "1111111111111111")
	if err != nil {
		t.Fatal(err)
	}
	want := doc + "\n### Dec 4\n\n- first " + mk + "\n- second <!-- intermem:1111111111111111 -->\n"
	if two.Created || string(two.Content) != want {
		t.Fatalf("created %v\n got %q\nwant %q", two.Created, two.Content, want)
	}
}

func TestPlaceTwiceThenRemoveBoth(t *testing.T) {
	doc := "# T\n\n## A\n- x\n"
	d := Parse([]byte(doc))
	one, err := d.Place("New", "- first", "1111111111111111")
	if err != nil {
		t.Fatal(err)
	}
	two, err := Parse(one.Content).Place("New", "- second\n  more", "2222222222222222")
	if err != nil {
		t.Fatal(err)
	}
	if two.Created || two.Section != "New" {
		t.Fatalf("second entry went to %q (created %v)", two.Section, two.Created)
	}
	want := "# T\n\n## A\n- x\n\n## New\n\n- first <!-- intermem:1111111111111111 -->\n- second <!-- intermem:2222222222222222 -->\n  more\n"
	if string(two.Content) != want {
		t.Fatalf("got %q", two.Content)
	}
	// Remove in the other order; the section goes with the last entry.
	out, _, _ := Parse(two.Content).Remove("1111111111111111", true)
	out, _, _ = Parse(out).Remove("2222222222222222", true)
	if string(out) != doc {
		t.Fatalf("after removing both: %q", out)
	}
}
