package snapshot

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/memlist"
	"github.com/intermem/intermem/pkg/redact"
	"github.com/intermem/intermem/pkg/store"
)

// turn runs one hook turn of session as Hook does: the session's sweep
// goes on from where the store says (Turn), and Sync records it.
func (m *memDir) turn(session string) (Progress, *Listing) {
	m.t.Helper()
	l := m.next(session)
	p := Pass{Session: session, Event: "Stop", At: m.at, Logf: m.logf}
	return m.sync(l, p), l
}

// next moves the clock a minute on and lists what session's next turn
// looks at: its sweep goes on from where the store says (Turn).
func (m *memDir) next(session string) *Listing {
	m.t.Helper()
	m.at = m.at.Add(time.Minute)
	var subs []string
	var sess store.Session
	m.s.View(func(tx *bolt.Tx) error {
		subs = Subs(tx)
		_, err := store.Get(tx, store.BucketSessions, session, &sess)
		return err
	})
	l, err := Turn(m.dir, subs, sess.Sweep)
	if err != nil {
		m.t.Fatal(err)
	}
	return l
}

// sync runs Sync over l in one write transaction.
func (m *memDir) sync(l *Listing, p Pass) Progress {
	m.t.Helper()
	var pr Progress
	if err := m.s.Update(func(tx *bolt.Tx) error {
		var err error
		pr, err = Sync(tx, l, p)
		return err
	}); err != nil {
		m.t.Fatal(err)
	}
	return pr
}

// logf keeps a pass's log lines.
func (m *memDir) logf(f string, a ...any) { m.log = append(m.log, fmt.Sprintf(f, a...)) }

// session reads a session's record.
func (m *memDir) session(id string) store.Session {
	m.t.Helper()
	var sess store.Session
	m.s.View(func(tx *bolt.Tx) error { _, err := store.Get(tx, store.BucketSessions, id, &sess); return err })
	return sess
}

// states returns the names of the files the store keeps a state of.
func (m *memDir) states() []string {
	m.t.Helper()
	var out []string
	m.s.View(func(tx *bolt.Tx) error {
		return store.Each(tx, store.BucketFiles, func(k string, _ *store.FileState) error {
			if !strings.HasPrefix(k, "\x00") {
				out = append(out, k)
			}
			return nil
		})
	})
	sort.Strings(out)
	return out
}

// smallChunks makes a turn read at most n directory entries.
func smallChunks(t *testing.T, n int) {
	old := memlist.ChunkEntries
	memlist.ChunkEntries = n
	t.Cleanup(func() { memlist.ChunkEntries = old })
}

// topics writes n topic files t00.md… holding one fact each.
func (m *memDir) topics(n int) {
	for i := range n {
		m.write(fmt.Sprintf("t%02d.md", i), fmt.Sprintf("# T\n- Fact %d.\n", i))
	}
}

// A directory larger than a turn's chunk is swept over turns: no turn
// looks at more than memlist.ChunkEntries entries (and MEMORY.md), the sweep
// covers every file once, and only a clean sweep's end sets Synced.
func TestSweepOverTurns(t *testing.T) {
	smallChunks(t, 8)
	m := newMemDir(t)
	m.write("MEMORY.md", "# M\n- Index fact.\n")
	m.topics(30)
	// 31 files and "." and "..": 33 entries, 8 a turn: 5 turns.
	seen := map[string]int{}
	for turn := 1; turn <= 5; turn++ {
		pr, l := m.turn("A")
		if l.Whole {
			t.Fatalf("turn %d: a listing of %d files taken as whole", turn, len(l.Files))
		}
		for _, f := range l.Files {
			if f.At == memlist.AtDirent {
				seen[f.Name]++
			}
		}
		if n := len(l.Files); n > 8+1 {
			t.Fatalf("turn %d looked at %d files, more than 8 entries and MEMORY.md", turn, n)
		}
		if (turn == 5) != pr.Complete {
			t.Fatalf("turn %d: complete %v", turn, pr.Complete)
		}
		sess := m.session("A")
		if (turn == 5) != !sess.Synced.IsZero() || (turn == 5) != (sess.Sweep == nil) {
			t.Fatalf("turn %d: synced %v, sweep %+v", turn, sess.Synced, sess.Sweep)
		}
	}
	if len(seen) != 31 {
		t.Fatalf("the sweep met %d files, want 31: %v", len(seen), seen)
	}
	for n, c := range seen {
		if c != 1 {
			t.Errorf("%s met %d times in one sweep", n, c)
		}
	}
	got := m.sessions()
	if len(got) != 31 {
		t.Fatalf("%d entries recorded, want 31", len(got))
	}
	// Synced is the sweep's start: the first turn's time.
	if s := m.session("A").Synced; !s.Equal(time.Date(2026, 11, 1, 9, 1, 0, 0, time.UTC)) {
		t.Fatalf("synced %v, want the first turn's time", s)
	}
}

