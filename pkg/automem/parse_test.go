package automem

import (
	"fmt"
	"strings"
	"testing"
)

// want is the expected shape of one entry.
type want struct {
	kind       Kind
	start, end int // lines
	section    string
	text       string
	link       string
}

func (w want) String() string {
	return fmt.Sprintf("%s %d-%d §%q %q link=%q", w.kind, w.start, w.end, w.section, w.text, w.link)
}

func got(e Entry) want {
	return want{e.Kind, e.StartLine, e.EndLine, e.Section, e.Text, e.Link}
}

func TestParseFactLists(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		want     []want
		headings int
		warnings []string
	}{
		{
			name: "bullets under headings",
			in:   "# Memory\n\n## Build\n- use make\n- run tests\n\n### Deep\n* star\n+ plus\n",
			want: []want{
				{Fact, 4, 4, "Build", "use make", ""},
				{Fact, 5, 5, "Build", "run tests", ""},
				{Fact, 8, 8, "Deep", "star", ""},
				{Fact, 9, 9, "Deep", "plus", ""},
			},
			headings: 3,
		},
		{
			name: "nested bullets with 2, 4 spaces and tabs",
			in:   "- a\n  - a1\n    - a2\n- b\n    - b1\n- c\n\t- c1\n\t\t- c2\n",
			want: []want{
				{Fact, 1, 3, "", "a\n  - a1\n    - a2", ""},
				{Fact, 4, 5, "", "b\n    - b1", ""},
				{Fact, 6, 8, "", "c\n\t- c1\n\t\t- c2", ""},
			},
		},
		{
			name: "numbered lists with bullet children",
			in:   "## Todo\n1. **first** thing\n   - detail\n     - deeper\n2. second\n  - two-space child\n10) tenth\n",
			want: []want{
				{Fact, 2, 4, "Todo", "**first** thing\n   - detail\n     - deeper", ""},
				{Fact, 5, 6, "Todo", "second\n  - two-space child", ""},
				{Fact, 7, 7, "Todo", "tenth", ""},
			},
			headings: 1,
		},
		{
			name: "continuation lines, lazy and after a blank",
			in:   "- first line\n  indented continuation\nlazy continuation\n- second\n\n  still second after blank\n- third\n\nparagraph ends it\n- fourth\n",
			want: []want{
				{Fact, 1, 3, "", "first line\n  indented continuation\nlazy continuation", ""},
				{Fact, 4, 6, "", "second\n\n  still second after blank", ""},
				{Fact, 7, 7, "", "third", ""},
				{Fact, 10, 10, "", "fourth", ""},
			},
		},
		{
			name: "a table is one fact, and a lead-in ending in a colon belongs to it",
			in:   "## Hooks\nAll hooks:\n\n| Event | Cmd |\n|---|---|\n| Stop | x \\| y |\n\nNote: text\n| a |\n\n| b |\n|---|\n",
			want: []want{
				{Fact, 2, 6, "Hooks", "All hooks:\n\n| Event | Cmd |\n|---|---|\n| Stop | x \\| y |", ""},
				{Fact, 8, 8, "Hooks", "Note: text", ""},
				{Fact, 9, 9, "Hooks", "| a |", ""},
				{Fact, 11, 12, "Hooks", "| b |\n|---|", ""},
			},
			headings: 1,
		},
		{
			name: "backtick fence hides headings and bullets, and is an entry of its section",
			in:   "## Cmds\n```bash\n# not a heading\n- not a bullet\n```\n- real\n",
			want: []want{
				{Fact, 2, 5, "Cmds", "```bash\n# not a heading\n- not a bullet\n```", ""},
				{Fact, 6, 6, "Cmds", "real", ""},
			},
			headings: 1,
		},
		{
			name: "tilde fence, longer closer, other char does not close",
			in:   "~~~~\n# no\n~~~\n```\n- no\n~~~~~\n## Yes\n- yes\n",
			want: []want{
				{Fact, 8, 8, "Yes", "yes", ""},
			},
			headings: 1,
		},
		{
			name: "backtick info string with a backtick is not a fence",
			in:   "``` a`b\n- item\n",
			want: []want{
				{Fact, 2, 2, "", "item", ""},
			},
		},
		{
			name: "fence indented under an item belongs to it",
			in:   "6. **Test by hand.** Pipe it:\n   ```\n   echo '{}' | hook.sh\n# shell comment at column 0\n   ```\n   Confirm output.\n7. next\n",
			want: []want{
				{Fact, 1, 6, "", "**Test by hand.** Pipe it:\n   ```\n   echo '{}' | hook.sh\n# shell comment at column 0\n   ```\n   Confirm output.", ""},
				{Fact, 7, 7, "", "next", ""},
			},
		},
		{
			name: "column-0 fence right after a bullet belongs to it",
			in:   "- Restart with:\n```bash\nsystemctl restart x\n- not an item\n```\n- next\n",
			want: []want{
				{Fact, 1, 5, "", "Restart with:\n```bash\nsystemctl restart x\n- not an item\n```", ""},
				{Fact, 6, 6, "", "next", ""},
			},
		},
		{
			name: "column-0 fence after a blank line stands alone",
			in:   "- Restart:\n\n```\n- not an item\n```\n- next\n",
			want: []want{
				{Fact, 1, 1, "", "Restart:", ""},
				{Fact, 6, 6, "", "next", ""},
			},
		},
		{
			name: "text after an item's fence ends the item",
			in:   "- cmd:\n```\nx\n```\nparagraph\n\n- next\n",
			want: []want{
				{Fact, 1, 4, "", "cmd:\n```\nx\n```", ""},
				{Fact, 7, 7, "", "next", ""},
			},
		},
		{
			name: "unclosed fence is text and swallows nothing",
			in:   "## A\n- before\n\n```python\n## B\n- after\n",
			want: []want{
				{Fact, 2, 2, "A", "before", ""},
				{Fact, 6, 6, "B", "after", ""},
			},
			headings: 2,
			warnings: []string{"line 4: unclosed ``` fence treated as text"},
		},
		{
			name: "unclosed fence inside an item is a continuation line",
			in:   "- a\n  ~~~\n- b\n",
			want: []want{
				{Fact, 1, 2, "", "a\n  ~~~", ""},
				{Fact, 3, 3, "", "b", ""},
			},
			warnings: []string{"line 2: unclosed ~~~ fence treated as text"},
		},
		{
			name: "before any section, paragraphs, quotes, rules and comments are not entries",
			in:   "Some paragraph.\n> - quoted bullet\n---\n***\n- - -\n<!-- archived 2026 -->\n<!--\n- hidden\n## hidden\n-->\n*italic* line\n\n**bold label**\n\n- real\n",
			want: []want{
				{Fact, 15, 15, "", "real", ""},
			},
		},
		{
			name: "rule, heading, quote and comment end an item",
			in:   "- a\n---\n- b\n# H\n- c\n> q\n- d\n<!-- x -->\n",
			want: []want{
				{Fact, 1, 1, "", "a", ""},
				{Fact, 3, 3, "", "b", ""},
				{Fact, 5, 5, "H", "c", ""},
				{Fact, 7, 7, "H", "d", ""},
			},
			headings: 1,
		},
		{
			name:     "unclosed comment is text",
			in:       "<!-- open\n- a\n",
			want:     []want{{Fact, 2, 2, "", "a", ""}},
			warnings: []string{"line 1: unclosed <!-- comment treated as text"},
		},
		{
			name: "empty bullets",
			in:   "-\n- \n-\n  content under empty marker\n",
			want: []want{
				{Fact, 3, 4, "", "content under empty marker", ""},
			},
		},
		{
			name: "heading titles",
			in:   "## Title ##\n- a\n### Git Lock <!-- intermem:8ed6945e -->\n- b\n\n#not heading\n- c\n####### seven, a lazy line\n",
			want: []want{
				{Fact, 2, 2, "Title", "a", ""},
				{Fact, 4, 4, "Git Lock", "b", ""},
				{Fact, 6, 6, "Git Lock", "#not heading", ""},
				{Fact, 7, 8, "Git Lock", "c\n####### seven, a lazy line", ""},
			},
			headings: 2,
		},
		{
			name: "pointer separators",
			in: "- [Title](a.md) — hook\n- [Title (2026-06-08)](b.md): hook\n- [Shader](c.md) - hook\n" +
				"- [bare long title](d.md)\n- [rel](./e.md) — dot slash\n- `f.md` — backticked\n" +
				"- [$ x: result[[\"error\"]]; list() ≠ NULL](g.md)\n- 🚨 **[urgent](h.md)** — emoji and bold\n" +
				"- [t](<i.md> \"title\") — angle\n- [t](j.md#part)\n",
			want: []want{
				{Pointer, 1, 1, "", "[Title](a.md) — hook", "a.md"},
				{Pointer, 2, 2, "", "[Title (2026-06-08)](b.md): hook", "b.md"},
				{Pointer, 3, 3, "", "[Shader](c.md) - hook", "c.md"},
				{Pointer, 4, 4, "", "[bare long title](d.md)", "d.md"},
				{Pointer, 5, 5, "", "[rel](./e.md) — dot slash", "e.md"},
				{Pointer, 6, 6, "", "`f.md` — backticked", "f.md"},
				{Pointer, 7, 7, "", "[$ x: result[[\"error\"]]; list() ≠ NULL](g.md)", "g.md"},
				{Pointer, 8, 8, "", "🚨 **[urgent](h.md)** — emoji and bold", "h.md"},
				{Pointer, 9, 9, "", "[t](<i.md> \"title\") — angle", "i.md"},
				{Pointer, 10, 10, "", "[t](j.md#part)", "j.md"},
			},
		},
		{
			name: "unbalanced link text ends at the first valid ](",
			in:   "- [a [b](k.md) — hook\n",
			want: []want{{Pointer, 1, 1, "", "[a [b](k.md) — hook", "k.md"}},
		},
		{
			name: "pointer forms: the hook first, a folder, back-ticks, bare names, wikilinks, see",
			in: "- Sempre reiniciar → [feedback_x.md](feedback_x.md)\n- 详细设计见：[x.md](./x.md)\n" +
				"- [deep](sub/dir.md) — in a folder\n- `notes/debugging.md` — what it holds\n" +
				"- notes/debugging.md — what it holds\n- feedback_y.md: hook\n- [[wiki link]] — hook\n" +
				"- [[notiontalk.com 도메인 아키텍처]]\n- Details: [[slug|alias]]\n- See [hooks.md](hooks.md)\n" +
				"- See [hooks.md](hooks.md) for details.\n- **Title**: [t.md](t.md)\n- 🚨 hook → `z.md`\n",
			want: []want{
				{Pointer, 1, 1, "", "Sempre reiniciar → [feedback_x.md](feedback_x.md)", "feedback_x.md"},
				{Pointer, 2, 2, "", "详细设计见：[x.md](./x.md)", "x.md"},
				{Pointer, 3, 3, "", "[deep](sub/dir.md) — in a folder", "sub/dir.md"},
				{Pointer, 4, 4, "", "`notes/debugging.md` — what it holds", "notes/debugging.md"},
				{Pointer, 5, 5, "", "notes/debugging.md — what it holds", "notes/debugging.md"},
				{Pointer, 6, 6, "", "feedback_y.md: hook", "feedback_y.md"},
				{Pointer, 7, 7, "", "[[wiki link]] — hook", "wiki link.md"},
				{Pointer, 8, 8, "", "[[notiontalk.com 도메인 아키텍처]]", "notiontalk.com 도메인 아키텍처.md"},
				{Pointer, 9, 9, "", "Details: [[slug|alias]]", "slug.md"},
				{Pointer, 10, 10, "", "See [hooks.md](hooks.md)", "hooks.md"},
				{Pointer, 11, 11, "", "See [hooks.md](hooks.md) for details.", "hooks.md"},
				{Pointer, 12, 12, "", "**Title**: [t.md](t.md)", "t.md"},
				{Pointer, 13, 13, "", "🚨 hook → `z.md`", "z.md"},
			},
		},
		{
			name: "links that are not pointers",
			in: "- [site](https://example.com/a.md) — remote\n- [up](../x.md) — outside the memory\n" +
				"- `~/.claude/knowledge/p.md` — a path\n- `notes.txt` — not markdown\n" +
				"- script: ~/.claude/notify.sh\n  - See [hooks.md](hooks.md) for details\n" +
				"- use `[x](y.md)` syntax\n- README.md is stale\n- A fact. [Detail](d.md)\n" +
				"- Use the helper in [u](u.md) when deploying\n- `MEMORY.md` — the index itself\n",
			want: []want{
				{Fact, 1, 1, "", "[site](https://example.com/a.md) — remote", ""},
				{Fact, 2, 2, "", "[up](../x.md) — outside the memory", ""},
				{Fact, 3, 3, "", "`~/.claude/knowledge/p.md` — a path", ""},
				{Fact, 4, 4, "", "`notes.txt` — not markdown", ""},
				{Fact, 5, 6, "", "script: ~/.claude/notify.sh\n  - See [hooks.md](hooks.md) for details", "hooks.md"},
				{Fact, 7, 7, "", "use `[x](y.md)` syntax", ""},
				{Fact, 8, 8, "", "README.md is stale", ""},
				{Fact, 9, 9, "", "A fact. [Detail](d.md)", "d.md"},
				{Fact, 10, 10, "", "Use the helper in [u](u.md) when deploying", "u.md"},
				{Fact, 11, 11, "", "`MEMORY.md` — the index itself", ""},
			},
		},
		{
			name: "a lead-in and its list are one entry",
			in: "## TS\nCasting a fixture as `chrome.tabs.TabChangeInfo` makes tsc fail. Fixes:\n" +
				"- Drop the cast entirely if the receiver is loosely typed.\n- Otherwise inline the shape: `as { url?: string }`.\n\n" +
				"Hard-wrapped lead-in that goes\non. Steps:\n\n1. first\n   - detail\n\n2. second\n- a new list\n\n" +
				"Context without a colon.\n\n- stands alone\n",
			want: []want{
				{Fact, 2, 4, "TS", "Casting a fixture as `chrome.tabs.TabChangeInfo` makes tsc fail. Fixes:\n" +
					"- Drop the cast entirely if the receiver is loosely typed.\n- Otherwise inline the shape: `as { url?: string }`.", ""},
				{Fact, 6, 12, "TS", "Hard-wrapped lead-in that goes\non. Steps:\n\n1. first\n   - detail\n\n2. second", ""},
				{Fact, 13, 13, "TS", "a new list", ""},
				{Fact, 15, 15, "TS", "Context without a colon.", ""},
				{Fact, 17, 17, "TS", "stands alone", ""},
			},
			headings: 1,
		},
		{
			name: "a lead-in above a fence, and one above pointers",
			in:   "Run it with:\n\n```sh\nmake\n```\nTopic files:\n- [a](a.md) — x\n- [b](b.md) — y\n",
			want: []want{
				{Fact, 1, 5, "", "Run it with:\n\n```sh\nmake\n```", ""},
				{Pointer, 7, 7, "", "[a](a.md) — x", "a.md"},
				{Pointer, 8, 8, "", "[b](b.md) — y", "b.md"},
			},
		},
		{
			name: "a paragraph in a section is an entry; a title's blurb, a caption, a quote are not",
			in: "# Memory\nThe index; keep it short.\n\n## Context\nProject of Bruno — bots and a web app.\nBots call him \"Boss\".\n\n" +
				"*Updated: 2026-03-12*\n*Integrated flow diagram*\n\n> a quote\n",
			want: []want{
				{Fact, 5, 6, "Context", "Project of Bruno — bots and a web app.\nBots call him \"Boss\".", ""},
			},
			headings: 2,
		},
		{
			name: "bold-lead paragraphs are entries",
			in: "## Side Panel\n\n**`sidePanel.close()` does NOT need a gesture.** Call it\nfrom any async context.\n\n" +
				"**Bold label alone**\n\n**Service worker must declare module** to use imports:\n```json\n{}\n```\n\n" +
				"🚨 **Rule:** never push on Fridays.\n\n**File:** `notify.sh`\n- walks the tree\n- suppresses\n",
			want: []want{
				{Fact, 3, 4, "Side Panel", "**`sidePanel.close()` does NOT need a gesture.** Call it\nfrom any async context.", ""},
				{Fact, 8, 11, "Side Panel", "**Service worker must declare module** to use imports:\n```json\n{}\n```", ""},
				{Fact, 13, 13, "Side Panel", "🚨 **Rule:** never push on Fridays.", ""},
				{Fact, 15, 17, "Side Panel", "**File:** `notify.sh`\n- walks the tree\n- suppresses", ""},
			},
			headings: 1,
		},
		{
			name:     "pointer in a heading is not an entry",
			in:       "## Detalhes: → [projeto.md](projeto.md)\n\n## Next\n- x\n",
			want:     []want{{Fact, 4, 4, "Next", "x", ""}},
			headings: 2,
		},
		{
			name: "pointer with nested lines keeps the whole block",
			in:   "- [T](t.md) — hook\n  - extra\n",
			want: []want{{Pointer, 1, 2, "", "[T](t.md) — hook\n  - extra", "t.md"}},
		},
		{
			name: "headless index",
			in:   "- [a](a.md): x…\n- [b](b.md) - y",
			want: []want{
				{Pointer, 1, 1, "", "[a](a.md): x…", "a.md"},
				{Pointer, 2, 2, "", "[b](b.md) - y", "b.md"},
			},
		},
		{
			name: "trailing whitespace of a block is trimmed",
			in:   "- a   \n  b\t \n\n\n- c",
			want: []want{
				{Fact, 1, 2, "", "a   \n  b", ""},
				{Fact, 5, 5, "", "c", ""},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := Parse("MEMORY.md", []byte(tt.in))
			checkEntries(t, f, tt.want)
			if len(f.Headings) != tt.headings {
				t.Errorf("headings = %d %+v, want %d", len(f.Headings), f.Headings, tt.headings)
			}
			if strings.Join(f.Warnings, "\n") != strings.Join(tt.warnings, "\n") {
				t.Errorf("warnings = %q, want %q", f.Warnings, tt.warnings)
			}
			checkRanges(t, f)
		})
	}
}

