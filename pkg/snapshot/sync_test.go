package snapshot

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/catalog"
	"github.com/intermem/intermem/pkg/source"
	"github.com/intermem/intermem/pkg/store"
)

// memDir is a memory directory and a store for Sync tests.
type memDir struct {
	t   *testing.T
	dir string
	s   *store.Store
	at  time.Time
	log []string
}

func newMemDir(t *testing.T) *memDir {
	t.Helper()
	root := t.TempDir()
	s, err := store.Open(filepath.Join(root, "intermem.db"), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	dir := filepath.Join(root, "memory")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return &memDir{t: t, dir: dir, s: s, at: time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)}
}

// write writes a memory file and backdates it past RacyWindow, as a file
// written a while before the hook runs is.
func (m *memDir) write(name, content string) {
	m.t.Helper()
	p := filepath.Join(m.dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		m.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		m.t.Fatal(err)
	}
	old := time.Now().Add(-time.Minute - time.Duration(len(content))*time.Millisecond)
	if err := os.Chtimes(p, old, old); err != nil {
		m.t.Fatal(err)
	}
}

// pass runs one Sync for session as a hook would, the clock a minute on.
func (m *memDir) pass(session string, p Pass) Progress {
	m.t.Helper()
	m.at = m.at.Add(time.Minute)
	var subs []string
	m.s.View(func(tx *bolt.Tx) error { subs = Subs(tx); return nil })
	l, err := List(m.dir, subs)
	if err != nil {
		m.t.Fatal(err)
	}
	p.Session, p.At = session, m.at
	if p.Event == "" {
		p.Event = "Stop"
	}
	p.Logf = m.logf
	return m.sync(l, p)
}

// sessions returns every entry's session count, by preview.
func (m *memDir) sessions() map[string]int {
	m.t.Helper()
	out := map[string]int{}
	m.s.View(func(tx *bolt.Tx) error {
		return store.EachSeen(tx, func(e *store.Entry) error {
			out[e.Preview] = e.Sessions
			return nil
		})
	})
	return out
}

// A pass reads only the files whose fingerprint changed; a session whose
// last pass completed after a file's state was set reads nothing of it.
func TestSyncReadsOnlyChangedFiles(t *testing.T) {
	m := newMemDir(t)
	m.write("MEMORY.md", "# M\n- Index fact one.\n- [Topic](topic.md) — a topic\n")
	m.write("topic.md", "---\nname: topic\ndescription: A topic\ntype: project\n---\nBody.\n")
	m.write("notes.md", "# Notes\n- Note one.\n- Note two.\n")
	if pr := m.pass("A", Pass{}); pr.Read != 3 || !pr.Complete || pr.Entries != 5 {
		t.Fatalf("first pass: %+v, want 3 files read, 5 entries", pr)
	}
	if pr := m.pass("A", Pass{}); pr.Read != 0 || pr.Entries != 0 || !pr.Complete {
		t.Fatalf("nothing changed: %+v, want nothing read", pr)
	}
	m.write("notes.md", "# Notes\n- Note one.\n- Note two.\n- Note three.\n")
	if pr := m.pass("A", Pass{}); pr.Read != 1 || pr.Entries != 1 {
		t.Fatalf("one file changed: %+v, want it alone read and one new entry", pr)
	}
	// A new session reads nothing: every file's state stands, and its
	// entries are counted from it.
	if pr := m.pass("B", Pass{}); pr.Read != 0 || pr.Entries != 6 {
		t.Fatalf("a new session: %+v, want nothing read, 6 entries counted", pr)
	}
	got := m.sessions()
	want := map[string]int{"Index fact one.": 2, "[Topic](topic.md) — a topic": 2, "A topic — Body.": 2, "Note one.": 2, "Note two.": 2, "Note three.": 2}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("sessions\n%v\nwant\n%v", got, want)
	}
}

