package automem

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/intermem/intermem/pkg/redact"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the parser's output")

// corpusFiles returns the real-world memory files kept byte for byte in
// testdata/corpus, failing the test when there are none (a golden test over
// nothing would pass forever).
func corpusFiles(t testing.TB) map[string][]byte {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "corpus", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < 20 {
		t.Fatalf("testdata/corpus holds %d files, want the whole corpus (23)", len(paths))
	}
	files := make(map[string][]byte, len(paths))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(p)] = b
	}
	return files
}

// corpusName is the name a corpus file had in its memory directory: the
// corpus prefixes it with owner, repo and path, "_" for "/".
func corpusName(file string) string {
	if strings.HasSuffix(file, "_MEMORY.md") {
		return IndexName
	}
	return file
}

// summary renders a parsed file for the golden test: one line per entry
// with kind, lines, section, id, link and the first 60 characters of text.
func summary(f *File) string {
	var b strings.Builder
	if fm := f.Frontmatter; fm != nil {
		fmt.Fprintf(&b, "frontmatter %d-%d name=%q type=%q description=%q\n", fm.Start, fm.End, fm.Name, fm.Type, first(fm.Description, 60))
	}
	fmt.Fprintf(&b, "headings %d\n", len(f.Headings))
	for _, w := range f.Warnings {
		fmt.Fprintf(&b, "warning %s\n", w)
	}
	if f.Name == IndexName {
		l := Load(f.Content)
		fmt.Fprintf(&b, "load lines=%d chars=%d loaded=%d/%d truncated=%v\n", l.Lines, l.Chars, l.LoadedLines, l.LoadedChars, l.Truncated)
	}
	for _, e := range f.Entries {
		link := ""
		if e.Link != "" {
			link = " -> " + e.Link
		}
		fmt.Fprintf(&b, "%-7s %d-%d %s §%q%s %q\n", e.Kind, e.StartLine, e.EndLine, e.ID, e.Section, link, first(e.Text, 60))
	}
	return b.String()
}

// first returns the first n runes of s.
func first(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

func TestCorpusGolden(t *testing.T) {
	for file, content := range corpusFiles(t) {
		t.Run(file, func(t *testing.T) {
			f := Parse(corpusName(file), content)
			got := summary(f)
			golden := filepath.Join("testdata", "golden", file+".txt")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("summary differs from %s (run go test -update and review the diff):\n%s", golden, lineDiff(string(want), got))
			}
		})
	}
}

// lineDiff shows the lines of want and got that differ, position by position.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d\n- %s\n+ %s\n", i+1, wl, gl)
		}
	}
	return b.String()
}

func TestCorpusInvariants(t *testing.T) {
	for file, content := range corpusFiles(t) {
		t.Run(file, func(t *testing.T) {
			f := Parse(corpusName(file), content)
			checkRanges(t, f)
			if got := f.Remove(); !bytes.Equal(got, content) {
				t.Fatal("Remove() changed the content")
			}
			if got := f.Remove("0000000000000000"); !bytes.Equal(got, content) {
				t.Fatal("Remove(unknown id) changed the content")
			}
			for _, e := range f.Entries {
				checkRemoveOne(t, f, e)
				checkReparse(t, f, e.ID)
			}
		})
	}
}

// checkReparse asserts that after removing id every other entry is still
// there, in order, with the same id, kind, section and link: pruning one
// fact never changes how its neighbours parse.
func checkReparse(t testing.TB, f *File, id string) {
	t.Helper()
	after := Parse(f.Name, f.Remove(id))
	var want, got []string
	for _, e := range f.Entries {
		if e.ID != id {
			want = append(want, fmt.Sprintf("%s %s §%q %s", e.ID, e.Kind, e.Section, e.Link))
		}
	}
	for _, e := range after.Entries {
		got = append(got, fmt.Sprintf("%s %s §%q %s", e.ID, e.Kind, e.Section, e.Link))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("after removing %s the other entries changed:\n%s", id, lineDiff(strings.Join(want, "\n"), strings.Join(got, "\n")))
	}
}

