package source

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// tree writes files (slash paths relative to root) and sets every file's
// and directory's times an hour back, past any racy window.
func tree(t *testing.T, root string, files ...string) {
	t.Helper()
	for _, f := range files {
		p := filepath.Join(root, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("# "+f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-time.Hour)
	if err := filepath.WalkDir(root, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, old, old)
	}); err != nil {
		t.Fatal(err)
	}
}

func filePaths(fs []File) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Path)
	}
	return out
}

// An unchanged directory's listing comes from the previous walk: a second
// walk over an unchanged tree reads no directory, and finds what Find
// finds. A file added in a subdirectory is seen (that subdirectory alone
// is read again), a file edited in place changes its own fingerprint, and
// a directory modified within the window is read again at the next walk.
func TestFindWalkReadsChangedDirectoriesOnly(t *testing.T) {
	root := t.TempDir()
	tree(t, root, "docs/solutions/a/x.md", "docs/solutions/b/y.md", "docs/solutions/b/deep/z.md", "docs/solutions/b/notes.txt", "README.md")
	s := fake{name: "f", pats: []string{"docs/solutions/**/*.md"}}
	window := time.Second

	w := &Walk{Window: window}
	files, probs, dirs := FindWalk(root, s, w)
	want := []string{"docs/solutions/a/x.md", "docs/solutions/b/deep/z.md", "docs/solutions/b/y.md"}
	if got := filePaths(files); !slices.Equal(got, want) || len(probs) > 0 {
		t.Fatalf("first walk: %q %v, want %q", got, probs, want)
	}
	if w.Reads != 4 {
		t.Errorf("first walk read %d directories, want 4 (solutions, a, b, b/deep)", w.Reads)
	}

	w = &Walk{Prev: dirs, Window: window}
	again, _, dirs := FindWalk(root, s, w)
	if w.Reads != 0 {
		t.Errorf("a walk over an unchanged tree read %d directories, want 0", w.Reads)
	}
	if !slices.EqualFunc(again, files, func(a, b File) bool { return a.Path == b.Path && a.FP == b.FP && a.Real() == b.Real() }) {
		t.Errorf("unchanged walk: %+v, want %+v", again, files)
	}
	plain, _ := Find(root, s)
	if !slices.EqualFunc(again, plain, func(a, b File) bool { return a.Path == b.Path && a.FP == b.FP }) {
		t.Errorf("unchanged walk: %+v, Find: %+v", again, plain)
	}

	x := filepath.Join(root, "docs/solutions/a/x.md")
	if err := os.WriteFile(x, []byte("# edited in place\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "docs/solutions/b/deep/new.md"), []byte("# new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w = &Walk{Prev: dirs, Window: window}
	changed, _, dirs := FindWalk(root, s, w)
	want = []string{"docs/solutions/a/x.md", "docs/solutions/b/deep/new.md", "docs/solutions/b/deep/z.md", "docs/solutions/b/y.md"}
	if got := filePaths(changed); !slices.Equal(got, want) {
		t.Errorf("after adding b/deep/new.md: %q, want %q", got, want)
	}
	if w.Reads != 1 {
		t.Errorf("after adding a file to b/deep: %d directories read, want 1", w.Reads)
	}
	if changed[0].FP == files[0].FP {
		t.Errorf("x.md edited in place kept its fingerprint %+v", files[0].FP)
	}

	// b/deep was modified just now: its listing was not kept.
	w = &Walk{Prev: dirs, Window: window}
	FindWalk(root, s, w)
	if w.Reads != 1 {
		t.Errorf("after a racy read of b/deep: %d directories read, want 1", w.Reads)
	}
}

// A directory whose stat changed is read again even when its names did
// not: a chmod changes its status-change time, and a read that would now
// fail must be tried, to be reported.
func TestFindWalkRereadsChangedStat(t *testing.T) {
	root := t.TempDir()
	tree(t, root, ".clavain/learnings/a.md")
	s := fake{name: "f", pats: []string{".clavain/learnings/*.md"}}
	_, _, dirs := FindWalk(root, s, &Walk{Window: time.Second})
	if err := os.Chmod(filepath.Join(root, ".clavain/learnings"), 0o700); err != nil {
		t.Fatal(err)
	}
	w := &Walk{Prev: dirs, Window: time.Second}
	files, _, _ := FindWalk(root, s, w)
	if w.Reads != 1 || len(files) != 1 {
		t.Errorf("after a chmod: %d directories read, files %q; want 1 read, one file", w.Reads, filePaths(files))
	}
}

// Find descends only into directories that may hold a match: a pattern
// naming a file at the root reads the root alone.
func TestFindPrunes(t *testing.T) {
	root := t.TempDir()
	tree(t, root, "CLAUDE.md", "sub/CLAUDE.md", "sub/deeper/CLAUDE.md", "docs/intermem/a.md", "docs/intermem/old/b.md")
	for _, c := range []struct {
		pats  []string
		files []string
		reads int
	}{
		{[]string{"CLAUDE.md"}, []string{"CLAUDE.md"}, 1},
		{[]string{"docs/intermem/*.md"}, []string{"docs/intermem/a.md"}, 1},
		{[]string{"*/CLAUDE.md"}, []string{"sub/CLAUDE.md"}, 3},
		{[]string{"**/CLAUDE.md"}, []string{"CLAUDE.md", "sub/CLAUDE.md", "sub/deeper/CLAUDE.md"}, 6},
	} {
		w := &Walk{Window: time.Second}
		files, probs, _ := FindWalk(root, fake{name: "f", pats: c.pats}, w)
		if got := filePaths(files); !slices.Equal(got, c.files) || len(probs) > 0 || w.Reads != c.reads {
			t.Errorf("%q: files %q, problems %v, %d directories read; want %q, %d read", c.pats, got, probs, w.Reads, c.files, c.reads)
		}
	}
}

func TestMayHold(t *testing.T) {
	for _, c := range []struct {
		pat, dir string
		want     bool
	}{
		{"CLAUDE.md", "docs", false},
		{"docs/intermem/*.md", "docs", true},
		{"docs/intermem/*.md", "docs/intermem", true},
		{"docs/intermem/*.md", "docs/intermem/old", false},
		{"docs/intermem/*.md", "src", false},
		{"docs/solutions/**/*.md", "docs/solutions/a/b/c", true},
		{"docs/solutions/**/*.md", "docs/other", false},
		{"**", "a/b", true},
		{"*/x.md", ".git", true},
		{"*/x.md", ".git/objects", false},
		{"{a,b/c}/*.md", "b", true},
		{"[ab]/*.md", "z", true},
	} {
		if got := mayHold(c.pat, c.dir); got != c.want {
			t.Errorf("mayHold(%q, %q) = %v, want %v", c.pat, c.dir, got, c.want)
		}
	}
}

// A directory of many files is judged on several goroutines and visited
// in order: every file found, a link that leads out reported, and
// MaxFiles still counted in walk order.
func TestFindManyFiles(t *testing.T) {
	root := t.TempDir()
	var names, want []string
	for i := range 300 {
		n := ".clavain/learnings/" + strconv.Itoa(1000+i) + ".md"
		names = append(names, n)
		if i != 150 {
			want = append(want, n)
		}
	}
	tree(t, root, names...)
	out := filepath.Join(root, ".clavain/learnings/1150.md")
	if err := os.Remove(out); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/hostname", out); err != nil {
		t.Fatal(err)
	}
	s := fake{name: "f", pats: []string{".clavain/learnings/*.md"}}
	files, probs, _ := FindWalk(root, s, &Walk{Window: time.Second})
	if got := filePaths(files); !slices.Equal(got, want) {
		t.Errorf("files: %d of %d, first %q", len(got), len(want), got[:min(3, len(got))])
	}
	if len(probs) != 1 || probs[0].Path != ".clavain/learnings/1150.md" || !strings.Contains(probs[0].Message, "leads out of the project") {
		t.Errorf("problems %v, want the link out", probs)
	}
	// Each file as os.Stat sees it (statAt stats by name in its directory).
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		st, err := StatFile(f.Path, f.Real())
		if err != nil || st.FP != f.FP || st.Size != f.Size || !st.ModTime.Equal(f.ModTime) || f.Real() != filepath.Join(realRoot, f.Path) {
			t.Errorf("%s: %+v, os.Stat: %+v %v", f.Path, f, st, err)
			break
		}
	}
}

