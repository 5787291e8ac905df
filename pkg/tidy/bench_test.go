package tidy

import (
	"fmt"
	"os"
	"strings"
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

// BenchmarkBuildLarge plans an index of 100 sections of 40 facts (4,102
// lines): every section moves, and the plan costs a few rewrites of the
// index, not one per move.
func BenchmarkBuildLarge(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("# Memory\n")
	for s := range 100 {
		fmt.Fprintf(&sb, "\n## Section %d\n", s)
		for i := range 40 {
			fmt.Fprintf(&sb, "- fact %d of section %d\n", i, s)
		}
	}
	content := []byte(sb.String())
	redact.String("warm up")
	b.ReportAllocs()
	for b.Loop() {
		pl, err := Build(content, none)
		if err != nil || pl.After.Lines > TargetLines {
			b.Fatalf("%v, %d lines after", err, pl.After.Lines)
		}
	}
}
