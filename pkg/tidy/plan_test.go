package tidy

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/intermem/intermem/pkg/automem"
)

// bullets writes n bullets "- <word> fact 1" … "- <word> fact n".
func bullets(word string, n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "- %s fact %d\n", word, i)
	}
	return b.String()
}

func none(string) bool { return false }

func TestBuildUnderCap(t *testing.T) {
	in := []byte("# Memory\n\n## A\n" + bullets("a", 190))
	pl, err := Build(in, none)
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.Moves) != 0 || !bytes.Equal(pl.Index, in) || pl.After != pl.Before {
		t.Fatalf("an index under the cap must not change: %d moves", len(pl.Moves))
	}
	if pl.Before.Lines != 193 || pl.Why != "MEMORY.md is under its load cap: nothing needs to move" {
		t.Fatalf("before %+v, why %q", pl.Before, pl.Why)
	}
}

// TestBuildLines: 224 lines, over the 200-line cap. The largest section
// moves first; that alone brings the index to 103 lines, under the
// 150-line target, so nothing else moves. The pointers' section exists and
// gets the pointer.
func TestBuildLines(t *testing.T) {
	big := "## Big\n" + bullets("big", 120)
	medium := "## Medium\n" + bullets("medium", 90)
	in := "# Memory\n\nIndex of what I know.\n\n" + big + "\n## Small\n- s1\n- s2\n\n" + medium + "\n## Topic files\n- [Old](old.md) — kept\n"
	if n := strings.Count(in, "\n"); n != 224 {
		t.Fatalf("fixture has %d lines, want 224", n)
	}
	pl, err := Build([]byte(in), none)
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.Moves) != 1 {
		t.Fatalf("%d moves, want 1: %+v", len(pl.Moves), pl.Moves)
	}
	m := pl.Moves[0]
	if m.Title != "Big" || m.File != "big.md" || m.Line != 5 || m.Lines != 121 || len(m.Entries) != 120 {
		t.Fatalf("move = %s %s line %d, %d lines, %d entries", m.Title, m.File, m.Line, m.Lines, len(m.Entries))
	}
	if string(m.Content) != big {
		t.Fatalf("the topic file is not the section's bytes:\n%q", m.Content)
	}
	wantPtr := "- [Big](big.md) — big fact 1; big fact 2; big fact 3; big fact 4; big fact 5; big fact 6; big fact 7; big fact 8…"
	if m.Pointer != wantPtr {
		t.Fatalf("pointer\n%q\nwant\n%q", m.Pointer, wantPtr)
	}
	want := "# Memory\n\nIndex of what I know.\n\n## Small\n- s1\n- s2\n\n" + medium + "\n## Topic files\n- [Old](old.md) — kept\n" + wantPtr + "\n"
	if string(pl.Index) != want {
		t.Fatalf("index:\n%s\nwant:\n%s", pl.Index, want)
	}
	if pl.After.Lines != 103 || pl.After.Truncated || pl.Why != "" {
		t.Fatalf("after %+v, why %q", pl.After, pl.Why)
	}
}

// TestBuildChars: 142 lines, under every line limit, but 27,000-odd
// characters, over the 25,000-character cap: the section holding the most
// characters moves, and the index falls under the 18,750-character target.
func TestBuildChars(t *testing.T) {
	long := func(word string, n int) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "- %s %03d %s\n", word, i, strings.Repeat("x", 190))
		}
		return b.String()
	}
	in := "# Memory\n\n## S1\n" + long("one", 40) + "\n## S2\n" + long("two", 50) + "\n## S3\n" + long("three", 45)
	pl, err := Build([]byte(in), none)
	if err != nil {
		t.Fatal(err)
	}
	if pl.Before.Lines != 142 || pl.Before.Chars <= automem.MaxLoadChars || !pl.Before.Truncated {
		t.Fatalf("fixture: %+v", pl.Before)
	}
	if len(pl.Moves) != 1 || pl.Moves[0].Title != "S2" {
		t.Fatalf("moves %+v, want S2 alone", pl.Moves)
	}
	if pl.After.Chars > TargetChars || pl.After.Truncated {
		t.Fatalf("after %+v", pl.After)
	}
}

