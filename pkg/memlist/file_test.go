package memlist

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestDirFileIsFileOf: the listing's own fingerprinting (Dir.file, which
// on Linux reads the stat without an fs.FileInfo) gives every kind of
// entry the File that FileOf gives it over package os's lstat and stat, so
// fingerprints recorded either way stay equal.
func TestDirFileIsFileOf(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, size int) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Repeat("x", size)), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	write("a.md", 10)
	write("big.md", MaxFileBytes+1)
	os.Symlink("a.md", filepath.Join(dir, "link.md"))
	os.Symlink("nowhere.md", filepath.Join(dir, "dangling.md"))
	os.Mkdir(filepath.Join(dir, "sub.md"), 0o755)
	os.Symlink("sub.md", filepath.Join(dir, "dirlink.md"))
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.md"), 0o600); err != nil {
		t.Fatal(err)
	}
	write("setuid.md", 1)
	os.Chmod(filepath.Join(dir, "setuid.md"), 0o4755|fs.ModeSetuid)

	d, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ents, _, eof, err := d.Read(0, 100)
	if err != nil || !eof || len(ents) != 8 {
		t.Fatalf("read %d entries, eof %v: %v", len(ents), eof, err)
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name)
		want := FileOf(e.Name, e.Type, func() (fs.FileInfo, error) {
			if e.Type&fs.ModeSymlink != 0 {
				return os.Stat(p)
			}
			return os.Lstat(p)
		})
		for _, typ := range []fs.FileMode{e.Type, ModeUnknown} {
			got := d.file(e.Name, typ)
			if got != want {
				t.Errorf("%s (type %v): %+v, want %+v", e.Name, typ, got, want)
			}
		}
	}
	// What each kind is, by hand.
	for name, skip := range map[string]string{
		"a.md": "", "link.md": "", "setuid.md": "",
		"big.md":      "4194305 bytes, over the 4194304-byte limit",
		"dangling.md": "cannot be read: no such file or directory",
		"sub.md":      "not a regular file", "dirlink.md": "not a regular file", "fifo.md": "not a regular file",
	} {
		var typ fs.FileMode = ModeUnknown
		if got := d.file(name, typ); got.Skip != skip {
			t.Errorf("%s: skip %q, want %q", name, got.Skip, skip)
		}
	}
}
