package e2e

import (
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
)

// seedMemory writes an auto-memory in the layouts Claude Code writes into
// dir: a MEMORY.md index (loaded by Claude Code at startup) holding a
// pointer and a legacy fact list; the memory file the pointer names (one
// memory per file, with frontmatter); and a legacy topic file nothing
// points to, which Claude Code never loads by itself. Every entry carries
// marker: "<marker>: errors are wrapped" is in MEMORY.md, and
// "<marker>-UNPOINTED" only in the topic file.
func seedMemory(t *testing.T, dir, marker string) {
	t.Helper()
	writeFile(t, filepath.Join(dir, "MEMORY.md"), fmt.Sprintf(`# Memory

- [Build with scripts/build.sh](build.md) — %[1]s how binaries are built

## Conventions
- %[1]s: errors are wrapped with %%w and start lower-case
- %[1]s: tests use testscript for the binaries
`, marker))
	writeFile(t, filepath.Join(dir, "build.md"), fmt.Sprintf(`---
name: Build with scripts/build.sh
description: %[1]s how binaries are built
metadata:
  type: project
---
Run scripts/build.sh; it builds every cmd/* into bin/ (%[1]s-TOPIC).
`, marker))
	writeFile(t, filepath.Join(dir, "debugging.md"), fmt.Sprintf(`# Debugging

## End-to-end tests
- %[1]s-UNPOINTED: the fake Messages API listens on 127.0.0.1 inside the test's network namespace
`, marker))
}

// TestSessions checks that intermem counts sessions, not hook firings:
// three `claude -p` runs are three sessions, a --resume of one of them is
// not a fourth, and a multi-turn stream-json session (Stop fires every
// turn) counts once. Every session's SessionEnd work is in the store when
// the process has exited.
func TestSessions(t *testing.T) {
	begin(t)
	snapshotPiece.require(t)
	cliPiece.require(t)
	t.Parallel()

	t.Run("runs and resume", func(t *testing.T) {
		t.Parallel()
		u := newUser(t)
		proj := mkdir(t, scratch(t), "proj")
		seedMemory(t, u.observe(t, proj).MemoryDir, "SESSIONS-MEM")

		var ids []string
		for i := range 3 {
			r := u.claude(t, proj, fmt.Sprintf("prompt %d", i+1))
			r.requireHooksRan("Stop", 1)
			r.requireHooksRan("SessionEnd", 1)
			ids = append(ids, r.sessionID())
		}
		requireSessions(t, u.observe(t, proj), ids...)

		resumed := u.claude(t, proj, "again", args("--resume", ids[1]))
		if got := resumed.sessionID(); got != ids[1] {
			// Claude Code 2.1.332 keeps the id on --resume; a client that
			// forks a new id would make this a new session by design.
			t.Fatalf("%s: --resume %s reported session %s", resumed.label, ids[1], got)
		}
		st := u.observe(t, proj)
		requireSessions(t, st, ids...)
		if st.Entries == 0 {
			t.Errorf("the store holds no entries after sessions over a seeded MEMORY.md")
		}
	})

	t.Run("multi-turn", func(t *testing.T) {
		t.Parallel()
		u := newUser(t)
		proj := mkdir(t, scratch(t), "proj")
		seedMemory(t, u.observe(t, proj).MemoryDir, "MULTI-MEM")

		r := u.converse(t, proj, []string{"first turn", "second turn", "third turn"})
		r.requireHooksRan("Stop", 3)
		r.requireHooksRan("SessionEnd", 1)
		requireSessions(t, u.observe(t, proj), r.sessionID())
	})
}

// requireSessions fails unless the store holds exactly the sessions ids,
// each ended (its SessionEnd observation was recorded).
func requireSessions(t *testing.T, st status, ids ...string) {
	t.Helper()
	want := append([]string(nil), ids...)
	sort.Strings(want)
	if got := st.ids(); !reflect.DeepEqual(got, want) {
		t.Fatalf("the store of %s holds sessions %v, want %v", st.ProjectRoot, got, want)
	}
	for _, id := range ids {
		if s := st.Sessions[id]; !s.Ended {
			t.Errorf("session %s is not ended in the store: SessionEnd's work did not complete (%+v)", id, s)
		}
	}
}
