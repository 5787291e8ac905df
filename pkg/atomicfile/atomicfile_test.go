package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/intermem/intermem/pkg/confine"
)

func dir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// names lists a directory's entries.
func names(t *testing.T, d string) []string {
	t.Helper()
	ents, err := os.ReadDir(d)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func TestWriteReplaces(t *testing.T) {
	d := dir(t)
	p := filepath.Join(d, "cache")
	if err := Write(p, []byte("one\n"), Options{}); err != nil {
		t.Fatal(err)
	}
	if err := Write(p, []byte("two\n"), Options{Perm: 0o644}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, p); got != "two\n" {
		t.Fatalf("content = %q, want %q", got, "two\n")
	}
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o644 {
		t.Fatalf("mode = %v, want 0644", st.Mode().Perm())
	}
	if got := names(t, d); len(got) != 1 || got[0] != "cache" {
		t.Fatalf("directory holds %q, want only cache (no temporary file left)", got)
	}
}

func TestWriteDefaultModeIgnoresUmask(t *testing.T) {
	d := dir(t)
	p := filepath.Join(d, "key")
	if err := Write(p, []byte("k"), Options{NoSync: true}); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("mode = %v, want 0600", st.Mode().Perm())
	}
}

// A symlink at the destination is replaced, never written through.
func TestWriteReplacesALinkNotItsTarget(t *testing.T) {
	d := dir(t)
	victim := filepath.Join(d, "bashrc")
	if err := os.WriteFile(victim, []byte("mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(d, "log")
	if err := os.Symlink(victim, p); err != nil {
		t.Fatal(err)
	}
	if err := Write(p, []byte("intermem\n"), Options{}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, victim); got != "mine\n" {
		t.Fatalf("the link's target was written: %q", got)
	}
	st, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Mode().IsRegular() {
		t.Fatalf("destination is %v, want a regular file", st.Mode())
	}
}

// Temp's names are not predictable, and a name planted with the fixed
// prefix (a link, as an attacker would plant a predictable temporary
// name) is neither followed nor removed.
func TestTempNamesAreFresh(t *testing.T) {
	d := dir(t)
	victim := filepath.Join(d, "victim")
	if err := os.WriteFile(victim, []byte("mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	planted := filepath.Join(d, ".CLAUDE.md.op1-0000000000000000.tmp")
	if err := os.Symlink(victim, planted); err != nil {
		t.Fatal(err)
	}
	a, err := Temp(d, "CLAUDE.md", []byte("a"), Options{Tag: "op1"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Temp(d, "CLAUDE.md", []byte("b"), Options{Tag: "op1"})
	if err != nil {
		t.Fatal(err)
	}
	if a == b || a == planted || b == planted {
		t.Fatalf("temporary names %s, %s: want two fresh names", a, b)
	}
	for _, p := range []string{a, b} {
		if !strings.HasPrefix(filepath.Base(p), ".CLAUDE.md.op1-") || !strings.HasSuffix(p, ".tmp") {
			t.Fatalf("temporary name %s does not carry the base and tag", p)
		}
	}
	if got := read(t, victim); got != "mine\n" {
		t.Fatalf("victim = %q", got)
	}
	// Leftovers finds both of this run's files and the planted name (it
	// has the form), nothing of another tag or base.
	if _, err := Temp(d, "CLAUDE.md", nil, Options{Tag: "op2"}); err != nil {
		t.Fatal(err)
	}
	if _, err := Temp(d, "AGENTS.md", nil, Options{Tag: "op1"}); err != nil {
		t.Fatal(err)
	}
	got := Leftovers(d, []string{"CLAUDE.md"}, []string{"op1"})
	if len(got) != 3 {
		t.Fatalf("leftovers = %q, want the two temporary files and the planted name", got)
	}
	if got := Leftovers(d, []string{"CLAUDE.md", "AGENTS.md"}, []string{"op1", "op2"}); len(got) != 5 {
		t.Fatalf("leftovers of both bases and tags = %q, want 5", got)
	}
}

// A temporary file that cannot be created is an error, and a bad tag is
// refused before anything is created.
func TestTempErrorLeavesNothing(t *testing.T) {
	d := dir(t)
	ro := filepath.Join(d, "ro")
	if err := os.Mkdir(ro, 0o500); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		t.Log("running as root: a read-only directory does not refuse; checking the missing directory only")
	} else if _, err := Temp(ro, "x", []byte("x"), Options{}); !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("Temp in a read-only directory: err = %v, want a permission error", err)
	}
	if _, err := Temp(filepath.Join(d, "missing"), "x", []byte("x"), Options{}); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Temp in a missing directory: err = %v, want not-exist", err)
	}
	if _, err := Temp(d, "x", nil, Options{Tag: "a/b"}); err == nil {
		t.Fatal("a tag with a separator was accepted")
	}
}

func TestWriteState(t *testing.T) {
	d := dir(t)
	state := filepath.Join(d, ".intermem")
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := WriteState(state, filepath.Join(state, "context.cache"), []byte("c"), Options{NoSync: true}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(state, "context.cache")); got != "c" {
		t.Fatalf("content = %q", got)
	}
	// Outside the state directory: refused.
	if err := WriteState(state, filepath.Join(d, "CLAUDE.md"), []byte("x"), Options{}); !errors.Is(err, confine.ErrOutside) {
		t.Fatalf("outside: err = %v, want ErrOutside", err)
	}
	// A linked subdirectory: refused, nothing written where it leads.
	elsewhere := filepath.Join(d, "elsewhere")
	if err := os.Mkdir(elsewhere, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(state, "spool")); err != nil {
		t.Fatal(err)
	}
	if err := WriteState(state, filepath.Join(state, "spool", "a.json"), []byte("x"), Options{}); !errors.Is(err, confine.ErrLink) {
		t.Fatalf("linked spool: err = %v, want ErrLink", err)
	}
	if got := names(t, elsewhere); len(got) != 0 {
		t.Fatalf("written through the link: %q", got)
	}
	// A linked state directory: refused.
	linked := filepath.Join(d, "linked")
	if err := os.Symlink(elsewhere, linked); err != nil {
		t.Fatal(err)
	}
	if err := WriteState(linked, filepath.Join(linked, "log"), []byte("x"), Options{}); !errors.Is(err, confine.ErrLink) {
		t.Fatalf("linked state dir: err = %v, want ErrLink", err)
	}
	// A linked file: refused too (a planted link is reported, not silently
	// replaced).
	if err := os.Symlink(filepath.Join(d, "bashrc"), filepath.Join(state, "log")); err != nil {
		t.Fatal(err)
	}
	if err := WriteState(state, filepath.Join(state, "log"), []byte("x"), Options{}); !errors.Is(err, confine.ErrLink) {
		t.Fatalf("linked file: err = %v, want ErrLink", err)
	}
}
