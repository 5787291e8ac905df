package snapshot

import (
	"fmt"
	"os"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/store"
)

// TestSeenGrowthStops: every session keeps a seen bucket with a key per
// entry, so the store grew with every session; with at most
// store.KeepSeen sessions' buckets kept (the least recently active go
// when a session begins), the store stops growing: after as many sessions
// again it is no larger, every entry still counts every session, and the
// latest sessions' buckets are the ones kept.
func TestSeenGrowthStops(t *testing.T) {
	m := newMemDir(t)
	var b strings.Builder
	b.WriteString("# Memory\n")
	for i := range 1000 {
		fmt.Fprintf(&b, "- Fact number %d about the ledger and its cursor, long enough to be one.\n", i)
	}
	m.write("MEMORY.md", b.String())
	size := func() int64 {
		st, err := os.Stat(m.s.Path)
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	buckets := func() []string {
		var ids []string
		m.s.View(func(tx *bolt.Tx) error {
			return tx.Bucket(store.BucketSeen).ForEachBucket(func(k []byte) error {
				ids = append(ids, string(k))
				return nil
			})
		})
		return ids
	}
	const sessions = 4 * store.KeepSeen
	var at2, at4 int64
	for i := range sessions {
		id := fmt.Sprintf("s%03d", i)
		if pr := m.pass(id, Pass{}); pr.Entries != 1000 {
			t.Fatalf("session %s counted %d entries, want 1000", id, pr.Entries)
		}
		if pr := m.pass(id, Pass{}); pr.Entries != 0 {
			t.Fatalf("session %s's second turn counted %d entries again", id, pr.Entries)
		}
		if n := len(buckets()); n > store.KeepSeen {
			t.Fatalf("after session %s: %d seen buckets, want at most %d", id, n, store.KeepSeen)
		}
		switch i + 1 {
		case 2 * store.KeepSeen:
			at2 = size()
		case sessions:
			at4 = size()
		}
	}
	t.Logf("store after %d sessions: %d KB, after %d: %d KB", 2*store.KeepSeen, at2>>10, sessions, at4>>10)
	if at4 > at2 {
		t.Errorf("the store grew from %d to %d bytes over the last %d sessions", at2, at4, sessions-2*store.KeepSeen)
	}
	got := buckets()
	if len(got) != store.KeepSeen || got[0] != fmt.Sprintf("s%03d", sessions-store.KeepSeen) {
		t.Errorf("seen buckets kept: %v, want the latest %d sessions'", got, store.KeepSeen)
	}
	for _, n := range m.sessions() {
		if n != sessions {
			t.Fatalf("an entry counts %d sessions, want %d", n, sessions)
		}
	}
}

// TestSeenResumedAfterPrune: a session whose seen bucket was pruned while
// it was idle, and which resumes (claude --resume), counted its entries
// when it was active: counting them again would add a session that never
// was. Only an entry first seen after its last activity counts for it.
func TestSeenResumedAfterPrune(t *testing.T) {
	m := newMemDir(t)
	m.write("MEMORY.md", "# Memory\n- The ledger's cursor is kept in the store.\n")
	m.pass("old", Pass{})
	for i := range store.KeepSeen + store.KeepSeen/4 {
		m.pass(fmt.Sprintf("s%03d", i), Pass{})
	}
	var gone bool
	m.s.View(func(tx *bolt.Tx) error {
		gone = tx.Bucket(store.BucketSeen).Bucket([]byte("old")) == nil
		return nil
	})
	if !gone {
		t.Fatal("the idle session's seen bucket was not pruned; the test sets nothing up")
	}
	const sessions = 1 + store.KeepSeen + store.KeepSeen/4
	if got := m.sessions()["The ledger's cursor is kept in the store."]; got != sessions {
		t.Fatalf("before the resume: %d sessions, want %d", got, sessions)
	}
	m.write("MEMORY.md", "# Memory\n- The ledger's cursor is kept in the store.\n- Hooks exit 0 whatever happens.\n")
	m.pass("old", Pass{})
	m.pass("old", Pass{})
	got := m.sessions()
	if n := got["The ledger's cursor is kept in the store."]; n != sessions {
		t.Errorf("the resumed session counted an entry it had counted before: %d sessions, want %d", n, sessions)
	}
	if n := got["Hooks exit 0 whatever happens."]; n != 1 {
		t.Errorf("an entry new since the session's last activity: %d sessions, want 1", n)
	}
}
