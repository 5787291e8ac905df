package snapshot

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/store"
)

// A session's first turn over an unchanged memory counts the session in
// every entry without rewriting any entry's record: the count is the
// entry's sighting (store.BucketSightings). Before, the turn read, decoded,
// re-encoded and put every record — the whole entries bucket dirty in one
// transaction, 40 to 47 MB of peak RSS at 20,000 entries. bbolt copies on
// write: a bucket any of whose pages changed gets a new root page, so an
// unchanged root says no record was put.
func TestFirstTurnRewritesNoRecord(t *testing.T) {
	m := newMemDir(t)
	m.write("MEMORY.md", "# Memory\n- The index fact.\n")
	for f := range 20 {
		var b strings.Builder
		fmt.Fprintf(&b, "# Topic %d\n", f)
		for i := range 100 {
			fmt.Fprintf(&b, "- Fact %d of topic %d: the ledger's cursor starts at one.\n", i, f)
		}
		m.write(fmt.Sprintf("topic_%02d.md", f), b.String())
	}
	if pr := m.pass("A", Pass{}); pr.Entries != 2001 || !pr.Complete {
		t.Fatalf("session A's first turn counted %d entries (complete %v), want 2001", pr.Entries, pr.Complete)
	}
	root := func() (pgid uint64) {
		m.s.View(func(tx *bolt.Tx) error {
			pgid = uint64(tx.Bucket(store.BucketEntries).Root())
			return nil
		})
		return pgid
	}
	before := root()
	writes := func() int64 { st := m.s.DB.Stats(); return st.TxStats.GetWrite() }
	written := writes()
	if pr := m.pass("B", Pass{}); pr.Entries != 2001 || pr.Read != 0 {
		t.Fatalf("session B's first turn counted %d entries and read %d files, want 2001 and none", pr.Entries, pr.Read)
	}
	t.Logf("session B's first turn wrote %d pages", writes()-written)
	if after := root(); after != before {
		t.Errorf("session B's first turn rewrote entry records (the entries bucket's root moved from page %d to %d)", before, after)
	}
	for preview, n := range m.sessions() {
		if n != 2 {
			t.Fatalf("%q counts %d sessions after A and B, want 2", preview, n)
		}
	}
	m.s.View(func(tx *bolt.Tx) error {
		e, ok, err := store.GetSeen(tx, mustID(t, m, "- The index fact."))
		if err != nil || !ok || !e.LastSeen.Equal(m.at) || !e.FirstSeen.Equal(m.at.Add(-time.Minute)) || e.FirstSession != "A" {
			t.Errorf("the index fact: %+v, %v, %v; want first seen by A a minute before B's turn at %s", e, ok, err, m.at)
		}
		return nil
	})
}

