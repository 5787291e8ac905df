package interfluence

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/intermem/intermem/pkg/source"
	"github.com/intermem/intermem/pkg/source/sourcetest"
)

func fixture(t testing.TB) []byte {
	return sourcetest.Fixtures(t, "testdata/log.txtar")[0].Data
}

func TestFixtureGolden(t *testing.T) {
	es, ps := Source{}.Parse(LogPath, fixture(t))
	sourcetest.Golden(t, "testdata/log.golden", sourcetest.Render(es, ps))
}

func TestCRLFAndNoFinalNewline(t *testing.T) {
	log := "--- 2026-02-16T10:23:45Z | a.md | CONTEXT:prose ---\r\nOLD: x\r\ny\r\nNEW: z"
	es, ps := Source{}.Parse(LogPath, []byte(log))
	if len(ps) != 0 || len(es) != 1 {
		t.Fatalf("entries %d, problems %v", len(es), ps)
	}
	if e := es[0]; e.Fields["old"] != "x\ny" || e.Fields["new"] != "z" || e.EndLine != 4 {
		t.Errorf("entry = %+v", e)
	}
}

func TestLimits(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("--- 2026-02-16T10:23:45Z | a.md | CONTEXT:prose ---\nOLD: ")
	b.WriteString(strings.Repeat("x", MaxLine+100))
	b.WriteString("\nNEW: ")
	for i := 0; i < 10; i++ {
		b.WriteString(strings.Repeat("y", 4000) + "\n")
	}
	es, ps := Source{}.Parse(LogPath, b.Bytes())
	if len(es) != 1 {
		t.Fatalf("%d entries", len(es))
	}
	if n := len(es[0].Fields["old"]); n > MaxText+len("…") {
		t.Errorf("old text kept %d bytes", n)
	}
	if n := len(es[0].Fields["new"]); n > MaxText+len("…") {
		t.Errorf("new text kept %d bytes", n)
	}
	var msgs []string
	for _, p := range ps {
		msgs = append(msgs, p.String())
	}
	want := []string{
		".interfluence/learnings-raw.log:2: 1 line over 64 KiB; cut",
		".interfluence/learnings-raw.log:1: 1 block with an OLD or NEW text over 16 KiB; cut",
	}
	if !slices.Equal(msgs, want) {
		t.Errorf("problems = %q\nwant %q", msgs, want)
	}
}