// TestBuildNames: names never collide with a file of the directory (in any
// case) nor with each other; "Memory" would be MEMORY.md on a
// case-insensitive disk; a secret in a title never reaches a name.
func TestBuildNames(t *testing.T) {
	// 140 lines of blurb that never moves, and four sections of 21 lines:
	// all four must move to reach the target.
	in := "# Memory\n" + strings.Repeat("Blurb.\n", 139) + "\n## Notes\n" + bullets("n", 20) + "\n## notes\n" + bullets("m", 20) +
		"\n## Memory\n" + bullets("mem", 20) + "\n## Deploy ghp_abcdefghijklmnopqrstuvwxyz0123456789\n" + bullets("d", 20)
	taken := func(n string) bool { return n == "notes.md" || n == "memory-topic.md" }
	pl, err := Build([]byte(in), taken)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"notes-2.md", "notes-3.md", "memory-topic-2.md", "deploy-redacted-github-token.md"}
	if len(pl.Moves) != len(want) {
		t.Fatalf("%d moves, want %d", len(pl.Moves), len(want))
	}
	for i, m := range pl.Moves {
		if m.File != want[i] {
			t.Errorf("move %d (%s): file %q, want %q", i, m.Title, m.File, want[i])
		}
		if strings.Contains(m.Pointer, "ghp_") {
			t.Errorf("a secret reached a pointer: %q", m.Pointer)
		}
	}
}

// TestBuildKeepsEntries: every moved entry is, in its topic file, the same
// entry (id, kind, section) with the same bytes; every entry that stays is
// unchanged in the index.
func TestBuildKeepsEntries(t *testing.T) {
	in := "# Memory\n\n## Build\nRun the linters first:\n\n```sh\nmake lint\n```\n\n" + bullets("build", 80) +
		"\n| a | b |\n|---|---|\n| 1 | 2 |\n\n**Rule:** never push on Fridays.\n\n" +
		"## Keep\n- kept fact\n\n## Pointers\n- [x.md](x.md) — what x holds\n" + bullets("ptr", 130)
	pl, err := Build([]byte(in), none)
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.Moves) == 0 {
		t.Fatal("nothing moves")
	}
	before := automem.Parse(automem.IndexName, []byte(in))
	byID := map[string]automem.Entry{}
	for _, e := range before.Entries {
		byID[e.ID] = e
	}
	seen := map[string]bool{}
	check := func(f *automem.File) {
		for _, e := range f.Entries {
			old, ok := byID[e.ID]
			if !ok {
				if f.Name == automem.IndexName && e.Kind == automem.Pointer && e.Section == TopicsTitle {
					continue // a new pointer
				}
				t.Errorf("%s: new entry %s %q", f.Name, e.ID, e.Text)
				continue
			}
			seen[e.ID] = true
			if got, was := f.Content[e.Start:e.End], []byte(in)[old.Start:old.End]; !bytes.Equal(got, was) {
				t.Errorf("%s: entry %s bytes %q, were %q", f.Name, e.ID, got, was)
			}
			if e.Kind != old.Kind || e.Section != old.Section {
				t.Errorf("%s: entry %s is %s in %q, was %s in %q", f.Name, e.ID, e.Kind, e.Section, old.Kind, old.Section)
			}
		}
	}
	check(automem.Parse(automem.IndexName, pl.Index))
	for _, m := range pl.Moves {
		check(automem.Parse(m.File, m.Content))
	}
	for id, e := range byID {
		if !seen[id] {
			t.Errorf("entry %s %q was lost", id, e.Text)
		}
	}
}

