package catalog

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/source/sources"
	"github.com/intermem/intermem/pkg/store"
)

// hostile adds to f's project what a walk must judge: a link in the
// solutions to a file inside (read through it), one out of the project, a
// dangling one, a FIFO, a link to a directory, a directory named as a
// prefix of a file beside it, and a directory of more learnings than a
// parallel run of stats.
func hostile(t *testing.T, f *fixture) {
	t.Helper()
	for i := range 300 {
		f.write(".clavain/learnings/many-"+strconv.Itoa(1000+i)+".md", "---\nlastConfirmed: 2026-02-10\n---\nLearning "+strconv.Itoa(i)+" about retries.\n")
	}
	f.write("docs/solutions/a/x.md", "# A prefix directory\n")
	f.write("docs/solutions/a-b.md", "# Beside it\n")
	sol := filepath.Join(f.root, "docs/solutions")
	for link, target := range map[string]string{"in.md": "build/mypy.md", "out.md": "/etc/hostname", "gone.md": "nowhere.md", "dir.md": "runtime"} {
		if err := os.Symlink(target, filepath.Join(sol, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(sol, "pipe.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	settleDirs(t, f.root)
	settleDirs(t, f.mem)
}

// The per-file sources walked ahead, on goroutines of their own, give
// the catalog that walking them in turn gives: the same sources (files,
// entries, problems), entries, and stored states, over a project with
// hostile entries, whether the sources are unchanged (their keys summed
// by source.SumWalk where it can) or one changed (listed for the scan).
// Run under -race.
func TestWalkAheadAsInTurn(t *testing.T) {
	f := newFixture(t)
	hostile(t, f)
	f.update(func(*Catalog) {})
	look := func(ahead bool) (srcs []SourceInfo, entries []Entry, states map[string]string) {
		defer func(n int) { aheadMin = n }(aheadMin)
		defer func(now time.Time) { f.now = now }(f.now) // both at one time
		if !ahead {
			aheadMin = 1 << 20
		}
		f.view(func(c *Catalog) {
			srcs, entries = c.Sources(), c.Entries()
			if ahead != (c.ahead != nil) {
				t.Fatalf("walked ahead: %v, want %v", c.ahead != nil, ahead)
			}
			states = map[string]string{}
			for _, n := range sources.Registry().Names() {
				states[n] = string(c.tx.State(n))
			}
		})
		return
	}
	for _, change := range []bool{false, true} {
		if change {
			f.write(".clavain/learnings/many-1200.md", "---\nlastConfirmed: 2026-02-12\n---\nLearning about quokkas.\n")
			settleDirs(t, f.root)
		}
		s1, e1, st1 := look(true)
		s2, e2, st2 := look(false)
		if !reflect.DeepEqual(s1, s2) {
			for i := range s1 {
				if !reflect.DeepEqual(s1[i], s2[i]) {
					t.Errorf("changed %v: source %s walked ahead: %d files, %d entries, problems %v, scanned %v; in turn: %d, %d, %v, %v", change, s1[i].Name,
						len(s1[i].Files), s1[i].Entries, s1[i].Problems, s1[i].Scanned, len(s2[i].Files), s2[i].Entries, s2[i].Problems, s2[i].Scanned)
				}
			}
		}
		if !reflect.DeepEqual(e1, e2) || len(e1) < 300 {
			t.Errorf("changed %v: %d entries walked ahead, %d in turn", change, len(e1), len(e2))
		}
		if !reflect.DeepEqual(st1, st2) {
			t.Errorf("changed %v: the states differ", change)
		}
	}
}

// A source's key summed as source.SumWalk finds its files is the key of
// its listing, for every per-file source of a project with hostile
// entries (where the walk cannot be summed, it says so), with and without
// the listings its stored state keeps.
func TestSumKeyIsListingKey(t *testing.T) {
	f := newFixture(t)
	hostile(t, f)
	f.update(func(*Catalog) {})
	summed := 0
	f.st.View(func(tx *bolt.Tx) error {
		c := &Catalog{cfg: f.cfg(), tx: store.Catalog(tx)}
		for _, s := range sources.Registry().All() {
			for _, prev := range []bool{false, true} {
				st := c.loadState(s.Name())
				if !prev {
					st.Dirs = nil
				}
				l := list(c.cfg.Env, s, st.Dirs)
				key, dirs, ok := sumKey(c.cfg.Env, s, st.Dirs)
				if !ok {
					continue
				}
				summed++
				if key != l.key || !sameDirs(dirs, l.dirs) {
					t.Errorf("%s (stored listings %v): summed key %q, listing's %q", s.Name(), prev, key, l.key)
				}
			}
		}
		return nil
	})
	if summed < 4 {
		t.Errorf("%d keys summed, want clavain's and the absent sources' at least", summed)
	}
}
