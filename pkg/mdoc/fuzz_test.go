package mdoc

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var fuzzBlocks = []string{
	"- a fact about `x`",
	"```sh\nmake test\n```",
	"- parent\n  - child\n  ```go\n  x := 1\n  ```",
	"plain paragraph\nsecond line",
	"## heading-like\n- and a bullet",
	"1. ordered\n   continued",
}

// FuzzInsertRemove checks the package's central promise on arbitrary
// documents: nothing panics, a refused insertion changes nothing, and an
// accepted one is a single contiguous insertion holding the whole entry with
// its marker, which Remove takes out again to the exact original bytes.
func FuzzInsertRemove(f *testing.F) {
	files, _ := filepath.Glob("testdata/corpus/*")
	for i, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		// Small seeds keep the fuzzer fast (minimizing a 38 KB input takes
		// minutes); the corpus tests cover the whole files.
		f.Add(window(b, 0, 40), "Testing", fuzzBlocks[i%len(fuzzBlocks)], uint8(i))
		f.Add(window(b, -40, 0), "Notes", fuzzBlocks[(i+1)%len(fuzzBlocks)], uint8(i+1))
	}
	for i, s := range []string{
		"", "\n", "a", "# T\n", "# T", "- a\n## B\n", "```\n# x\n", "- a\n  ```\n# b\n  ```\n",
		"## A\r\n- x\r\n", "<!-- X:begin -->\n## A\n<!-- X:end -->", "## A\n<claude-mem-context>\n</claude-mem-context>",
		"para\n\n  ## X\n", "- a\n\ntext <!-- intermem:0123abcd -->\n",
	} {
		f.Add([]byte(s), "A", fuzzBlocks[i%len(fuzzBlocks)], uint8(i))
	}
	f.Fuzz(func(t *testing.T, doc []byte, section, block string, pick uint8) {
		d := Parse(doc)
		_ = d.Statements()
		_ = d.Imports()
		_ = d.BestSection(section)
		for _, m := range d.Marked() {
			out, _, ok := d.Remove(m.ID, pick%2 == 0)
			if !ok || len(out) >= len(doc) {
				t.Fatalf("Remove(%s) of a listed entry: ok=%v, %d -> %d bytes", m.ID, ok, len(doc), len(out))
			}
		}
		if pick&4 != 0 {
			block = fuzzBlocks[int(pick>>3)%len(fuzzBlocks)]
		}
		const id = "fedcba9876543210"
		ins, err := d.Place(section, block, id)
		if errors.Is(err, ErrUnsafe) {
			// Every document has a safe place (a new section, or the end of
			// the document, with the block as a deeply indented list item),
			// so refusing means a form or a placement rule is missing.
			t.Fatalf("Place refused %q in section %q of %q", block, section, doc)
		}
		if err != nil {
			if out, used, _ := d.Insert(section, block, id); !bytes.Equal(out, doc) || used != "" {
				t.Fatalf("refused Insert changed the document")
			}
			return
		}
		out := ins.Content
		if got := string(out[:ins.Start]) + string(out[ins.End:]); got != string(doc) {
			t.Fatalf("output minus the inserted range is not the original")
		}
		nd := Parse(out)
		var mine *Marked
		for _, m := range nd.Marked() {
			if m.ID == id {
				if mine != nil {
					t.Fatalf("marker found twice")
				}
				mine = &m
			}
		}
		if mine == nil {
			t.Fatalf("inserted entry not found:\n%q", out)
		}
		if mine.Start != ins.EntryStart || mine.End != ins.End {
			t.Fatalf("entry range [%d,%d), inserted [%d,%d)", mine.Start, mine.End, ins.EntryStart, ins.End)
		}
		first := out[mine.Start:]
		if i := bytes.IndexByte(first, '\n'); i >= 0 {
			first = first[:i]
		}
		if !bytes.Contains(first, []byte(Marker(id))) {
			t.Fatalf("marker not on the entry's first line: %q", first)
		}
		back, _, ok := nd.Remove(id, ins.Created)
		if !ok || !bytes.Equal(back, doc) {
			t.Fatalf("Remove did not restore the original:\nwant %q\ngot  %q", doc, back)
		}
		inserted := string(out[ins.Start:ins.End])
		if bytes.HasSuffix(doc, []byte("\r")) {
			inserted = strings.TrimPrefix(inserted, "\r\n") // see build
		}
		if strings.Contains(inserted, "\r\n") != (d.EOL == "\r\n") && strings.Contains(inserted, "\n") {
			t.Fatalf("inserted line endings do not follow the document's %q", d.EOL)
		}
	})
}

// window returns lines [from, to) of b; negative from counts from the end, to
// 0 means the end.
func window(b []byte, from, to int) []byte {
	lines := bytes.SplitAfter(b, []byte("\n"))
	if from < 0 {
		from = max(0, len(lines)+from)
	}
	if to <= 0 || to > len(lines) {
		to = len(lines)
	}
	if from > to {
		from = to
	}
	return bytes.Join(lines[from:to], nil)
}

// FuzzMarkerScan checks the hand-written marker scanner against markerRE
// (on text without backticks, where code spans play no part).
func FuzzMarkerScan(f *testing.F) {
	for _, s := range []string{
		"- x <!-- intermem:0123abcd -->", "<!--intermem:0123456789abcdef-->", "<!-- <!-- intermem:0123abcd -->",
		"<!-- intermem:0123abc -->", "<!-- intermem:" + strings.Repeat("a", 65) + " -->", "<!-- intermem:0123abcd --> <!-- intermem:89abcdef -->",
		"<!-- intermem:0123ABCD -->", "<!--\t\fintermem:0123abcd\r-->",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.ContainsAny(s, "`\n") {
			return
		}
		want := markerRE.Get().FindAllStringSubmatchIndex(s, -1)
		got := markerLocs([]byte(s))
		if len(got) != len(want) {
			t.Fatalf("%q: scanner found %d markers, markerRE %d", s, len(got), len(want))
		}
		for i := range got {
			if got[i][0] != want[i][0] || got[i][1] != want[i][1] || got[i][2] != want[i][2] || got[i][3] != want[i][3] {
				t.Fatalf("%q: scanner %v, markerRE %v", s, got[i], want[i])
			}
		}
	})
}