func TestBuildNothingToMove(t *testing.T) {
	in := "# Memory\n" + bullets("headless", 230)
	pl, err := Build([]byte(in), none)
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.Moves) != 0 || !strings.HasPrefix(pl.Why, "MEMORY.md has no ## sections to move") {
		t.Fatalf("moves %d, why %q", len(pl.Moves), pl.Why)
	}
	// One-line sections are not worth moving.
	var b strings.Builder
	b.WriteString("# Memory\n")
	for i := 0; i < 210; i++ {
		fmt.Fprintf(&b, "## H%d\n", i)
	}
	pl, err = Build([]byte(b.String()), none)
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.Moves) != 0 || !strings.HasPrefix(pl.Why, "no ## section of MEMORY.md is worth moving") {
		t.Fatalf("moves %d, why %q", len(pl.Moves), pl.Why)
	}
}

// TestBuildStaysOver: 250 one-fact sections free two lines each, but their
// 250 pointers alone are over the cap: everything moves, and the plan
// says MEMORY.md stays over it.
func TestBuildStaysOver(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Memory\n")
	for i := 0; i < 250; i++ {
		fmt.Fprintf(&b, "\n## H%d\n- fact %d\n", i, i)
	}
	pl, err := Build([]byte(b.String()), none)
	if err != nil {
		t.Fatal(err)
	}
	// 1 title + blank + heading + 250 pointers.
	if len(pl.Moves) != 250 || pl.After.Lines != 253 || !strings.HasPrefix(pl.Why, "MEMORY.md stays over its load cap") {
		t.Fatalf("%d moves, %d lines after, why %q", len(pl.Moves), pl.After.Lines, pl.Why)
	}
}

func TestSlug(t *testing.T) {
	for title, want := range map[string]string{
		"Vercel":                 "vercel",
		"Git 브랜치 정책 (엄격 적용)":     "git-브랜치-정책-엄격-적용",
		"../../etc/passwd":       "etc-passwd",
		".hidden":                "hidden",
		"Memory":                 "memory-topic",
		"CON":                    "con-topic",
		"":                       "topic",
		"🚀 ✅":                    "topic",
		"evil\u202egnp.md":       "evil-gnp-md",
		"C:\\Windows\\x":         "c-windows-x",
		"wee-linked.com 도메인":     "wee-linked-com-도메인",
		"Notes Xk9#pQ2$vL7@wR4z": "notes-redacted-secret",
		"ref_ghp_abcdefghijklmnopqrstuvwxyz0123456789": "ref-redacted-github-token",
		strings.Repeat("abcdefghij", 10):               "abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghi",
	} {
		if got := slugOf(title); got != want {
			t.Errorf("slugOf(%q) = %q, want %q", title, got, want)
		}
	}
}

func TestClean(t *testing.T) {
	for in, want := range map[string]string{
		"See [the guide](docs/guide.md) now":             "See the guide now",
		"tabs\tand\n newlines  fold":                     "tabs and newlines fold",
		"bidi \u202e override":                           "bidi override",
		"token ghp_abcdefghijklmnopqrstuvwxyz0123456789": "token [REDACTED:github-token]",
		strings.Repeat("é", 130):                         strings.Repeat("é", 99) + "…",
	} {
		if got := clean(in, hookRunes); got != want {
			t.Errorf("clean(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPointerParses(t *testing.T) {
	// The pointer tidy writes is a pointer to its file for automem, even
	// when the title had brackets and links.
	s := section{title: "Tricky [x] title [y](y.md)", entries: []automem.Entry{{Kind: automem.Pointer, Text: "[f.md](f.md) — what f holds"}}}
	s.describe()
	p := pointerFor(s, "tricky-x-title-y.md")
	if want := "- [Tricky (x) title y](tricky-x-title-y.md) — what f holds"; p != want {
		t.Fatalf("pointer %q, want %q", p, want)
	}
	f := automem.Parse(automem.IndexName, []byte("## Topic files\n"+p+"\n"))
	if len(f.Entries) != 1 || f.Entries[0].Kind != automem.Pointer || f.Entries[0].Link != "tricky-x-title-y.md" {
		t.Fatalf("parsed as %+v", f.Entries)
	}
}
