package ops

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/intermem/intermem/pkg/archive"
	"github.com/intermem/intermem/pkg/confine"
	"github.com/intermem/intermem/pkg/journal"
	"github.com/intermem/intermem/pkg/sweep"
	"github.com/intermem/intermem/pkg/targets"
)

func TestKinds(t *testing.T) {
	for kind, want := range map[string]journal.State{
		"promote": "pruned", "archive": "archived", "restore": "restored", "migrate": "migrated", "tidy": "tidied",
	} {
		if got, ok := Kinds.Final(kind); !ok || got != want {
			t.Errorf("Final(%q) = %q, %v; want %q", kind, got, ok, want)
		}
	}
	if _, ok := Kinds.Final("rm"); ok {
		t.Error("an unknown kind has a final state")
	}
	s := &journal.Step{Action: "rm-rf"}
	if _, _, err := Kinds.Apply(s, []byte("x"), true, nil); !errors.Is(err, ErrUnknownAction) {
		t.Errorf("Apply of an unknown action: %v", err)
	}
	if _, _, err := Kinds.Undo(s, []byte("x"), true, nil); !errors.Is(err, ErrUnknownAction) {
		t.Errorf("Undo of an unknown action: %v", err)
	}
	// A step whose undo is nil leaves its file as it is.
	rm := &journal.Step{Action: ActRemoveEntry, ID: "0123456789abcdef"}
	if next, keep, err := Kinds.Undo(rm, []byte("- a fact\n"), true, nil); err != nil || !keep || string(next) != "- a fact\n" {
		t.Errorf("undo of remove-entry = %q, %v, %v", next, keep, err)
	}
}

// project lays out a root with AGENTS.md holding one promoted fact, and
// returns its targets and places.
func project(t *testing.T, agents string) (*targets.Set, confine.Places) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "AGENTS.md"), []byte(agents), 0o644); err != nil {
		t.Fatal(err)
	}
	ts, err := targets.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	return ts, confine.Places{Root: root}
}

// Archive copies before it removes, and Restore puts the fact back as it
// was: an archive then a restore of one fact gives back AGENTS.md byte for
// byte, and the archive holds no record.
func TestArchiveThenRestore(t *testing.T) {
	const agents = "# Project\n\n## Build\n\n- Run make before pushing. <!-- intermem:00112233aabbccdd -->\n- Deploy from main.\n"
	ts, places := project(t, agents)
	var task sweep.ArchiveTask
	for _, m := range ts.Agents.Doc.Marked() {
		task = sweep.ArchiveTask{Doc: ts.Agents, Marked: m, Reason: "cites a file that is gone"}
	}
	at := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	op := Archive(ts, []sweep.ArchiveTask{task}, at)
	var order []string
	for _, s := range op.Steps {
		order = append(order, s.Action)
	}
	if len(order) != 2 || order[0] != ActArchiveAdd || order[1] != ActRemoveMarked {
		t.Fatalf("archive steps %v, want [archive-add remove-marked]: the archive first", order)
	}
	if op.Kind != KindArchive || op.Summary != "archive 1 fact" || len(op.Entries) != 1 || op.Entries[0] != "00112233aabbccdd" {
		t.Fatalf("op %+v", op)
	}
	content, exists, err := Simulate(places, op)
	if err != nil {
		t.Fatal(err)
	}
	agentsPath := filepath.Join(places.Root, "AGENTS.md")
	archivePath := filepath.Join(places.Root, "docs", "intermem", ".archived.md")
	if got := string(content[agentsPath]); got != "# Project\n\n## Build\n\n- Deploy from main.\n" {
		t.Fatalf("AGENTS.md after archive:\n%s", got)
	}
	recs := archive.Parse(content[archivePath])
	if !exists[archivePath] || len(recs) != 1 || recs[0].From != "AGENTS.md" || recs[0].Section != "Build" ||
		recs[0].Block != "- Run make before pushing." || recs[0].Reason != "cites a file that is gone" || !recs[0].At.Equal(at) {
		t.Fatalf("archive records %+v", recs)
	}

	// Restore, over the files as the archive left them.
	after, err := targets.LoadWith(places.Root, content, exists)
	if err != nil {
		t.Fatal(err)
	}
	op = Restore(after, recs)
	order = order[:0]
	for _, s := range op.Steps {
		order = append(order, s.Action)
	}
	if len(order) != 2 || order[0] != ActInsert || order[1] != ActArchiveRemove {
		t.Fatalf("restore steps %v, want [insert archive-remove]: the document first", order)
	}
	for _, s := range op.Steps {
		cur, ok := content[s.Path], exists[s.Path]
		next, keep, err := Kinds.Apply(&s, cur, ok, nil)
		if err != nil {
			t.Fatal(err)
		}
		content[s.Path], exists[s.Path] = next, keep
	}
	if got := string(content[agentsPath]); got != "# Project\n\n## Build\n\n- Deploy from main.\n- Run make before pushing. <!-- intermem:00112233aabbccdd -->\n" {
		t.Fatalf("AGENTS.md after restore:\n%s", got)
	}
	if recs := archive.Parse(content[archivePath]); len(recs) != 0 {
		t.Fatalf("the archive still holds %+v", recs)
	}
}
