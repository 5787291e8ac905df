package mdoc

import (
	"fmt"
	"strings"
	"testing"
)

// bigDoc builds a document of about n lines in the shapes real files have:
// sections and subsections of bullets (some nested, some marked), prose,
// fenced code with heading-like lines, and a managed block.
func bigDoc(n int) []byte {
	var b strings.Builder
	b.WriteString("# Big Project Guide\n\nAn overview paragraph that goes on for a while.\n\n")
	lines := 4
	for s := 0; lines < n; s++ {
		fmt.Fprintf(&b, "## Section %d\n\n", s)
		b.WriteString("Some prose about this part of the system, with `code` and a [link](x.md).\n\n")
		for i := 0; i < 8; i++ {
			fmt.Fprintf(&b, "- fact %d.%d about `pkg/x%d.go` <!-- intermem:%016x -->\n", s, i, i, s*100+i)
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
	doc := bigDoc(10000)
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		Parse(doc)
	}
}

// BenchmarkParseInsert10k is what promoting one entry costs: parse the
// target, place the entry in a section in the middle (which includes
// verifying the result), as intermem-synthesize apply does per file.
func BenchmarkParseInsert10k(b *testing.B) {
	doc := bigDoc(10000)
	if n := strings.Count(string(doc), "\n"); n < 10000 {
		b.Fatalf("document has %d lines", n)
	}
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		d := Parse(doc)
		if _, used, _ := d.Insert("Section 190", "- a new fact\n  ```sh\n  make\n  ```", "0123456789abcdef"); used != "Section 190" {
			b.Fatalf("went to %q", used)
		}
	}
}

func BenchmarkParseRemove10k(b *testing.B) {
	doc := bigDoc(10000)
	b.SetBytes(int64(len(doc)))
	id := fmt.Sprintf("%016x", 190*100+3)
	for b.Loop() {
		if _, _, ok := Parse(doc).Remove(id, false); !ok {
			b.Fatal("not found")
		}
	}
}
