package match

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		// Markers: ours (8 and 16 hex digits) and other tools'.
		{"intermem 16 hex", "- foo <!-- intermem:0123456789abcdef -->", "foo"},
		{"intermem 8 hex", "- Foo bar <!-- intermem:deadbeef -->", "foo bar"},
		{"marker first", "<!-- intermem:0123456789abcdef --> - foo", "foo"},
		{"rule marker", "Never push to main <!-- rule:232 -->", "never push to main"},
		{"marker mid-text", "a<!-- x -->b", "a b"},
		{"multi-line comment", "keep\n<!-- one\ntwo -->\nthis", "keep this"},
		{"two comments", "<!-- a -->x<!-- b -->y", "x y"},
		{"empty comment", "a<!---->b", "a b"},
		{"unterminated comment kept", "a <!-- b", "a <!-- b"},
		{"arrow is not a comment close", "a <!--> b", "a <!--> b"},
		{"only a marker", "<!-- intermem:0123456789abcdef -->", ""},
		// Block markers.
		{"dash bullet", "- item", "item"},
		{"star bullet", "* item", "item"},
		{"plus bullet", "+ item", "item"},
		{"nested bullet", "    - item", "item"},
		{"tab bullet", "\t* item", "item"},
		{"numbered dot", "12. item", "item"},
		{"numbered paren", "3) item", "item"},
		{"heading", "## Build & Test", "build & test"},
		{"heading six", "###### six", "six"},
		{"seven hashes are text", "####### seven", "####### seven"},
		{"hash word is text", "#include <stdio.h>", "#include <stdio.h>"},
		{"quote", "> quoted", "quoted"},
		{"quote no space", ">quoted", "quoted"},
		{"stacked markers", "> - 1. # deep", "deep"},
		{"task box kept", "- [ ] todo", "[ ] todo"},
		{"dash word is text", "-x flag", "-x flag"},
		{"version is not numbering", "1.5 is out", "1.5 is out"},
		{"ten digits is not numbering", "1234567890. x", "1234567890. x"},
		{"markers per line", "- a\n- b\n  2. c", "a b c"},
		{"lone bullet line", "-\nfoo", "foo"},
		{"dash mid-text kept", "a - b", "a - b"},
		// Emphasis and code.
		{"bold", "**Bold** text", "bold text"},
		{"italic star", "*it* text", "it text"},
		{"italic underscore", "_it_ text", "it text"},
		{"bold underscore", "__it__ text", "it text"},
		{"snake case kept", "use max_retries here", "use max_retries here"},
		{"code span", "run `go test ./...` first", "run go test ./... first"},
		{"strike", "~~old~~ new", "old new"},
		{"tilde path kept", "see ~/.claude/settings.json", "see ~/.claude/settings.json"},
		{"fence", "~~~go", "go"},
		{"glob", "src/**/*.py", "src//.py"},
		// Links.
		{"link", "see [the docs](https://x.dev/a_b) now", "see the docs https://x.dev/a_b now"},
		{"link at end", "[Title](file.md)", "title file.md"},
		{"pointer line", "- [Build notes](build.md) — how to build", "build notes build.md — how to build"},
		{"nested link", "[a [b](c) d](e)", "a b c d e"},
		{"not a link: space in url", "[a](b c)", "[a](b c)"},
		{"not a link: gap", "[a] (b)", "[a] (b)"},
		{"failed url closes outer text", "[x [a](b c) d](e)", "[x [a](b c) d](e)"},
		{"bracket in text", "[a [b] c](d)", "[a [b] c](d)"},
		{"empty link text", "[](x)", "x"},
		// Case, whitespace, punctuation.
		{"lower", "Use GoFmt", "use gofmt"},
		{"unicode lower", "ÄÖÜ Straße ΣΟΦΊΑ", "äöü straße σοφία"},
		{"dotted capital I", "İstanbul", "istanbul"},
		{"cjk untouched", "日本語のテスト", "日本語のテスト"},
		{"korean untouched", "- **테스트**: 잘 테스트된 코드.", "테스트: 잘 테스트된 코드"},
		{"emoji untouched", "ship it 🚀 now", "ship it 🚀 now"},
		{"collapse", "a  \t b\n\nc", "a b c"},
		{"nbsp collapses", "a\u00a0\u00a0b", "a b"},
		{"trailing punctuation", "done.;: ", "done"},
		{"trailing period after space", "done .", "done"},
		{"other punctuation kept", "really?!", "really?!"},
		{"inner punctuation kept", "a. b; c: d", "a. b; c: d"},
		{"crlf", "- one\r\n- two\r\n", "one two"},
		{"cr only", "- one\r- two", "one two"},
		{"empty", "", ""},
		{"only spaces", " \t\n ", ""},
		{"only markers", "- ", ""},
		// Invalid UTF-8 becomes U+FFFD, one per byte, as []rune(s) would.
		{"invalid byte", "a\xffb", "a\ufffdb"},
		{"truncated rune", "x\xe6\x97", "x\ufffd\ufffd"},
		{"invalid upper", "\xc0A", "\ufffda"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Normalize(tt.in)
			if got != tt.want {
				t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if again := Normalize(got); again != got {
				t.Errorf("not idempotent: Normalize(%q) = %q", got, again)
			}
		})
	}
}

