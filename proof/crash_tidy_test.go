package proof

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/intermem/intermem/pkg/automem"
)

// overCapIndex is a MEMORY.md over Claude Code's load cap, in CRLF and
// without a final newline: a 100-line blurb that never moves, "## Big"
// (80 facts, one with a fence under it), "## Medium" (50 facts), "## Small"
// (2 facts). Big and Medium must both move to get under 150 lines.
func overCapIndex() string {
	var b strings.Builder
	b.WriteString("# Memory\r\n")
	for i := 1; i < 100; i++ {
		fmt.Fprintf(&b, "Blurb line %d.\r\n", i)
	}
	b.WriteString("\r\n## Big\r\n- Restart the worker with:\r\n```sh\r\nmake restart\r\n```\r\n")
	for i := 2; i <= 80; i++ {
		fmt.Fprintf(&b, "- big fact %d\r\n", i)
	}
	b.WriteString("\r\n## Medium\r\n")
	for i := 1; i <= 50; i++ {
		fmt.Fprintf(&b, "- medium fact %d\r\n", i)
	}
	b.WriteString("\r\n## Small\r\n- small fact 1\r\n- small fact 2")
	return b.String()
}

// tidyFixture is promoteFixture's project with an over-cap MEMORY.md and
// a file already named big.md in the memory directory.
func tidyFixture(t *testing.T) *fixture {
	f := promoteFixture(t, "tiered")
	f.write(f.memDir+"/MEMORY.md", overCapIndex())
	f.write(f.memDir+"/big.md", "Someone else's notes.\n")
	return f
}

// memoryEntries maps every memory entry id (pointers aside) to the bytes
// of each of its copies.
func memoryEntries(t *testing.T, f *fixture) map[string][]string {
	t.Helper()
	d, err := automem.Scan(f.memDir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, file := range d.Files {
		for _, e := range file.Entries {
			if e.Kind != automem.Pointer {
				out[e.ID] = append(out[e.ID], string(file.Content[e.Start:e.End]))
			}
		}
	}
	return out
}

// TestTidyCrashMatrix kills intermem tidy --apply at every failpoint of
// its operation, recovers (with intermem-recover --resume, or by running
// the next writer), and demands: every file whole at the crash (its
// before or after bytes); after recovery, the bytes of an uninterrupted
// run; every memory entry in exactly one place with its bytes unchanged;
// no temporary file; no incomplete operation.
func TestTidyCrashMatrix(t *testing.T) {
	ref := tidyFixture(t)
	before := ref.tree()
	entries := memoryEntries(t, ref)
	r := ref.must("intermem", "tidy", "--apply", "--json")
	var rep struct {
		Moves []struct{ File string }
		After struct{ Lines int }
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Moves) != 2 || rep.Moves[0].File != "big-2.md" || rep.Moves[1].File != "medium.md" {
		t.Fatalf("the reference run should move Big into big-2.md and Medium into medium.md: %s", r.stdout)
	}
	want := ref.tree()
	checkTidied(t, ref, entries)

	points := []string{"tidy:after-journal", "tidy:after-target", "tidy:after-commit", "prune:after-backup", "prune:after-write"}
	for _, fp := range points {
		for _, recovery := range []string{"recover", "next-writer"} {
			t.Run(fp+"/"+recovery, func(t *testing.T) {
				f := tidyFixture(t)
				r := f.run("", []string{"INTERMEM_FAILPOINT=" + fp}, "intermem", "tidy", "--apply")
				if r.code != 137 {
					t.Fatalf("tidy at %s: exit %d, want 137\n%s%s", fp, r.code, r.stdout, r.stderr)
				}
				for path, body := range f.tree() {
					if body != before[path] && body != want[path] {
						t.Errorf("after crash at %s, %s is neither its before nor its after state:\n%s", fp, path, body)
					}
				}
				switch recovery {
				case "recover":
					f.must("intermem-recover", "--resume")
				case "next-writer":
					// tidy recovers first, then finds nothing left to move.
					out := f.must("intermem", "tidy", "--apply").stdout
					if !strings.Contains(out, "Completed an interrupted operation first") {
						t.Errorf("tidy did not say it completed the interrupted operation:\n%s", out)
					}
				}
				diffTrees(t, "after recovery", f.tree(), want)
				checkTidied(t, f, entries)
			})
		}
	}
}

// checkTidied: every entry of the memory before the move is in the memory
// after it exactly once, with the same bytes; nothing is left half done.
func checkTidied(t *testing.T, f *fixture, before map[string][]string) {
	t.Helper()
	after := memoryEntries(t, f)
	for id, copies := range before {
		got := after[id]
		if len(got) != len(copies) {
			t.Errorf("entry %s has %d copies after the move, %d before", id, len(got), len(copies))
			continue
		}
		for i := range got {
			if got[i] != copies[i] {
				t.Errorf("entry %s changed bytes:\n%q\nwas\n%q", id, got[i], copies[i])
			}
		}
	}
	if tmp := f.tempFiles(); len(tmp) > 0 {
		t.Errorf("temporary files left behind: %v", tmp)
	}
	var rec struct{ Incomplete []any }
	decodeJSON(t, "intermem-recover --json", f.must("intermem-recover", "--json").stdout, &rec)
	if len(rec.Incomplete) != 0 {
		t.Errorf("the journal still lists incomplete operations: %v", rec.Incomplete)
	}
}

// TestTidyDiscard abandons a tidy interrupted before MEMORY.md changed:
// the topic files it wrote go, and the memory directory is byte for byte
// what it was. Once MEMORY.md has been rewritten, discarding is refused
// and resuming completes the move.
func TestTidyDiscard(t *testing.T) {
	f := tidyFixture(t)
	before := f.tree()
	if r := f.run("", []string{"INTERMEM_FAILPOINT=tidy:after-commit"}, "intermem", "tidy", "--apply"); r.code != 137 {
		t.Fatalf("exit %d, want 137\n%s", r.code, r.stderr)
	}
	var rec struct{ Incomplete []struct{ ID, Kind string } }
	decodeJSON(t, "intermem-recover --json", f.must("intermem-recover", "--json").stdout, &rec)
	if len(rec.Incomplete) != 1 || rec.Incomplete[0].Kind != "tidy" {
		t.Fatalf("incomplete = %+v, want the tidy", rec.Incomplete)
	}
	if _, ok := f.tree()["mem/medium.md"]; !ok {
		t.Fatal("phase 1 should have written medium.md before the crash")
	}
	f.must("intermem-recover", "--discard", rec.Incomplete[0].ID)
	diffTrees(t, "after discarding", f.tree(), before)

	g := tidyFixture(t)
	if r := g.run("", []string{"INTERMEM_FAILPOINT=prune:after-write"}, "intermem", "tidy", "--apply"); r.code != 137 {
		t.Fatalf("exit %d, want 137\n%s", r.code, r.stderr)
	}
	decodeJSON(t, "intermem-recover --json", g.must("intermem-recover", "--json").stdout, &rec)
	if len(rec.Incomplete) != 1 {
		t.Fatalf("incomplete = %+v", rec.Incomplete)
	}
	if r := g.run("", nil, "intermem-recover", "--discard", rec.Incomplete[0].ID); r.code == 0 {
		t.Fatalf("discarding a tidy whose MEMORY.md was rewritten must be refused:\n%s", r.stdout)
	}
	g.must("intermem-recover", "--resume")
	checkTidied(t, g, memoryEntries(t, tidyFixture(t)))
}
