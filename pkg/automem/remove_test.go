package automem

import (
	"bytes"
	"strings"
	"testing"
)

// idWithPrefix returns the id of the entry whose text starts with prefix.
func idWithPrefix(t *testing.T, f *File, prefix string) string {
	t.Helper()
	for _, e := range f.Entries {
		if strings.HasPrefix(e.Text, prefix) {
			return e.ID
		}
	}
	t.Fatalf("no entry starting with %q", prefix)
	return ""
}

func TestRemove(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		remove []string // text prefixes of the entries to remove
		want   string
	}{
		{
			name:   "middle bullet",
			in:     "## A\n- one\n- two\n- three\n",
			remove: []string{"two"},
			want:   "## A\n- one\n- three\n",
		},
		{
			name:   "nested item goes with its children",
			in:     "- one\n  - child\n\n  more\n- two\n",
			remove: []string{"one"},
			want:   "- two\n",
		},
		{
			name:   "emptied section loses its heading and one blank line",
			in:     "# Memory\n\n## A\n- a\n\n## B\n- b\n\n## C\n- c\n",
			remove: []string{"b"},
			want:   "# Memory\n\n## A\n- a\n\n## C\n- c\n",
		},
		{
			name:   "section with other content keeps its heading",
			in:     "## A\nSome paragraph.\n- a\n\n## B\n- b\n",
			remove: []string{"a"},
			want:   "## A\nSome paragraph.\n\n## B\n- b\n",
		},
		{
			name:   "emptied parent goes too, recursively",
			in:     "# T\n\n## A\n\n### A1\n- a1\n\n### A2\n- a2\n\n## B\n- b\n",
			remove: []string{"a1", "a2"},
			want:   "# T\n\n## B\n- b\n",
		},
		{
			name:   "parent with its own entry stays",
			in:     "## A\n- a\n\n### A1\n- a1\n",
			remove: []string{"a1"},
			want:   "## A\n- a\n",
		},
		{
			name:   "already-empty sections are left alone",
			in:     "## Empty\n\n## Detalhes: → [projeto.md](projeto.md)\n\n## A\n- a\n- keep\n",
			remove: []string{"a"},
			want:   "## Empty\n\n## Detalhes: → [projeto.md](projeto.md)\n\n## A\n- keep\n",
		},
		{
			name:   "last section at end of file leaves no trailing blank",
			in:     "## A\n- a\n\n## B\n- b\n",
			remove: []string{"b"},
			want:   "## A\n- a\n",
		},
		{
			name:   "first entry leaves no leading blank",
			in:     "- a\n\n- b\n",
			remove: []string{"a"},
			want:   "- b\n",
		},
		{
			name:   "whole file emptied",
			in:     "# T\n\n- a\n",
			remove: []string{"a"},
			want:   "",
		},
		{
			name:   "CRLF kept",
			in:     "## A\r\n- a\r\n- b\r\n\r\n## B\r\n- c\r\n",
			remove: []string{"a", "c"},
			want:   "## A\r\n- b\r\n",
		},
		{
			name:   "no final newline",
			in:     "- a\n- b",
			remove: []string{"b"},
			want:   "- a\n",
		},
		{
			name:   "no final newline kept when the last entry stays",
			in:     "- a\n- b",
			remove: []string{"a"},
			want:   "- b",
		},
		{
			name:   "pre-existing doubled blank lines stay",
			in:     "- a\n\n\n- b\n\n- c\n",
			remove: []string{"c"},
			want:   "- a\n\n\n- b\n",
		},
		{
			name:   "archive batch between comments",
			in:     "\n<!-- archived 1 -->\n- [a](a.md) - x\n\n<!-- archived 2 -->\n- [b](b.md) - y\n",
			remove: []string{"[a]"},
			want:   "\n<!-- archived 1 -->\n\n<!-- archived 2 -->\n- [b](b.md) - y\n",
		},
		{
			name:   "table and attached fence",
			in:     "## T\n| a |\n|---|\n\n- run:\n```\nx\n```\n- keep\n",
			remove: []string{"| a |", "run:"},
			want:   "## T\n- keep\n",
		},
		{
			name:   "identical entries are one fact",
			in:     "## A\n- same\n## B\n- same\n- other\n",
			remove: []string{"same"},
			want:   "## B\n- other\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := Parse("MEMORY.md", []byte(tt.in))
			var ids []string
			for _, p := range tt.remove {
				ids = append(ids, idWithPrefix(t, f, p))
			}
			if got := string(f.Remove(ids...)); got != tt.want {
				t.Errorf("Remove:\n got  %q\n want %q", got, tt.want)
			}
			if string(f.Content) != tt.in {
				t.Error("Remove modified the parsed content")
			}
		})
	}
}

func TestRemoveMemoryAndUnknown(t *testing.T) {
	in := []byte("---\nname: x\n---\nbody\n")
	f := Parse("x.md", in)
	if got := f.Remove(f.Entries[0].ID); got == nil || len(got) != 0 {
		t.Errorf("removing the memory = %q, want empty", got)
	}
	got := f.Remove("ffffffffffffffff")
	if !bytes.Equal(got, in) {
		t.Errorf("unknown id changed content: %q", got)
	}
	got[0] = 'X'
	if f.Content[0] != '-' {
		t.Error("Remove returned the content itself, not a copy")
	}
}
