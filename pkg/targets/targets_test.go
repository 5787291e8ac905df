package targets

import (
	"os"
	"path/filepath"
	"testing"
)

func TestAddRemoveImport(t *testing.T) {
	for name, doc := range map[string]string{
		"title then text": "# Project\n\nBe brief.\n",
		"crlf":            "# Project\r\n\r\nBe brief.\r\n",
		"no heading":      "Be brief.\n",
		"heading no gap":  "# Project\nBe brief.",
		"empty":           "",
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
