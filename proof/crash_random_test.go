package proof

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/intermem/intermem/pkg/journal"
)

// killKind is one journaled operation the random kill loop interrupts.
type killKind struct {
	name   string
	layout string
	// prepare brings a fresh promoteFixture to the state just before the
	// operation and returns the command that performs it.
	prepare func(f *fixture) []string
}

// rejectKeep is the apply of promoteFixture's plan: approve everything but
// "Keep this one", reject that one (so the operation also records a
// decision), add the AGENTS.md import.
func rejectKeep(f *fixture) []string {
	f.sessions(3)
	plan := f.planJSON()
	spec, _ := approveSpec(f.t, plan, "Keep this one")
	var keep string
	for _, c := range plan["candidates"].([]any) {
		if m := c.(map[string]any); strings.Contains(m["text"].(string), "Keep this one") {
			keep = jsonNum(m["n"])
		}
	}
	if keep == "" {
		f.t.Fatal("the plan does not offer \"Keep this one\"")
	}
	return []string{"intermem-synthesize", "apply", "--approve", spec, "--reject", keep, "--import-agents"}
}

var killKinds = []killKind{
	{"apply-tiered", "tiered", rejectKeep},
	{"apply-flat", "flat", rejectKeep},
	{"sweep-archive", "tiered", func(f *fixture) []string {
		staleOnce(f)
		return []string{"intermem", "sweep"}
	}},
	{"restore", "flat", func(f *fixture) []string {
		staleOnce(f)
		f.must("intermem", "sweep")
		var rep struct{ Archived []struct{ ID string } }
		decodeJSON(f.t, "archived --json", f.must("intermem", "archived", "--json").stdout, &rep)
		if len(rep.Archived) != 1 {
			f.t.Fatalf("archived = %v, want one fact", rep.Archived)
		}
		return []string{"intermem", "restore", rep.Archived[0].ID}
	}},
	{"tier-migrate", "tiered", func(f *fixture) []string {
		f.layout = "flat"
		promoted(f)
		f.layout = "tiered"
		return []string{"intermem", "tier", "migrate"}
	}},
	{"tier-flatten", "tiered", func(f *fixture) []string {
		promoted(f)
		return []string{"intermem", "tier", "flatten"}
	}},
	{"tidy", "tiered", func(f *fixture) []string {
		f.write(f.memDir+"/MEMORY.md", overCapIndex())
		f.write(f.memDir+"/big.md", "Someone else's notes.\n")
		f.sessions(2) // the history the moved entries keep
		return []string{"intermem", "tidy", "--apply"}
	}},
}

// killStats counts where the kills of one kind landed.
type killStats struct {
	rounds, exited, before, mid, after, between atomic.Int64
}

func (s *killStats) String() string {
	return fmt.Sprintf("%d rounds: %d mid-operation, %d before the journal, %d after completion (%d exited before the kill); %d left a file between two steps",
		s.rounds.Load(), s.mid.Load(), s.before.Load(), s.after.Load(), s.exited.Load(), s.between.Load())
}

