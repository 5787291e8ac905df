package proof

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/intermem/intermem/pkg/automem"
)

// promoteFixture is a project whose whole plan gets approved: facts in
// MEMORY.md and in a topic file, one-memory files with index pointers,
// a CRLF AGENTS.md with another tool's managed block, a CLAUDE.md without
// a final newline.
func promoteFixture(t *testing.T, layout string) *fixture {
	f := newFixture(t, map[string]string{
		"AGENTS.md":          "# Guide\r\n\r\n## Architecture\r\n\r\n- Handlers live in `internal/http`.\r\n\r\n<!-- OPENSPEC:START -->\r\nmanaged text\r\n<!-- OPENSPEC:END -->\r\n",
		"CLAUDE.md":          "# Project\n\nBe brief.",
		"internal/http/h.go": "package http\n",
	}, map[string]string{
		"MEMORY.md":          "# Memory\n\n## Architecture\n- Requests are parsed in `internal/http/h.go`.\n- The cache is warmed at startup.\n  - It holds 1,000 entries.\n\n## Rules\n- Never push to main directly.\n- Keep this one in memory.\n\n## Feedback\n- [Terse reviews](feedback_terse.md) — one finding per bullet\n- [Deploys](project_deploys.md): Friday freeze\n",
		"feedback_terse.md":  "---\nname: terse\ndescription: Reviews are terse\ntype: feedback\n---\nOne finding per bullet.\n\n```sh\nmake lint\n```\n",
		"project_deploys.md": "---\nname: deploys\ndescription: No deploys on Fridays\nmetadata: \n  type: project\n---\nThe release train stops on Fridays.\n",
		"topic.md":           "# Topic\n\n## Ops\n- Logs go to journald.\n",
	})
	f.layout = layout
	return f
}

// approveSpec selects every candidate except the one matching keep.
func approveSpec(t *testing.T, plan map[string]any, keep string) (spec string, ids []string) {
	var nums []string
	for _, c := range plan["candidates"].([]any) {
		m := c.(map[string]any)
		if strings.Contains(m["text"].(string), keep) {
			continue
		}
		nums = append(nums, jsonNum(m["n"]))
		ids = append(ids, m["id"].(string))
	}
	if len(ids) < 5 {
		t.Fatalf("fixture should yield at least 5 approvable candidates, got %d: %v", len(ids), plan["candidates"])
	}
	return strings.Join(nums, ","), ids
}

