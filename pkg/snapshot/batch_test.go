package snapshot

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/source"
	"github.com/intermem/intermem/pkg/source/automemory"
	"github.com/intermem/intermem/pkg/store"
)

// fill writes n memory files of a few facts each, and an index naming
// one of them.
func (m *memDir) fill(n int, round string) {
	m.t.Helper()
	m.write("MEMORY.md", "# Memory\n- The index says "+round+".\n- [Topic 0](topic_000.md) — the first topic\n")
	for i := range n {
		var b strings.Builder
		fmt.Fprintf(&b, "# Topic %d\n", i)
		for j := range 3 {
			fmt.Fprintf(&b, "- Fact %d of topic %d, %s.\n", j, i, round)
		}
		m.write(fmt.Sprintf("topic_%03d.md", i), b.String())
	}
}

// txid is the store's last committed transaction.
func (m *memDir) txid() int {
	m.t.Helper()
	var id int
	m.s.View(func(tx *bolt.Tx) error { id = tx.ID(); return nil })
	return id
}

// storePass runs one turn of session through SyncStore with batch b, the
// clock a minute on, as Hook does.
func (m *memDir) storePass(session string, p Pass, b Batch) Progress {
	m.t.Helper()
	l := m.next(session)
	p.Session, p.Event, p.At, p.Logf = session, "Stop", m.at, m.logf
	pr, err := SyncStore(m.s, l, p, b)
	if err != nil {
		m.t.Fatal(err)
	}
	return pr
}

