package automem

import (
	"maps"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFrontmatterFields(t *testing.T) {
	// A description line of 753 characters, like the real one in the
	// corpus: emoji, backticks, colons, arrows and nested parentheses.
	long := []rune(strings.Repeat("긴 설명 🚀 `code` → (nested (parens)): ", 30))
	long = long[:753-len(`description: ""`)]
	if n := utf8.RuneCountInString(`description: "` + string(long) + `"`); n != 753 {
		t.Fatalf("fixture line is %d chars", n)
	}
	tests := []struct {
		name   string
		yaml   string
		want   map[string]string
		typ    string
		warned bool
	}{
		{
			name: "flat",
			yaml: "name: x\ndescription: plain text: with colon\ntype: user\noriginSessionId: 2afc901a\n",
			want: map[string]string{"name": "x", "description": "plain text: with colon", "type": "user", "originSessionId": "2afc901a"},
			typ:  "user",
		},
		{
			name: "nested metadata with trailing space",
			yaml: "name: x\nmetadata: \n  node_type: memory\n  type: Project\n  modified: 2026-09-08T19:29:56.864Z\n",
			want: map[string]string{"name": "x", "metadata.node_type": "memory", "metadata.type": "Project", "metadata.modified": "2026-09-08T19:29:56.864Z"},
			typ:  "project",
		},
		{
			name: "top-level type wins over metadata.type",
			yaml: "type: feedback\nmetadata:\n  type: project\n",
			want: map[string]string{"type": "feedback", "metadata.type": "project"},
			typ:  "feedback",
		},
		{
			name: "deeper nesting and dedent",
			yaml: "a:\n  b:\n    c: 1\n  d: 2\ne: 3\n",
			want: map[string]string{"a.b.c": "1", "a.d": "2", "e": "3"},
		},
		{
			name: "double-quoted with escapes",
			yaml: `description: "say \"hi\"\tand \\ go\n\u00e9\x41 \U0001F600 # not a comment"` + "\n",
			want: map[string]string{"description": "say \"hi\"\tand \\ go\néA 😀 # not a comment"},
		},
		{
			name: "single-quoted with doubled quote and trailing comment",
			yaml: "name: 'it''s: fine' # comment\n",
			want: map[string]string{"name": "it's: fine"},
		},
		{
			name: "plain value comment, null and tilde",
			yaml: "a: value # comment\nb: null\nc: ~\nd: issue#74\n",
			want: map[string]string{"a": "value", "b": "", "c": "", "d": "issue#74"},
		},
		{
			name: "753-char quoted description",
			yaml: "description: \"" + string(long) + "\"\n",
			want: map[string]string{"description": string(long)},
		},
		{
			name: "inline and block lists",
			yaml: "relates_to: [a.md, 'b, c.md', \"d.md\"]\ntags: []\nsymptoms:\n  - \"first\"\n  - second\nsynthesized_from:\n- x\n- y\nafter: z\n",
			want: map[string]string{"relates_to": "a.md, b, c.md, d.md", "tags": "", "symptoms": "first, second", "synthesized_from": "x, y", "after": "z"},
		},
		{
			name: "multi-line quoted and plain scalars",
			yaml: "description: \"first\n  second\"\nname: plain\n  continued\n",
			want: map[string]string{"description": "first second", "name": "plain continued"},
		},
		{
			name: "block scalars",
			yaml: "lit: |\n  line one\n  line two\nfold: >-\n  folded\n  text\nnext: 1\n",
			want: map[string]string{"lit": "line one\nline two", "fold": "folded text", "next": "1"},
		},
		{
			name: "quoted key and empty value",
			yaml: "\"quoted key\": v\nempty:\n",
			want: map[string]string{"quoted key": "v", "empty": ""},
		},
		{
			name:   "garbage lines are ignored",
			yaml:   "name: ok\njust text without colon\n- orphan item\n[weird]: x\n",
			want:   map[string]string{"name": "ok"},
			warned: true,
		},
		{
			name: "unterminated quote keeps the raw text",
			yaml: "description: \"never closed\n",
			want: map[string]string{"description": "\"never closed"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := Parse("t.md", []byte("---\n"+tt.yaml+"---\nbody\n"))
			fm := f.Frontmatter
			if fm == nil {
				t.Fatal("no frontmatter")
			}
			if !maps.Equal(fm.Fields, tt.want) {
				t.Errorf("fields:\n got  %q\n want %q", fm.Fields, tt.want)
			}
			if fm.Type != tt.typ {
				t.Errorf("type = %q, want %q", fm.Type, tt.typ)
			}
			if (len(f.Warnings) > 0) != tt.warned {
				t.Errorf("warnings = %q", f.Warnings)
			}
			if fm.Description != tt.want["description"] || fm.Name != tt.want["name"] {
				t.Errorf("name %q description %q", fm.Name, fm.Description)
			}
		})
	}
}

func TestFrontmatterDelimiters(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"---\nname: x\n---\n", true},
		{"---  \nname: x\n---\t\n", true},
		{"\uFEFF---\nname: x\n---\n", true},
		{"---\r\nname: x\r\n---\r\n", true},
		{"---\nname: x\n---", true},
		{"\n---\nname: x\n---\n", false},
		{"----\nname: x\n----\n", false},
		{" ---\nname: x\n---\n", false},
		{"---\nname: x\n", false},
	}
	for _, tt := range tests {
		f := Parse("x.md", []byte(tt.in))
		if (f.Frontmatter != nil) != tt.want {
			t.Errorf("%q: frontmatter = %v, want %v", tt.in, f.Frontmatter != nil, tt.want)
			continue
		}
		if tt.want && f.Frontmatter.Name != "x" {
			t.Errorf("%q: name = %q", tt.in, f.Frontmatter.Name)
		}
	}
}
