package automem

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A learnings file in the shape real ones have (hard-wrapped prose,
// bold-lead paragraphs, lead-ins ending in a colon over lists and fences)
// is read as the person wrote it: each bold-lead paragraph is an entry, and
// no list item is an entry without the sentence that introduces it. The
// counts were made by hand: 20 bold-lead paragraphs (5 of them carrying a
// fence or a list), 3 plain lead-ins with their lists, 1 table.
func TestLearningsFile(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "learnings", "browser-extension.md"))
	if err != nil {
		t.Fatal(err)
	}
	f := Parse("browser-extension.md", b)
	if len(f.Entries) != 24 {
		for _, e := range f.Entries {
			t.Logf("%d-%d %q", e.StartLine, e.EndLine, first(e.Text, 50))
		}
		t.Fatalf("%d entries, want 24", len(f.Entries))
	}
	lines := strings.Split(string(b), "\n")
	starts := map[int]bool{}
	for _, e := range f.Entries {
		starts[e.StartLine] = true
		if e.Kind != Fact {
			t.Errorf("line %d: %s, want a fact", e.StartLine, e.Kind)
		}
	}
	bold := 0
	for i, l := range lines {
		if strings.HasPrefix(l, "**") {
			bold++
			if !starts[i+1] {
				t.Errorf("bold-lead paragraph at line %d is not an entry: %q", i+1, l)
			}
		}
		// A list item never starts an entry when a lead-in is above it.
		if (strings.HasPrefix(l, "- ") || len(l) > 1 && l[0] >= '1' && l[0] <= '9' && l[1] == '.') && starts[i+1] {
			t.Errorf("list item at line %d is an entry of its own: %q", i+1, l)
		}
	}
	if bold != 20 {
		t.Fatalf("the fixture has %d bold-lead paragraphs, want 20", bold)
	}
	for _, want := range []struct{ lead, item string }{
		{"makes tsc fail. Fixes:", "Otherwise inline the shape"},
		{"Known restart symptoms:", "3. A listener registered"},
		{"Before the first submission:", "- a verified contact address"},
		{"spends the gesture:", "await panel.open"},
	} {
		found := false
		for _, e := range f.Entries {
			if strings.Contains(e.Text, want.item) {
				found = true
				if !strings.HasPrefix(e.Text, strings.SplitN(e.Text, "\n", 2)[0]) || !strings.Contains(e.Text, want.lead) {
					t.Errorf("%q is not with its lead-in %q: %q", want.item, want.lead, e.Text)
				}
			}
		}
		if !found {
			t.Errorf("no entry holds %q", want.item)
		}
	}
}

// Pruning a lead-in entry takes its list with it: no "…Fixes:" is left
// dangling above nothing.
func TestRemoveLeadIn(t *testing.T) {
	in := "## TS\nCasting makes tsc fail. Fixes:\n- Drop the cast.\n- Inline the shape.\n\n## Other\n- keep\n"
	f := Parse(IndexName, []byte(in))
	if len(f.Entries) != 2 {
		t.Fatalf("%d entries", len(f.Entries))
	}
	if got, want := string(f.Remove(f.Entries[0].ID)), "## Other\n- keep\n"; got != want {
		t.Errorf("Remove = %q, want %q", got, want)
	}
}

// Markers are kept as written, so a numbered item keeps its number.
func TestMarkers(t *testing.T) {
	in := "## Rules\n3. third\n10) tenth\n- dash\n* star\n+ plus\n\n| t |\n\nLead:\n- a\n"
	f := Parse(IndexName, []byte(in))
	var got []string
	for _, e := range f.Entries {
		got = append(got, e.Marker)
	}
	if want := []string{"3.", "10)", "-", "*", "+", "", ""}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("markers = %q, want %q", got, want)
	}
}

func TestRefs(t *testing.T) {
	text := "See [gate notes](project_gate.md) and ![img](a.png).\n" +
		"```\n[not](a link.md)\n```\n" +
		"`[code](x.md)` then [[wiki target|alias]] and [[plain]]\n" +
		"[t](<x y.md> \"title\") [unclosed](x.md"
	var got []string
	for _, r := range Refs(text) {
		got = append(got, text[r.Start:r.End]+"|"+r.Label+"|"+r.Dest)
	}
	want := []string{
		"[gate notes](project_gate.md)|gate notes|project_gate.md",
		"![img](a.png)|img|a.png",
		"[[wiki target|alias]]|alias|wiki target",
		"[[plain]]|plain|plain",
		"[t](<x y.md> \"title\")|t|x y.md",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Refs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Linear on hostile lines.
	Refs(strings.Repeat("[a ", 200000) + strings.Repeat("[[", 100000))
}