// digest is what a pass leaves in the store, whatever its clock: every
// entry's preview and count, every file's state (its entries, the
// sub-folder files it names, whether its fingerprint is the file's now),
// every stored parse (a hash, and whether its fingerprint is the file's
// now), the sub-folder list, and whether each session's last pass
// completed with the listing's fingerprint.
func (m *memDir) digest(sessions ...string) string {
	m.t.Helper()
	l, err := List(m.dir, nil)
	if err != nil {
		m.t.Fatal(err)
	}
	fps := map[string]string{}
	for _, f := range l.Files {
		fps[safeName(f.Name)] = f.FP
	}
	var lines []string
	m.s.View(func(tx *bolt.Tx) error {
		_ = store.EachSeen(tx, func(e *store.Entry) error {
			lines = append(lines, fmt.Sprintf("entry %s %s %s sessions=%d", e.ID, e.File, e.Preview, e.Sessions))
			return nil
		})
		_ = store.Each(tx, store.BucketFiles, func(k string, st *store.FileState) error {
			if strings.HasPrefix(k, "\x00") {
				return nil
			}
			ids := append([]string(nil), st.IDs...)
			sort.Strings(ids)
			lines = append(lines, fmt.Sprintf("file %s ids=%v sub=%v current=%t racy=%t", k, ids, st.Sub, st.FP == fps[k], st.Racy))
			return nil
		})
		store.Catalog(tx).Records(automemory.Name, func(path string, fp source.Fingerprint, blob []byte) {
			cur := false
			if fi, err := os.Stat(filepath.Join(m.dir, strings.TrimPrefix(path, automemory.Prefix))); err == nil {
				cur = source.FingerprintOf(fi) == fp
			}
			lines = append(lines, fmt.Sprintf("parse %s %x current=%t", path, sha256.Sum256(blob), cur))
		})
		lines = append(lines, fmt.Sprintf("subs %v", Subs(tx)))
		for _, id := range sessions {
			var sess store.Session
			_, _ = store.Get(tx, store.BucketSessions, id, &sess)
			lines = append(lines, fmt.Sprintf("session %s whole=%t sweep=%v", id, sess.Fingerprint == l.FP, sess.Sweep != nil))
		}
		return nil
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// A hook's pass over many changed files commits in batches (SyncStore):
// each transaction reads at most Batch.Files of them, and the pass
// leaves the store as one pass in one transaction leaves it.
func TestSyncStoreCommitsInBatches(t *testing.T) {
	const files, batch = 40, 8
	one, batched := newMemDir(t), newMemDir(t)
	for _, m := range []*memDir{one, batched} {
		m.fill(files, "first")
		m.pass("A", Pass{})
		m.fill(files, "second") // every file changed
	}
	if pr := one.pass("A", Pass{}); pr.Read != files+1 || !pr.Complete {
		t.Fatalf("one transaction: %+v, want %d files read", pr, files+1)
	}
	before := batched.txid()
	pr := batched.storePass("A", Pass{}, Batch{Files: batch})
	commits := batched.txid() - before
	// 41 files read (the index too), 8 a transaction: 6 transactions.
	if pr.Read != files+1 || !pr.Complete || pr.Stopped || pr.Commits != 5 || commits != 6 {
		t.Fatalf("batched: %+v and %d transactions committed, want %d files read in 6 transactions", pr, commits, files+1)
	}
	if got, want := batched.digest("A"), one.digest("A"); got != want {
		t.Fatalf("the batched pass left\n%s\nwant, as one transaction leaves it,\n%s", got, want)
	}
	// A new session's first turn marks every entry (nothing read): its
	// marks are batched by Batch.Marks.
	before = batched.txid()
	pr = batched.storePass("B", Pass{}, Batch{Files: batch, Marks: 50})
	if commits := batched.txid() - before; pr.Read != 0 || pr.Entries != 3*files+2 || !pr.Complete || commits < (3*files+2)/50+1 {
		t.Fatalf("a new session's turn: %+v and %d transactions, want %d entries marked in at least %d", pr, commits, 3*files+2, (3*files+2)/50+1)
	}
}

// A pass cut short between two batches — at its deadline, or by a command
// waiting for the store — is resumed by the next turns where it stopped,
// and they leave the store as a pass never cut leaves it.
func TestSyncStoreCutShortResumes(t *testing.T) {
	defer func(n int) { minWork = n }(minWork)
	const files = 40
	for _, cut := range []string{"deadline", "waiting"} {
		t.Run(cut, func(t *testing.T) {
			whole, m := newMemDir(t), newMemDir(t)
			for _, d := range []*memDir{whole, m} {
				d.fill(files, "first")
				d.storePass("A", Pass{}, Batch{Files: 8})
				d.fill(files, "second")
			}
			if pr := whole.storePass("A", Pass{}, Batch{Files: 8}); !pr.Complete || pr.Read != files+1 {
				t.Fatalf("the uncut pass: %+v", pr)
			}
			p := Pass{}
			var waiting *os.File
			switch cut {
			case "deadline":
				minWork = 12
				p.Deadline = time.Now().Add(-time.Second)
			case "waiting":
				// A command announces that it waits for the store, as
				// store.Open does: the pass ends at its first commit.
				f, err := os.OpenFile(filepath.Join(filepath.Dir(m.dir), "intermem.db.wait"), os.O_RDWR|os.O_CREATE, 0o600)
				if err != nil {
					t.Fatal(err)
				}
				if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
					t.Fatal(err)
				}
				waiting = f
			}
			pr := m.storePass("A", p, Batch{Files: 5})
			if waiting != nil {
				waiting.Close() // the command had its turn
			}
			want := map[string]int{"deadline": 12, "waiting": 5}[cut]
			if !pr.Stopped || pr.Complete || pr.Read != want {
				t.Fatalf("the cut pass: %+v, want it stopped after %d files", pr, want)
			}
			if sess := m.session("A"); sess.Sweep == nil || sess.Fingerprint != "" {
				t.Fatalf("after the cut: session %+v, want a sweep to resume and no fingerprint", sess)
			}
			// The next turns go on where it stopped: no file is read twice.
			read := pr.Read
			for turn := 0; !pr.Complete; turn++ {
				if turn > 10 {
					t.Fatal("the pass never completed")
				}
				pr = m.storePass("A", p, Batch{Files: 5})
				read += pr.Read
			}
			if read != files+1 {
				t.Fatalf("the turns read %d files in all, want each of the %d changed files once", read, files+1)
			}
			// The session's next turn finds the listing whole again.
			m.storePass("A", Pass{}, Batch{Files: 5})
			whole.storePass("A", Pass{}, Batch{Files: 5})
			if got, want := m.digest("A"), whole.digest("A"); got != want {
				t.Fatalf("the resumed pass left\n%s\nwant, as the uncut pass leaves it,\n%s", got, want)
			}
		})
	}
}

// The Stop hook's pass over a memory whose every file changed (a pull, a
// directory replaced) commits in batches of HookBatch.Entries entries
// read: counted by the store's transaction ids over the turns that bring
// the session up to date, more than one a turn (a turn does at least
// minWork files, 2,560 entries here, whatever its deadline).
func TestHookCommitsChangedFilesInBatches(t *testing.T) {
	const files, facts = 100, 40
	q := newQuietProject(t)
	write := func(round string) {
		for i := range files {
			var b strings.Builder
			fmt.Fprintf(&b, "# Topic %d\n", i)
			for j := range facts {
				fmt.Fprintf(&b, "- Fact %d of topic %d, %s.\n", j, i, round)
			}
			q.write(fmt.Sprintf("topic_%03d.md", i), b.String())
		}
	}
	write("first")
	q.settle("A")
	txid := func() int {
		var id int
		q.view(func(tx *bolt.Tx) error { id = tx.ID(); return nil })
		return id
	}
	write("second")
	before := txid()
	turns := 0
	for turns < 10 {
		logged, _ := os.ReadFile(q.log)
		q.turn("A", "Stop")
		turns++
		// Until a turn leaves nothing for the next.
		if b, _ := os.ReadFile(q.log); !bytes.Contains(b[min(len(logged), len(b)):], []byte("on the next turns")) {
			break
		}
	}
	if n := txid() - before; n <= turns {
		t.Fatalf("%d files of %d entries changed were brought up to date in %d transactions over %d turns, want more than one a turn (%d entries a transaction)", files, facts, n, turns, HookBatch.Entries)
	}
	seen := q.seen()
	for i := range files {
		if p := fmt.Sprintf("Fact %d of topic %d, second.", facts-1, i); seen[p] != 1 {
			b, _ := os.ReadFile(q.log)
			t.Fatalf("%q seen in %d sessions, want 1; %d turns; log:\n%s", p, seen[p], turns, b)
		}
	}
}

// A turn that counts entries already recorded — a new session's first
// turn after every memory file changed by a line counts every entry, and
// most were recorded before — holds their counts and writes them in key
// order, in transactions of their own (Counting in key order): a page of
// the sightings or of the session's seen marks is rewritten about once
// over the pass, as in one transaction, where each batch rewrote every
// page its files' entries fall on (random keys) and its commit mapped
// each again. The pass leaves the store as one transaction leaves it, and
// one cut short at a commit, its held counts not written, loses none and
// counts none twice.
func TestSyncStoreCountsInKeyOrder(t *testing.T) {
	const files, facts, batch = 40, 50, 4
	// nodes is how many nodes of the store's pages its transactions have
	// materialised (bbolt's TxStats): a node is materialised to be
	// written, and its commit rewrites its page.
	nodes := func(m *memDir) int64 {
		var n int64
		m.s.View(func(tx *bolt.Tx) error { st := tx.DB().Stats(); n = st.TxStats.GetNodeCount(); return nil })
		return n
	}
	fill := func(m *memDir, round string) {
		m.write("MEMORY.md", "# Memory\n- The index holds one fact.\n")
		for i := range files {
			var b strings.Builder
			fmt.Fprintf(&b, "# Topic %d\n", i)
			for j := range facts {
				fmt.Fprintf(&b, "- Fact %d of topic %d.\n", j, i)
			}
			fmt.Fprintf(&b, "- A note of topic %d, %s.\n", i, round)
			m.write(fmt.Sprintf("topic_%03d.md", i), b.String())
		}
	}
	one, batched, cut := newMemDir(t), newMemDir(t), newMemDir(t)
	for _, m := range []*memDir{one, batched, cut} {
		fill(m, "first")
		m.storePass("A", Pass{}, Batch{})
		fill(m, "second") // every file changed by a line
	}
	want := files*(facts+1) + 1
	before := nodes(one)
	if pr := one.storePass("B", Pass{}, Batch{}); pr.Entries != want || pr.Read != files+1 || !pr.Complete || pr.Commits != 0 {
		t.Fatalf("in one transaction: %+v, want %d entries marked", pr, want)
	}
	inOne := nodes(one) - before
	before = nodes(batched)
	pr := batched.storePass("B", Pass{}, Batch{Files: batch})
	inBatches := nodes(batched) - before
	if pr.Entries != want || pr.Read != files+1 || !pr.Complete || pr.Commits < files/batch {
		t.Fatalf("batched: %+v, want %d entries marked over at least %d commits", pr, want, files/batch)
	}
	// A batch's own writes (its 4 files' states and parses, their new
	// entries, the session) materialise about 20 nodes; its counts of
	// 200 entries at random, written with it, about 65 more: every page
	// of the sightings and of the session's seen marks, at each commit.
	if inBatches > inOne+40*int64(pr.Commits) {
		t.Fatalf("the batched pass materialised %d nodes in %d transactions, want at most 40 a commit more than the %d of one transaction", inBatches, pr.Commits+1, inOne)
	}
	if got, want := batched.digest("A", "B"), one.digest("A", "B"); got != want {
		t.Fatalf("the batched pass left\n%s\nwant, as one transaction leaves it,\n%s", got, want)
	}

	// Cut at its first commit by a command waiting for the store: the
	// counts it held are not written, and the next turns count them.
	f, err := os.OpenFile(filepath.Join(filepath.Dir(cut.dir), "intermem.db.wait"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
		t.Fatal(err)
	}
	pr = cut.storePass("B", Pass{}, Batch{Files: batch})
	f.Close()
	// Its files: MEMORY.md (its fact recorded before), then 3 topics,
	// whose notes are new.
	if !pr.Stopped || pr.Complete || pr.Read != batch || pr.Entries != batch-1 {
		t.Fatalf("the cut pass: %+v, want it stopped at its first commit with only the %d new entries of its files counted", pr, batch-1)
	}
	for turn := 0; !pr.Complete; turn++ {
		if turn > 20 {
			t.Fatal("the pass never completed")
		}
		pr = cut.storePass("B", Pass{}, Batch{Files: batch})
	}
	// The clocks as one pass more leaves them.
	one.storePass("B", Pass{}, Batch{})
	cut.storePass("B", Pass{}, Batch{})
	if got, want := cut.digest("A", "B"), one.digest("A", "B"); got != want {
		t.Fatalf("the resumed pass left\n%s\nwant, as the uncut pass leaves it,\n%s", got, want)
	}
}
