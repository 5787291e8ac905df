package automem

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestScan(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, IndexName, "# Memory\n- [Build](build.md) — how to build\n- [Gone](gone.md) — deleted\n- [Linked](linked.md) — via symlink\n- a fact\n")
	write(t, dir, "build.md", "---\nname: build\ndescription: make all\ntype: project\n---\nRun make.\n")
	write(t, dir, "notes.md", "## Notes\n- plain fact file\n")
	write(t, dir, ".hidden.md", "- skipped\n")
	write(t, dir, "readme.txt", "- not markdown\n")
	other := t.TempDir()
	write(t, other, "target.md", "---\nname: linked\n---\nbody\n")
	if err := os.Symlink(filepath.Join(other, "target.md"), filepath.Join(dir, "linked.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(other, "missing.md"), filepath.Join(dir, "broken.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, filepath.Join(dir, "dirlink.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("- x\n", MaxFileBytes/4+1)
	write(t, dir, "big.md", big)

	d, err := Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range d.Files {
		names = append(names, f.Name)
	}
	if want := []string{IndexName, "build.md", "linked.md", "notes.md"}; !slices.Equal(names, want) {
		t.Errorf("files = %q, want %q", names, want)
	}
	if d.Index == nil || d.Index.Name != IndexName || d.Load.Lines != 5 {
		t.Errorf("index %v load %+v", d.Index, d.Load)
	}
	skipped := strings.Join(d.Warnings, "\n")
	for _, name := range []string{"big.md", "broken.md", "dirlink.md", "sub.md", "fifo.md"} {
		if !strings.Contains(skipped, name+": ") {
			t.Errorf("no warning for %s in %q", name, d.Warnings)
		}
	}
	if len(d.Warnings) != 5 {
		t.Errorf("warnings = %q", d.Warnings)
	}

	var kinds []string
	for _, e := range d.Entries() {
		kinds = append(kinds, e.File+":"+string(e.Kind))
	}
	want := []string{"MEMORY.md:pointer", "MEMORY.md:pointer", "MEMORY.md:pointer", "MEMORY.md:fact", "build.md:memory", "linked.md:memory", "notes.md:fact"}
	if !slices.Equal(kinds, want) {
		t.Errorf("entries = %q, want %q", kinds, want)
	}
	if dangling := d.Dangling(); len(dangling) != 1 || dangling[0].Link != "gone.md" {
		t.Errorf("dangling = %+v", dangling)
	}
	if ps := d.PointersTo("build.md"); len(ps) != 1 || ps[0].StartLine != 2 || ps[0].File != IndexName {
		t.Errorf("pointers to build.md = %+v", ps)
	}
	if len(d.PointersTo("notes.md")) != 0 {
		t.Error("notes.md has no pointer")
	}
	if d.File("build.md") == nil || d.File("nope.md") != nil {
		t.Error("File lookup")
	}
	if len(d.BeyondCap()) != 0 {
		t.Error("nothing is beyond the cap of a 5-line index")
	}
}

func TestScanMissingAndEmpty(t *testing.T) {
	_, err := Scan(filepath.Join(t.TempDir(), "nope"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing dir: err = %v, want fs.ErrNotExist", err)
	}
	d, err := Scan(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if d.Index != nil || len(d.Files) != 0 || d.Load != (LoadInfo{}) || d.BeyondCap() != nil || len(d.Entries()) != 0 {
		t.Errorf("empty dir scanned as %+v", d)
	}
	file := filepath.Join(t.TempDir(), "file")
	write(t, filepath.Dir(file), "file", "x")
	if _, err := Scan(file); err == nil {
		t.Error("scanning a regular file as a dir did not fail")
	}
}

// TestScanUnreadableFile uses a symlink loop: unreadable even for root,
// which reads mode-000 files.
func TestScanUnreadableFile(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "ok.md", "- x\n")
	if err := os.Symlink("loop.md", filepath.Join(dir, "loop.md")); err != nil {
		t.Fatal(err)
	}
	d, err := Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Files) != 1 || len(d.Warnings) != 1 || !strings.HasPrefix(d.Warnings[0], "loop.md: ") {
		t.Errorf("files %d warnings %q", len(d.Files), d.Warnings)
	}
	if !strings.Contains(d.Warnings[0], "too many levels of symbolic links") {
		t.Errorf("warning %q does not say why", d.Warnings[0])
	}
}

func TestScanWarningText(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "big.md", strings.Repeat("x", MaxFileBytes+1))
	write(t, dir, "limit.md", "- x\n"+strings.Repeat("y", MaxFileBytes-4))
	d, err := Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := "big.md: 4194305 bytes is over the 4194304-byte limit, skipped"
	if len(d.Warnings) != 1 || d.Warnings[0] != want {
		t.Errorf("warnings = %q, want %q", d.Warnings, want)
	}
	if len(d.Files) != 1 || len(d.Files[0].Content) != MaxFileBytes {
		t.Errorf("a file of exactly MaxFileBytes was not read")
	}
}
