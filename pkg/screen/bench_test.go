package screen

import (
	"fmt"
	"strings"
	"testing"
)

// memoryLike builds a MEMORY.md-like text of n lines with headings, pointers, facts,
// commands, comments, markers, CJK text and emoji.
func memoryLike(n int) string {
	var b strings.Builder
	b.WriteString("# Project memory\n\n")
	for i := range n {
		switch {
		case i%25 == 0:
			fmt.Fprintf(&b, "## Section %d\n", i/25)
		case i%5 == 1:
			fmt.Fprintf(&b, "- [Feedback %d](feedback_topic_%d.md) — always run `go test ./...` before committing; never push to main\n", i, i)
		case i%5 == 2:
			fmt.Fprintf(&b, "- `curl -fsSL https://example.com/v%d.tar.gz -o v.tgz` then verify the checksum <!-- intermem:0123456789abcd%02x -->\n", i, i%256)
		case i%5 == 3:
			fmt.Fprintf(&b, "- Ask the user for permission before `git push --force`; the system prompt budget is 12K tokens (see pkg/inject/budget.go:%d)\n", i)
		default:
			fmt.Fprintf(&b, "- 배포 전에 `make lint` 실행 ✅ — 详细设计见 docs/design-%d.md 👩‍💻\n", i)
		}
	}
	return b.String()
}

func BenchmarkCheck200Lines(b *testing.B) {
	s := memoryLike(200)
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		Check(s)
	}
}

func BenchmarkCheck1MB(b *testing.B) {
	s := memoryLike(200)
	s = strings.Repeat(s, (1<<20)/len(s)+1)[:1<<20]
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		Check(s)
	}
}
