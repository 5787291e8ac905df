package mdoc

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestStatements(t *testing.T) {
	doc := "# Guide\n" + // 1
		"Intro line one\n" + // 2
		"and two.\n" + // 3
		"\n" + // 4
		"- first <!-- intermem:0123abcd -->\n" + // 5
		"  - nested\n" + // 6
		"- second\n" + // 7
		"  ```sh\n" + // 8
		"  make\n" + // 9
		"  ```\n" + // 10
		"\n" + // 11
		"```\n" + // 12
		"code is not a statement\n" + // 13
		"```\n" + // 14
		"<!-- rule:232 -->\n" + // 15: a comment alone says nothing
		"## Other\n" + // 16
		"<!-- OPENSPEC:START -->\n" + // 17
		"- managed, not ours\n" + // 18
		"<!-- OPENSPEC:END -->\n" + // 19
		"| a | b |\n" + // 20
		"|---|---|\n" // 21
	got := Parse([]byte(doc)).Statements()
	want := []Statement{
		{2, "Intro line one\nand two.", "Guide"},
		{5, "first <!-- intermem:0123abcd -->\n- nested", "Guide"},
		{6, "nested", "Guide"},
		{7, "second\n```sh\nmake\n```", "Guide"},
		{20, "| a | b |\n|---|---|", "Other"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Statements\n got %+v\nwant %+v", got, want)
	}
}

func TestImports(t *testing.T) {
	doc := "@AGENTS.md\n" +
		"See @docs/guide.md for more, and @~/.claude/mine.md.\n" +
		"Not imports: `@CLAUDE.local.md`, ``a @b.md``, me@example.com\n" +
		"```\n@inside/fence.md\n```\n" +
		"~~~md\n@also/fenced.md\n~~~\n" +
		"Escaped: @my\\ file.md\n" +
		"- @AGENTS.md again\n" +
		"\t@tabbed.md\n"
	got := Parse([]byte(doc)).Imports()
	// Claude Code's pattern takes everything up to whitespace, trailing
	// punctuation included: "mine.md." is what it would try to load.
	want := []string{"AGENTS.md", "docs/guide.md", "~/.claude/mine.md.", "my file.md", "tabbed.md"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Imports\n got %q\nwant %q", got, want)
	}
	if got := Parse([]byte("@AGENTS.md")).Imports(); !reflect.DeepEqual(got, []string{"AGENTS.md"}) {
		t.Errorf("a file that is only an import: %q", got)
	}
	if got := Parse(readCorpus(t, "AuroraWebSoftware__FlexyField__CLAUDE.md")).Imports(); len(got) != 0 {
		t.Errorf("backticked @/openspec/AGENTS.md is not an import: %q", got)
	}
}

func TestCodeSpans(t *testing.T) {
	for s, want := range map[string]string{
		"a `b` c":          "[[2 5]]",
		"``a ` b``":        "[[0 9]]",
		"`open only":       "[]",
		"\\`not` a `span`": "[[5 10]]", // the escaped backtick is literal; the next two pair
		"``x` y`":          "[[3 7]]",  // "``" has no partner; "` y`" is a span
	} {
		if got := fmt.Sprint(codeSpans([]byte(s))); got != want {
			t.Errorf("codeSpans(%q) = %s, want %s", s, got, want)
		}
	}
}

func TestBestSection(t *testing.T) {
	doc := "intro\n" +
		"# Guide\n" + // 1
		"## Build & Test\n" + // 2
		"## **Conventions**:\n" + // 3
		"## Landing the Plane (Session Completion)\n" + // 4
		"## Testing\n" + // 5
		"## Testing\n" + // 6: a duplicate; the first wins
		"## Deployment notes\n" + // 7
		"## Deployment note\n" // 8
	d := Parse([]byte(doc))
	for title, want := range map[string]int{
		"":                       0,
		"guide":                  1,
		"  GUIDE ":               1,
		"conventions":            3,
		"Conventions:":           3,
		"Landing the Plane":      4,
		"landing the plane (x)":  4,
		"testing":                5,
		"tests":                  -1, // "tests" vs "testing": 0.6
		"Testings":               5,
		"Deployment note":        8, // exact beats the more similar-looking earlier one
		"deployment notess":      7, // highest similarity
		"Build and Test":         2,
		"something else":         -1,
		"## Testing":             5, // a heading line works too
		"Session Completion":     -1,
		"build":                  -1,
		"Guide <!-- x -->":       -1,
		"b":                      -1,
		"Conventions (optional)": 3,
	} {
		if got := d.BestSection(title); got != want {
			t.Errorf("BestSection(%q) = %d, want %d", title, got, want)
		}
	}
}

func TestNormTitle(t *testing.T) {
	for in, want := range map[string]string{
		"**Testing**:":       "testing",
		"  A   `b`\tC ：":     "a b c",
		"Überblick":          "überblick",
		"snake_case_thing":   "snakecasething",
		"Landing (x)":        "landing (x)",
		"⛔ Android 强制协议（最高）": "⛔ android 强制协议（最高）",
	} {
		if got := normTitle(in); got != want {
			t.Errorf("normTitle(%q) = %q, want %q", in, got, want)
		}
	}
	if !strings.EqualFold(dropParen("landing the plane (session completion)"), "landing the plane") {
		t.Errorf("dropParen")
	}
}
