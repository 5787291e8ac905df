package proof

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/store"
)

// hookRun is one hook process and what it did.
type hookRun struct {
	event   string
	session string
	code    int
	stdout  string
	stderr  string
	wall    time.Duration
}

// allMemoryIDs lists every entry of the fixture's auto-memory, pointers
// included: what a snapshot records.
func allMemoryIDs(t *testing.T, f *fixture) map[string]bool {
	t.Helper()
	d, err := automem.Scan(f.memDir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, e := range d.Entries() {
		out[e.ID] = true
	}
	return out
}

// clipLog keeps a log excerpt readable in the test output.
func clipLog(b []byte) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 12 {
		lines = append(lines[:12], fmt.Sprintf("… %d more lines", len(lines)-12))
	}
	return "    " + strings.Join(lines, "\n    ")
}

// TestLoad fires INTERMEM_PROOF_LOAD (default 16) concurrent streams of
// real hook processes (intermem-snapshot for Stop and SessionEnd,
// intermem-inject for SessionStart) across 4 session ids, each stream
// firing INTERMEM_PROOF_LOAD_ROUNDS (default 6) hooks, while
// intermem-synthesize apply prunes the project's auto-memory and
// intermem sweep runs again and again. Before every snapshot the stream
// moves MEMORY.md's modification time (same bytes), so every Stop takes the
// writing path rather than the "nothing changed" shortcut. When the load is
// over each session ends once more, and its last observation is of the
// memory as the apply left it, which the test knows exactly.
//
// It asserts: every hook exits 0; Stop and SessionEnd print nothing;
// SessionStart prints nothing or one valid JSON object; no hook runs past
// its hooks.json timeout (worst and p95 are logged, never asserted); the
// apply and every sweep succeed; after one more writer ingests the spool,
// nothing is left in it or set aside, status --json counts all 7 sessions
// (3 before the load, 4 under it) and the memory's entries as stable, and
// the store holds, for each load session, every entry of its last
// observation, with each entry's session count exact; the store passes
// bbolt's consistency check.
func TestLoad(t *testing.T) {
	t.Parallel()
	workers := envInt(t, "INTERMEM_PROOF_LOAD", 16)
	if workers < 4 {
		t.Fatalf("INTERMEM_PROOF_LOAD=%d: want at least 4 (one stream per session)", workers)
	}
	perWorker := envInt(t, "INTERMEM_PROOF_LOAD_ROUNDS", 6)
	timeouts := hookTimeouts(t)

	f := promoteFixture(t, "tiered")
	f.sessions(3)
	const priorSessions, nSessions = 3, 4
	spec, _ := approveSpec(t, f.planJSON(), "Keep this one")
	before := allMemoryIDs(t, f)
	// Facts that appear once the plan is made: the load sessions alone see them.
	f.write(filepath.Join(f.memDir, "load.md"), "# Load\n\n## Queues\n- The loader batches writes.\n- Queues drain on shutdown.\n- Retries back off to 30 s.\n")
	fresh := map[string]bool{}
	for id := range allMemoryIDs(t, f) {
		if !before[id] {
			fresh[id] = true
		}
	}
	if len(fresh) != 3 {
		t.Fatalf("load.md adds %d entries, want 3", len(fresh))
	}
	var ids [nSessions]string
	for i := range ids {
		ids[i] = fmt.Sprintf("10ad%04d-5e6f-4a2b-9c1d-0000000000%02d", i, i)
	}

	var (
		mu      sync.Mutex
		runs    []hookRun
		started atomic.Int64
		mtime   atomic.Int64
		wg      sync.WaitGroup
	)
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	fire := func(ev, bin, file, session string, touch bool) {
		if touch {
			// New mtime, same bytes: the fingerprint changes, the entries
			// do not. (The apply may be renaming MEMORY.md right now; the
			// touch then lands on one of its two versions.)
			at := base.Add(time.Duration(mtime.Add(1)) * time.Second)
			_ = os.Chtimes(filepath.Join(f.memDir, "MEMORY.md"), at, at)
		}
		cmd := exec.Command(filepath.Join(binDir, bin))
		cmd.Dir = f.root
		cmd.Env = f.env()
		cmd.Stdin = strings.NewReader(payload(t, file, session, f.root))
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		t0 := time.Now()
		err := cmd.Start()
		if err == nil {
			started.Add(1)
			err = cmd.Wait()
		}
		run := hookRun{event: ev, session: session, wall: time.Since(t0), stdout: out.String(), stderr: errb.String()}
		if ee, ok := err.(*exec.ExitError); ok {
			run.code = ee.ExitCode()
		} else if err != nil {
			t.Errorf("%s: %v", bin, err)
			run.code = -1
		}
		mu.Lock()
		runs = append(runs, run)
		mu.Unlock()
	}
	events := []struct{ event, bin, file string }{
		{"Stop", "intermem-snapshot", "Stop.2.1.197.json"},
		{"SessionStart", "intermem-inject", "SessionStart.startup.interactive.json"},
		{"Stop", "intermem-snapshot", "Stop.after-tool-use.json"},
		{"SessionEnd", "intermem-snapshot", "SessionEnd.prompt_input_exit.json"},
	}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for r := 0; r < perWorker; r++ {
				ev := events[(w+r)%len(events)]
				fire(ev.event, ev.bin, ev.file, ids[w%nSessions], ev.bin == "intermem-snapshot")
			}
		}(w)
	}

	// Watch the spool: how many observations took the busy-store path.
	spoolSeen := map[string]bool{}
	spoolDone := make(chan struct{})
	spoolStopped := make(chan struct{})
	go func() {
		defer close(spoolStopped)
		dir := filepath.Join(f.root, ".intermem", "spool")
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				if strings.HasSuffix(e.Name(), ".json") {
					spoolSeen[e.Name()] = true
				}
			}
			select {
			case <-spoolDone:
				return
			case <-tick.C:
			}
		}
	}()

	// The writers run while the hooks do: the apply once, as soon as a
	// first wave of hooks is running, then sweeps until the last hook
	// has started.
	var sweeps int
	writersDone := make(chan struct{})
	go func() {
		defer close(writersDone)
		for started.Load() < int64(workers) {
			time.Sleep(time.Millisecond)
		}
		r := f.run("", nil, "intermem-synthesize", "apply", "--approve", spec, "--import-agents")
		if r.code != 0 {
			t.Errorf("apply under load: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		for {
			r := f.run("", nil, "intermem", "sweep")
			if r.code != 0 {
				t.Errorf("sweep under load: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			sweeps++
			if started.Load() >= int64(workers*perWorker) {
				return
			}
		}
	}()
	wg.Wait()
	<-writersDone
	close(spoolDone)
	<-spoolStopped
	spooled := countFiles(t, filepath.Join(f.root, ".intermem", "spool"), ".json")
	// Each session ends once more, after the apply: its last observation.
	for _, id := range ids {
		fire("SessionEnd", "intermem-snapshot", "SessionEnd.other.sigterm.json", id, false)
	}

	// Every hook behaved.
	byEvent := map[string][]time.Duration{}
	var all []time.Duration
	outputs := 0
	for _, r := range runs {
		if r.code != 0 {
			t.Errorf("%s hook of %s exited %d\nstdout: %s\nstderr: %s", r.event, r.session, r.code, r.stdout, r.stderr)
		}
		if r.event == "SessionStart" {
			if err := checkSessionStartOutput(r.stdout); err != nil {
				t.Errorf("SessionStart hook of %s printed invalid output (%v):\n%s", r.session, err, r.stdout)
			}
			if r.stdout != "" {
				outputs++
			}
		} else if r.stdout != "" {
			t.Errorf("%s hook of %s printed on stdout: %q", r.event, r.session, r.stdout)
		}
		if r.wall > timeouts[r.event] {
			t.Errorf("%s hook of %s took %v, past its hooks.json timeout of %v", r.event, r.session, r.wall, timeouts[r.event])
		}
		byEvent[r.event] = append(byEvent[r.event], r.wall)
		all = append(all, r.wall)
	}
	if want := workers*perWorker + nSessions; len(runs) != want {
		t.Fatalf("%d hook runs, want %d", len(runs), want)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	t.Logf("load: %d hook processes from %d concurrent streams over %d sessions, while 1 apply and %d sweeps ran; %d of the SessionStart hooks injected context",
		len(runs), workers, nSessions, sweeps, outputs)
	for _, ev := range []string{"Stop", "SessionEnd", "SessionStart"} {
		d := byEvent[ev]
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		t.Logf("  %-12s n=%3d  p50 %6v  p95 %6v  worst %6v  (hooks.json timeout %v)", ev, len(d),
			percentile(d, 50).Round(time.Millisecond), percentile(d, 95).Round(time.Millisecond), d[len(d)-1].Round(time.Millisecond), timeouts[ev])
	}
	t.Logf("  all hooks    p95 %v, worst %v; at least %d observations went through the spool (store busy), %d were still there when the load ended",
		percentile(all, 95).Round(time.Millisecond), all[len(all)-1].Round(time.Millisecond), len(spoolSeen), spooled)

	// One more writer ingests whatever is still spooled.
	f.must("intermem-synthesize", "plan")
	if n := countFiles(t, filepath.Join(f.root, ".intermem", "spool"), ".json"); n != 0 {
		t.Errorf("%d spooled observations were not ingested by the next writer", n)
	}
	if n := countFiles(t, filepath.Join(f.root, ".intermem", "spool", "bad"), ""); n != 0 {
		t.Errorf("%d spooled observations were set aside as unreadable", n)
	}

	// No observation lost.
	after := allMemoryIDs(t, f)
	var st struct{ Sessions, Entries, Stable, Recent, Volatile, Unseen int }
	decodeJSON(t, "status --json", f.must("intermem", "status", "--json").stdout, &st)
	if st.Sessions != priorSessions+nSessions {
		t.Errorf("status counts %d sessions, want %d (%d before the load, %d under it)", st.Sessions, priorSessions+nSessions, priorSessions, nSessions)
	}
	// What the apply left: "Keep this one" (seen in all 7 sessions) and
	// load.md's three facts (seen in the 4 load sessions): all stable.
	if len(after) != 4 || st.Entries != 4 || st.Stable != 4 {
		t.Errorf("after the load memory holds %d entries and status reports %+v; want 4 entries, all stable", len(after), st)
	}
	seen := map[string]map[string]bool{}
	sessions := map[string]int{}
	f.view(func(tx *bolt.Tx) error {
		root := tx.Bucket(store.BucketSeen)
		for _, id := range ids {
			var rec store.Session
			if ok, err := store.Get(tx, store.BucketSessions, id, &rec); err != nil || !ok {
				t.Errorf("session %s is not in the store (%v)", id, err)
			} else if !rec.Ended {
				t.Errorf("session %s had SessionEnd hooks but is not marked ended", id)
			}
			seen[id] = map[string]bool{}
			if b := root.Bucket([]byte(id)); b != nil {
				b.ForEach(func(k, _ []byte) error {
					seen[id][string(k)] = true
					return nil
				})
			}
		}
		for e := range after {
			if rec, ok, _ := store.GetSeen(tx, e); ok {
				sessions[e] = rec.Sessions
			}
		}
		return nil
	})
	for _, id := range ids {
		for e := range after {
			if !seen[id][e] {
				t.Errorf("session %s's last observation saw entry %s, but the store does not have it", id, e)
			}
		}
		for e := range seen[id] {
			if !before[e] && !fresh[e] {
				t.Errorf("session %s is recorded as seeing %s, which its memory never held", id, e)
			}
		}
	}
	for e := range after {
		want := nSessions
		if before[e] {
			want += priorSessions
		}
		if sessions[e] != want {
			t.Errorf("entry %s was seen in %d sessions, the store says %d", e, want, sessions[e])
		}
	}

	// The file is consistent.
	db, err := store.Open(f.storePath(), store.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Check(); err != nil {
		t.Errorf("bbolt consistency check: %v", err)
	}
	if log, err := os.ReadFile(filepath.Join(f.root, ".intermem", "log")); err == nil && len(log) > 0 {
		t.Logf("  .intermem/log after the load (%d lines):\n%s", bytes.Count(log, []byte("\n")), clipLog(log))
	}
}

// TestSpoolCountsASessionOnce: observations a busy store sends to the
// spool count like any other. Three Stop hooks of one session spooled
// while a writer holds the store, then ingested together by the next
// writer, are one session, not three: after one earlier session the
// entries have been seen in 2 sessions and are not stable (3), and the
// plan offers nothing.
func TestSpoolCountsASessionOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, map[string]string{
		"MEMORY.md": "# Memory\n\n## Build\n- Run make test before pushing.\n- The CI image pins Go 1.26.\n",
	})
	f.sessions(1)
	func() {
		db, err := bolt.Open(f.storePath(), 0o600, &bolt.Options{Timeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for i := 0; i < 3; i++ {
			at := time.Date(2026, 10, 1, 0, 0, i, 0, time.UTC)
			os.Chtimes(filepath.Join(f.memDir, "MEMORY.md"), at, at) // each turn sees a new fingerprint
			if r := f.run(payload(t, "Stop.2.1.197.json", "one-session", f.root), nil, "intermem-snapshot"); r.code != 0 || r.stdout != "" {
				t.Fatalf("Stop hook: exit %d, stdout %q", r.code, r.stdout)
			}
		}
	}()
	if n := countFiles(t, filepath.Join(f.root, ".intermem", "spool"), ".json"); n != 3 {
		t.Fatalf("%d observations spooled while the store was held, want 3", n)
	}
	plan := f.planJSON() // the next writer ingests the spool
	if n := countFiles(t, filepath.Join(f.root, ".intermem", "spool"), ".json"); n != 0 {
		t.Fatalf("%d spooled observations left after the next writer", n)
	}
	var st struct{ Sessions, Entries, Stable int }
	decodeJSON(t, "status --json", f.must("intermem", "status", "--json").stdout, &st)
	if st.Sessions != 2 || st.Entries != 2 || st.Stable != 0 {
		t.Errorf("status after 2 sessions: %+v; want 2 sessions, 2 entries, none stable", st)
	}
	f.view(func(tx *bolt.Tx) error {
		return store.EachSeen(tx, func(e *store.Entry) error {
			if e.Sessions != 2 {
				t.Errorf("entry %s (%q) counts %d sessions; it was seen in 2", e.ID, e.Preview, e.Sessions)
			}
			return nil
		})
	})
	if c := candidates(plan); len(c) != 0 {
		t.Errorf("after 2 sessions the plan offers %q as stable", c)
	}
}