func checkEntries(t *testing.T, f *File, wants []want) {
	t.Helper()
	n := max(len(f.Entries), len(wants))
	for i := 0; i < n; i++ {
		switch {
		case i >= len(f.Entries):
			t.Errorf("entry %d missing, want %v", i, wants[i])
		case i >= len(wants):
			t.Errorf("unexpected entry %d: %v", i, got(f.Entries[i]))
		case got(f.Entries[i]) != wants[i]:
			t.Errorf("entry %d:\n got  %v\n want %v", i, got(f.Entries[i]), wants[i])
		}
	}
}

func TestParseByteFidelity(t *testing.T) {
	t.Run("CRLF", func(t *testing.T) {
		in := "## A\r\n- one\r\n  - nested\r\n- two\r\n"
		f := Parse("MEMORY.md", []byte(in))
		checkEntries(t, f, []want{
			{Fact, 2, 3, "A", "one\n  - nested", ""},
			{Fact, 4, 4, "A", "two", ""},
		})
		if e := f.Entries[0]; in[e.Start:e.End] != "- one\r\n  - nested\r\n" {
			t.Errorf("range = %q", in[e.Start:e.End])
		}
		if h := f.Headings[0]; in[h.Start:h.End] != "## A\r\n" || h.Title != "A" {
			t.Errorf("heading = %+v", h)
		}
		lf := Parse("MEMORY.md", []byte(strings.ReplaceAll(in, "\r\n", "\n")))
		if f.Entries[0].ID != lf.Entries[0].ID {
			t.Error("CRLF changed the entry id")
		}
	})
	t.Run("stray CR", func(t *testing.T) {
		in := "- a\r\r\n  b\rc\r\n\r\n- d\r"
		f := Parse("MEMORY.md", []byte(in))
		checkEntries(t, f, []want{{Fact, 1, 2, "", "a\n  b\rc", ""}, {Fact, 4, 4, "", "d", ""}})
	})
	t.Run("BOM", func(t *testing.T) {
		in := "\uFEFF- first\n- second\n"
		f := Parse("MEMORY.md", []byte(in))
		checkEntries(t, f, []want{{Fact, 1, 1, "", "first", ""}, {Fact, 2, 2, "", "second", ""}})
		if f.Entries[0].Start != 3 {
			t.Errorf("first entry starts at %d, want 3 (after the BOM)", f.Entries[0].Start)
		}
		if got := string(f.Remove(f.Entries[0].ID)); got != "\uFEFF- second\n" {
			t.Errorf("Remove = %q, want the BOM kept", got)
		}
	})
	t.Run("no final newline", func(t *testing.T) {
		in := "- a\n- b"
		f := Parse("MEMORY.md", []byte(in))
		if e := f.Entries[1]; e.Start != 4 || e.End != 7 || e.Text != "b" {
			t.Errorf("last entry = %+v", e)
		}
	})
	t.Run("non-UTF-8 and NUL bytes", func(t *testing.T) {
		in := "- bad \xff\xfe byte\n- nul \x00 here\n## \xc3\n- x\n"
		f := Parse("MEMORY.md", []byte(in))
		checkEntries(t, f, []want{
			{Fact, 1, 1, "", "bad \xff\xfe byte", ""},
			{Fact, 2, 2, "", "nul \x00 here", ""},
			{Fact, 4, 4, "\xc3", "x", ""},
		})
	})
	t.Run("100k-char lines", func(t *testing.T) {
		long := strings.Repeat("word ", 25000) // 125,000 chars
		brackets := strings.Repeat("[", 100000) + "](" + strings.Repeat("`", 50000)
		in := "- " + long + "\n- " + brackets + "\n- [" + strings.Repeat("](", 50000) + "\n"
		f := Parse("MEMORY.md", []byte(in))
		if len(f.Entries) != 3 || f.Entries[0].Text != strings.TrimSpace(long) {
			t.Fatalf("got %d entries", len(f.Entries))
		}
		checkRanges(t, f)
	})
}