// mustID returns the id of the one entry whose text is line.
func mustID(t *testing.T, m *memDir, line string) string {
	t.Helper()
	obs, err := Observe(m.dir, "x", "Stop", m.at, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range obs.Entries {
		if "- "+e.preview() == line {
			return e.ID
		}
	}
	t.Fatalf("no entry %q", line)
	return ""
}

// A store of schema 4 (its counts in its records, as that build wrote
// them) keeps them through the upgrade, and the next session counts on
// from them: on an unchanged file (its state's fingerprint holds) and on
// a changed one (read again).
func TestUpgradeCountsOn(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "memory")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	m := &memDir{t: t, dir: dir, at: time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)}
	m.write("MEMORY.md", "# Memory\n- Kept fact.\n")
	m.write("ledger.md", "# Ledger\n- The cursor is 1-based.\n")
	l, err := List(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	fps := map[string]string{}
	for _, f := range l.Files {
		fps[f.Name] = f.FP
	}
	kept, cursor := mustID(t, m, "- Kept fact."), mustID(t, m, "- The cursor is 1-based.")
	m.write("ledger.md", "# Ledger\n- The cursor is 1-based.\n- Appended since.\n") // changed since the old build read it

	path := filepath.Join(root, "intermem.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	put := func(tx *bolt.Tx, bucket []byte, k string, v any) {
		b, err := tx.CreateBucketIfNotExists(bucket)
		if err != nil {
			t.Fatal(err)
		}
		raw, ok := v.(string)
		if !ok {
			j, _ := json.Marshal(v)
			raw = string(j)
		}
		if err := b.Put([]byte(k), []byte(raw)); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		put(tx, store.BucketMeta, "schema", "4")
		put(tx, store.BucketMeta, "id", "0123456789abcdef0123456789abcdef")
		put(tx, store.BucketEntries, kept, `{"id":"`+kept+`","kind":"fact","file":"MEMORY.md","section":"Memory","preview":"Kept fact.","first_seen":"2026-10-01T09:00:00Z","last_seen":"2026-10-05T09:00:00Z","sessions":5,"last_session":"old5","first_session":"old1"}`)
		put(tx, store.BucketEntries, cursor, `{"id":"`+cursor+`","kind":"fact","file":"ledger.md","section":"Ledger","preview":"The cursor is 1-based.","first_seen":"2026-10-02T09:00:00Z","last_seen":"2026-10-04T09:00:00Z","sessions":2,"last_session":"old4","first_session":"old2"}`)
		put(tx, store.BucketFiles, "MEMORY.md", fmt.Sprintf(`{"at":"2026-10-05T09:00:00Z","ids":[%q],"fp":%q}`, kept, fps["MEMORY.md"]))
		put(tx, store.BucketFiles, "ledger.md", fmt.Sprintf(`{"at":"2026-10-05T09:00:00Z","ids":[%q],"fp":%q}`, cursor, fps["ledger.md"]))
		put(tx, store.BucketSessions, "old5", `{"id":"old5","first":"2026-10-05T09:00:00Z","last":"2026-10-05T09:00:00Z","observations":1,"synced":"2026-10-05T09:00:00Z"}`)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	if m.s, err = store.Open(path, store.Options{NoSync: true}); err != nil {
		t.Fatal(err)
	}
	defer m.s.Close()
	if pr := m.pass("new", Pass{}); pr.Read != 1 || !pr.Complete {
		t.Fatalf("the new session's turn read %d files (complete %v), want ledger.md alone", pr.Read, pr.Complete)
	}
	got := m.sessions()
	want := map[string]int{"Kept fact.": 6, "The cursor is 1-based.": 3, "Appended since.": 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("sessions after the upgrade and a new session: %v, want %v", got, want)
	}
	m.s.View(func(tx *bolt.Tx) error {
		e, _, _ := store.GetSeen(tx, cursor)
		if !e.FirstSeen.Equal(time.Date(2026, 10, 2, 9, 0, 0, 0, time.UTC)) || !e.LastSeen.Equal(m.at) || e.FirstSession != "old2" {
			t.Errorf("the cursor fact after the upgrade: first %s, last %s, first session %q; want 2026-10-02 09:00, %s, old2", e.FirstSeen, e.LastSeen, m.at, e.FirstSession)
		}
		return nil
	})
}

// A sighting that is not one (damage) does not stop the Stop hook at every
// turn: its entry's file is read again and the entry counted afresh.
func TestDamagedSightingCountsAfresh(t *testing.T) {
	m := newMemDir(t)
	m.write("MEMORY.md", "# Memory\n- First fact.\n- Second fact.\n")
	m.pass("A", Pass{})
	id := mustID(t, m, "- First fact.")
	if err := m.s.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(store.BucketSightings).Put([]byte(id), []byte("bad"))
	}); err != nil {
		t.Fatal(err)
	}
	if pr := m.pass("B", Pass{}); pr.Read != 1 || pr.Entries != 2 {
		t.Fatalf("session B's turn read %d files and counted %d entries, want MEMORY.md read again and both counted", pr.Read, pr.Entries)
	}
	if got, want := fmt.Sprint(m.sessions()), fmt.Sprint(map[string]int{"First fact.": 1, "Second fact.": 2}); got != want {
		t.Errorf("sessions %s, want %s", got, want)
	}
}