// TestResume appends to a real log file and checks that ParseLog resumes
// at the last block, and starts over after a rewrite.
func TestResume(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, filepath.FromSlash(LogPath))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	first := "--- 2026-02-16T10:00:00Z | a.md | CONTEXT:prose ---\nOLD: a\nNEW: b\n--- 2026-02-16T10:01:00Z | b.md | CONTEXT:prose ---\nOLD: c\nNEW: d\n"
	if err := os.WriteFile(p, []byte(first), 0o644); err != nil {
		t.Fatal(err)
	}
	find := func() source.File {
		files, probs := source.Find(root, Source{})
		if len(files) != 1 || len(probs) != 0 {
			t.Fatalf("Find: %v %v", files, probs)
		}
		return files[0]
	}
	es, _, from, next, err := source.ParseLog(Source{}, find(), source.Cursor{})
	if err != nil || len(es) != 2 || from.Offset != 0 {
		t.Fatalf("first parse: %d entries, from %+v, err %v", len(es), from, err)
	}
	// The cursor is the start of the last block: line 4, after three lines
	// of 52, 7 and 7 bytes.
	if next.Offset != 66 || next.Line != 4 {
		t.Fatalf("cursor = %+v, want offset 66 line 4", next)
	}
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("more of d\n--- 2026-02-16T10:02:00Z | c.md | CONTEXT:prose ---\nOLD: e\nNEW: f\n")
	f.Close()
	es2, _, from, next2, err := source.ParseLog(Source{}, find(), next)
	if err != nil || from.Line != 4 {
		t.Fatalf("resumed parse: from %+v, err %v", from, err)
	}
	var got []string
	for _, e := range es2 {
		got = append(got, e.Fields["file"]+"="+strings.ReplaceAll(e.Fields["new"], "\n", "/"))
	}
	if want := []string{"b.md=d/more of d", "c.md=f"}; !slices.Equal(got, want) {
		t.Errorf("resumed entries = %q, want %q (the last block re-read with its appended line)", got, want)
	}
	// Rewritten (rotated) log: the cursor no longer applies.
	if err := os.WriteFile(p, []byte(strings.Replace(first, "a.md", "x.md", 1)+"padding padding padding padding padding\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	es3, _, from, _, err := source.ParseLog(Source{}, find(), next2)
	if err != nil || from.Offset != 0 || len(es3) != 2 || es3[0].Fields["file"] != "x.md" {
		t.Errorf("after a rewrite: from %+v, %d entries, err %v", from, len(es3), err)
	}
}

// merge applies a resumed parse the way Appender documents it.
func merge(prev []source.Entry, at source.Cursor, resumed []source.Entry) []source.Entry {
	var out []source.Entry
	for _, e := range prev {
		if e.Line < max(at.Line, 1) {
			out = append(out, e)
		}
	}
	return append(out, resumed...)
}

func FuzzParse(f *testing.F) {
	f.Add(fixture(f), 200)
	f.Add([]byte("--- 2026-02-16T10:00:00Z | a | CONTEXT:x ---\nOLD: a\r\nNEW: b"), 30)
	f.Add([]byte("--- x | y | CONTEXT:z ---\n\n\nOLD:\nNEW:\n--- "), 5)
	f.Fuzz(func(t *testing.T, data []byte, cut int) {
		s := Source{}
		full, _ := s.Parse(LogPath, data)
		sourcetest.CheckEntries(t, full, LogPath)
		// Parsing a prefix and resuming over the whole file gives what one
		// parse of the whole file gives.
		if cut < 0 || cut > len(data) {
			return
		}
		prefix, _, next := s.ParseFrom(LogPath, bytes.NewReader(data[:cut]), source.Cursor{})
		if next.Offset > int64(cut) || next.Line < 1 {
			t.Fatalf("cursor %+v beyond the %d bytes parsed", next, cut)
		}
		resumed, _, _ := s.ParseFrom(LogPath, bytes.NewReader(data[next.Offset:]), next)
		got := merge(prefix, next, resumed)
		if len(got) != len(full) {
			t.Fatalf("resumed at %+v: %d entries, full parse %d", next, len(got), len(full))
		}
		for i := range got {
			if got[i].ID != full[i].ID || got[i].Line != full[i].Line || got[i].EndLine != full[i].EndLine {
				t.Fatalf("entry %d: resumed %+v, full %+v", i, got[i], full[i])
			}
		}
	})
}

// TestNewestKept appends more blocks than one parse keeps: the newest
// MaxEntries are returned and the rest reported.
func TestNewestKept(t *testing.T) {
	var b bytes.Buffer
	n := MaxEntries*2 + 3
	for i := range n {
		fmt.Fprintf(&b, "--- 2026-02-16T10:00:00Z | f%d | CONTEXT:x ---\nNEW: %d\n", i, i)
	}
	es, ps := Source{}.Parse(LogPath, b.Bytes())
	if len(es) != MaxEntries {
		t.Fatalf("%d entries, want %d", len(es), MaxEntries)
	}
	if first, last := es[0].Fields["new"], es[len(es)-1].Fields["new"]; first != fmt.Sprint(n-MaxEntries) || last != fmt.Sprint(n-1) {
		t.Errorf("kept %s..%s, want the newest", first, last)
	}
	if len(ps) != 1 || ps[0].Message != fmt.Sprintf("%d older observations beyond the newest %d are not indexed", n-MaxEntries, MaxEntries) {
		t.Errorf("problems = %v", ps)
	}
}