func TestWarningsAreCapped(t *testing.T) {
	in := strings.Repeat("- x\n"+strings.Repeat("`", 20)+"go\n", 80)
	f := Parse("MEMORY.md", []byte(in))
	if len(f.Warnings) != maxWarnings+1 {
		t.Fatalf("%d warnings", len(f.Warnings))
	}
	if f.Warnings[0] != "line 2: unclosed ````````… fence treated as text" || f.Warnings[maxWarnings] != "30 more warnings not shown" {
		t.Errorf("warnings = %q … %q", f.Warnings[0], f.Warnings[maxWarnings])
	}
	if len(f.Entries) != 80 {
		t.Errorf("%d entries, want 80", len(f.Entries))
	}
}

func TestParseMemoryFiles(t *testing.T) {
	t.Run("flat frontmatter", func(t *testing.T) {
		in := "---\nname: no-fabrication\ndescription: never invent\ntype: Feedback\noriginSessionId: 2afc\n---\n\nBody line.\n\n- a bullet in the body\n## heading in body\n"
		f := Parse("feedback_no-fabrication.md", []byte(in))
		checkEntries(t, f, []want{{Memory, 1, 11, "no-fabrication", "Body line.\n\n- a bullet in the body\n## heading in body", ""}})
		e := f.Entries[0]
		if e.Name != "no-fabrication" || e.Description != "never invent" || e.Type != "feedback" {
			t.Errorf("frontmatter fields = %q %q %q", e.Name, e.Description, e.Type)
		}
		if e.Start != 0 || e.End != len(in) {
			t.Errorf("range = [%d,%d), want the whole file", e.Start, e.End)
		}
		if want := ID(NormalizeText("never invent\n" + e.Text)); e.ID != want {
			t.Errorf("id = %s, want hash of description and body %s", e.ID, want)
		}
		if fm := f.Frontmatter; fm.Start != 0 || in[fm.Start:fm.End] != in[:strings.Index(in, "---\n\n")+4] {
			t.Errorf("frontmatter range = [%d,%d)", fm.Start, fm.End)
		}
		if len(f.Headings) != 1 || f.Headings[0].Line != 11 {
			t.Errorf("headings = %+v", f.Headings)
		}
	})
	t.Run("nested metadata with trailing space, CRLF", func(t *testing.T) {
		in := "---\r\nname: project_ma50\r\ndescription: \"BOT gate SMA->EMA\"\r\nmetadata: \r\n  node_type: memory\r\n  type: project\r\n  originSessionId: bd97\r\n---\r\n\r\nBody\r\nmore\r\n"
		f := Parse("project_ma50.md", []byte(in))
		checkEntries(t, f, []want{{Memory, 1, 11, "project_ma50", "Body\nmore", ""}})
		e := f.Entries[0]
		if e.Type != "project" || e.Description != "BOT gate SMA->EMA" {
			t.Errorf("type %q description %q", e.Type, e.Description)
		}
		if _, ok := f.Frontmatter.Fields["metadata"]; ok {
			t.Error("metadata is a map, not a scalar field")
		}
	})
	t.Run("no name falls back to the file name", func(t *testing.T) {
		f := Parse("hooks_note.md", []byte("---\ntype: reference\n---\nx\n"))
		if e := f.Entries[0]; e.Section != "hooks_note" || e.Name != "" {
			t.Errorf("section %q name %q", e.Section, e.Name)
		}
	})
	t.Run("MEMORY.md with frontmatter is still an index", func(t *testing.T) {
		f := Parse("MEMORY.md", []byte("---\nname: index\n---\n- [a](a.md) — x\n"))
		checkEntries(t, f, []want{{Pointer, 4, 4, "", "[a](a.md) — x", "a.md"}})
		if f.Frontmatter == nil || f.Frontmatter.Name != "index" {
			t.Error("frontmatter not parsed")
		}
	})
	t.Run("unclosed frontmatter is a rule", func(t *testing.T) {
		f := Parse("x.md", []byte("---\nname: x\n- a\n"))
		if f.Frontmatter != nil {
			t.Fatal("frontmatter without a closing line")
		}
		checkEntries(t, f, []want{{Fact, 3, 3, "", "a", ""}})
		if len(f.Warnings) != 1 {
			t.Errorf("warnings = %q", f.Warnings)
		}
	})
	t.Run("id joins description and body with one space", func(t *testing.T) {
		for _, in := range []string{
			"---\ndescription: d\n---\n<!-- intermem:ab --> body <!-- intermem:cd -->\n",
			"---\ndescription: \"<!-- intermem:ab -->\"\n---\nbody\n",
			"---\ndescription: d  \n---\n<!-- intermem:ab -->\n",
			"---\n---\n0",
		} {
			f := Parse("x.md", []byte(in))
			e := f.Entries[0]
			if want := ID(NormalizeText(e.Description + "\n" + e.Text)); e.ID != want {
				t.Errorf("%q: id %s, want %s", in, e.ID, want)
			}
		}
	})
	t.Run("empty body", func(t *testing.T) {
		f := Parse("x.md", []byte("---\nname: x\ndescription: only this\n---"))
		checkEntries(t, f, []want{{Memory, 1, 4, "x", "", ""}})
	})
}

func TestIDIgnoresMarkersAndWhitespace(t *testing.T) {
	a := Parse("MEMORY.md", []byte("- use  make\tbuild <!-- intermem:8ed6945e -->\n"))
	b := Parse("MEMORY.md", []byte("- use make build\n"))
	if a.Entries[0].ID != b.Entries[0].ID {
		t.Errorf("ids differ: %s %s", a.Entries[0].ID, b.Entries[0].ID)
	}
	c := Parse("MEMORY.md", []byte("- Use make build\n"))
	if c.Entries[0].ID == b.Entries[0].ID {
		t.Error("normalization must be case-sensitive")
	}
}