// TestRandomKill is the randomized crash proof: for INTERMEM_PROOF_ROUNDS
// rounds (default 100) it starts one of the journaled operations above,
// SIGKILLs it after a uniformly random 0–30 ms (INTERMEM_PROOF_MAXDELAY_MS
// widens the window for operations that start late; on a loaded machine,
// where the uninterrupted reference run takes longer than the window, the
// kills spread over 5/4 of its duration instead), recovers with
// intermem-recover --resume, and checks, every round:
//
//   - at the kill, every file is whole: byte-equal to its state before the
//     operation, after it (from an uninterrupted reference run), or between
//     two of the operation's journaled steps (a file several steps change
//     is rewritten once per step, each time atomically);
//   - after recovery the project is byte-equal to the reference's after
//     state if the operation reached the journal, and to its before state
//     (from which a rerun reaches the after state) if it did not;
//   - every entry is in exactly one place: marked in a curated document,
//     recorded in the archive, or in auto-memory;
//   - the journal agrees with the files: intermem-recover --json lists no
//     incomplete operation; intermem status --json and intermem archived
//     --json count what the documents hold;
//   - no journal temporary file (.*.intermem-*.tmp) is left.
//
// INTERMEM_PROOF_SEED reproduces a run's delays (the seed is logged; the
// timing of the process under the kill is the machine's).
func TestRandomKill(t *testing.T) {
	rounds := envInt(t, "INTERMEM_PROOF_ROUNDS", 100)
	maxDelay := time.Duration(envInt(t, "INTERMEM_PROOF_MAXDELAY_MS", 30)) * time.Millisecond
	seed := envSeed(t)
	t.Logf("random kill loop: %d rounds, kills after 0–%v, INTERMEM_PROOF_SEED=%d", rounds, maxDelay, seed)
	stats := make([]killStats, len(killKinds))
	t.Run("kinds", func(t *testing.T) {
		for k, kind := range killKinds {
			n := rounds / len(killKinds)
			if k < rounds%len(killKinds) {
				n++
			}
			if n == 0 {
				continue
			}
			t.Run(kind.name, func(t *testing.T) {
				t.Parallel()
				randomKill(t, kind, n, maxDelay, rand.New(rand.NewSource(seed+int64(k))), &stats[k])
			})
		}
	})
	var total, mid int64
	for k := range stats {
		t.Logf("%s: %v", killKinds[k].name, &stats[k])
		total += stats[k].rounds.Load()
		mid += stats[k].mid.Load()
	}
	t.Logf("%d rounds, %d kills landed mid-operation (left an incomplete journal operation), seed %d", total, mid, seed)
	if total >= 50 && mid == 0 {
		t.Errorf("no kill of %d landed mid-operation: the loop proved nothing about recovery", total)
	}
}

// kindRef is a prepared kind: the fixture state to restore before each
// round, the command, and the reference before and after states.
type kindRef struct {
	template      dirSnapshot
	now           string
	cmd           []string
	before, after map[string]string
	oldOps        map[string]bool
	// took is how long the uninterrupted reference run took on this
	// machine, now: kills are spread over it when it is longer than the
	// configured window (a loaded machine starts processes slowly).
	took     time.Duration
	universe []string // every entry id, before or after
}

func prepareKind(t *testing.T, f *fixture, kind killKind) *kindRef {
	t.Helper()
	ref := &kindRef{cmd: kind.prepare(f)}
	f.layout = kind.layout
	ref.now = f.now
	ref.template = takeSnapshot(t, f.dir)
	ref.before = f.tree()
	ref.oldOps = map[string]bool{}
	for id, op := range f.journalOps() {
		if op.State == journal.Pending || op.State == journal.Committed {
			t.Fatalf("the prepared fixture has an incomplete operation %s", id)
		}
		ref.oldOps[id] = true
	}
	ids := map[string]bool{}
	collect := func(what string) {
		where := placesWithMemory(t, f)
		for id, n := range where {
			ids[id] = true
			if n != 1 {
				t.Fatalf("reference %s state: entry %s is in %d places", what, id, n)
			}
		}
	}
	collect("before")
	start := time.Now()
	f.must(ref.cmd[0], ref.cmd[1:]...)
	ref.took = time.Since(start)
	ref.after = f.tree()
	collect("after")
	if hashTree(ref.after) == hashTree(ref.before) {
		t.Fatalf("%v changes nothing: no operation to interrupt", ref.cmd)
	}
	for id := range ids {
		ref.universe = append(ref.universe, id)
	}
	sort.Strings(ref.universe)
	return ref
}

// placesWithMemory counts each entry's places: marks in the curated
// documents, archive records, and auto-memory.
func placesWithMemory(t *testing.T, f *fixture) map[string]int {
	t.Helper()
	where := places(t, f)
	for id := range memoryIDs(t, f) {
		where[id]++
	}
	return where
}

