package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/command"
)

// TestOneStory: `intermem search` and memory_search answer the same query
// with the same hits in the same order (the server withholds what
// screening flags, and says where), and `intermem get` and memory_get
// the same entry: both go through package retrieve.
func TestOneStory(t *testing.T) {
	f := newFixture(t).withStore(t)
	const now = "2026-11-01T09:00:00Z"
	cs := connect(t, NewCatalog(f.envAt(now), f.p), Options{Version: "test", Now: f.envAt(now).Now})
	for _, q := range []string{"mypy indexing error on collections", "zebra table", "context cancellation",
		"leverage onboarding", "deploy", "stop hook publish", "plugin cache"} {
		env := f.envAt(now)
		var out bytes.Buffer
		env.Stdout = &out
		if code := command.Main(context.Background(), env, []string{"search", q, "--json", "--limit", "5", "--project", f.root}); code != 0 {
			t.Fatalf("intermem search %q exited %d: %s", q, code, env.Stderr)
		}
		var cliRes struct {
			Results []struct{ ID string } `json:"results"`
		}
		if err := json.Unmarshal(out.Bytes(), &cliRes); err != nil {
			t.Fatal(err)
		}
		var cliIDs []string
		for _, r := range cliRes.Results {
			cliIDs = append(cliIDs, r.ID)
		}
		r, _ := result[searchResult](t, cs, "memory_search", map[string]any{"query": q, "limit": 5})
		withheld := map[string]bool{}
		for _, w := range r.Withheld {
			withheld[w.ID] = true
		}
		var shown []string
		for _, id := range cliIDs {
			if !withheld[id] {
				shown = append(shown, id)
			}
		}
		var mcpIDs []string
		for _, h := range r.Results {
			mcpIDs = append(mcpIDs, h.ID)
		}
		if !slices.Equal(shown, mcpIDs) || len(cliIDs) == 0 {
			t.Errorf("%q: intermem search %v, memory_search %v (withheld %v)", q, cliIDs, mcpIDs, withheld)
		}
	}
	env := f.envAt(now)
	var out bytes.Buffer
	env.Stdout = &out
	if code := command.Main(context.Background(), env, []string{"get", mypyID, "--json", "--project", f.root}); code != 0 {
		t.Fatalf("intermem get exited %d: %s", code, env.Stderr)
	}
	var got struct {
		Entry struct{ ID, Source, Path, Title string } `json:"entry"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	e, _ := result[entryOut](t, cs, "memory_get", map[string]any{"id": mypyID})
	if got.Entry.ID != e.ID || got.Entry.Source != e.Source || !strings.HasPrefix(e.Where, got.Entry.Path+":") || got.Entry.Title != cli.Escape(e.Title) {
		t.Errorf("intermem get %+v, memory_get %+v", got.Entry, e)
	}

	// memory_validate checks an entry as intermem validate does: the same
	// status and confidence for every entry validate reports.
	env = f.envAt(now)
	out.Reset()
	env.Stdout = &out
	if code := command.Main(context.Background(), env, []string{"validate", "--json", "--project", f.root}); code != 0 && code != 1 {
		t.Fatalf("intermem validate exited %d: %s", code, env.Stderr)
	}
	var rep struct {
		Entries []struct {
			ID, Source, Status string
			Confidence         float64
		} `json:"entries"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	srcs := map[string]bool{}
	for _, r := range rep.Entries {
		v, _ := result[validationOut](t, cs, "memory_validate", map[string]any{"id": r.ID})
		if v.Status != r.Status || v.Confidence != round2(r.Confidence) {
			t.Errorf("%s (%s): intermem validate %s %.2f, memory_validate %s %.2f", r.ID, r.Source, r.Status, r.Confidence, v.Status, v.Confidence)
		}
		srcs[r.Source] = true
	}
	if !srcs["auto-memory"] || !srcs["clavain"] || !srcs["compound"] {
		t.Errorf("validate reported the sources %v; the fixture has auto-memory, clavain and compound entries that cite", srcs)
	}
}
