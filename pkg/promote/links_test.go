package promote

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/intermem/intermem/pkg/automem"
)

func TestRewriteLinks(t *testing.T) {
	root, memDir := t.TempDir(), t.TempDir()
	for name, content := range map[string]string{
		"MEMORY.md":       "- [Gate notes](project_gate.md) — gates\n",
		"project_gate.md": "---\nname: gate\ndescription: gates close at six\n---\nbody\n",
		"hooks.md":        "## Hooks\n- hooks load at start\n",
	} {
		if err := os.WriteFile(filepath.Join(memDir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "docs", "adr"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "docs", "adr", "001.md"), []byte("# ADR\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mem, err := automem.Scan(memDir)
	if err != nil {
		t.Fatal(err)
	}
	block := "- See [gate notes](project_gate.md), [hooks](hooks.md), [ADR 1](docs/adr/001.md#why), " +
		"[gone](missing.md), [[gate]], [[hooks]], ![chart](img/c.png), [site](https://example.com/a.md), " +
		"[top](#top), `[code](x.md)`\n  ```\n  [fenced](y.md)\n  ```"
	arch := filepath.Join(root, "docs", "intermem", "architecture.md")
	gates := filepath.Join(root, "docs", "intermem", "gates.md")
	claude := filepath.Join(root, "CLAUDE.md")

	for _, c := range []struct {
		name  string
		homes map[string]string
		doc   string
		want  string
	}{
		{"the linked memory is promoted into another document", map[string]string{"project_gate.md": gates}, arch,
			"- See [gate notes](gates.md), auto-memory `hooks.md`, [ADR 1](../adr/001.md#why), " +
				"gone, [gate](gates.md), auto-memory `hooks.md`, chart, [site](https://example.com/a.md), " +
				"[top](#top), `[code](x.md)`\n  ```\n  [fenced](y.md)\n  ```"},
		{"into the same document", map[string]string{"project_gate.md": arch}, arch,
			"- See gate notes, auto-memory `hooks.md`, [ADR 1](../adr/001.md#why), " +
				"gone, gate, auto-memory `hooks.md`, chart, [site](https://example.com/a.md), " +
				"[top](#top), `[code](x.md)`\n  ```\n  [fenced](y.md)\n  ```"},
		{"the linked memory stays in auto-memory; CLAUDE.md at the root", nil, claude,
			"- See gate notes (auto-memory `project_gate.md`), auto-memory `hooks.md`, [ADR 1](docs/adr/001.md#why), " +
				"gone, gate (auto-memory `project_gate.md`), auto-memory `hooks.md`, chart, [site](https://example.com/a.md), " +
				"[top](#top), `[code](x.md)`\n  ```\n  [fenced](y.md)\n  ```"},
	} {
		t.Run(c.name, func(t *testing.T) {
			creates := map[string]bool{claude: true, arch: true, gates: true}
			l := newLinker(root, mem, c.homes, creates)
			got := l.rewrite(block, "MEMORY.md", c.doc)
			if got != c.want {
				t.Errorf("rewrite:\n got  %s\n want %s", got, c.want)
			}
			if b := brokenLinks(got, c.doc, l.exists); len(b) != 0 {
				t.Errorf("broken links left: %+v", b)
			}
		})
	}
}