func randomKill(t *testing.T, kind killKind, rounds int, maxDelay time.Duration, rng *rand.Rand, st *killStats) {
	f := promoteFixture(t, kind.layout)
	ref := prepareKind(t, f, kind)
	if window := ref.took * 5 / 4; window > maxDelay {
		t.Logf("%s: the reference run took %v here: kills spread over 0–%v", kind.name, ref.took.Round(time.Millisecond), window.Round(time.Millisecond))
		maxDelay = window
	}
	for i := 0; i < rounds; i++ {
		delay := time.Duration(rng.Int63n(int64(maxDelay) + 1))
		ref.template.restore(t, f.dir)
		f.now = ref.now
		ok := t.Run(fmt.Sprintf("round%d-%s", i, delay.Round(10*time.Microsecond)), func(rt *testing.T) {
			f.t = rt
			defer func() { f.t = t }()
			killRound(rt, f, ref, delay, st)
		})
		if !ok {
			return // later rounds would repeat the failure
		}
	}
}

func killRound(t *testing.T, f *fixture, ref *kindRef, delay time.Duration, st *killStats) {
	st.rounds.Add(1)
	exited, out := startAndKill(t, f, ref.cmd, delay)
	if exited {
		st.exited.Add(1)
	}

	// Where did the kill land? The journal says.
	var fresh []*journal.Op
	incomplete := false
	for id, op := range f.journalOps() {
		if ref.oldOps[id] {
			continue
		}
		fresh = append(fresh, op)
		if op.State == journal.Pending || op.State == journal.Committed {
			incomplete = true
		}
	}
	switch {
	case incomplete:
		st.mid.Add(1)
	case len(fresh) == 0:
		if exited {
			t.Fatalf("%v exited without journaling its operation:\n%s", ref.cmd, out)
		}
		st.before.Add(1)
	case !exited:
		st.after.Add(1)
	}

	// At the kill every file is whole.
	allowed := allowedStates(f, ref, fresh)
	got := f.tree()
	between := false
	for path := range union(got, allowed) {
		if isJournalTemp(path) {
			continue // recovery removes them; checked below
		}
		h := stateHash(got, path)
		states := allowed[path]
		if !states[h] {
			t.Errorf("at the kill %s is in none of its journaled states (before, between two steps, after):\n%s", path, got[path])
		}
		if h != stateHash(ref.before, path) && h != stateHash(ref.after, path) {
			between = true
		}
	}
	if between {
		st.between.Add(1)
	}

	r := f.run("", nil, "intermem-recover", "--resume")
	if r.code != 0 {
		t.Fatalf("intermem-recover --resume: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	want := ref.after
	if len(fresh) == 0 {
		// Killed before the write-ahead record: nothing happened, and
		// the operation can simply be run again.
		diffTrees(t, "after a kill before the journal, recovery", f.tree(), ref.before)
		f.must(ref.cmd[0], ref.cmd[1:]...)
	}
	diffTrees(t, "after recovery", f.tree(), want)

	where := placesWithMemory(t, f)
	for _, id := range ref.universe {
		if where[id] != 1 {
			t.Errorf("entry %s is in %d places after recovery, want exactly 1", id, where[id])
		}
	}
	if tmp := f.tempFiles(); len(tmp) > 0 {
		t.Errorf("temporary files left behind: %v", tmp)
	}
	checkJournalAgrees(t, f)
	checkStoreAgrees(t, f)
}

// checkJournalAgrees: no incomplete operation, and what status and
// archived report is what the documents hold.
func checkJournalAgrees(t *testing.T, f *fixture) {
	t.Helper()
	var rec struct {
		Incomplete []struct{ ID, Summary string }
	}
	decodeJSON(t, "intermem-recover --json", f.must("intermem-recover", "--json").stdout, &rec)
	if len(rec.Incomplete) != 0 {
		t.Errorf("the journal still lists incomplete operations: %v", rec.Incomplete)
	}
	live, archived := f.docFacts()
	var status struct{ Promoted, Archived int }
	decodeJSON(t, "intermem status --json", f.must("intermem", "status", "--json").stdout, &status)
	if status.Promoted != len(live) || status.Archived != len(archived) {
		t.Errorf("status --json reports %d promoted and %d archived; the documents mark %d and archive %d",
			status.Promoted, status.Archived, len(live), len(archived))
	}
	var arch struct{ Archived []struct{ ID string } }
	decodeJSON(t, "intermem archived --json", f.must("intermem", "archived", "--json").stdout, &arch)
	var ids []string
	for _, a := range arch.Archived {
		ids = append(ids, a.ID)
	}
	sort.Strings(ids)
	if strings.Join(ids, ",") != strings.Join(archived, ",") {
		t.Errorf("archived --json lists %v; the archive holds %v", ids, archived)
	}
}

// startAndKill starts cmd, sends SIGKILL after delay, and reports whether
// the process had already exited by itself (successfully) by then.
func startAndKill(t *testing.T, f *fixture, cmdline []string, delay time.Duration) (exited bool, output string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, cmdline[0]), cmdline[1:]...)
	cmd.Dir = f.root
	cmd.Env = f.env()
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(delay)
	defer timer.Stop()
	var err error
	select {
	case err = <-done:
	case <-timer.C:
		_ = cmd.Process.Signal(syscall.SIGKILL) // fails only if it has just exited
		err = <-done
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return true, buf.String()
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			return false, buf.String()
		}
		t.Fatalf("%v failed by itself: %v\n%s", cmdline, err, buf.String())
	default:
		t.Fatalf("%v: %v", cmdline, err)
	}
	return false, ""
}

