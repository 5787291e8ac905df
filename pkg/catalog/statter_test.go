package catalog

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/intermem/intermem/pkg/source"
)

// A witness's stat of each kind of path is what os.Lstat and os.Stat,
// written as keys were first made of (fmt's "%v\x00%+v" of the mode and
// fingerprint, "absent" for a failed stat), say: the stored keys of Whole
// sources still match.
func TestWitnessStatAsOS(t *testing.T) {
	base := t.TempDir()
	out := t.TempDir()
	mk := func(p string) string {
		if err := os.WriteFile(p, []byte("x\n"), 0o640); err != nil {
			t.Fatal(err)
		}
		return p
	}
	file := mk(filepath.Join(base, "MEMORY.md"))
	outside := mk(filepath.Join(out, "elsewhere.md"))
	sub := filepath.Join(base, "sub")
	if err := os.Mkdir(sub, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(sub, 0o750|os.ModeSetgid|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	nested := mk(filepath.Join(sub, "deep.md"))
	setuid := mk(filepath.Join(base, "setuid.md"))
	if err := os.Chmod(setuid, 0o755|os.ModeSetuid); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link.md")
	if err := os.Symlink("MEMORY.md", link); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(base, "dangling.md")
	if err := os.Symlink("nowhere.md", dangling); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(base, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	paths := []string{base, file, outside, out, sub, nested, setuid, link, dangling, fifo,
		filepath.Join(base, "absent.md"), filepath.Join(base, "absent", "x.md")}
	w := statNow(base, nil)
	for _, p := range paths {
		w.stats = map[string]string{}
		st := openStatter(base)
		w.st = st
		w.stat(p)
		st.close()
		var want []string
		for i, stat := range []func(string) (os.FileInfo, error){os.Lstat, os.Stat} {
			fi, err := stat(p)
			if err != nil {
				want = append(want, "absent")
				continue
			}
			want = append(want, fmt.Sprintf("%v\x00%+v", fi.Mode(), source.FingerprintOf(fi)))
			if i == 0 && fi.Mode()&os.ModeSymlink == 0 {
				want = append(want, want[0])
				break
			}
		}
		if got := w.stats[p]; got != strings.Join(want, "\x00") {
			t.Errorf("%s:\n got %q\nwant %q", p, got, strings.Join(want, "\x00"))
		}
	}
}

// The key of a Whole source's stats summed as they are taken is the key
// of a witness of the same stats: over a memory directory with a link, a
// dangling link, a FIFO, a file in a subdirectory, a path gone and one
// outside the directory.
func TestWholeKeyNowAsWitness(t *testing.T) {
	base := t.TempDir()
	out := t.TempDir()
	for _, p := range []string{filepath.Join(base, "MEMORY.md"), filepath.Join(base, "sub", "deep.md"), filepath.Join(out, "far.md")} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("MEMORY.md", filepath.Join(base, "link.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("nowhere.md", filepath.Join(base, "dangling.md")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(base, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := source.Env{Root: "/r", MemoryDir: base}
	touched := []string{"MEMORY.md", "sub/deep.md", "link.md", "dangling.md", "fifo", "gone.md", "../" + filepath.Base(out) + "/far.md"}
	for _, n := range []int{0, 1, len(touched)} {
		want := wholeKey(env, base, touched[:n], statNow(base, touched[:n]), false)
		if got := wholeKeyNow(env, base, touched[:n]); got != want || got == "" {
			t.Errorf("%d paths: summed as stat'd %q, witness %q", n, got, want)
		}
	}
}
