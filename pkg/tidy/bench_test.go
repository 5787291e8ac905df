package tidy

import (
	"os"
	"testing"

	"github.com/intermem/intermem/pkg/redact"
)

// BenchmarkBuild plans the tidy of the corpus's over-cap MEMORY.md (249
// lines, 60 sections, 19 of them move).
func BenchmarkBuild(b *testing.B) {
	content, err := os.ReadFile("../../testdata/corpus/auto-memory/1000ssam__claude-config__memory_MEMORY.md")
	if err != nil {
		b.Fatal(err)
	}
	redact.String("warm up") // the patterns compile once per process
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Build(content, none); err != nil {
			b.Fatal(err)
		}
	}
}
