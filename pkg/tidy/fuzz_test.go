package tidy

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/intermem/intermem/pkg/automem"
)

// FuzzRewrite moves an arbitrary choice of the sections of arbitrary
// content and checks what tidy promises: Rewrite never fails on sections
// it found itself, is idempotent, and every entry keeps its id and its
// bytes, either in the index or in the section's own bytes parsed as a
// topic file.
func FuzzRewrite(f *testing.F) {
	seeds, _ := filepath.Glob("../../testdata/corpus/auto-memory/*MEMORY*.md")
	for _, p := range seeds {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b, uint64(0x5555555555555555))
		}
	}
	f.Add([]byte("# M\r\n\r\n## A\r\n- a\r\n- b\r\n\r\n## Topic files\r\nFiles:\r\n## B\r\n```\r\n## x\r\n```\r\n- c"), uint64(5))
	f.Add([]byte("\xEF\xBB\xBF## A\n- [x](x.md)\n## A\n- [x](x.md)\n## T\n1. a\n"), uint64(3))
	f.Fuzz(func(t *testing.T, content []byte, mask uint64) {
		pf := automem.Parse(automem.IndexName, content)
		ls := splitLines(content)
		secs := sections(pf, ls)
		dup := map[string]int{}
		for _, s := range secs {
			dup[s.hash]++
		}
		var moves []Moved
		moved := map[int]bool{}
		for k := range secs {
			s := &secs[k]
			if mask&(1<<(k%64)) == 0 || isTopics(s.title) || dup[s.hash] > 1 {
				continue
			}
			s.describe()
			file := fmt.Sprintf("t%d.md", k)
			moves = append(moves, Moved{Hash: s.hash, File: file, Pointer: pointerFor(*s, file)})
			moved[k] = true
		}
		out, err := Rewrite(content, moves, nil)
		if err != nil {
			t.Fatalf("Rewrite: %v", err)
		}
		again, err := Rewrite(out, moves, nil)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("not idempotent (%v):\n%q\n%q", err, out, again)
		}
		// Every entry, moved or not, is still there with its bytes.
		have := map[string][]string{}
		add := func(f *automem.File) {
			for _, e := range f.Entries {
				have[e.ID] = append(have[e.ID], string(f.Content[e.Start:e.End]))
			}
		}
		add(automem.Parse(automem.IndexName, out))
		for k := range secs {
			if moved[k] {
				add(automem.Parse("t.md", content[secs[k].start:secs[k].end]))
			}
		}
		for _, e := range pf.Entries {
			want := string(content[e.Start:e.End])
			found := false
			for _, b := range have[e.ID] {
				if b == want {
					found = true
				}
			}
			if !found {
				t.Fatalf("entry %s %q lost or changed; now %q\nin:\n%q\nout:\n%q", e.ID, want, have[e.ID], content, out)
			}
		}
	})
}