// allowedStates maps every tree path to the content hashes it may have at
// a kill: its before and after states and, for the files an interrupted
// operation changes, every state between its journaled steps. "" stands
// for "absent".
func allowedStates(f *fixture, ref *kindRef, ops []*journal.Op) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	add := func(path, h string) {
		if out[path] == nil {
			out[path] = map[string]bool{}
		}
		out[path][h] = true
	}
	for path := range union(ref.before, ref.after) {
		add(path, stateHash(ref.before, path))
		add(path, stateHash(ref.after, path))
	}
	for _, op := range ops {
		for _, s := range op.Steps {
			path := treeKey(f, s.Path)
			if path == "" {
				f.t.Errorf("journal step %s %s is outside the project and the memory dir", s.Action, s.Path)
				continue
			}
			add(path, s.Before)
			add(path, s.After)
		}
	}
	return out
}

// treeKey maps an absolute path to its key in fixture.tree().
func treeKey(f *fixture, abs string) string {
	for prefix, base := range map[string]string{"proj": f.root, "mem": f.memDir} {
		if rel, err := filepath.Rel(base, abs); err == nil && !strings.HasPrefix(rel, "..") {
			return prefix + "/" + filepath.ToSlash(rel)
		}
	}
	return ""
}

func stateHash(tree map[string]string, path string) string {
	body, ok := tree[path]
	if !ok {
		return ""
	}
	return journal.Hash([]byte(body))
}

func union[V any, W any](a map[string]V, b map[string]W) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

func isJournalTemp(path string) bool {
	base := filepath.Base(path)
	return strings.HasPrefix(base, ".") && strings.Contains(base, ".intermem-") && strings.HasSuffix(base, ".tmp")
}

// diffTrees fails with every path whose bytes differ from want.
func diffTrees(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	if hashTree(got) == hashTree(want) {
		return
	}
	for path := range union(got, want) {
		g, gok := got[path]
		w, wok := want[path]
		switch {
		case !wok:
			t.Errorf("%s: %s exists but should not:\n%s", what, path, g)
		case !gok:
			t.Errorf("%s: %s is missing; want:\n%s", what, path, w)
		case g != w:
			t.Errorf("%s: %s differs:\n--- got\n%s\n--- want\n%s", what, path, g, w)
		}
	}
}
