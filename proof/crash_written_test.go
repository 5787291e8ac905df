package proof

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/intermem/intermem/pkg/source/written"
)

// writtenFixture is a project with an auto-memory fact and three memories
// written through intermem: a decision citing a file (to AGENTS.md), a
// style rule (to CLAUDE.md) and a learning the user keeps out of the
// batch.
func writtenFixture(t *testing.T) *fixture {
	f := newFixture(t, map[string]string{
		"CLAUDE.md":          "# Project\n\nBe brief.\n",
		"internal/http/h.go": "package http\n",
	}, map[string]string{
		"MEMORY.md": "# Memory\n\n## Architecture\n- Requests are parsed in `internal/http/h.go`.\n- Keep this one in memory.\n",
	})
	f.layout = "flat"
	f.sessions(3)
	for _, w := range [][]string{
		{"decision", "Handlers", "Handlers live in `internal/http/h.go`."},
		{"style", "Errors", "Always wrap errors with the operation that failed."},
		{"learning", "Keep me", "Keep this written one out of the batch."},
	} {
		f.must("intermem", "write", "--type", w[0], "--title", w[1], "--content", w[2])
	}
	return f
}

// writtenTree is tree() plus the log of written memories.
func writtenTree(f *fixture) map[string]string {
	t := f.tree()
	b, err := os.ReadFile(filepath.Join(f.root, ".intermem", written.FileName))
	if err != nil {
		f.t.Fatal(err)
	}
	t["proj/.intermem/"+written.FileName] = string(b)
	return t
}

// writtenSet is the ids in the written set now.
func writtenSet(t *testing.T, f *fixture) map[string]bool {
	b, err := os.ReadFile(filepath.Join(f.root, ".intermem", written.FileName))
	if err != nil {
		t.Fatal(err)
	}
	rs, bad := written.Records(b)
	if bad != 0 {
		t.Errorf("the log of written memories has %d bad lines:\n%s", bad, b)
	}
	out := map[string]bool{}
	for _, r := range rs {
		out[r.ID] = true
	}
	return out
}

// TestWrittenPromoteCrashMatrix kills an apply that promotes written
// memories (and an auto-memory fact beside them) at every failpoint of a
// promotion, including between the two files of its pruning phase
// (MEMORY.md, then the log of written memories), recovers, and checks that
// the result is byte-identical to an uninterrupted apply: every approved
// memory marked once in a target and out of its set (auto-memory, or the
// written set by one retire line), the others where they were. At the
// crash every file, the log included, is whole: its before or after bytes.
func TestWrittenPromoteCrashMatrix(t *testing.T) {
	approve := func(f *fixture) (spec string, ids, kept []string) {
		var nums []string
		for _, c := range f.planJSON()["candidates"].([]any) {
			m := c.(map[string]any)
			if strings.Contains(m["text"].(string), "Keep this") {
				kept = append(kept, m["id"].(string))
				continue
			}
			nums = append(nums, jsonNum(m["n"]))
			ids = append(ids, m["id"].(string))
		}
		return strings.Join(nums, ","), ids, kept
	}
	ref := writtenFixture(t)
	before := writtenTree(ref)
	spec, ids, kept := approve(ref)
	if len(ids) != 3 || len(kept) != 2 {
		t.Fatalf("the plan should offer 3 memories to approve and 2 to keep; approve %v, keep %v", ids, kept)
	}
	ref.must("intermem-synthesize", "apply", "--approve", spec, "--import-agents")
	want := writtenTree(ref)
	if n := strings.Count(want["proj/.intermem/"+written.FileName], `"reason":"promoted"`); n != 2 {
		t.Fatalf("the uninterrupted apply appended %d retire lines, want 2:\n%s", n, want["proj/.intermem/"+written.FileName])
	}
	check := func(t *testing.T, f *fixture) {
		t.Helper()
		set := writtenSet(t, f)
		mem := memoryIDs(t, f)
		for _, id := range ids {
			if set[id] || mem[id] {
				t.Errorf("approved %s is still in the written set or auto-memory", id)
			}
		}
		for _, id := range kept {
			if !set[id] && !mem[id] {
				t.Errorf("%s, not approved, left both the written set and auto-memory", id)
			}
		}
		checkPromoted(t, f, ids, nil)
	}
	check(t, ref)

	points := []string{"promote:after-journal", "promote:after-target", "promote:after-commit",
		"prune:after-backup", "prune:after-file", "prune:after-write"}
	for _, fp := range points {
		for _, recovery := range []string{"recover", "next-writer"} {
			t.Run(fp+"/"+recovery, func(t *testing.T) {
				f := writtenFixture(t)
				if s, _, _ := approve(f); s != spec {
					t.Fatalf("fixtures differ: %s vs %s", s, spec)
				}
				r := f.run("", []string{"INTERMEM_FAILPOINT=" + fp}, "intermem-synthesize", "apply", "--approve", spec, "--import-agents")
				if r.code != 137 {
					t.Fatalf("apply at %s: exit %d, want 137\n%s%s", fp, r.code, r.stdout, r.stderr)
				}
				for path, body := range writtenTree(f) {
					if body != before[path] && body != want[path] {
						t.Errorf("after the crash at %s, %s is neither its before nor its after state:\n%s", fp, path, body)
					}
				}
				switch recovery {
				case "recover":
					f.must("intermem-recover", "--resume")
				case "next-writer":
					f.must("intermem-synthesize", "plan")
				}
				got := writtenTree(f)
				for path := range want {
					if got[path] != want[path] {
						t.Errorf("after recovery %s differs from an uninterrupted apply:\n--- got\n%s\n--- want\n%s", path, got[path], want[path])
					}
				}
				for path := range got {
					if _, ok := want[path]; !ok {
						t.Errorf("after recovery %s exists but an uninterrupted apply deletes it", path)
					}
				}
				check(t, f)
			})
		}
	}
}