// checkRanges asserts the structural invariants of a parse: entries in file
// order, non-overlapping, within bounds, with line numbers matching byte
// offsets and Start/End on line boundaries.
func checkRanges(t testing.TB, f *File) {
	t.Helper()
	c := f.Content
	prevEnd := 0
	for i, e := range f.Entries {
		if e.Start < prevEnd || e.Start > e.End || e.End > len(c) {
			t.Fatalf("entry %d: range [%d,%d) out of order or bounds (prev end %d, len %d)", i, e.Start, e.End, prevEnd, len(c))
		}
		if e.Kind != Memory {
			if e.Start > 0 && c[e.Start-1] != '\n' && !(e.Start == 3 && bytes.HasPrefix(c, bom)) {
				t.Fatalf("entry %d starts mid-line at %d", i, e.Start)
			}
			if e.End < len(c) && c[e.End-1] != '\n' {
				t.Fatalf("entry %d ends mid-line at %d", i, e.End)
			}
			if got := 1 + bytes.Count(c[:e.Start], []byte{'\n'}); got != e.StartLine {
				t.Fatalf("entry %d: StartLine %d, offset %d is on line %d", i, e.StartLine, e.Start, got)
			}
			if got := bytes.Count(c[:e.End], []byte{'\n'}); got != e.EndLine && !(e.End == len(c) && c[len(c)-1] != '\n' && got+1 == e.EndLine) {
				t.Fatalf("entry %d: EndLine %d, end offset %d is after line %d", i, e.EndLine, e.End, got)
			}
		}
		if len(e.ID) != 16 || strings.Trim(e.ID, "0123456789abcdef") != "" {
			t.Fatalf("entry %d: bad id %q", i, e.ID)
		}
		// The id hashes the text as written; a Secret entry carries it redacted.
		if !e.Secret && e.Kind != Memory && e.ID != ID(NormalizeText(e.Text)) {
			t.Fatalf("entry %d: id is not the hash of its normalized text", i)
		}
		if !e.Secret && e.Kind == Memory && e.ID != ID(NormalizeText(e.Description+"\n"+e.Text)) {
			t.Fatalf("memory id is not the hash of its normalized description and body")
		}
		if e.File != f.SafeName {
			t.Fatalf("entry %d: File %q, want %q", i, e.File, f.SafeName)
		}
		for _, field := range []string{e.Text, e.Section, e.Name, e.Description, e.Type, e.File, e.Link} {
			if fs := redact.Find(field); len(fs) > 0 {
				t.Fatalf("entry %d: a field still holds a secret (%s): %q", i, fs[0].Kind, field)
			}
		}
		if strings.Contains(e.Text, redact.Marker) && !e.Secret {
			t.Fatalf("entry %d: redacted text %q but not Secret", i, e.Text)
		}
		prevEnd = e.End
	}
	for _, h := range f.Headings {
		if fs := redact.Find(h.Title); len(fs) > 0 {
			t.Fatalf("heading %q still holds a secret (%s)", h.Title, fs[0].Kind)
		}
		if h.Start < 0 || h.Start >= h.End || h.End > len(c) {
			t.Fatalf("heading %q: bad range [%d,%d)", h.Title, h.Start, h.End)
		}
		for _, e := range f.Entries {
			if e.Kind != Memory && h.Start < e.End && e.Start < h.End {
				t.Fatalf("heading %q at line %d overlaps entry at lines %d-%d", h.Title, h.Line, e.StartLine, e.EndLine)
			}
		}
	}
}

// checkRemoveOne asserts that removing e yields the content without e's
// block (and without any other entry sharing its ID), give or take whole
// blank lines and heading lines, as documented for Remove.
func checkRemoveOne(t testing.TB, f *File, e Entry) {
	t.Helper()
	got := f.Remove(e.ID)
	if e.Kind == Memory {
		if len(got) != 0 {
			t.Fatalf("removing the memory of %s left %d bytes", f.Name, len(got))
		}
		return
	}
	var want []byte
	at := 0
	for _, o := range f.Entries {
		if o.ID == e.ID {
			want = append(want, f.Content[at:o.Start]...)
			at = o.End
		}
	}
	want = append(want, f.Content[at:]...)
	if bytes.Equal(got, want) {
		return
	}
	// got must be want minus whole lines, each blank or a heading.
	headings := make(map[string]bool)
	for _, h := range f.Headings {
		headings[string(f.Content[h.Start:h.End])] = true
	}
	if bytes.HasPrefix(want, bom) {
		if !bytes.HasPrefix(got, bom) {
			t.Fatalf("removing lines %d-%d dropped the BOM", e.StartLine, e.EndLine)
		}
		want, got = want[len(bom):], got[len(bom):]
	}
	wl, gl := splitKeep(want), splitKeep(got)
	j := 0
	for _, l := range wl {
		if j < len(gl) && gl[j] == l {
			j++
			continue
		}
		if strings.TrimSpace(l) != "" && !headings[l] {
			t.Fatalf("removing lines %d-%d also dropped %q", e.StartLine, e.EndLine, l)
		}
	}
	if j != len(gl) {
		t.Fatalf("removing lines %d-%d produced lines not in the original: %q", e.StartLine, e.EndLine, gl[j:])
	}
}

// splitKeep splits b into lines that keep their terminators.
func splitKeep(b []byte) []string {
	var out []string
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			out = append(out, string(b))
			break
		}
		out = append(out, string(b[:i+1]))
		b = b[i+1:]
	}
	return out
}
