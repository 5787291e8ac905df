package proof

import (
	"strings"
	"testing"
)

// checkStoreAgrees: the store's promoted records are the facts the
// documents hold: a live record for every marked entry and no other, an
// archived record for every archive entry and no other.
func checkStoreAgrees(t *testing.T, f *fixture) {
	t.Helper()
	live, archived := f.docFacts()
	slive, sarchived := f.storeFacts()
	if strings.Join(slive, ",") != strings.Join(live, ",") {
		t.Errorf("the store's live promoted records %v are not the facts marked in the documents %v", slive, live)
	}
	if strings.Join(sarchived, ",") != strings.Join(archived, ",") {
		t.Errorf("the store's archived records %v are not the facts in the archive %v", sarchived, archived)
	}
}

// TestCrashStoreBookkeeping kills each journaled command at each of its
// failpoints, recovers with intermem-recover --resume, and demands what an
// uninterrupted run leaves in the store: the promoted records match the
// markers and the archive, and a rejection made in the interrupted apply
// is remembered (the rejected entry is not offered again).
func TestCrashStoreBookkeeping(t *testing.T) {
	points := map[string][]string{
		"apply-tiered":  {"promote:after-journal", "promote:after-target", "promote:after-commit", "prune:after-backup", "prune:after-write"},
		"apply-flat":    {"promote:after-journal", "promote:after-target", "promote:after-commit", "prune:after-backup", "prune:after-write"},
		"sweep-archive": {"archive:after-journal", "archive:after-target", "archive:after-commit"},
		"restore":       {"restore:after-journal", "restore:after-target", "restore:after-commit"},
		"tier-migrate":  {"migrate:after-journal", "migrate:after-target", "migrate:after-commit"},
		"tier-flatten":  {"migrate:after-journal", "migrate:after-target", "migrate:after-commit"},
	}
	for _, kind := range killKinds {
		t.Run(kind.name, func(t *testing.T) {
			t.Parallel()
			f := promoteFixture(t, kind.layout)
			cmd := kind.prepare(f)
			f.layout = kind.layout
			template, now := takeSnapshot(t, f.dir), f.now
			for _, fp := range append([]string{"uninterrupted"}, points[kind.name]...) {
				template.restore(t, f.dir)
				f.now = now
				t.Run(fp, func(t *testing.T) {
					parent := f.t
					f.t = t
					defer func() { f.t = parent }()
					r := f.run("", []string{"INTERMEM_FAILPOINT=" + fp}, cmd[0], cmd[1:]...)
					if want := map[bool]int{true: 0, false: 137}[fp == "uninterrupted"]; r.code != want {
						t.Fatalf("%v at %s: exit %d, want %d\n%s%s", cmd, fp, r.code, want, r.stdout, r.stderr)
					}
					f.must("intermem-recover", "--resume")
					checkStoreAgrees(t, f)
					if strings.HasPrefix(kind.name, "apply") {
						for _, c := range candidates(f.planJSON()) {
							if strings.Contains(c, "Keep this one") {
								t.Errorf("the entry rejected in the interrupted apply is offered again: %q", c)
							}
						}
					}
				})
			}
		})
	}
}