// MEMORY.md is looked at every turn; a file changed in place (the
// directory unchanged) is read within ceil(N/memlist.ChunkEntries)+1 turns.
func TestSweepSeesChangesWithinItsBound(t *testing.T) {
	smallChunks(t, 8)
	m := newMemDir(t)
	m.write("MEMORY.md", "# M\n- Index fact.\n")
	m.topics(30)
	for range 5 {
		m.turn("A")
	}
	m.turn("A") // the next sweep's first turn
	// In place: same inode, so the directory does not change.
	m.write("MEMORY.md", "# M\n- Index fact.\n- A new index fact.\n")
	if pr, _ := m.turn("A"); pr.Read != 1 {
		t.Fatalf("MEMORY.md changed: %+v, want it read at the next turn", pr)
	}
	if m.sessions()["A new index fact."] != 1 {
		t.Fatal("the new index fact is not recorded")
	}
	m.write("t03.md", "# T\n- Fact 3, edited.\n")
	// 33 entries, 8 a turn: within ceil(33/8)+1 = 6 turns.
	for turn := 1; ; turn++ {
		if turn > 6 {
			t.Fatal("t03.md's edit not read within 6 turns")
		}
		m.turn("A")
		if m.sessions()["Fact 3, edited."] == 1 {
			break
		}
	}
}