// A pass past its deadline commits what it did; later passes go on from
// there, and the session's fingerprint is set only by the pass that
// completes, so the hook's "nothing changed" check never skips a file no
// pass read.
func TestSyncResumesAfterItsDeadline(t *testing.T) {
	defer func(n int) { minWork = n }(minWork)
	minWork = 1
	m := newMemDir(t)
	for i := 0; i < 10; i++ {
		m.write(fmt.Sprintf("t%02d.md", i), fmt.Sprintf("# T\n- Fact %d a.\n- Fact %d b.\n", i, i))
	}
	var clock time.Time
	tick := func() time.Time { clock = clock.Add(time.Second); return clock }
	passes := 0
	for {
		clock = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		// Each pass reads its first file, then reads the clock (a second
		// later each time) before each next one, and starts none past 2
		// seconds: three files a pass.
		pr := m.pass("A", Pass{Deadline: clock.Add(2 * time.Second), now: tick})
		passes++
		var sess store.Session
		m.s.View(func(tx *bolt.Tx) error { _, err := store.Get(tx, store.BucketSessions, "A", &sess); return err })
		if pr.Complete {
			if sess.Fingerprint == "" || sess.Synced.IsZero() {
				t.Fatalf("complete pass left fingerprint %q, synced %v", sess.Fingerprint, sess.Synced)
			}
			break
		}
		if sess.Fingerprint != "" {
			t.Fatalf("pass %d stopped at %d of %d files but set the session's fingerprint", passes, pr.Done, pr.Files)
		}
		if passes > 10 {
			t.Fatal("no progress")
		}
	}
	if passes != 4 {
		t.Errorf("%d passes for 10 files at 3 a pass, want 4", passes)
	}
	got := m.sessions()
	if len(got) != 20 {
		t.Fatalf("%d entries recorded, want 20", len(got))
	}
	for p, n := range got {
		if n != 1 {
			t.Errorf("%q counted %d times, want once", p, n)
		}
	}
}

