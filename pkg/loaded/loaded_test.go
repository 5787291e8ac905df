package loaded

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/intermem/intermem/pkg/match"
	"github.com/intermem/intermem/pkg/mdoc"
)

func TestHasPathsKey(t *testing.T) {
	for in, want := range map[string]bool{
		"---\npaths: \"src/**\"\n---\nx":  true,
		"---\r\npaths:\r\n  - a\r\n---\n": true,
		"---\nname: x\n---\npaths: y\n":   false,
		"paths: y\n":                      false,
		"\xef\xbb\xbf---\npaths: a\n---":  true,
		"---\n  paths: nested\n---\n":     false,
	} {
		if got := HasPathsKey([]byte(in)); got != want {
			t.Errorf("HasPathsKey(%q) = %v", in, got)
		}
	}
}

// write lays out files under dir; a value "->x" makes a symlink to x.
func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(content, "->"); ok {
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// listing renders a set as "name kind depth strict" lines, names relative
// to base.
func listing(s *Set[*mdoc.Doc], base string) []string {
	var out []string
	for _, f := range s.Files {
		rel, _ := filepath.Rel(base, f.Path)
		strict := "strict"
		if !f.Strict {
			strict = "2.1.332-only"
		}
		out = append(out, fmt.Sprintf("%s %s %d %s", filepath.ToSlash(rel), f.Kind, f.Depth, strict))
	}
	return out
}

// TestDiscover checks the loaded set against Claude Code's observed
// loading rules, written out by hand.
func TestDiscover(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	write(t, base, map[string]string{
		"home/.claude/CLAUDE.md":           "- user rule\n\n@~/notes/personal.md\n",
		"home/.claude/rules/style.md":      "- user style rule\n",
		"home/.claude/rules/deep/x.md":     "- nested user rule\n",
		"home/notes/personal.md":           "- personal import\n",
		"work/CLAUDE.md":                   "- parent directory rule\n",
		"work/proj/CLAUDE.md":              "# P\n@docs/c1.md\nSee `@docs/never.md` in code.\n",
		"work/proj/docs/c1.md":             "- one hop\n\n@c2.md\n",
		"work/proj/docs/c2.md":             "- two hops\n\n@c3.md\n@c1.md\n",
		"work/proj/docs/c3.md":             "- three hops\n\n@c4.md\n",
		"work/proj/docs/c4.md":             "- four hops\n\n@c5.md\n",
		"work/proj/docs/c5.md":             "- five hops: dropped\n",
		"work/proj/docs/never.md":          "- in a code span: not imported\n",
		"work/proj/.claude/CLAUDE.md":      "- dot-claude rule\n",
		"work/proj/CLAUDE.local.md":        "- local rule\n",
		"work/proj/.claude/rules/a.md":     "- project rule\n",
		"work/proj/.claude/rules/s.md":     "---\npaths: \"src/**\"\n---\n- scoped rule\n",
		"work/proj/AGENTS.md":              "- agents, not loaded: CLAUDE.md exists\n",
		"work/proj/sub/CLAUDE.md":          "- child directory rule\n",
		"work/proj/sub/.claude/rules/r.md": "- child rule\n",
		"work/proj/nested/AGENTS.md":       "- agents of a directory without CLAUDE.md\n",
	})
	home := filepath.Join(base, "home")
	env := Env{Root: filepath.Join(base, "work/proj"), ConfigDir: filepath.Join(home, ".claude"), Home: home, NoManaged: true}
	s := ReadAll(env, nil)
	want := []string{
		"home/.claude/CLAUDE.md user 0 strict",
		"home/.claude/rules/deep/x.md user rule 0 strict",
		"home/.claude/rules/style.md user rule 0 strict",
		"work/CLAUDE.md project 0 strict",
		"work/proj/CLAUDE.md project 0 strict",
		"work/proj/.claude/CLAUDE.md project 0 strict",
		"work/proj/CLAUDE.local.md project local 0 strict",
		"work/proj/.claude/rules/a.md project rule 0 strict",
		"home/notes/personal.md import 1 strict",
		"work/proj/docs/c1.md import 1 strict",
		"work/proj/docs/c2.md import 2 strict",
		"work/proj/docs/c3.md import 3 strict",
		"work/proj/docs/c4.md import 4 strict",
	}
	if got := listing(s, base); !reflect.DeepEqual(got, want) {
		t.Errorf("from the root:\n got %q\nwant %q", got, want)
	}
	said := Said(s)
	for _, text := range []string{"user rule", "four hops", "local rule", "personal import"} {
		if _, ok := said[match.Key(text)]; !ok {
			t.Errorf("Said lacks %q", text)
		}
	}
	for _, text := range []string{"five hops: dropped", "scoped rule", "in a code span: not imported", "agents, not loaded: CLAUDE.md exists", "child directory rule"} {
		if name, ok := said[match.Key(text)]; ok {
			t.Errorf("Said has %q (from %s)", text, name)
		}
	}
	if got := said[match.Key("user rule")]; got != "~/.claude/CLAUDE.md" {
		t.Errorf("user rule said in %q", got)
	}
	if got := said[match.Key("one hop")]; got != "docs/c1.md" {
		t.Errorf("one hop said in %q", got)
	}

	// From a subdirectory: its CLAUDE.md and rules load too, but are not
	// what the whole project shares.
	env.Cwd = filepath.Join(env.Root, "sub")
	s = ReadAll(env, nil)
	got := listing(s, base)
	for _, w := range []string{"work/proj/sub/CLAUDE.md project 0 strict", "work/proj/sub/.claude/rules/r.md project rule 0 strict"} {
		if !contains(got, w) {
			t.Errorf("from sub/: %q missing in %q", w, got)
		}
	}
	if _, ok := Said(s)[match.Key("child directory rule")]; ok {
		t.Errorf("a subdirectory's CLAUDE.md counts as loaded for the whole project")
	}

	// A directory without CLAUDE.md: its AGENTS.md, for newer clients only.
	env.Cwd = filepath.Join(env.Root, "nested")
	s = ReadAll(env, nil)
	if got := listing(s, base); !contains(got, "work/proj/nested/AGENTS.md agents 0 2.1.332-only") {
		t.Errorf("from nested/: %q", got)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestAgents: AGENTS.md is strict when CLAUDE.md imports it (directly or
// through another import) or is the same file, newer-clients-only when
// there is no CLAUDE.md, and not loaded otherwise.
func TestAgents(t *testing.T) {
	for name, tc := range map[string]struct {
		files          map[string]string
		loaded, strict bool
	}{
		"claude only":     {map[string]string{"CLAUDE.md": "# C\n", "AGENTS.md": "# A\n"}, false, false},
		"agents only":     {map[string]string{"AGENTS.md": "# A\n"}, true, false},
		"import":          {map[string]string{"CLAUDE.md": "@AGENTS.md\n", "AGENTS.md": "# A\n"}, true, true},
		"import via doc":  {map[string]string{"CLAUDE.md": "@docs/x.md\n", "docs/x.md": "@../AGENTS.md\n", "AGENTS.md": "# A\n"}, true, true},
		"import in code":  {map[string]string{"CLAUDE.md": "`@AGENTS.md`\n", "AGENTS.md": "# A\n"}, false, false},
		"claude symlink":  {map[string]string{"CLAUDE.md": "->AGENTS.md", "AGENTS.md": "# A\n"}, true, true},
		"dot-claude only": {map[string]string{".claude/CLAUDE.md": "# C\n", "AGENTS.md": "# A\n"}, true, false},
	} {
		root, _ := filepath.EvalSymlinks(t.TempDir())
		write(t, root, tc.files)
		s := ReadAll(Env{Root: root, NoManaged: true}, nil)
		l, st := s.Loads(filepath.Join(root, "AGENTS.md"))
		if l != tc.loaded || st != tc.strict {
			t.Errorf("%s: loaded %v strict %v, want %v %v", name, l, st, tc.loaded, tc.strict)
		}
	}
}

// TestReadOnce: a file reached under two names, or in an import cycle, is
// read once; a directory or FIFO named CLAUDE.md is never read.
func TestReadOnce(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	write(t, root, map[string]string{
		"CLAUDE.md":           "@a.md\n@b.md\n",
		"a.md":                "@b.md\n",
		"b.md":                "@a.md\n@link.md\n",
		"link.md":             "->a.md",
		".claude/CLAUDE.md/x": "a directory named CLAUDE.md",
	})
	reads := map[string]int{}
	Discover(Env{Root: root, NoManaged: true}, OS{}, func(_, real string, fi fs.FileInfo) (string, Meta, bool) {
		reads[filepath.Base(real)]++
		b, _ := os.ReadFile(real)
		return "", Meta{Imports: mdoc.Parse(b).Imports()}, true
	})
	want := map[string]int{"CLAUDE.md": 1, "a.md": 1, "b.md": 1}
	if !reflect.DeepEqual(reads, want) {
		t.Errorf("reads %v, want %v", reads, want)
	}
}
