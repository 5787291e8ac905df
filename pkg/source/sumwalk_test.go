package source

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/bmatcuk/doublestar/v4"
)

// summed is one file a SumWalk gave its caller.
type summed struct {
	path, real string
	fp         Fingerprint
}

// sumsOf is what a SumWalk must give for FindWalk's files: each file's
// path, real path and fingerprint, in FindWalk's order.
func sumsOf(files []File) []summed {
	var out []summed
	for _, f := range files {
		out = append(out, summed{f.Path, f.Real(), f.FP})
	}
	return out
}

// A SumWalk gives exactly what FindWalk finds — every file's path, real
// path and fingerprint, in FindWalk's order, and the same listings for
// the next walk — or says it cannot: over a tree with a stored listing
// and without one, with links in and out, a FIFO, a link to a directory,
// a directory named as a prefix of a file beside it (its files come
// after that file in path order, before it in the walk), patterns that
// overlap and patterns apart, and a directory of more files than one
// parallel run. Run under -race, the runs' parallel stats are checked.
func TestSumWalkAsFindWalk(t *testing.T) {
	many := func(dir string, n int) []string {
		var out []string
		for i := range n {
			out = append(out, dir+"/f"+strconv.Itoa(1000+i)+".md")
		}
		return out
	}
	cases := []struct {
		name  string
		files []string
		pats  []string
		setup func(t *testing.T, root string)
		ok    bool // written by hand: whether the walk can be summed
	}{
		{name: "plain", files: append(many("docs/solutions/big", 2*maxRun+30), "docs/solutions/a.md", "docs/solutions/x/y/z.md", "docs/solutions/x/notes.txt", "docs/other.md"),
			pats: []string{"docs/solutions/**/*.md"}, ok: true},
		{name: "apart", files: []string{".clavain/learnings/a.md", ".clavain/learnings/b.md", "config/flux-drive/knowledge/c.md", "config/flux-drive/knowledge/d.txt"},
			pats: []string{".clavain/learnings/*.md", "config/flux-drive/knowledge/*.md"}, ok: true},
		{name: "link in", files: []string{"docs/a.md", "docs/t.md"}, pats: []string{"docs/**/*.md"}, ok: true,
			setup: func(t *testing.T, root string) { symlink(t, "t.md", filepath.Join(root, "docs/l.md")) }},
		{name: "link out", files: []string{"docs/a.md"}, pats: []string{"docs/**/*.md"},
			setup: func(t *testing.T, root string) { symlink(t, "/etc/hostname", filepath.Join(root, "docs/out.md")) }},
		{name: "dangling", files: []string{"docs/a.md"}, pats: []string{"docs/**/*.md"},
			setup: func(t *testing.T, root string) { symlink(t, "gone.md", filepath.Join(root, "docs/b.md")) }},
		{name: "link to a directory", files: append(many("docs/d", 3), "docs/a.md"), pats: []string{"docs/**/*.md"},
			setup: func(t *testing.T, root string) { symlink(t, "d", filepath.Join(root, "docs/dir.md")) }},
		{name: "fifo", files: many("docs", 200), pats: []string{"docs/**/*.md"},
			setup: func(t *testing.T, root string) {
				if err := syscall.Mkfifo(filepath.Join(root, "docs/pipe.md"), 0o644); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "prefix", files: []string{"docs/a/x.md", "docs/a-b.md", "docs/b.md"}, pats: []string{"docs/**/*.md"}},
		{name: "overlapping", files: []string{"docs/a.md", "docs/sub/b.md"}, pats: []string{"docs/*.md", "docs/**/*.md"}},
		{name: "root pattern", files: []string{"CLAUDE.md", "docs/a.md"}, pats: []string{"CLAUDE.md", "docs/*.md"}},
		{name: "past MaxFiles", files: many("docs/m", MaxFiles+1), pats: []string{"docs/**/*.md"}},
		{name: "no such base", files: []string{"other/a.md"}, pats: []string{"docs/**/*.md"}, ok: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			tree(t, root, c.files...)
			if c.setup != nil {
				c.setup(t, root)
			}
			s := fake{name: "f", pats: c.pats}
			var prev Dirs
			for _, stored := range []bool{false, true} {
				files, probs, dirs := FindWalk(root, s, &Walk{Prev: prev, Window: time.Second})
				var got []summed
				sdirs, ok := SumWalk(root, s, &Walk{Prev: prev, Window: time.Second}, func(path, real []byte, fp Fingerprint) {
					got = append(got, summed{string(path), string(real), fp})
				})
				if ok != c.ok {
					t.Fatalf("stored listing %v: summed %v, want %v (FindWalk: %d files, problems %v)", stored, ok, c.ok, len(files), probs)
				}
				if ok && len(probs) > 0 {
					t.Errorf("stored listing %v: summed with FindWalk's problems %v", stored, probs)
				}
				if ok && !slices.Equal(got, sumsOf(files)) {
					t.Errorf("stored listing %v: summed %d files, FindWalk %d; first %v, want %v", stored, len(got), len(files), got[:min(2, len(got))], sumsOf(files)[:min(2, len(files))])
				}
				if ok && !sameListings(sdirs, dirs) {
					t.Errorf("stored listing %v: listings %v, FindWalk's %v", stored, sdirs, dirs)
				}
				prev = dirs
			}
		})
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Dir(link), old, old); err != nil {
		t.Fatal(err)
	}
}

