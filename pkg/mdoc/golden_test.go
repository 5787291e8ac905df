package mdoc

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// TestGoldenStructure pins the sections and managed blocks Parse finds in
// real files chosen for their traps: intermem markers on headings and a
// managed block holding headings (Interverse), nested managed blocks
// (jonahscohen), Rust attributes and shell comments in fences (rcal), and an
// unclosed fence followed by more sections (austinweitao).
func TestGoldenStructure(t *testing.T) {
	for _, name := range []string{
		"mistakeknot__Interverse@5376599__AGENTS.md",
		"jonahscohen__claude-dotfiles__claude_CLAUDE.md",
		"Damond5__rcal__AGENTS.md",
		"austinweitao__claude-backup__global_CLAUDE.md",
	} {
		t.Run(name, func(t *testing.T) {
			got := structure(Parse(readCorpus(t, name)))
			path := filepath.Join("testdata", "golden", name+".txt")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("structure differs from %s (run with -update to see):\n%s", path, got)
			}
		})
	}
}

// structure renders what the goldens pin: one line per section (level, line,
// title, and the lines its own content and whole range end on) and per block.
func structure(d *Doc) string {
	var b strings.Builder
	b.WriteString("# sections: level line title | own content through line | ends before line\n")
	for _, s := range d.Sections {
		fmt.Fprintf(&b, "%d %d %s | %d | %d\n", s.Level, s.Line, s.Title, lineOf(d, s.BodyEnd-1), lineOf(d, s.End))
	}
	b.WriteString("# blocks: name first-last\n")
	for _, bl := range d.Blocks {
		fmt.Fprintf(&b, "%s %d-%d\n", bl.Name, lineOf(d, bl.Start), lineOf(d, bl.End-1))
	}
	return b.String()
}

// lineOf is the 1-based line holding offset off (one past the last line for
// the end of the document).
func lineOf(d *Doc, off int) int {
	if off >= len(d.Content) {
		return len(d.lines) + 1
	}
	if off < 0 {
		return 0
	}
	return d.lineAt(off) + 1
}