func TestNormalizeLong(t *testing.T) {
	// Deeply nested constructs: the link stack and the comment scan must
	// handle 65,536 levels (a quadratic scan would take minutes here).
	n := 1 << 16
	in := strings.Repeat("[", n) + "a" + strings.Repeat("](b)", n)
	if got := Normalize(in); strings.ContainsAny(got, "[]()") {
		t.Errorf("nested links left brackets: %.40q…", got)
	}
	in = strings.Repeat("<!--", n) + strings.Repeat("-->", n)
	if got, want := Normalize(in), strings.Repeat("-->", n-1); got != want {
		t.Errorf("nested comments: got %d bytes, want %d", len(got), len(want))
	}
}

func TestKey(t *testing.T) {
	same := [][2]string{
		{"- foo <!-- intermem:0123456789abcdef -->", "* Foo"},
		{"Use `go test`.", "use go test"},
		{"1. Run **make**\r\n", "- run make"},
		{"", "<!-- rule:232 -->"},
	}
	for _, p := range same {
		if Key(p[0]) != Key(p[1]) {
			t.Errorf("Key(%q) != Key(%q)", p[0], p[1])
		}
	}
	differ := [][2]string{
		{"foo", "foo bar"},
		{"use go test", "use go vet"},
		{"a <!-- b", "a <!-- c"},
		{"max_retries", "maxretries"},
	}
	for _, p := range differ {
		if Key(p[0]) == Key(p[1]) {
			t.Errorf("Key(%q) == Key(%q)", p[0], p[1])
		}
	}
	// The documented hash: FNV-1a 64 of the normalized bytes. Reference
	// values of the plain algorithm (offset basis for "", and "a").
	if got := Key(""); got != 0xcbf29ce484222325 {
		t.Errorf("Key(\"\") = %#x, want FNV-1a offset basis", got)
	}
	if got := Key("A"); got != 0xaf63dc4c8601ec8c {
		t.Errorf("Key(\"A\") = %#x, want FNV-1a(\"a\") 0xaf63dc4c8601ec8c", got)
	}
}

func checkNormalized(t *testing.T, in string) {
	t.Helper()
	got := Normalize(in)
	if !utf8.ValidString(got) {
		t.Fatalf("Normalize(%q) = %q: invalid UTF-8", in, got)
	}
	if again := Normalize(got); again != got {
		t.Fatalf("not idempotent:\n in: %q\n 1st: %q\n 2nd: %q", in, got, again)
	}
	if strings.TrimSpace(got) != got || strings.Contains(got, "  ") || strings.ContainsAny(got, "\n\r\t*`") {
		t.Fatalf("Normalize(%q) = %q: whitespace or emphasis left", in, got)
	}
	if Key(in) != Key(got) {
		t.Fatalf("Key(%q) != Key(Normalize(…))", in)
	}
}

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{
		"- foo <!-- intermem:0123456789abcdef -->", "<!*-- x --*>", "[x [a](b)](c)",
		"[a<!--]-->](b)", "~*~", "a_*_b", "-.", "1.", "# .", "> - 1. # x", "\xff\xfe",
		"a\r\n- b", "<!-[-x](y) -->", "`-` foo", "İ", "\u2028- x", "~~~\ncode\n~~~",
		"__init__.py", "[](x)", "a<!-->b-->c",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkNormalized(t, s)
	})
}
