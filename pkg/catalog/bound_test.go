package catalog

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/source"
	"github.com/intermem/intermem/pkg/store"
)

// writesRefresh brings the catalog up to date as a session's end does
// (snapshot.RefreshCatalog): one source after another, each in builds
// that write at most limit entries (Config.MaxWrites; 0: unbounded), each
// build in a write transaction of its own, until it is not partial;
// when fileLimit is not 0, it is the builds' Config.MaxFileWrites;
// between, when not nil, runs once, after the first transaction of the
// source named "ids" that leaves it partial. It
// returns the store as it is then, with the most entries one
// transaction wrote (keys of the entries bucket added or changed).
func writesRefresh(t *testing.T, f *fixture, reg *source.Registry, limit int, between func()) (refreshed, int) {
	t.Helper()
	return fileWritesRefresh(t, f, reg, limit, 0, between)
}

// fileWritesRefresh is writesRefresh with a bound of fileLimit entries
// on a per-file source's builds (Config.MaxFileWrites; 0: limit's).
func fileWritesRefresh(t *testing.T, f *fixture, reg *source.Registry, limit, fileLimit int, between func()) (refreshed, int) {
	t.Helper()
	var (
		r       refreshed
		largest int
	)
	st := copyStore(t, f)
	defer st.Close()
	entries := func() map[string]string {
		out := map[string]string{}
		for k, v := range dumpStore(t, st) {
			if strings.HasPrefix(k, "catalog_entries/") {
				out[k] = v
			}
		}
		return out
	}
	memo := new(Memo)
	ran := false
	for _, name := range reg.Names() {
		cfg := f.cfg()
		cfg.Registry, cfg.MaxWrites, cfg.MaxFileWrites, cfg.Memo = reg, limit, fileLimit, memo
		cfg.Switches = map[string]bool{}
		for _, n := range reg.Names() {
			cfg.Switches[n] = n == name
		}
		for partial := true; partial; {
			before := entries()
			if err := st.Update(func(tx *bolt.Tx) error {
				c, err := Build(store.Catalog(tx), cfg)
				if err != nil {
					return err
				}
				partial = c.Partial()
				r.parsed += c.read
				for _, p := range c.Fresh() {
					r.problems = append(r.problems, fmt.Sprintf("%s:%d: %s", p.Path, p.Line, p.Message))
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			wrote := 0
			for k, v := range entries() {
				if before[k] != v {
					wrote++
				}
			}
			largest = max(largest, wrote)
			if between != nil && !ran && partial && name == "ids" {
				between()
				ran = true
			}
			if r.txs++; r.txs > 2000 {
				t.Fatal("the refresh does not end")
			}
		}
	}
	r.store = dumpStore(t, st)
	return r, largest
}

// boundFixture adds to memoFixture's project, after its first build, a
// file of 300 entries and 120 edit observations appended to the log: a
// long instruction file or an edit log taken in whole at a first install.
func boundFixture(t *testing.T) (*fixture, *source.Registry) {
	t.Helper()
	f, reg := memoFixture(t)
	var big strings.Builder
	for i := range 300 {
		fmt.Fprintf(&big, "big-%03d the queue drains entry %d before shutdown\n", i, i)
	}
	f.write("ids/big.txt", big.String())
	log := filepath.Join(f.root, ".interfluence/learnings-raw.log")
	old, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var more strings.Builder
	for i := range 120 {
		fmt.Fprintf(&more, "--- 2026-02-%02dT10:%02d:00Z | src/file%d.go | CONTEXT:code ---\nOLD: the old wording %d\nNEW: the new wording %d\n", 17+i%10, i%60, i, i, i)
	}
	f.put(log, string(old)+more.String())
	// Every directory's time well in the past, the memory's too: a
	// directory changed within the racy window keys its source by
	// nothing, and a refresh run later would key it.
	settleDirs(t, f.root)
	settleDirs(t, f.mem)
	return f, reg
}

// A refresh whose builds write at most a few entries each (a hook's,
// Config.MaxWrites) stores what an unbounded one stores, but for the
// generation (each transaction that writes bumps it), and reports the
// same problems once: a file of more entries than the bound — 300 in a
// file, 120 appended to a log — is brought in over several transactions,
// none of which writes much more than the bound.
func TestBoundedWritesAreARefresh(t *testing.T) {
	f, reg := boundFixture(t)
	one, _ := writesRefresh(t, f, reg, 0, nil)
	if n := len(reg.Names()); one.txs != n {
		t.Fatalf("an unbounded refresh took %d transactions for %d sources", one.txs, n)
	}
	generation := func(k string) bool { return k == "catalog/generation" }
	for _, bound := range []struct{ writes, fileWrites int }{{1, 0}, {7, 0}, {50, 0}, {128, 0}, {1000, 1}, {1000, 7}, {3, 50}} {
		max := bound.writes
		if bound.fileWrites > 0 {
			max = bound.fileWrites
		}
		t.Run(fmt.Sprintf("max %d file max %d", bound.writes, bound.fileWrites), func(t *testing.T) {
			got, largest := fileWritesRefresh(t, f, reg, bound.writes, bound.fileWrites, nil)
			if got.txs < 420/max+len(reg.Names())-2 {
				t.Errorf("%d transactions for 420 new entries at most %d a build: the bound does not hold", got.txs, max)
			}
			// Each changed file is read and parsed once, as by the
			// unbounded refresh: the builds after the first that go on
			// with a file take its parse from the Memo.
			if got.parsed != one.parsed {
				t.Errorf("the files were read and parsed %d times, by an unbounded refresh %d", got.parsed, one.parsed)
			}
			// A build writes the bound, plus the tombstones of what the
			// files it parsed dropped (few here).
			if largest > max+8 {
				t.Errorf("a build wrote %d entries, bound %d", largest, max)
			}
			if d := diffStores(one.store, got.store, generation); len(d) > 0 {
				t.Errorf("bounded, the store differs from an unbounded refresh's:\n%s", strings.Join(d, "\n"))
			}
			slices.Sort(got.problems)
			want := slices.Sorted(slices.Values(one.problems))
			if !slices.Equal(got.problems, want) {
				t.Errorf("bounded, problems reported %q, unbounded %q", got.problems, want)
			}
		})
	}
}

// A file that changes while a bounded refresh is bringing it in leaves no
// entry of its first version live: what a build wrote of it is named by
// the file's record until the file is parsed whole, and tombstoned then.
// The live entries are those an unbounded refresh of the file as it ends
// stores.
func TestBoundedWritesFileChangesMidway(t *testing.T) {
	f, reg := boundFixture(t)
	var second strings.Builder
	for i := range 300 {
		fmt.Fprintf(&second, "big-%03d the queue drains entry %d before shutdown\n", i+150, i+150)
	}
	rewrite := func() { f.write("ids/big.txt", second.String()) }
	ran := false
	got, _ := writesRefresh(t, f, reg, 40, func() { rewrite(); ran = true })
	if !ran {
		t.Fatal("the file was not rewritten while the refresh brought it in")
	}
	rewrite()
	want, _ := writesRefresh(t, f, reg, 0, nil)
	live := func(r refreshed) map[string]bool {
		out := map[string]bool{}
		for k, v := range r.store {
			if strings.HasPrefix(k, "catalog_entries/") && strings.Contains(k, "big-") && !strings.Contains(v, `"gone"`) {
				out[k] = true
			}
		}
		return out
	}
	g, w := live(got), live(want)
	if len(w) != 300 {
		t.Fatalf("the unbounded refresh holds %d live entries of big.txt, want 300", len(w))
	}
	for k := range g {
		if !w[k] {
			t.Errorf("%s live after the refresh, not in the file as it ends", k)
		}
	}
	for k := range w {
		if !g[k] {
			t.Errorf("%s missing after the bounded refresh", k)
		}
	}
}