// Files added, removed and renamed while a sweep is under way: the sweep
// is dirty (it sets no Synced and removes no state), the next one is
// clean, and by its end every file is recorded and the states of the
// files gone are removed.
func TestSweepWhileNamesChange(t *testing.T) {
	smallChunks(t, 8)
	m := newMemDir(t)
	m.write("MEMORY.md", "# M\n- Index fact.\n")
	m.topics(30)
	m.turn("A")
	m.turn("A")
	// Mid-sweep: one file added, one removed, one renamed.
	m.write("added.md", "# A\n- Added mid-sweep.\n")
	if err := os.Remove(filepath.Join(m.dir, "t01.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(m.dir, "t29.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(m.dir, "t02.md"), filepath.Join(m.dir, "renamed.md")); err != nil {
		t.Fatal(err)
	}
	dirtyEnd := false
	for turn := 1; turn <= 20; turn++ {
		before := m.session("A").Synced
		pr, l := m.turn("A")
		if l.Last && l.End.Dirty {
			dirtyEnd = true
			if pr.Complete || !m.session("A").Synced.Equal(before) {
				t.Fatal("a dirty sweep completed or moved Synced")
			}
		}
		if pr.Complete {
			break
		}
	}
	if !dirtyEnd {
		t.Fatal("the sweep during which names changed was not dirty")
	}
	got := m.sessions()
	for _, want := range []string{"Added mid-sweep.", "Fact 2.", "Fact 0.", "Fact 28.", "Index fact."} {
		if got[want] != 1 {
			t.Errorf("%q counted %d, want 1", want, got[want])
		}
	}
	// The removal of gone states runs a chunk a turn.
	for range 6 {
		m.turn("A")
	}
	states := strings.Join(m.states(), " ")
	for _, gone := range []string{"t01.md", "t29.md", "t02.md"} {
		if strings.Contains(states, gone) {
			t.Errorf("the state of %s, gone, is still kept: %s", gone, states)
		}
	}
	for _, kept := range []string{"added.md", "renamed.md", "t00.md", "t28.md", "MEMORY.md"} {
		if !strings.Contains(states, kept) {
			t.Errorf("no state of %s: %s", kept, states)
		}
	}
}

// A directory that fits one chunk is a whole listing, as before sweeps:
// its fingerprint is the session's, and a second turn finds nothing
// changed.
func TestSweepOfASmallDirectoryIsWhole(t *testing.T) {
	m := newMemDir(t)
	m.write("MEMORY.md", "# M\n- Index fact.\n")
	m.topics(3)
	pr, l := m.turn("A")
	if !l.Whole || !pr.Complete || l.FP == "" || m.session("A").Fingerprint != l.FP {
		t.Fatalf("small directory: whole %v, %+v, fp %q, session %q", l.Whole, pr, l.FP, m.session("A").Fingerprint)
	}
	l2, err := Turn(m.dir, nil, m.session("A").Sweep)
	if err != nil || !l2.Whole || l2.FP != l.FP {
		t.Fatalf("second listing: %v whole %v fp %q, want %q", err, l2.Whole, l2.FP, l.FP)
	}
	full, _ := List(m.dir, nil)
	if len(full.Files) != len(l.Files) || full.FP != l.FP {
		t.Fatalf("Turn listed %d files (fingerprint %s), List %d (%s)", len(l.Files), l.FP, len(full.Files), full.FP)
	}
}

// A chunk a session met all recorded costs that session nothing at its
// next sweep; another session still marks every entry of it; a file
// changed in place unsettles its chunk alone.
func TestSweepSettledChunks(t *testing.T) {
	smallChunks(t, 8)
	m := newMemDir(t)
	m.write("MEMORY.md", "# M\n- Index fact.\n")
	m.topics(30)
	sweep := func(session string) (settled, read int) {
		for turn := 1; ; turn++ {
			if turn > 6 {
				t.Fatalf("%s: no sweep ended within 6 turns", session)
			}
			pr, _ := m.turn(session)
			settled += pr.Settled
			read += pr.Read
			if pr.Complete {
				return settled, read
			}
		}
	}
	if settled, read := sweep("A"); settled != 0 || read != 31 {
		t.Fatalf("first sweep: %d settled, %d read; want 0, 31", settled, read)
	}
	if settled, read := sweep("A"); settled != 31 || read != 0 {
		t.Fatalf("second sweep: %d settled, %d read; want the 31 files settled, none read", settled, read)
	}
	if settled, _ := sweep("B"); settled != 0 {
		t.Fatalf("a new session's sweep: %d settled, want 0", settled)
	}
	for p, n := range m.sessions() {
		if n != 2 {
			t.Errorf("%q counted in %d sessions, want 2", p, n)
		}
	}
	m.write("t05.md", "# T\n- Fact 5, edited.\n")
	settled, read := sweep("A")
	// The edited file's chunk (at most 8 entries) is met again, MEMORY.md
	// among them or not.
	if read != 1 || settled < 31-8 || settled >= 31 {
		t.Fatalf("after an edit: %d settled, %d read; want the edited file's chunk alone unsettled and 1 read", settled, read)
	}
	if m.sessions()["Fact 5, edited."] != 1 {
		t.Fatal("the edit is not recorded")
	}
}

// safeName's shortcut for MEMORY.md says what redact.Name says.
func TestSafeNameOfTheIndex(t *testing.T) {
	if got := redact.Name(memlist.Index); got != memlist.Index || safeName(memlist.Index) != got {
		t.Fatalf("redact.Name(%q) = %q", memlist.Index, got)
	}
}

// A fingerprint is what fmt would make of size, mtime, inode and mode,
// the form stored states hold; the sweep's (fstatat) and List's (lstat)
// agree.
func TestFingerprintForm(t *testing.T) {
	m := newMemDir(t)
	m.write("a.md", "# A\n- One.\n")
	p := filepath.Join(m.dir, "a.md")
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	want := fmt.Sprintf("%d:%d:%d:%o", fi.Size(), fi.ModTime().UnixNano(), st.Ino, uint32(fi.Mode()))
	if got := memlist.Fingerprint(fi); got != want {
		t.Fatalf("fingerprint %q, want %q", got, want)
	}
	l, err := Turn(m.dir, nil, nil)
	if err != nil || len(l.Files) != 1 || l.Files[0].FP != want {
		t.Fatalf("Turn: %v %+v, want fingerprint %q", err, l.Files, want)
	}
}

// A stored cursor the directory does not take (a replaced directory on
// another filesystem) starts a new sweep instead of failing every turn.
func TestSweepRestartsFromABadCursor(t *testing.T) {
	m := newMemDir(t)
	m.write("MEMORY.md", "# M\n- Index fact.\n")
	m.topics(3)
	l, err := Turn(m.dir, nil, &store.Sweep{Dir: "elsewhere", Cookie: -1})
	if err != nil {
		t.Fatal(err)
	}
	if !l.Whole || len(l.Files) != 4 {
		t.Fatalf("whole %v, %d files; want a new, whole sweep of 4", l.Whole, len(l.Files))
	}
}
