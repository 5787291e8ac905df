package targets

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAddRemoveImport(t *testing.T) {
	for name, doc := range map[string]string{
		"title then text": "# Project\n\nBe brief.\n",
		"crlf":            "# Project\r\n\r\nBe brief.\r\n",
		"no heading":      "Be brief.\n",
		"heading no gap":  "# Project\nBe brief.",
		"empty":           "",
		"section first":   "## Rules\n\n- Never push to main.\n",
	} {
		t.Run(name, func(t *testing.T) {
			with := AddImport([]byte(doc))
			if string(AddImport(with)) != string(with) {
				t.Error("AddImport is not idempotent")
			}
			set := setFor(t, string(with))
			if !set.ImportsAgents() {
				t.Fatalf("after AddImport CLAUDE.md does not import AGENTS.md:\n%q", with)
			}
			if got := RemoveImport(with); string(got) != doc {
				t.Errorf("RemoveImport does not undo AddImport:\n got %q\nwant %q", got, doc)
			}
		})
	}
}

// TestAddImportWhere: the import goes after a "# Title" the document
// opens with, else first; never under a "##" heading (a CLAUDE.md that
// apply creates opens with the section of its first entry).
func TestAddImportWhere(t *testing.T) {
	for doc, want := range map[string]string{
		"# Project\n\nBe brief.\n":            "# Project\n\n@AGENTS.md\n\nBe brief.\n",
		"## Rules\n\n- Never push to main.\n": "@AGENTS.md\n\n## Rules\n\n- Never push to main.\n",
		"\n### Notes\r\n- x\r\n":              "@AGENTS.md\r\n\r\n\n### Notes\r\n- x\r\n",
		"Be brief.\n\n# Later title\n":        "@AGENTS.md\n\nBe brief.\n\n# Later title\n",
	} {
		if got := string(AddImport([]byte(doc))); got != want {
			t.Errorf("AddImport(%q) = %q, want %q", doc, got, want)
		}
	}
}

func setFor(t *testing.T, claude string) *Set {
	t.Helper()
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "CLAUDE.md"), []byte(claude), 0o644)
	os.WriteFile(filepath.Join(root, "AGENTS.md"), []byte("# A\n"), 0o644)
	s, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestAgentsLoaded(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "AGENTS.md"), []byte("# A\n"), 0o644)
	s, _ := Load(root)
	if ok, why := s.AgentsLoaded(); ok || why == "" {
		t.Errorf("no CLAUDE.md: loaded=%v why=%q (2.1.197 never loads AGENTS.md)", ok, why)
	}
	os.WriteFile(filepath.Join(root, "CLAUDE.md"), []byte("# C\n\nSee `@AGENTS.md` in code.\n"), 0o644)
	s, _ = Load(root)
	if ok, _ := s.AgentsLoaded(); ok {
		t.Error("an @AGENTS.md inside a code span is not an import")
	}
	os.WriteFile(filepath.Join(root, "CLAUDE.md"), []byte("# C\n\n@./AGENTS.md\n"), 0o644)
	s, _ = Load(root)
	if ok, _ := s.AgentsLoaded(); !ok {
		t.Error("@./AGENTS.md imports it")
	}
	// A CLAUDE.md that is a symlink to AGENTS.md: one document, loaded.
	os.Remove(filepath.Join(root, "CLAUDE.md"))
	os.Symlink("AGENTS.md", filepath.Join(root, "CLAUDE.md"))
	s, _ = Load(root)
	if !s.Same() {
		t.Fatal("symlinked CLAUDE.md is not recognised as AGENTS.md")
	}
	if ok, _ := s.AgentsLoaded(); !ok {
		t.Error("symlinked CLAUDE.md → AGENTS.md: AGENTS.md is loaded")
	}
	if n := len(s.Docs()); n != 1 {
		t.Errorf("Docs() = %d documents, want 1 for two names of one file", n)
	}
}

// Names that lead out of the project are reported with where they lead,
// never as absent; links inside the project are ordinary documents.
func TestLinksOutOfTheProject(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(base, "proj")
	home := filepath.Join(base, "home", "u")
	for _, d := range []string{root, home, filepath.Join(root, "docs"), filepath.Join(base, "elsewhere", "intermem")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(root, "docs", "guide.md"), []byte("# Guide\n"), 0o644)
	os.WriteFile(filepath.Join(base, "elsewhere", "intermem", "build.md"), []byte("# Build\n"), 0o644)
	os.Symlink("../home/u/.profile", filepath.Join(root, "CLAUDE.md"))             // dangling, outside
	os.Symlink("docs/guide.md", filepath.Join(root, "AGENTS.md"))                  // inside: fine
	os.Symlink(filepath.Join(base, "elsewhere"), filepath.Join(root, "docs", "x")) // unrelated
	s, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Claude
	if c.Exists || !c.Linked || !c.Dangling || c.Outside == nil || c.Real != filepath.Join(home, ".profile") {
		t.Fatalf("CLAUDE.md: exists=%v linked=%v dangling=%v outside=%v real=%s", c.Exists, c.Linked, c.Dangling, c.Outside, c.Real)
	}
	want := "CLAUDE.md is a dangling link to " + filepath.Join(home, ".profile") + ", outside this project: apply refuses unless --allow-outside"
	if w := s.Warnings(); len(w) != 1 || w[0] != want {
		t.Errorf("warnings = %q, want [%q]", w, want)
	}
	if _, why := s.AgentsLoaded(); strings.Contains(why, "there is no CLAUDE.md") {
		t.Errorf("AgentsLoaded says %q of a dangling link", why)
	}
	if a := s.Agents; !a.Exists || a.Outside != nil || a.Real != filepath.Join(root, "docs", "guide.md") {
		t.Errorf("AGENTS.md -> docs/guide.md: exists=%v outside=%v real=%s", a.Exists, a.Outside, a.Real)
	}

	// An existing file outside, and docs/intermem through a linked docs/.
	os.WriteFile(filepath.Join(home, ".profile"), []byte("export A=1\n"), 0o644)
	os.Remove(filepath.Join(root, "docs", "x"))
	os.Remove(filepath.Join(root, "docs", "guide.md"))
	os.Remove(filepath.Join(root, "docs"))
	os.Remove(filepath.Join(root, "AGENTS.md"))
	os.Symlink(filepath.Join(base, "elsewhere"), filepath.Join(root, "docs"))
	os.Symlink(".intermem/intermem.db", filepath.Join(root, "AGENTS.md"))
	if s, err = Load(root); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range s.Outside() {
		got = append(got, d.Problem())
	}
	wantAll := []string{
		"CLAUDE.md links to " + filepath.Join(home, ".profile") + ", outside this project",
		"AGENTS.md is a dangling link to " + filepath.Join(root, ".intermem", "intermem.db") + ", inside the project's .intermem or .git, where intermem never writes",
		"docs/intermem/.archived.md resolves to " + filepath.Join(base, "elsewhere", "intermem", ".archived.md") + ", outside this project",
		"docs/intermem/build.md resolves to " + filepath.Join(base, "elsewhere", "intermem", "build.md") + ", outside this project",
	}
	if strings.Join(got, "\n") != strings.Join(wantAll, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantAll, "\n"))
	}
}
