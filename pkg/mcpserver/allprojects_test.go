package mcpserver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/intermem/intermem/pkg/command"
)

// TestSearchAllProjects: memory_search with all_projects adds every
// project of the per-user registry, as `intermem search --all-projects`
// does: another project's hit names that project, none is found without
// it, and a registered project that is gone is skipped with a note.
func TestSearchAllProjects(t *testing.T) {
	f := newFixture(t)
	other := filepath.Join(filepath.Dir(f.root), "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	// Writing a memory registers the project in the per-user store.
	env := f.envAt("2026-11-01T09:00:00Z")
	if code := command.Main(context.Background(), env, []string{"write", "--type", "insight", "--title", "Retries back off",
		"--content", "HTTP retries of the billing client back off exponentially from 100 ms.", "--project", other}); code != 0 {
		t.Fatalf("intermem write exited %d: %s", code, env.Stderr)
	}
	cs := f.connect(t)

	r, _ := result[searchResult](t, cs, "memory_search", map[string]any{"query": "billing retries back off"})
	for _, h := range r.Results {
		if h.Project != "" {
			t.Errorf("without all_projects, a hit of another project: %+v", h)
		}
	}
	r, _ = result[searchResult](t, cs, "memory_search", map[string]any{"query": "billing retries back off", "all_projects": true})
	if len(r.Results) == 0 || r.Results[0].Project != other || r.Results[0].Title != "Retries back off" {
		t.Errorf("with all_projects: %+v, want the hit of %s first", r.Results, other)
	}

	if err := os.Rename(other, other+".gone"); err != nil {
		t.Fatal(err)
	}
	r, text := result[searchResult](t, cs, "memory_search", map[string]any{"query": "billing retries back off", "all_projects": true})
	skipped := false
	for _, n := range r.Notes {
		skipped = skipped || strings.HasPrefix(n, "skipped "+other+": ")
	}
	if !skipped {
		t.Errorf("a registered project that is gone was not skipped with a note:\n%s", text)
	}
	if msg := toolErrorText(t, cs, "memory_search", map[string]any{"query": "x", "all_projects": "yes"}); !strings.Contains(msg, "all_projects must be true or false, not a string") {
		t.Errorf("all_projects given a string: %s", msg)
	}
}