// A file that several of a source's patterns match is found once, by the
// first; a problem with it is reported once.
func TestFindOverlappingPatterns(t *testing.T) {
	root := t.TempDir()
	tree(t, root, "docs/a.md", "docs/sub/b.md", "docs/sub/c.md", "top.md")
	if err := os.Symlink("/nonexistent", filepath.Join(root, "docs/sub/gone.md")); err != nil {
		t.Fatal(err)
	}
	s := fake{name: "f", pats: []string{"docs/*.md", "docs/**/*.md", "docs/sub/*.md", "*.md"}}
	for _, walk := range []bool{false, true} {
		var files []File
		var probs []Problem
		if walk {
			files, probs, _ = FindWalk(root, s, &Walk{Window: time.Second})
		} else {
			files, probs = Find(root, s)
		}
		want := []string{"docs/a.md", "docs/sub/b.md", "docs/sub/c.md", "top.md"}
		if got := filePaths(files); !slices.Equal(got, want) {
			t.Errorf("walk %v: files %q, want %q", walk, got, want)
		}
		if len(probs) != 1 || probs[0].Path != "docs/sub/gone.md" {
			t.Errorf("walk %v: problems %v, want one of docs/sub/gone.md", walk, probs)
		}
	}
}

// A directory of more files than one run (maxRun) is judged run by run,
// and a subdirectory met between two runs is walked with the runs'
// buffer and left empty: every file is found once, and each problem is
// reported once, in walk order.
func TestFindRunsAndSubdirectories(t *testing.T) {
	root := t.TempDir()
	var names, want []string
	for i := range 2*maxRun + 40 {
		dir := "docs/"
		if i%3 == 0 {
			dir = "docs/m/" // "docs/m" sorts among the files of docs/
		}
		n := dir + "k" + strconv.Itoa(1000+i) + ".md"
		if i < 300 {
			n = dir + "a" + strconv.Itoa(1000+i) + ".md"
		}
		names = append(names, n)
		want = append(want, n)
	}
	for i := range maxRun + 10 {
		// After docs/m, in docs/ again: more than a run.
		n := "docs/p" + strconv.Itoa(1000+i) + ".md"
		names, want = append(names, n), append(want, n)
	}
	names = append(names, "docs/m/z.txt", "docs/zz/x.md")
	want = append(want, "docs/zz/x.md")
	tree(t, root, names...)
	for _, gone := range []string{"docs/a1001.md", "docs/m/k1303.md", "docs/p1257.md"} {
		p := filepath.Join(root, gone)
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("/nonexistent", p); err != nil {
			t.Fatal(err)
		}
		want = slices.DeleteFunc(want, func(s string) bool { return s == gone })
	}
	slices.Sort(want)
	s := fake{name: "f", pats: []string{"docs/**/*.md"}}
	files, probs, _ := FindWalk(root, s, &Walk{Window: time.Second})
	if got := filePaths(files); !slices.Equal(got, want) {
		t.Errorf("files: %d of %d", len(got), len(want))
	}
	var probPaths []string
	for _, p := range probs {
		probPaths = append(probPaths, p.Path)
	}
	if !slices.Equal(probPaths, []string{"docs/a1001.md", "docs/m/k1303.md", "docs/p1257.md"}) {
		t.Errorf("problems %v, want the three dangling links in walk order", probs)
	}
}
