package mdoc

import (
	"math/rand"
	"strings"
	"testing"
)

// fragments are lines seen in real files, the hard cases among them: stray
// fences, indented headings, managed-block lines, markers, lazy lines.
var fragments = []string{
	"# T", "## A", "### B", "- a", "  - b", "1. one", "   cont", "para", "lazy", "", "", "```", "~~~", "```go", "  ```",
	"    code", "<!-- X:begin -->", "<!-- X:end -->", "<claude-mem-context>", "</claude-mem-context>",
	"<!-- intermem:0123abcd -->", "- x <!-- intermem:abcdef01 -->", "---", "> quote", "| a | b |", "  ## indented",
	"* star", "<div>", "\t- tab", "@AGENTS.md",
}

// TestPlaceFragments places entries into thousands of small documents made of
// real-world line shapes, in LF and CRLF, with and without a final newline:
// every placement must succeed (no ErrUnsafe) and pass checkPlace.
func TestPlaceFragments(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	n := 3000
	if testing.Short() {
		n = 300
	}
	created := 0
	for i := 0; i < n; i++ {
		var ls []string
		for k := r.Intn(12); k > 0; k-- {
			ls = append(ls, fragments[r.Intn(len(fragments))])
		}
		eol := []string{"\n", "\r\n"}[r.Intn(2)]
		doc := strings.Join(ls, eol)
		if r.Intn(2) == 0 && doc != "" {
			doc += eol
		}
		section := []string{"A", "B", "T", "New", ""}[r.Intn(5)]
		block := fuzzBlocks[r.Intn(len(fuzzBlocks))]
		ins := checkPlace(t, doc, section, block)
		if t.Failed() {
			t.Fatalf("document %q, section %q, block %q", doc, section, block)
		}
		if ins.Created {
			created++
		}
	}
	if created == 0 || created == n {
		t.Errorf("%d of %d placements created a section", created, n)
	}
}
