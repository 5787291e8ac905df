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
	"github.com/intermem/intermem/pkg/source/automemory"
	"github.com/intermem/intermem/pkg/source/sources"
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
	return fileWritesRefresh(t, f, reg, limit, 0, "ids", between)
}

// wholeWritesRefresh is writesRefresh running between after the first
// transaction of auto-memory that leaves it partial.
func wholeWritesRefresh(t *testing.T, f *fixture, reg *source.Registry, limit int, between func()) (refreshed, int) {
	t.Helper()
	return fileWritesRefresh(t, f, reg, limit, 0, automemory.Name, between)
}

// fileWritesRefresh is writesRefresh with a bound of fileLimit entries
// on a per-file source's builds (Config.MaxFileWrites; 0: limit's),
// between run after the source named at leaves a transaction partial.
func fileWritesRefresh(t *testing.T, f *fixture, reg *source.Registry, limit, fileLimit int, at string, between func()) (refreshed, int) {
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
			if between != nil && !ran && partial && name == at {
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
	for _, bound := range []struct{ writes, fileWrites int }{{1, 0}, {7, 0}, {50, 0}, {128, 0}, {1000, 1}, {1000, 7}, {3, 50}} {
		max := bound.writes
		if bound.fileWrites > 0 {
			max = bound.fileWrites
		}
		t.Run(fmt.Sprintf("max %d file max %d", bound.writes, bound.fileWrites), func(t *testing.T) {
			got, largest := fileWritesRefresh(t, f, reg, bound.writes, bound.fileWrites, "", nil)
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
			sameAsUnbounded(t, one, got)
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
	sameLive(t, got, want, "big.txt", func(k, _ string) bool { return strings.Contains(k, "big-") })
}

// sameAsUnbounded checks that a bounded refresh (got) stored what the
// unbounded one stored, every bucket but the generation, and reported the
// same problems.
func sameAsUnbounded(t *testing.T, one, got refreshed) {
	t.Helper()
	generation := func(k string) bool { return k == "catalog/generation" }
	if d := diffStores(one.store, got.store, generation); len(d) > 0 {
		t.Errorf("bounded, the store differs from an unbounded refresh's:\n%s", strings.Join(d, "\n"))
	}
	slices.Sort(got.problems)
	want := slices.Sorted(slices.Values(one.problems))
	if !slices.Equal(got.problems, want) {
		t.Errorf("bounded, problems reported %q, unbounded %q", got.problems, want)
	}
}

// sameLive checks that the live catalog entries of what (those mine
// picks by key and value) are the same after the bounded refresh got as
// after the unbounded one want, 300 of them.
func sameLive(t *testing.T, got, want refreshed, what string, mine func(k, v string) bool) {
	t.Helper()
	live := func(r refreshed) map[string]bool {
		out := map[string]bool{}
		for k, v := range r.store {
			if strings.HasPrefix(k, "catalog_entries/") && mine(k, v) && !strings.Contains(v, `"gone"`) {
				out[k] = true
			}
		}
		return out
	}
	g, w := live(got), live(want)
	if len(w) != 300 {
		t.Fatalf("the unbounded refresh holds %d live entries of %s, want 300", len(w), what)
	}
	for k := range g {
		if !w[k] {
			t.Errorf("%s live after the refresh, not in %s as it ends", k, what)
		}
	}
	for k := range w {
		if !g[k] {
			t.Errorf("%s missing after the bounded refresh", k)
		}
	}
}

// memoryBoundFixture gives newFixture's project an auto-memory whose
// first build stored some of it, then changes it as a first install over
// a large memory does: files of many facts added (one of 300), one
// rewritten, one removed whose fact another still holds, a fact held by
// two changed files, and an index that links them.
func memoryBoundFixture(t *testing.T) (*fixture, *source.Registry) {
	t.Helper()
	f := newFixture(t)
	facts := func(name string, n int, v string) string {
		var b strings.Builder
		b.WriteString("# Notes\n")
		for i := range n {
			fmt.Fprintf(&b, "- %s fact %d: the spool keeps segment %d %s.\n", name, i, i, v)
		}
		return b.String()
	}
	f.writeMem("MEMORY.md", "# Memory\n\n- The build uses `make release` for tagged builds\n- [Deploy](deploy.md) — how we deploy\n")
	f.writeMem("deploy.md", "---\nname: deploy\ndescription: Deploys go through the staging cluster first\ntype: project\n---\nRun scripts/deploy.sh staging, then prod.\n")
	f.writeMem("old.md", facts("old", 12, "as before"))
	f.writeMem("gone.md", facts("gone", 5, "as before")+"- Shared: the cache is keyed by fingerprint.\n")
	f.writeMem("zkeeps.md", "# Notes\n- Shared: the cache is keyed by fingerprint.\n")
	settleDirs(t, f.mem)
	f.update(func(*Catalog) {})
	f.writeMem("MEMORY.md", "# Memory\n\n- The build uses `make release` for tagged builds\n- Tests need Docker running\n- [Deploy](deploy.md) — how we deploy\n- [Big](big.md) — what the spool keeps\n")
	f.writeMem("old.md", facts("old", 12, "now"))
	if err := os.Remove(filepath.Join(f.mem, "gone.md")); err != nil {
		t.Fatal(err)
	}
	f.writeMem("big.md", facts("big", 300, "in order"))
	for i := range 6 {
		f.writeMem(fmt.Sprintf("m%d.md", i), facts(fmt.Sprintf("m%d", i), 20+i, "fresh")+"- Twice: retries need jitter.\n")
	}
	settleDirs(t, f.root)
	settleDirs(t, f.mem)
	return f, sources.Registry()
}

// A refresh of auto-memory (a Whole source) whose builds write at most a
// few entries each (a hook's, Config.MaxWrites) stores what an unbounded
// one stores, but for the generation, and reports the same problems once:
// the files past the bound are left as stored and the file that reached
// it is stored to be parsed again, for the next build to go on with —
// where a bounded build refused a change of more entries than its bound,
// and every session end after refused again.
func TestBoundedWholeWritesAreARefresh(t *testing.T) {
	f, reg := memoryBoundFixture(t)
	one, _ := writesRefresh(t, f, reg, 0, nil)
	if n := len(reg.Names()); one.txs != n {
		t.Fatalf("an unbounded refresh took %d transactions for %d sources", one.txs, n)
	}
	for _, max := range []int{1, 7, 50, 128} {
		t.Run(fmt.Sprintf("max %d", max), func(t *testing.T) {
			got, largest := writesRefresh(t, f, reg, max, nil)
			if got.txs < 430/max+len(reg.Names())-1 {
				t.Errorf("%d transactions for ~430 memory entries to write at most %d a build: the bound does not hold", got.txs, max)
			}
			// A build writes the bound, plus the tombstones of what the
			// files it made dropped (gone.md's six, old.md's twelve).
			if largest > max+18 {
				t.Errorf("a build wrote %d entries, bound %d", largest, max)
			}
			sameAsUnbounded(t, one, got)
		})
	}
}

// A memory file that changes while a bounded refresh is bringing it in
// leaves no entry of its first version live: what a build wrote of it is
// named by the file's record until the file is made whole, and
// tombstoned then. The live entries are those an unbounded refresh of the
// memory as it ends stores.
func TestBoundedWholeWritesFileChangesMidway(t *testing.T) {
	f, reg := memoryBoundFixture(t)
	var second strings.Builder
	second.WriteString("# Notes\n")
	for i := range 300 {
		fmt.Fprintf(&second, "- big fact %d: the spool keeps segment %d in order.\n", i+150, i+150)
	}
	rewrite := func() { f.writeMem("big.md", second.String()) }
	ran := false
	got, _ := wholeWritesRefresh(t, f, reg, 40, func() { rewrite(); ran = true })
	if !ran {
		t.Fatal("the memory was not rewritten while the refresh brought it in")
	}
	rewrite()
	want, _ := writesRefresh(t, f, reg, 0, nil)
	sameLive(t, got, want, "big.md", func(_, v string) bool { return strings.Contains(v, "big fact") })
}
