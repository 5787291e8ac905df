package automem

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// realisticIndex is a 200-line MEMORY.md cut from the largest real index
// in the corpus: 61 H2 groups, pointer lines of up to 900 characters in
// Korean, a few fact bullets and a numbered list, about 23 KB.
func realisticIndex(tb testing.TB) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "corpus", "1000ssam__claude-config__memory_MEMORY.md"))
	if err != nil {
		tb.Fatal(err)
	}
	lines := bytes.SplitAfter(b, []byte("\n"))
	return bytes.Join(lines[:200], nil)
}

func BenchmarkParseMemoryMD(b *testing.B) {
	in := realisticIndex(b)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		Parse(IndexName, in)
	}
}

// BenchmarkScan scans MEMORY.md plus 20 topic files, the size the
// snapshot hook budget is set for.
func BenchmarkScan(b *testing.B) {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, IndexName), realisticIndex(b), 0o644); err != nil {
		b.Fatal(err)
	}
	var topics []string
	for name := range corpusFiles(b) {
		if corpusName(name) != IndexName {
			topics = append(topics, name)
		}
	}
	slices.Sort(topics)
	for i := range 20 {
		src := topics[i%len(topics)]
		content, err := os.ReadFile(filepath.Join("testdata", "corpus", src))
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("topic_%02d.md", i)), content, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		d, err := Scan(dir)
		if err != nil || len(d.Files) != 21 {
			b.Fatalf("scan: %v, %d files", err, len(d.Files))
		}
	}
}

func BenchmarkRemove(b *testing.B) {
	f := Parse(IndexName, realisticIndex(b))
	id := f.Entries[len(f.Entries)/2].ID
	b.ReportAllocs()
	for b.Loop() {
		f.Remove(id)
	}
}
