package mdoc

import (
	"fmt"
	"strings"
	"testing"
)

// bigDoc builds a document of at least n lines in the shapes real files
// have: sections and subsections of bullets (some nested, marked ones
// among them), prose, fenced code with heading-like lines, and managed
// blocks. marked of every section's eight facts carry a marker.
func bigDoc(n, marked int) []byte {
	var b strings.Builder
	b.WriteString("# Big Project Guide\n\nAn overview paragraph that goes on for a while.\n\n")
	lines := 4
	for s := 0; lines < n; s++ {
		fmt.Fprintf(&b, "## Section %d\n\n", s)
		b.WriteString("Some prose about this part of the system, with `code` and a [link](x.md).\n\n")
		for i := 0; i < 8; i++ {
			fmt.Fprintf(&b, "- fact %d.%d about `pkg/x%d.go`", s, i, i)
			if i < marked {
				fmt.Fprintf(&b, " <!-- intermem:%016x -->", s*100+i)
			}
			b.WriteString("\n")
		}
		b.WriteString("- a parent\n  - a child\n  - another child\n\n")
		fmt.Fprintf(&b, "### Commands %d\n\n```bash\n# build it\nmake build\n## not a heading\n```\n\n", s)
		if s%10 == 0 {
			b.WriteString("<!-- tool:begin -->\n- managed line\n<!-- tool:end -->\n\n")
			lines += 4
		}
		lines += 24
	}
	return []byte(b.String())
}

func BenchmarkParse10k(b *testing.B) {
	doc := bigDoc(10000, 1)
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		Parse(doc)
	}
}

// BenchmarkParseInsert10k is what promoting one entry costs: parse the
// target and place a multi-line entry in a section in the middle (which
// includes verifying the result by parsing it again), as
// intermem-synthesize apply does per entry. The document has 10,000 lines
// and about 400 marked entries.
func BenchmarkParseInsert10k(b *testing.B) { benchInsert(b, 1, "Section 190") }

// BenchmarkParseInsert10kNewSection adds the fuzzy title search over every
// heading that finds no match, and a new section.
func BenchmarkParseInsert10kNewSection(b *testing.B) { benchInsert(b, 1, "Brand new") }

// BenchmarkParseInsert10kDense is the same with every fact marked (about
// 3,000 entries): the cost of listing and checking entries dominates.
func BenchmarkParseInsert10kDense(b *testing.B) { benchInsert(b, 8, "Section 190") }

func benchInsert(b *testing.B, marked int, section string) {
	doc := bigDoc(10000, marked)
	if n := strings.Count(string(doc), "\n"); n < 10000 {
		b.Fatalf("document has %d lines", n)
	}
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		d := Parse(doc)
		if _, used, _ := d.Insert(section, "- a new fact\n  ```sh\n  make\n  ```", "0123456789abcdef"); used != section {
			b.Fatalf("went to %q", used)
		}
	}
}

func BenchmarkParseRemove10k(b *testing.B) {
	doc := bigDoc(10000, 1)
	b.SetBytes(int64(len(doc)))
	id := fmt.Sprintf("%016x", 190*100)
	for b.Loop() {
		if _, _, ok := Parse(doc).Remove(id, false); !ok {
			b.Fatal("not found")
		}
	}
}