func sameListings(a, b Dirs) bool {
	if len(a) != len(b) {
		return false
	}
	for k, d := range a {
		e, ok := b[k]
		if !ok || d.FP != e.FP || d.Path != e.Path || !slices.Equal(d.Entries, e.Entries) {
			return false
		}
	}
	return true
}

// Whether a pattern matches a file's path is decided from its name, once
// its directory is matched, exactly as matching the whole path decides.
func TestNameMatcher(t *testing.T) {
	pats := []string{"docs/solutions/**/*.md", ".clavain/learnings/*.md", "*.md", "**/*.md", "**", "docs/**",
		"docs/*/x.md", "docs/**/x/*.md", "a?c/*.md", "docs/*.md", "CLAUDE.md", ".claude/rules/**/*.md",
		"docs/{a,b}/*.md", "docs/[ab]/*.md", "docs/**.md", "docs/*/**/*", "**/learnings/*"}
	dirs := []string{".", "docs", "docs/solutions", "docs/solutions/x", "docs/solutions/x/y", ".clavain/learnings",
		"abc", "a/c", "docs/a", "docs/x", "docs/a/x", ".claude/rules", ".claude/rules/deep/er", "other/learnings"}
	names := []string{"a.md", "x.md", "CLAUDE.md", "notes.txt", ".hidden.md", "md", "b"}
	for _, pat := range pats {
		for _, dir := range dirs {
			m := newNameMatcher(pat, dir)
			for _, name := range names {
				p := name
				if dir != "." {
					p = dir + "/" + name
				}
				want, _ := doublestar.Match(pat, p)
				if got := m.match(dir, name); got != want {
					t.Errorf("pattern %q, %q: by name %v, by path %v", pat, p, got, want)
				}
			}
		}
	}
}

// A stored listing is read as hostile: one naming an entry that is not a
// name of its directory ("..", a path, a NUL) is not taken, however
// unchanged the directory's stat; the directory is read again.
func TestStoredListingNamesAreNames(t *testing.T) {
	root := t.TempDir()
	tree(t, root, "docs/a.md", "outside.md")
	s := fake{name: "f", pats: []string{"docs/**/*.md"}}
	_, _, dirs := FindWalk(root, s, &Walk{Window: time.Second})
	for _, bad := range []string{"../outside.md", "..", "x/../../outside.md", "a.md\x00.md", ""} {
		planted := Dirs{}
		for k, d := range dirs {
			d.Entries = append(slices.Clone(d.Entries), DirEntry{Name: bad})
			planted[k] = d
		}
		w := &Walk{Prev: planted, Window: time.Second}
		files, probs, _ := FindWalk(root, s, w)
		if got := filePaths(files); !slices.Equal(got, []string{"docs/a.md"}) || len(probs) > 0 || w.Reads == 0 {
			t.Errorf("planted %q: files %q, problems %v, %d directories read", bad, got, probs, w.Reads)
		}
	}
}
