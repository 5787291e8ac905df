package proof

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// places counts, for every 8-to-16-hex id, where it lives: marked entries
// in the project's documents and records in the archive.
func places(t *testing.T, f *fixture) map[string]int {
	t.Helper()
	out := map[string]int{}
	for path, body := range f.tree() {
		if !strings.HasPrefix(path, "proj/") {
			continue
		}
		if strings.HasSuffix(path, ".archived.md") {
			for _, m := range archivedRE.FindAllStringSubmatch(body, -1) {
				out[m[1]]++
			}
			continue
		}
		for _, m := range anyMarkerRE.FindAllStringSubmatch(body, -1) {
			out[m[1]]++
		}
	}
	return out
}

var (
	archivedRE  = regexp.MustCompile(`(?m)^## ([0-9a-f]{8,64})$`)
	anyMarkerRE = regexp.MustCompile(`<!-- intermem:([0-9a-f]{8,64}) -->`)
)

// crashMatrix runs prepare on a fresh fixture, then cmd uninterrupted as
// the reference; then, for each failpoint, prepare + cmd killed at the
// point + recovery, and demands the reference bytes, whole files at the
// crash, every id in exactly one place, and no temporary files.
func crashMatrix(t *testing.T, layout string, prepare func(f *fixture), cmd []string, points []string) {
	ref := promoteFixture(t, layout)
	prepare(ref)
	before := ref.tree()
	ref.must(cmd[0], cmd[1:]...)
	want := ref.tree()
	wantPlaces := places(t, ref)
	for id, n := range wantPlaces {
		if n != 1 {
			t.Fatalf("reference run: %s is in %d places", id, n)
		}
	}
	for _, fp := range points {
		t.Run(fp, func(t *testing.T) {
			f := promoteFixture(t, layout)
			prepare(f)
			r := f.run("", []string{"INTERMEM_FAILPOINT=" + fp}, cmd[0], cmd[1:]...)
			if r.code != 137 {
				t.Fatalf("%v at %s: exit %d, want 137\n%s%s", cmd, fp, r.code, r.stdout, r.stderr)
			}
			for path, body := range f.tree() {
				if body != before[path] && body != want[path] {
					t.Errorf("after crash at %s, %s is neither its before nor its after state", fp, path)
				}
			}
			f.must("intermem-recover", "--resume")
			got := f.tree()
			if hashTree(got) != hashTree(want) {
				for path := range want {
					if got[path] != want[path] {
						t.Errorf("after recovery %s differs from an uninterrupted run:\n--- got\n%s\n--- want\n%s", path, got[path], want[path])
					}
				}
				for path := range got {
					if _, ok := want[path]; !ok {
						t.Errorf("after recovery %s exists, but not after an uninterrupted run", path)
					}
				}
			}
			gotPlaces := places(t, f)
			for id := range wantPlaces {
				if gotPlaces[id] != 1 {
					t.Errorf("%s is in %d places after recovery, want exactly 1", id, gotPlaces[id])
				}
			}
			if tmp := f.tempFiles(); len(tmp) > 0 {
				t.Errorf("temporary files left behind: %v", tmp)
			}
		})
	}
}

// promoted prepares a fixture whose facts are all promoted.
func promoted(f *fixture) {
	f.sessions(3)
	spec, _ := approveSpec(f.t, f.planJSON(), "Keep this one")
	f.must("intermem-synthesize", "apply", "--approve", spec, "--import-agents")
}

// staleOnce promotes, deletes the cited file and runs the first sweep, so
// the next sweep a day later archives the fact.
func staleOnce(f *fixture) {
	promoted(f)
	if err := os.Remove(filepath.Join(f.root, "internal/http/h.go")); err != nil {
		f.t.Fatal(err)
	}
	f.must("intermem", "sweep")
	f.advanceDay()
}

func TestArchiveCrashMatrix(t *testing.T) {
	for _, layout := range []string{"tiered", "flat"} {
		t.Run(layout, func(t *testing.T) {
			crashMatrix(t, layout, staleOnce, []string{"intermem", "sweep"},
				[]string{"archive:after-journal", "archive:after-target", "archive:after-commit"})
		})
	}
}

func TestRestoreCrashMatrix(t *testing.T) {
	for _, layout := range []string{"tiered", "flat"} {
		t.Run(layout, func(t *testing.T) {
			var id string
			archived := func(f *fixture) {
				staleOnce(f)
				f.must("intermem", "sweep")
				var rep struct{ Archived []struct{ ID string } }
				json.Unmarshal([]byte(f.must("intermem", "archived", "--json").stdout), &rep)
				if len(rep.Archived) != 1 {
					f.t.Fatalf("archived = %v", rep.Archived)
				}
				id = rep.Archived[0].ID
			}
			// The id is the same in every fixture: the hash of the text.
			probe := promoteFixture(t, layout)
			archived(probe)
			crashMatrix(t, layout, archived, []string{"intermem", "restore", id},
				[]string{"restore:after-journal", "restore:after-target", "restore:after-commit"})
		})
	}
}

func TestMigrateCrashMatrix(t *testing.T) {
	flatPromoted := func(f *fixture) {
		f.layout = "flat"
		promoted(f)
		f.layout = "tiered"
	}
	t.Run("migrate", func(t *testing.T) {
		crashMatrix(t, "tiered", flatPromoted, []string{"intermem", "tier", "migrate"},
			[]string{"migrate:after-journal", "migrate:after-target", "migrate:after-commit"})
	})
	t.Run("flatten", func(t *testing.T) {
		crashMatrix(t, "tiered", promoted, []string{"intermem", "tier", "flatten"},
			[]string{"migrate:after-journal", "migrate:after-target", "migrate:after-commit"})
	})
}
