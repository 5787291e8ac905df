package plan

import (
	"strings"
	"testing"
	"time"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/catalog"
	"github.com/intermem/intermem/pkg/cite"
	"github.com/intermem/intermem/pkg/stability"
	"github.com/intermem/intermem/pkg/store"
	"github.com/intermem/intermem/pkg/targets"
)

// inputs makes plan inputs over the memory text (one MEMORY.md, every
// entry stable in the same sessions) for an empty project.
func inputs(t *testing.T, memory string) Inputs {
	t.Helper()
	root := t.TempDir()
	ts, err := targets.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	cat := &catalog.Memory{Threshold: 3, Sessions: 3, Counts: map[stability.Status]int{}}
	for _, e := range automem.Parse(automem.IndexName, []byte(memory)).Entries {
		cat.Items = append(cat.Items, catalog.Item{Entry: e, Status: stability.Stable,
			Rec: &store.Entry{ID: e.ID, Sessions: 3, FirstSeen: now}})
	}
	return Inputs{Catalog: cat, Targets: ts, Checker: cite.NewChecker(root), Now: now,
		Promoted: map[string]bool{}, Rejected: map[string]bool{}}
}

// Candidates that tie in rank keep their order in memory. The three texts
// were chosen so that ordering by id would give Finally, Then, First.
func TestTiesKeepSourceOrder(t *testing.T) {
	mem := "## Release\n- First run all tests.\n- Then tag the release commit.\n- Finally push the tag to origin.\n"
	in := inputs(t, mem)
	ids := []string{}
	for _, it := range in.Catalog.Items {
		ids = append(ids, it.ID)
	}
	if !(ids[2] < ids[1] && ids[1] < ids[0]) {
		t.Fatalf("the fixture no longer orders by id as Finally, Then, First: %q", ids)
	}
	p := Build(in)
	var got []string
	for _, c := range p.Candidates {
		got = append(got, strings.Fields(c.Text)[0])
	}
	if strings.Join(got, " ") != "First Then Finally" {
		t.Errorf("candidates in order %q, want First Then Finally", got)
	}
}

func TestBlockKeepsShape(t *testing.T) {
	mem := "## Rules\n3. Never force-push.\n- Plain.\n\n" +
		"Casting makes tsc fail. Fixes:\n- Drop the cast.\n- Inline the shape.\n\n" +
		"**Rule:** wrapped\nparagraph.\n\n| a | b |\n|---|---|\n\n```sh\nmake\n```\n"
	var got []string
	for _, e := range automem.Parse(automem.IndexName, []byte(mem)).Entries {
		got = append(got, Block(e))
	}
	want := []string{
		"3. Never force-push.",
		"- Plain.",
		"- Casting makes tsc fail. Fixes:\n  - Drop the cast.\n  - Inline the shape.",
		"- **Rule:** wrapped\n  paragraph.",
		"| a | b |\n|---|---|",
		"```sh\nmake\n```",
	}
	if strings.Join(got, "\n~\n") != strings.Join(want, "\n~\n") {
		t.Errorf("blocks:\n%s\nwant:\n%s", strings.Join(got, "\n~\n"), strings.Join(want, "\n~\n"))
	}
}

// A time-bound entry is listed apart and not offered; a dated heading is
// one section with the undated one.
func TestTimeBoundListedApartAndDatedSections(t *testing.T) {
	mem := "## Pipeline\n- Pipeline state (2026-04-02): ingest green, export blocked.\n- Exports go through `make export`.\n\n" +
		"## Block Metrics Hygiene (updated 2026-04-02)\n- Drop empty blocks before counting.\n\n" +
		"## Block Metrics Hygiene (updated 2026-05-11)\n- Count blocks per page, not per file.\n"
	p := Build(inputs(t, mem))
	if len(p.TimeBound) != 1 || !strings.HasPrefix(p.TimeBound[0].Text, "Pipeline state (2026-04-02)") {
		t.Fatalf("time-bound = %+v", p.TimeBound)
	}
	sections := map[string]int{}
	for _, c := range p.Candidates {
		if strings.Contains(c.Text, "Pipeline state") {
			t.Errorf("time-bound entry offered as candidate %d", c.N)
		}
		sections[c.Section]++
	}
	if sections["Block Metrics Hygiene"] != 2 || len(sections) != 2 {
		t.Errorf("sections = %v, want Block Metrics Hygiene ×2 and Pipeline", sections)
	}
}

// An entry written twice is one fact: one candidate, at its first place.
func TestDuplicateEntryIsOneCandidate(t *testing.T) {
	p := Build(inputs(t, "## A\n- Phase 6 wired the orchestrator.\n- Other.\n## B\n- Phase 6 wired the orchestrator.\n"))
	if len(p.Candidates) != 2 || p.Stable != 2 {
		t.Fatalf("%d candidates of %d stable entries, want 2 of 2", len(p.Candidates), p.Stable)
	}
	if c := p.Candidates[0]; c.Line != 2 || c.Section != "A" {
		t.Errorf("first candidate from line %d § %q, want line 2 § A", c.Line, c.Section)
	}
}