// Sync counts sessions as Record counts them for whole observations:
// random edits, sessions and passes cut short by deadlines end in the same
// counts, previews and lineage as Observe and Record of the same states.
func TestSyncAgreesWithRecord(t *testing.T) {
	defer func(n int) { minWork = n }(minWork)
	minWork = 1
	rng := rand.New(rand.NewSource(7))
	m := newMemDir(t)
	ref, err := store.Open(filepath.Join(t.TempDir(), "ref.db"), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	facts := []string{"Alpha runs first.", "Beta needs the cache.", "Gamma is flaky on CI.", "Delta ships Fridays.", "Epsilon owns billing.", "Zeta pins go 1.26."}
	content := func() string {
		var b strings.Builder
		b.WriteString("# Notes\n")
		for _, f := range facts {
			if rng.Intn(3) > 0 {
				fmt.Fprintf(&b, "- %s\n", f)
			}
		}
		return b.String()
	}
	sessions := []string{"s1", "s2", "s3"}
	for step := 0; step < 60; step++ {
		name := fmt.Sprintf("f%d.md", rng.Intn(4))
		switch rng.Intn(4) {
		case 0:
			os.Remove(filepath.Join(m.dir, name))
		default:
			m.write(name, content())
		}
		sess := sessions[rng.Intn(len(sessions))]
		// Some passes run out of time after a file or two; the session's
		// next pass completes.
		p := Pass{}
		if rng.Intn(3) == 0 {
			var clock time.Time
			p.Deadline, p.now = clock.Add(time.Second), func() time.Time { clock = clock.Add(time.Second); return clock }
		}
		if pr := m.pass(sess, p); !pr.Complete {
			m.pass(sess, Pass{})
		}
		obs, err := Observe(m.dir, sess, "Stop", m.at, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := ref.Update(func(tx *bolt.Tx) error { return Record(tx, obs) }); err != nil {
			t.Fatal(err)
		}
	}
	dump := func(s *store.Store) string {
		var lines []string
		s.View(func(tx *bolt.Tx) error {
			return store.EachSeen(tx, func(e *store.Entry) error {
				lines = append(lines, fmt.Sprintf("%s %q sessions=%d first=%s last=%s prev=%s", e.ID, e.Preview, e.Sessions, e.FirstSeen, e.LastSeen, e.Prev))
				return nil
			})
		})
		sort.Strings(lines)
		return strings.Join(lines, "\n")
	}
	if got, want := dump(m.s), dump(ref); got != want {
		t.Fatalf("Sync\n%s\n\nRecord\n%s", got, want)
	}
}

// A file that is not read is logged once per fingerprint, never silently
// left out, and its state says why.
func TestSyncLogsSkipsOnce(t *testing.T) {
	m := newMemDir(t)
	m.write("MEMORY.md", "# M\n- Fact.\n")
	if err := syscall.Mkfifo(filepath.Join(m.dir, "fifo.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("- x\n", automem.MaxFileBytes/4+1)
	m.write("huge.md", big)
	m.pass("A", Pass{})
	m.pass("A", Pass{})
	m.pass("B", Pass{})
	want := []string{
		"memory file fifo.md skipped: not a regular file",
		fmt.Sprintf("memory file huge.md skipped: %d bytes, over the %d-byte limit", len(big), automem.MaxFileBytes),
	}
	if strings.Join(m.log, "\n") != strings.Join(want, "\n") {
		t.Fatalf("log\n%s\nwant\n%s", strings.Join(m.log, "\n"), strings.Join(want, "\n"))
	}
	m.write("huge.md", big+"- y\n")
	m.pass("A", Pass{})
	if len(m.log) != 3 || !strings.HasPrefix(m.log[2], "memory file huge.md skipped:") {
		t.Fatalf("a skipped file that changed is logged again: %q", m.log)
	}
}

// A file written just before a pass may change again within the clock's
// granularity without changing its fingerprint: the next pass reads it
// again, and the session's fingerprint stays unset until it settles.
func TestSyncRereadsRacyFiles(t *testing.T) {
	m := newMemDir(t)
	p := filepath.Join(m.dir, "MEMORY.md")
	if err := os.WriteFile(p, []byte("# M\n- One.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if pr := m.pass("A", Pass{}); pr.Read != 1 {
		t.Fatalf("%+v", pr)
	}
	var sess store.Session
	m.s.View(func(tx *bolt.Tx) error { _, err := store.Get(tx, store.BucketSessions, "A", &sess); return err })
	if sess.Fingerprint != "" {
		t.Fatal("a pass that read a racy file set the session's fingerprint")
	}
	// Rewritten with the same size and the same times: only a second
	// read can tell.
	fi, _ := os.Stat(p)
	os.WriteFile(p, []byte("# M\n- Two.\n"), 0o644)
	os.Chtimes(p, fi.ModTime(), fi.ModTime())
	if pr := m.pass("A", Pass{}); pr.Read != 1 || pr.Entries != 1 {
		t.Fatalf("racy file not read again: %+v", pr)
	}
	if got := m.sessions(); got["Two."] != 1 {
		t.Fatalf("sessions %v", got)
	}
}

// A file a pointer brings in from a sub-folder is read like the others,
// in the same pass, as automem.Scan reads it.
func TestSyncReadsLinkedSubfolderFiles(t *testing.T) {
	m := newMemDir(t)
	m.write("MEMORY.md", "# M\n- [Debugging](notes/debugging.md) — how to debug\n")
	m.write("notes/debugging.md", "# Debugging\n- Use dlv.\n")
	if pr := m.pass("A", Pass{}); pr.Read != 2 || pr.Files != 2 {
		t.Fatalf("first pass: %+v, want MEMORY.md and the file its pointer names read", pr)
	}
	if got := m.sessions(); got["Use dlv."] != 1 {
		t.Fatalf("sessions %v", got)
	}
	m.pass("A", Pass{})
	m.write("notes/debugging.md", "# Debugging\n- Use dlv.\n- Set GOTRACEBACK=all.\n")
	if pr := m.pass("A", Pass{}); pr.Read != 1 || pr.Entries != 1 {
		t.Fatalf("sub-folder file changed: %+v", pr)
	}
	if got := m.sessions(); got["Use dlv."] != 1 || got["Set GOTRACEBACK=all."] != 1 {
		t.Fatalf("sessions %v", got)
	}
}

// The agent whose hook first saw an entry, and its session, are recorded
// with it, and the catalog's provenance overlay shows them.
func TestSyncRecordsTheAgent(t *testing.T) {
	m := newMemDir(t)
	m.write("MEMORY.md", "# M\n- Main agent's fact.\n")
	m.pass("A", Pass{})
	m.write("MEMORY.md", "# M\n- Main agent's fact.\n- The reviewer's fact.\n")
	m.pass("B", Pass{Event: "SubagentStop", Agent: "a22e7ed820bad72a4", AgentType: "general-purpose"})
	got := map[string]string{}
	if err := m.s.View(func(tx *bolt.Tx) error {
		c, err := catalog.Build(store.Catalog(tx), catalog.Config{Env: source.Env{Root: filepath.Dir(m.dir), MemoryDir: m.dir}, Now: m.at})
		if err != nil {
			return err
		}
		for _, e := range c.Entries() {
			o := c.Overlay(e.ID)
			got[e.Text] = o.Agent + "/" + o.AgentType + "/" + o.Session
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"Main agent's fact.": "//A", "The reviewer's fact.": "a22e7ed820bad72a4/general-purpose/B"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("provenance %v, want %v", got, want)
	}
}

// A listing spooled while the store was busy is ingested by the next
// writer: files as the store last read them count from their state; a file
// read too soon after it was written (racy), or changed since it was last
// read, is read at ingestion while it still has the listed fingerprint;
// one changed again since is left alone. The spool names files by their
// redacted names (a secret in a file name never reaches it), and a name
// matching no memory file is never read.
func TestIngestSpooledListing(t *testing.T) {
	m := newMemDir(t)
	state := filepath.Join(filepath.Dir(m.dir), "state")
	if err := os.MkdirAll(SpoolDir(state), 0o700); err != nil {
		t.Fatal(err)
	}
	secretName := "ghp_FAKEvDyxE7GZrdQsFvpnJAaar5pqZBqujEy2.md"
	if safeName(secretName) == secretName {
		t.Fatalf("%s is not redacted: pick a name that is", secretName)
	}
	m.write("a.md", "# A\n- Alpha stays.\n")
	m.write("b.md", "# B\n- Beta one.\n")
	m.write("c.md", "# C\n- Gamma one.\n")
	m.write(secretName, "# E\n- Epsilon one.\n")
	racy := filepath.Join(m.dir, "d.md")
	os.WriteFile(racy, []byte("# D\n- Delta, just written.\n"), 0o644)
	m.pass("A", Pass{})

	// B's hook meets a busy store: b.md, c.md and the secretly named file
	// changed before it listed, and c.md again after.
	m.write("b.md", "# B\n- Beta two.\n")
	m.write("c.md", "# C\n- Gamma two.\n")
	m.write(secretName, "# E\n- Epsilon two.\n")
	l, err := List(m.dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(filepath.Dir(m.dir), "secret.md")
	os.WriteFile(outside, []byte("- Outside the memory directory.\n"), 0o644)
	files := append(Spoolable(l), File{Name: "../secret.md", FP: "x"})
	if err := Spool(state, Observation{SessionID: "B", Event: "Stop", At: m.at.Add(time.Minute), Fingerprint: l.FP, Listing: files}); err != nil {
		t.Fatal(err)
	}
	spooled, _ := filepath.Glob(filepath.Join(SpoolDir(state), "*.json"))
	for _, p := range spooled {
		if b, _ := os.ReadFile(p); strings.Contains(string(b), "ghp_") {
			t.Fatalf("the spool holds the secret file name: %s", b)
		}
	}
	m.write("c.md", "# C\n- Gamma three, written later.\n")

	var logged []string
	if n, err := Ingest(m.s, state, m.dir, func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }); err != nil || n != 1 {
		t.Fatalf("ingest: %d, %v", n, err)
	}
	got := m.sessions()
	// Gamma two was in the file B listed, but what it held then is gone:
	// the session's next pass (or none) decides.
	want := map[string]int{"Alpha stays.": 2, "Beta one.": 1, "Beta two.": 1, "Gamma one.": 1, "Delta, just written.": 2,
		"Epsilon one.": 1, "Epsilon two.": 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("sessions\n%v\nwant\n%v", got, want)
	}
	if strings.Join(logged, "\n") != "spool: 1 file listed by a busy Stop hook not found in the memory directory now" {
		t.Fatalf("log %q", logged)
	}
}

// However late a pass starts (a slow listing, a loaded machine), it does
// minWork files: every turn makes progress.
func TestSyncProgressesPastItsDeadline(t *testing.T) {
	m := newMemDir(t)
	for i := 0; i < 70; i++ {
		m.write(fmt.Sprintf("t%02d.md", i), fmt.Sprintf("# T\n- Fact %d.\n", i))
	}
	past := time.Now().Add(-time.Hour)
	if pr := m.pass("A", Pass{Deadline: past}); pr.Read != minWork || pr.Complete {
		t.Fatalf("first pass: %+v, want %d files read", pr, minWork)
	}
	if pr := m.pass("A", Pass{Deadline: past}); pr.Read != 70-minWork || !pr.Complete {
		t.Fatalf("second pass: %+v, want the other %d read and the pass complete", pr, 70-minWork)
	}
}
