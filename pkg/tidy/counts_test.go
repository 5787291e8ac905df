package tidy

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/intermem/intermem/pkg/automem"
)

func TestCounts(t *testing.T) {
	root := t.TempDir()
	mkdirs := func(ps ...string) {
		for _, p := range ps {
			if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	touch := func(ps ...string) {
		for _, p := range ps {
			if err := os.WriteFile(filepath.Join(root, p), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	// plugins/: 5 directories and a README; tests/: 3 files and a hidden
	// one; docs/: 2 files; skills/ twice (ambiguous); node_modules/x/
	// and .git/ are never looked in.
	mkdirs("plugins/a", "plugins/b", "plugins/c", "plugins/d", "plugins/e", "tests", "docs",
		"a/skills", "b/skills", "node_modules/hooks", ".git/hooks", "src/libraries/one")
	touch("plugins/README.md", "tests/a_test.go", "tests/b_test.go", "tests/c_test.go", "tests/.hidden", "docs/x.md", "docs/y.md")
	if err := os.Symlink(filepath.Join(root, "plugins/a"), filepath.Join(root, "plugins/f")); err != nil {
		t.Fatal(err)
	}

	mem := t.TempDir()
	index := "# Memory\n\n## Facts\n" +
		"- The project has 4 plugins.\n" + // 4: stale (6 directories with the link)
		"- There are 6 plugins now.\n" + // 5: holds
		"- 3 tests cover the parser.\n" + // 6: holds (3 files)
		"- We wrote 2 skills.\n" + // 7: two skills/ directories: not checked
		"- Version 1.2 plugins, build #7 tests, 2026-06-08 docs, 1,000 tests\n" + // 8: not counts
		"- Run `7 plugins` in code\n" + // 9: code
		"- 48 Interverse plugins, 3 times tests failed\n" + // 10: stale; the second reads "3 times"
		"- Only 1 plugin and 2 Hooks.\n" + // 11: singular: stale; hooks/ only under skipped dirs
		"- 10 docs, 1 library\n" + // 12: stale; library → src/libraries: holds (1 directory)
		"```\n9 plugins\n```\n"
	topic := "---\nname: x\ndescription: 9 plugins\n---\nNow 2 docs.\n"
	for name, body := range map[string]string{"MEMORY.md": index, "x.md": topic} {
		if err := os.WriteFile(filepath.Join(mem, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, err := automem.Scan(mem)
	if err != nil {
		t.Fatal(err)
	}
	got := Counts(d, root)
	want := []Count{
		{File: "MEMORY.md", Line: 4, Text: "4 plugins", Said: 4, Dir: "plugins", Dirs: 6, Files: 0, Stale: true},
		{File: "MEMORY.md", Line: 5, Text: "6 plugins", Said: 6, Dir: "plugins", Dirs: 6, Files: 0},
		{File: "MEMORY.md", Line: 6, Text: "3 tests", Said: 3, Dir: "tests", Dirs: 0, Files: 3},
		{File: "MEMORY.md", Line: 10, Text: "48 Interverse plugins", Said: 48, Dir: "plugins", Dirs: 6, Files: 0, Stale: true},
		{File: "MEMORY.md", Line: 11, Text: "1 plugin", Said: 1, Dir: "plugins", Dirs: 6, Files: 0, Stale: true},
		{File: "MEMORY.md", Line: 12, Text: "10 docs", Said: 10, Dir: "docs", Dirs: 0, Files: 2, Stale: true},
		{File: "MEMORY.md", Line: 12, Text: "1 library", Said: 1, Dir: "src/libraries", Dirs: 1, Files: 0},
		{File: "x.md", Line: 5, Text: "2 docs", Said: 2, Dir: "docs", Dirs: 0, Files: 2},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got:")
		for _, c := range got {
			t.Errorf("  %+v", c)
		}
		t.Errorf("want:")
		for _, c := range want {
			t.Errorf("  %+v", c)
		}
	}
}
