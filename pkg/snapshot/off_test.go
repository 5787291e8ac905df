package snapshot

import (
	"maps"
	"os"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/config"
	"github.com/intermem/intermem/pkg/store"
)

// switchMemory writes .intermem/config.json switching auto-memory off, or
// removes it.
func (q *quietProject) switchMemory(on bool) {
	q.t.Helper()
	path := filepath.Join(q.state, config.Name)
	if on {
		if err := os.Remove(path); err != nil {
			q.t.Fatal(err)
		}
		return
	}
	if err := os.WriteFile(path, []byte(`{"sources": {"auto-memory": false}}`), 0o644); err != nil {
		q.t.Fatal(err)
	}
}

// memoryRecords says what the store holds of the memory file called name
// (its state, its stored parse) and of session (its record).
func (q *quietProject) memoryRecords(name, session string) (file, parse, sess bool) {
	q.view(func(tx *bolt.Tx) error {
		var fs store.FileState
		file, _ = store.Get(tx, store.BucketFiles, name, &fs)
		parse = store.Catalog(tx).Blob(parseKey(name)) != nil
		var s store.Session
		sess, _ = store.Get(tx, store.BucketSessions, session, &s)
		return nil
	})
	return file, parse, sess
}

// TestMemoryOffLeavesTheMemoryAlone: with auto-memory switched off in
// config.json, Stop, SubagentStop and SessionEnd — through the front and
// handed over alike — store nothing of the memory: no file's state or
// parse, no sighting, no session. Switched back on, the next turn records
// what changed meanwhile.
func TestMemoryOffLeavesTheMemoryAlone(t *testing.T) {
	for _, front := range []bool{false, true} {
		name := "full hook"
		if front {
			name = "through the front"
		}
		t.Run(name, func(t *testing.T) {
			q := newQuietProject(t)
			q.front = front
			if front {
				q.interval = "10" // the front counts the turns
			}
			q.turn("s1", "Stop")
			q.settle("s1")
			before := q.seen()

			q.handed = 0
			q.switchMemory(false)
			q.write("deploy.md", "# Deploy\n\n- Releases are tagged from main.\n")
			q.write("MEMORY.md", "# Memory\n\n- The build runs with make.\n- [Topics](topics.md)\n- [Deploy](deploy.md)\n")
			for _, ev := range []string{"Stop", "SubagentStop", "Stop"} {
				q.turn("s1", ev)
				q.turn("s2", ev)
			}
			if front && q.handed != 0 {
				t.Fatalf("the front handed %d turns over with the memory switched off, want none", q.handed)
			}
			q.turn("s2", "SessionEnd")
			file, parse, sess := q.memoryRecords("deploy.md", "s2")
			if file || parse || sess {
				t.Fatalf("with the memory switched off the store holds deploy.md's state %v, its parse %v, session s2 %v; want none", file, parse, sess)
			}
			if got := q.seen(); !maps.Equal(got, before) {
				t.Fatalf("sightings changed with the memory switched off:\nbefore %v\nafter  %v", before, got)
			}

			q.switchMemory(true)
			q.turn("s1", "Stop")
			if got := q.seen()["Releases are tagged from main."]; got != 1 {
				b, _ := os.ReadFile(q.log)
				t.Fatalf("switched back on, a file written meanwhile is seen in %d sessions after one turn, want 1; log:\n%s", got, b)
			}
			if file, parse, _ := q.memoryRecords("deploy.md", "s1"); !file || !parse {
				t.Fatalf("switched back on, deploy.md's state %v and parse %v after one turn; want both", file, parse)
			}
		})
	}
}

// TestMemoryOffSessionEndRefreshesTheCatalog: a session end with the
// memory switched off still brings the other sources up to date in the
// catalog, and puts no memory entry in it.
func TestMemoryOffSessionEndRefreshesTheCatalog(t *testing.T) {
	q := newQuietProject(t)
	if err := os.MkdirAll(q.state, 0o755); err != nil {
		t.Fatal(err)
	}
	q.switchMemory(false)
	q.writeSolution()
	q.turn("s1", "Stop")
	q.turn("s1", "SessionEnd")
	bySource := map[string][]string{}
	q.view(func(tx *bolt.Tx) error {
		return store.Catalog(tx).Entries(func(e *store.CatalogEntry) error {
			if e.Gone.IsZero() {
				bySource[e.Source] = append(bySource[e.Source], e.Title)
			}
			return nil
		})
	})
	if got := bySource["compound"]; len(got) != 1 || got[0] != "Token bucket rate limiter drops bursts" {
		b, _ := os.ReadFile(q.log)
		t.Fatalf("after a session end with the memory switched off the catalog holds compound entries %q, want the solution; log:\n%s", got, b)
	}
	if got := bySource[config.AutoMemory]; len(got) != 0 {
		t.Fatalf("the catalog holds auto-memory entries %q with the memory switched off", got)
	}
	if file, parse, sess := q.memoryRecords("MEMORY.md", "s1"); file || parse || sess {
		t.Fatalf("with the memory switched off the store holds MEMORY.md's state %v, its parse %v, session s1 %v; want none", file, parse, sess)
	}
}