func jsonNum(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

var markerRE = regexp.MustCompile(`<!-- intermem:([0-9a-f]{16}) -->`)

// checkPromoted asserts the invariants of a completed promotion: each id
// is marked exactly once across the targets and absent from memory; every
// other memory entry is still there.
func checkPromoted(t *testing.T, f *fixture, ids []string, keepIDs []string) {
	t.Helper()
	tree := f.tree()
	count := map[string]int{}
	for path, body := range tree {
		if strings.HasPrefix(path, "proj/") {
			for _, m := range markerRE.FindAllStringSubmatch(body, -1) {
				count[m[1]]++
			}
		}
	}
	d, err := automem.Scan(f.memDir)
	if err != nil {
		t.Fatal(err)
	}
	inMem := map[string]bool{}
	for _, e := range d.Entries() {
		inMem[e.ID] = true
	}
	for _, id := range ids {
		if count[id] != 1 {
			t.Errorf("entry %s is marked %d times in the targets, want exactly once", id, count[id])
		}
		if inMem[id] {
			t.Errorf("promoted entry %s is still in auto-memory", id)
		}
	}
	for _, id := range keepIDs {
		if !inMem[id] {
			t.Errorf("entry %s that was not approved vanished from auto-memory", id)
		}
		if count[id] != 0 {
			t.Errorf("entry %s that was not approved is in a target", id)
		}
	}
	if tmp := f.tempFiles(); len(tmp) > 0 {
		t.Errorf("temporary files left behind: %v", tmp)
	}
	r := f.must("intermem-recover", "--json")
	var rep struct{ Incomplete []any }
	json.Unmarshal([]byte(r.stdout), &rep)
	if len(rep.Incomplete) != 0 {
		t.Errorf("journal still has incomplete operations: %s", r.stdout)
	}
}

func memoryIDs(t *testing.T, f *fixture) map[string]bool {
	d, err := automem.Scan(f.memDir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, e := range d.Entries() {
		if e.Kind != automem.Pointer {
			out[e.ID] = true
		}
	}
	return out
}

// TestPromoteCrashMatrix kills apply at every promotion failpoint, then
// recovers, and checks that the result is byte-identical to an
// uninterrupted apply, that every file was in its before or after state at
// the crash, and the promotion invariants.
func TestPromoteCrashMatrix(t *testing.T) {
	for _, layout := range []string{"tiered", "flat"} {
		t.Run(layout, func(t *testing.T) { promoteCrashMatrix(t, layout) })
	}
}

func promoteCrashMatrix(t *testing.T, layout string) {
	// The reference: the same apply, uninterrupted.
	ref := promoteFixture(t, layout)
	ref.sessions(3)
	before := ref.tree()
	spec, ids := approveSpec(t, ref.planJSON(), "Keep this one")
	ref.must("intermem-synthesize", "apply", "--approve", spec, "--import-agents")
	want := ref.tree()
	var keep []string
	for id := range memoryIDs(t, ref) {
		keep = append(keep, id)
	}
	checkPromoted(t, ref, ids, keep)

	points := []string{"promote:after-journal", "promote:after-target", "promote:after-commit", "prune:after-backup", "prune:after-write"}
	for i, fp := range points {
		for _, recovery := range []string{"recover", "next-writer"} {
			t.Run(fp+"/"+recovery, func(t *testing.T) {
				f := promoteFixture(t, layout)
				f.sessions(3)
				spec2, ids2 := approveSpec(t, f.planJSON(), "Keep this one")
				if spec2 != spec || strings.Join(ids2, ",") != strings.Join(ids, ",") {
					t.Fatalf("fixtures differ: %s vs %s", spec2, spec)
				}
				r := f.run("", []string{"INTERMEM_FAILPOINT=" + fp}, "intermem-synthesize", "apply", "--approve", spec, "--import-agents")
				if r.code != 137 {
					t.Fatalf("apply at %s: exit %d, want 137\n%s%s", fp, r.code, r.stdout, r.stderr)
				}
				// At the crash, every file is whole: its before or its after bytes.
				for path, body := range f.tree() {
					if body != before[path] && body != want[path] {
						t.Errorf("after crash at %s, %s is neither its before nor its after state:\n%s", fp, path, body)
					}
				}
				switch recovery {
				case "recover":
					out := f.must("intermem-recover")
					if !strings.Contains(out.stdout, "interrupted operation") && i > 0 {
						t.Errorf("recover did not list the interrupted operation:\n%s", out.stdout)
					}
					f.must("intermem-recover", "--resume")
				case "next-writer":
					// Any writer recovers first.
					f.must("intermem-synthesize", "plan")
				}
				got := f.tree()
				if hashTree(got) != hashTree(want) {
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
				}
				checkPromoted(t, f, ids, keep)
			})
		}
	}
}

// TestDiscard abandons a promotion interrupted before pruning: the targets
// go back to their exact bytes and memory keeps every entry. Once pruning
// has started, discarding is refused (resume instead), so nothing is lost.
func TestDiscard(t *testing.T) {
	for _, layout := range []string{"tiered", "flat"} {
		t.Run(layout, func(t *testing.T) { discard(t, layout) })
	}
}

func discard(t *testing.T, layout string) {
	for _, fp := range []string{"promote:after-journal", "promote:after-target", "promote:after-commit", "prune:after-backup"} {
		t.Run(fp, func(t *testing.T) {
			f := promoteFixture(t, layout)
			f.sessions(3)
			before := f.tree()
			spec, _ := approveSpec(t, f.planJSON(), "Keep this one")
			if r := f.run("", []string{"INTERMEM_FAILPOINT=" + fp}, "intermem-synthesize", "apply", "--approve", spec, "--import-agents"); r.code != 137 {
				t.Fatalf("exit %d", r.code)
			}
			var rep struct{ Incomplete []struct{ ID string } }
			json.Unmarshal([]byte(f.must("intermem-recover", "--json").stdout), &rep)
			if len(rep.Incomplete) != 1 {
				t.Fatalf("incomplete = %v", rep.Incomplete)
			}
			f.must("intermem-recover", "--discard", rep.Incomplete[0].ID)
			if got := f.tree(); hashTree(got) != hashTree(before) {
				for p := range before {
					if got[p] != before[p] {
						t.Errorf("%s not restored:\n%s\n--- want\n%s", p, got[p], before[p])
					}
				}
			}
			// The entries are candidates again.
			plan := f.planJSON()
			if n := len(plan["candidates"].([]any)); n < 5 {
				t.Errorf("after discard only %d candidates", n)
			}
		})
	}
	t.Run("refused-after-prune", func(t *testing.T) {
		f := promoteFixture(t, layout)
		f.sessions(3)
		spec, ids := approveSpec(t, f.planJSON(), "Keep this one")
		if r := f.run("", []string{"INTERMEM_FAILPOINT=prune:after-write"}, "intermem-synthesize", "apply", "--approve", spec, "--import-agents"); r.code != 137 {
			t.Fatalf("exit %d", r.code)
		}
		var rep struct{ Incomplete []struct{ ID string } }
		json.Unmarshal([]byte(f.must("intermem-recover", "--json").stdout), &rep)
		r := f.run("", nil, "intermem-recover", "--discard", rep.Incomplete[0].ID)
		if r.code == 0 || !strings.Contains(r.stderr, "can be discarded") {
			t.Fatalf("discard after pruning: exit %d, stderr %q", r.code, r.stderr)
		}
		f.must("intermem-recover", "--resume")
		var keep []string
		for id := range memoryIDs(t, f) {
			keep = append(keep, id)
		}
		checkPromoted(t, f, ids, keep)
	})
}
