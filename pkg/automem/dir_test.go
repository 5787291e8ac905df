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
	write(t, dir, IndexName, "# Memory\n- [Build](build.md) — how to build\n- [Deploy notes](project_deploy.md) — staging deploys need an approval\n- [Linked](linked.md) — via symlink\n- a fact\n- See [gone.md](gone.md)\n")
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
	if d.Index == nil || d.Index.Name != IndexName || d.Load.Lines != 6 {
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
	// The pointer to a file that does not exist is the only copy of its
	// memory: a fact. One that only names its file leaves nothing to keep.
	want := []string{"MEMORY.md:pointer", "MEMORY.md:fact", "MEMORY.md:pointer", "MEMORY.md:fact", "MEMORY.md:pointer", "build.md:memory", "linked.md:memory", "notes.md:fact"}
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
		t.Error("nothing is beyond the cap of a 6-line index")
	}
}

// Every pointer form names the memory it points to: a file in a
// sub-folder is read as a memory file of its own (and so are the files its
// pointers name, relative to it), a wikilink names a file by name, stem or
// frontmatter title, and a link whose case differs names the file.
func TestScanPointerTargets(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, IndexName, "- `notes/debugging.md` — how to debug\n- [[deploy]] — deploys\n- [[Gate Notes]]\n- [Build](BUILD.md) — build\n- [[nowhere]]\n")
	if err := os.Mkdir(filepath.Join(dir, "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "notes"), "debugging.md", "## Debugging\n- attach with dlv\n- [More](more.md) — deeper\n")
	write(t, filepath.Join(dir, "notes"), "more.md", "---\nname: more\ndescription: deeper notes\n---\nbody\n")
	write(t, dir, "deploy.md", "---\nname: deploy\ndescription: d\n---\nx\n")
	write(t, dir, "project_gate.md", "---\nname: Gate Notes\ndescription: g\n---\ny\n")
	write(t, dir, "build.md", "---\nname: build\ndescription: b\n---\nz\n")
	d, err := Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range d.Entries() {
		got = append(got, e.File+":"+string(e.Kind)+":"+e.Link)
	}
	want := []string{
		"MEMORY.md:pointer:notes/debugging.md", "MEMORY.md:pointer:deploy.md", "MEMORY.md:pointer:project_gate.md",
		"MEMORY.md:pointer:build.md", "MEMORY.md:pointer:nowhere.md",
		"build.md:memory:", "deploy.md:memory:",
		"notes/debugging.md:fact:", "notes/debugging.md:pointer:notes/more.md", "notes/more.md:memory:",
		"project_gate.md:memory:",
	}
	if !slices.Equal(got, want) {
		t.Errorf("entries:\n got  %q\n want %q", got, want)
	}
	if dl := d.Dangling(); len(dl) != 1 || dl[0].Link != "nowhere.md" {
		t.Errorf("dangling = %+v", dl)
	}
}

func TestHasHook(t *testing.T) {
	for _, c := range []struct {
		text, link string
		want       bool
	}{
		{"[Deploy notes](project_deploy.md) — staging deploys need …", "project_deploy.md", true},
		{"[project_deploy.md](project_deploy.md)", "project_deploy.md", false},
		{"[project-deploy](project_deploy.md)", "project_deploy.md", false},
		{"See [x.md](x.md) for details.", "x.md", false},
		{"详细设计见：[x.md](./x.md)", "x.md", true},
		{"`x.md` — what it holds", "x.md", true},
		{"[[x]]", "x.md", false},
		{"[$ partial matching: use result[[\"error\"]]](r.md)", "r.md", true},
		{"Details: [[slug]]", "slug.md", false},
	} {
		if got := HasHook(c.text, c.link); got != c.want {
			t.Errorf("HasHook(%q) = %v, want %v", c.text, got, c.want)
		}
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
