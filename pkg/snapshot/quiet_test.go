package snapshot

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/hookfront"
	"github.com/intermem/intermem/pkg/memlist"
	"github.com/intermem/intermem/pkg/quiet"
	"github.com/intermem/intermem/pkg/store"
)

// quietProject is a project with a memory directory, run through the
// whole hook (Main) as Claude Code runs it.
type quietProject struct {
	t                 *testing.T
	root, mem, home   string
	interval          string // INTERMEM_CHECKPOINT_INTERVAL
	state, quiet, log string
	// front runs every turn through the hook front (hookfront.Main), as
	// Claude Code runs it, handing over to this package's Main in
	// process; handed counts the turns it handed over.
	front  bool
	handed int
}

func newQuietProject(t *testing.T) *quietProject {
	dir := t.TempDir()
	q := &quietProject{t: t, root: filepath.Join(dir, "proj"), mem: filepath.Join(dir, "memory"), home: filepath.Join(dir, "home"), interval: "0"}
	for _, d := range []string{filepath.Join(q.root, ".git"), q.mem, q.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	q.state = filepath.Join(q.root, ".intermem")
	q.quiet = filepath.Join(q.state, QuietName)
	q.log = filepath.Join(q.state, "log")
	q.write("MEMORY.md", "# Memory\n\n- The build runs with make.\n- [Topics](topics.md)\n")
	q.write("topics.md", "# Topics\n\n- Invoices are rendered by the ledger service.\n")
	return q
}

// write writes a memory file modified an hour ago, so that a pass
// trusts its fingerprint at once (RacyWindow).
func (q *quietProject) write(name, content string) {
	q.t.Helper()
	q.edit(name, content)
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(q.mem, name), old, old); err != nil {
		q.t.Fatal(err)
	}
}

// edit writes a memory file now.
func (q *quietProject) edit(name, content string) {
	q.t.Helper()
	if err := os.WriteFile(filepath.Join(q.mem, name), []byte(content), 0o644); err != nil {
		q.t.Fatal(err)
	}
}

// turn runs the hook once for session at event.
func (q *quietProject) turn(session, event string) {
	q.t.Helper()
	payload := `{"session_id":"` + session + `","cwd":"` + q.root + `","hook_event_name":"` + event + `"}`
	var out bytes.Buffer
	vars := []string{"HOME=" + q.home, "INTERMEM_MEMORY_DIR=" + q.mem, "INTERMEM_CHECKPOINT_INTERVAL=" + q.interval}
	env := cli.New(vars, q.root, strings.NewReader(payload), &out, &out)
	var code int
	if q.front {
		code = hookfront.Main(env, nil, hookfront.Options{Snapshot: hookfront.Snapshot, Exec: func(path string, args []string, input []byte) error {
			if path != hookfront.Snapshot {
				q.t.Fatalf("%s %s handed over to %s", session, event, path)
			}
			q.handed++
			if code := Main(cli.New(vars, q.root, bytes.NewReader(input), &out, &out), args); code != 0 {
				q.t.Fatalf("%s %s: the full hook exited %d", session, event, code)
			}
			return nil
		}})
	} else {
		code = Main(env, nil)
	}
	if code != 0 || out.Len() > 0 {
		q.t.Fatalf("%s %s: exit %d, output %q", session, event, code, out.String())
	}
}

// settle runs turns of session until the quiet copy names it (no wait:
// the copy is bound to the store's transaction id, not its clock).
func (q *quietProject) settle(session string) {
	q.t.Helper()
	for i := 0; i < 6; i++ {
		q.turn(session, "Stop")
		if b, err := os.ReadFile(q.quiet); err == nil && bytes.Contains(b, []byte("\nsession "+session+"\t")) {
			return
		}
	}
	b, _ := os.ReadFile(q.log)
	q.t.Fatalf("no quiet copy for %s after 6 settled turns; log:\n%s", session, b)
}

// locked runs fn while another holder has the store open for writing:
// a turn that opens the store finds it busy and spools its listing.
func (q *quietProject) locked(fn func()) {
	q.t.Helper()
	s, err := store.Open(filepath.Join(q.state, "intermem.db"), store.Options{})
	if err != nil {
		q.t.Fatal(err)
	}
	defer s.Close()
	fn()
}

// spooled counts the observations waiting in the spool.
func (q *quietProject) spooled() int {
	ents, _ := os.ReadDir(SpoolDir(q.state))
	n := 0
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".json") {
			n++
		}
	}
	return n
}

// view reads the store.
func (q *quietProject) view(fn func(tx *bolt.Tx) error) {
	q.t.Helper()
	// A turn that reached its deadline returned while its work goes on
	// (a hook fails open; its process would exit), holding the store
	// until it ends: on a loaded machine, longer than a second.
	s, err := store.Open(filepath.Join(q.state, "intermem.db"), store.Options{ReadOnly: true, Timeout: time.Minute})
	if err != nil {
		q.t.Fatal(err)
	}
	defer s.Close()
	if err := s.View(fn); err != nil {
		q.t.Fatal(err)
	}
}

// seen returns the previews of the entries the store records, with the
// number of sessions each was seen in.
func (q *quietProject) seen() map[string]int {
	m := map[string]int{}
	q.view(func(tx *bolt.Tx) error {
		return store.EachSeen(tx, func(e *store.Entry) error {
			m[e.Preview] = e.Sessions
			return nil
		})
	})
	return m
}

// A settled session's turn with nothing changed is decided without the
// store: with the store held by a writer, it neither waits nor spools.
func TestQuietTurnSkipsTheStore(t *testing.T) {
	q := newQuietProject(t)
	q.turn("s1", "Stop")
	q.settle("s1")
	q.locked(func() { q.turn("s1", "Stop") })
	if n := q.spooled(); n != 0 {
		b, _ := os.ReadFile(q.log)
		t.Fatalf("a quiet turn went to the store (%d observations spooled); log:\n%s", n, b)
	}
	// Through the front, the quiet turn starts no full hook at all.
	q.front = true
	q.turn("s1", "Stop")
	if q.handed != 0 {
		t.Fatalf("the front handed a quiet turn over")
	}
}

// What the early exit must never skip, each while the copy names the
// session as settled: a change to a memory file (a new file, an edit in
// place within the same second and of the same size), a new session, the
// session's end, a spooled observation.
func TestQuietTurnNeverSkipsAChange(t *testing.T) {
	neverSkipsAChange(t, newQuietProject(t))
}

// The same cases through the hook front: it skips no turn the full hook
// would act on.
func TestQuietTurnNeverSkipsAChangeThroughTheFront(t *testing.T) {
	q := newQuietProject(t)
	q.front = true
	neverSkipsAChange(t, q)
}

func neverSkipsAChange(t *testing.T, q *quietProject) {
	q.turn("s1", "Stop")
	q.settle("s1")

	// Another session: the copy does not name it.
	q.locked(func() { q.turn("s2", "Stop") })
	if n := q.spooled(); n != 1 {
		t.Fatalf("a new session's first turn spooled %d observations, want 1 (it must go to the store)", n)
	}
	q.turn("s2", "Stop") // ingests the spool
	if got := q.seen()["The build runs with make."]; got != 2 {
		t.Fatalf("sessions of a MEMORY.md entry = %d, want 2 (s1, s2)", got)
	}

	// The session's end: recorded once, even though nothing changed.
	q.settle("s1")
	q.locked(func() { q.turn("s1", "SessionEnd") })
	if n := q.spooled(); n != 1 {
		t.Fatalf("a SessionEnd spooled %d observations, want 1 (its end must be recorded)", n)
	}
	q.turn("s1", "Stop") // ingests the spool

	// A spooled observation waiting: the turn goes to the store to
	// ingest it.
	q.settle("s1")
	q.locked(func() { q.turn("s2", "Stop") })
	q.turn("s1", "Stop")
	if n := q.spooled(); n != 0 {
		t.Fatalf("%d observations left in the spool after a settled session's turn, want 0", n)
	}

	// A new memory file.
	q.settle("s1")
	q.write("deploy.md", "# Deploy\n\n- Releases are tagged from main.\n")
	q.turn("s1", "Stop")
	if got := q.seen()["Releases are tagged from main."]; got != 1 {
		t.Fatalf("a new file's entry seen in %d sessions, want 1", got)
	}

	// An edit in place, then another of the same size within the same
	// clock second, which leaves the file's fingerprint as the first one
	// left it (a file system that keeps whole seconds).
	q.settle("s1")
	topics := filepath.Join(q.mem, "topics.md")
	q.edit("topics.md", "# Topics\n\n- Invoices are rendered by the alpha service.\n")
	fi, err := os.Stat(topics)
	if err != nil {
		t.Fatal(err)
	}
	q.turn("s1", "Stop")
	if got := q.seen()["Invoices are rendered by the alpha service."]; got != 1 {
		t.Fatalf("an edited entry seen in %d sessions, want 1", got)
	}
	q.edit("topics.md", "# Topics\n\n- Invoices are rendered by the gamma service.\n")
	if err := os.Chtimes(topics, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if fi2, _ := os.Stat(topics); fi2.Size() != fi.Size() || !fi2.ModTime().Equal(fi.ModTime()) {
		t.Fatalf("the second edit changed the fingerprint: %v %v", fi2.Size(), fi2.ModTime())
	}
	q.turn("s1", "Stop")
	if got := q.seen()["Invoices are rendered by the gamma service."]; got != 1 {
		t.Fatalf("an edit of the same size within the same second seen in %d sessions, want 1", got)
	}
}

// Checkpoints are counted in turns whether or not a turn is quiet.
func TestQuietTurnsStillCountCheckpoints(t *testing.T) {
	stillCountCheckpoints(t, newQuietProject(t))
}

// The same through the hook front, which counts a quiet turn itself and
// hands the checkpoint turn over.
func TestQuietTurnsStillCountCheckpointsThroughTheFront(t *testing.T) {
	q := newQuietProject(t)
	q.front = true
	stillCountCheckpoints(t, q)
	if b, _ := os.ReadFile(filepath.Join(q.state, "turns")); !bytes.Contains(b, []byte("\ns1\t")) {
		t.Fatalf("no turn counted: %q", b)
	}
}

func stillCountCheckpoints(t *testing.T, q *quietProject) {
	q.interval = "3"
	q.turn("s1", "Stop") // turn 1
	q.settle("s1")       // turns 2, 3 (a checkpoint) and 4 at least
	count := func() int {
		n := 0
		q.view(func(tx *bolt.Tx) error {
			cs, err := store.Checkpoints(tx)
			n = len(cs)
			return err
		})
		return n
	}
	before := count()
	for i := 0; i < 3; i++ {
		q.turn("s1", "Stop")
	}
	if got := count(); got != before+1 {
		t.Fatalf("checkpoints after three more turns: %d, want %d", got, before+1)
	}
}

// The copy is hostile input: anything but a well-formed copy bound to the
// store's stat is a full turn, never an error, and the next quiet turn
// writes it anew.
func TestQuietCopyDamaged(t *testing.T) { quietCopyDamaged(t, false) }

// The same through the hook front: a damaged copy is handed over.
func TestQuietCopyDamagedThroughTheFront(t *testing.T) { quietCopyDamaged(t, true) }

func quietCopyDamaged(t *testing.T, front bool) {
	q := newQuietProject(t)
	q.front = front
	q.turn("s1", "Stop")
	q.settle("s1")
	good, err := os.ReadFile(q.quiet)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{
		"garbage":     []byte("not a copy\n"),
		"empty":       nil,
		"other store": bytes.Replace(good, []byte("store "), []byte("store 1"), 1),
		"truncated":   good[:len(good)-1],
		"extra line":  append(append([]byte{}, good...), "unknown\n"...),
		"too large":   bytes.Repeat([]byte("x"), quiet.MaxBytes+1),
	} {
		if err := os.WriteFile(q.quiet, b, 0o600); err != nil {
			t.Fatal(err)
		}
		q.locked(func() { q.turn("s1", "Stop") })
		if n := q.spooled(); n != 1 {
			t.Fatalf("%s: a turn with a damaged copy spooled %d observations, want 1", name, n)
		}
		q.turn("s1", "Stop") // ingests
		q.settle("s1")
	}
}

// The file's format round-trips, and a copy is refused whole on any line
// it does not expect.
func TestQuietFormat(t *testing.T) {
	q := quiet.File{Store: "1:2:3:4", Sessions: map[string]quiet.Session{
		"a b":  {FP: "f1", Subs: []string{"sub/x.md", "we\"ird\tname.md"}},
		"uuid": {FP: "f2", Ended: true},
	}}
	b := q.Encode()
	want := "intermem stop quiet v2\nstore 1:2:3:4\nsession a b\tf1\t0\t\"sub/x.md\"\t\"we\\\"ird\\tname.md\"\nsession uuid\tf2\t1\n"
	if string(b) != want {
		t.Fatalf("encode:\n%s\nwant:\n%s", b, want)
	}
	got, ok := quiet.Decode(b)
	if !ok || got.Store != q.Store || len(got.Sessions) != 2 || got.Sessions["a b"].Subs[1] != "we\"ird\tname.md" || !got.Sessions["uuid"].Ended {
		t.Fatalf("decode: %+v %v", got, ok)
	}
	parts := quiet.File{Store: "1:2:3:4", Memory: memlist.Chunking{Dir: "7:8:9", Chunks: []memlist.Chunk{
		{Start: 0, End: 55, Entries: 70, Files: 64, Sum: 0xab12},
		{Start: 55, End: -1, Entries: 3, Files: 2},
	}}, Sessions: map[string]quiet.Session{"a": {FP: "f1"}}}
	b = parts.Encode()
	want = "intermem stop quiet v2\nstore 1:2:3:4\nmemory 7:8:9\nchunk 0 55 70 64 ab12\nchunk 55 -1 3 2 0\nsession a\tf1\t0\n"
	if string(b) != want {
		t.Fatalf("encode with parts:\n%s\nwant:\n%s", b, want)
	}
	if got, ok := quiet.Decode(b); !ok || got.Memory.Dir != "7:8:9" || !slices.Equal(got.Memory.Chunks, parts.Memory.Chunks) {
		t.Fatalf("decode with parts: %+v %v", got, ok)
	}
	for _, bad := range []string{
		"intermem stop quiet v1\nstore 1\n",
		"intermem stop quiet v2\nsession a\tf\t0\n",
		"intermem stop quiet v2\nstore 1\nsession a\tf\t2\n",
		"intermem stop quiet v2\nstore 1\nsession a\t\t0\n",
		"intermem stop quiet v2\nstore 1\nsession a\tf\t0\nsession a\tf\t0\n",
		"intermem stop quiet v2\nstore 1\nsession a\tf\t0\tnot-quoted\n",
		"intermem stop quiet v2\nstore 1\nstore 2\n",
		"intermem stop quiet v2\nstore 1",
		// The listing's parts: at least two, chained from the start,
		// after the store and before the sessions, fields as written.
		"intermem stop quiet v2\nstore 1\nmemory 7:8:9\nsession a\tf\t0\n",
		"intermem stop quiet v2\nstore 1\nmemory 7:8:9\nchunk 0 5 6 4 a\nsession a\tf\t0\n",
		"intermem stop quiet v2\nstore 1\nmemory 7:8:9\nchunk 0 5 6 4 a\nchunk 6 9 2 1 b\n",
		"intermem stop quiet v2\nstore 1\nmemory 7:8:9\nchunk 1 5 6 4 a\nchunk 5 9 2 1 b\n",
		"intermem stop quiet v2\nstore 1\nmemory 7:8:9\nchunk 0 5 6 4 a\nchunk 5 9 0 0 b\n",
		"intermem stop quiet v2\nstore 1\nmemory 7:8:9\nchunk 0 5 6 4 A\nchunk 5 9 2 1 b\n",
		"intermem stop quiet v2\nstore 1\nchunk 0 5 6 4 a\nchunk 5 9 2 1 b\n",
		"intermem stop quiet v2\nstore 1\nmemory 7:8:9\nmemory 7:8:9\nchunk 0 5 6 4 a\nchunk 5 9 2 1 b\n",
		"intermem stop quiet v2\nstore 1\nmemory 7:8:9\nchunk 0 5 6 4 a\nsession a\tf\t0\nchunk 5 9 2 1 b\n",
		"intermem stop quiet v2\nstore 1\nmemory \nchunk 0 5 6 4 a\nchunk 5 9 2 1 b\n",
	} {
		if q, ok := quiet.Decode([]byte(bad)); ok {
			t.Errorf("decoded %q: %+v", bad, q)
		}
	}
}

func FuzzDecodeQuiet(f *testing.F) {
	f.Add([]byte("intermem stop quiet v2\nstore 1:2:3:4\nsession a\tf1\t0\t\"x.md\"\n"))
	f.Add([]byte("intermem stop quiet v2\nstore 1:2:3:4\nmemory 7:8:9\nchunk 0 55 70 64 ab12\nchunk 55 -1 3 2 0\nsession a\tf1\t0\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		q, ok := quiet.Decode(b)
		if !ok {
			return
		}
		again, ok := quiet.Decode(q.Encode())
		if !ok || again.Store != q.Store || len(again.Sessions) != len(q.Sessions) ||
			again.Memory.Dir != q.Memory.Dir || !slices.Equal(again.Memory.Chunks, q.Memory.Chunks) {
			t.Fatalf("%q decoded, but its encoding does not decode the same", b)
		}
	})
}

// A checkpoint turn writes the store after its quiet check; the copy is
// brought up to date at once (keepQuiet), so the turn after it is quiet
// through the front: only the checkpoint turns are handed over. Before, the
// copy stayed bound to the store as it was before the checkpoint, and the
// turn after every checkpoint took the full hook too.
func TestQuietCopyAfterCheckpoint(t *testing.T) {
	q := newQuietProject(t)
	q.front = true
	q.interval = "3"
	q.turn("s1", "Stop")
	q.settle("s1")
	// Line the count up on a checkpoint turn.
	for i := 0; i < 3; i++ {
		q.handed = 0
		q.turn("s1", "Stop")
		if q.handed == 1 {
			break
		}
	}
	q.handed = 0
	for i := 0; i < 9; i++ {
		q.turn("s1", "Stop")
	}
	if q.handed != 3 {
		b, _ := os.ReadFile(q.log)
		t.Fatalf("nine quiet turns with a checkpoint every third handed %d over, want 3 (the checkpoint turns); log:\n%s", q.handed, b)
	}
}

// The copy's binding names the store's last committed transaction as
// bbolt reads it, so that two commits the file's stat cannot tell apart
// (the same size, times within one clock tick) still bind differently.
func TestStoreBindingNamesTheTransaction(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "intermem.db")
	s, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []uint64
	for i := 0; i < 4; i++ {
		if err := s.Update(func(tx *bolt.Tx) error {
			_, err := tx.CreateBucketIfNotExists([]byte("test"))
			if err == nil {
				err = tx.Bucket([]byte("test")).Put([]byte("k"), []byte{byte(i)})
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		var id uint64
		s.View(func(tx *bolt.Tx) error { id = uint64(tx.ID()); return nil })
		stat, txid := quiet.StoreStat(path)
		if stat == "" || txid != id || !strings.HasSuffix(stat, ":"+strconv.FormatUint(id, 10)) {
			t.Fatalf("commit %d: binding %q, txid %d; bbolt's %d", i, stat, txid, id)
		}
		ids = append(ids, txid)
	}
	s.Close()
	if ids[3] != ids[0]+3 {
		t.Fatalf("transaction ids %v", ids)
	}
	b, _ := os.ReadFile(path)
	page := 4096
	if ps := int(binary.NativeEndian.Uint32(b[16+8:])); ps > 0 {
		page = ps
	}
	// A meta torn by a write cut short: the other one stands (bbolt's
	// rule); both torn: no binding (a full turn).
	last := ids[3]
	torn := append([]byte(nil), b...)
	torn[int(last%2)*page+16+48] ^= 0xff // the last commit's txid, its checksum now wrong
	os.WriteFile(path, torn, 0o600)
	if _, txid := quiet.StoreStat(path); txid != last-1 {
		t.Errorf("the last meta torn: txid %d, want %d", txid, last-1)
	}
	torn[int((last-1)%2)*page+16] ^= 0xff // the other's magic
	os.WriteFile(path, torn, 0o600)
	if stat, _ := quiet.StoreStat(path); stat != "" {
		t.Errorf("both metas torn: binding %q", stat)
	}
	os.WriteFile(path, b[:50], 0o600) // within the first meta
	if stat, _ := quiet.StoreStat(path); stat != "" {
		t.Errorf("a cut file: binding %q", stat)
	}
	// Never through a link, never a FIFO.
	os.Remove(path)
	os.WriteFile(filepath.Join(dir, "real.db"), b, 0o600)
	os.Symlink("real.db", path)
	if stat, _ := quiet.StoreStat(path); stat != "" {
		t.Errorf("through a link: %q", stat)
	}
	os.Remove(path)
	syscall.Mkfifo(path, 0o600)
	if stat, _ := quiet.StoreStat(path); stat != "" {
		t.Errorf("a FIFO: %q", stat)
	}
}

// A session resumed and ended again (claude --resume, then /exit) ends
// with the same session id: its end is recorded and its memory has not
// changed, so its memory pass is quiet, but its end still brings the other
// sources into the catalog, which may have changed meanwhile (and a
// refresh cut short left work for "the next session end"). That second end
// was quiet whole, and a solution written during the resumed session
// waited for another session's end.
func TestSessionEndedAgainRefreshes(t *testing.T) {
	q := newQuietProject(t)
	q.turn("s1", "Stop")
	q.settle("s1")
	q.turn("s1", "SessionEnd")
	q.writeSolution()
	q.turn("s1", "Stop")
	q.turn("s1", "SessionEnd")
	var titles []string
	q.view(func(tx *bolt.Tx) error {
		return store.Catalog(tx).Entries(func(e *store.CatalogEntry) error {
			if e.Source == "compound" && e.Gone.IsZero() {
				titles = append(titles, e.Title)
			}
			return nil
		})
	})
	if len(titles) != 1 || titles[0] != "Token bucket rate limiter drops bursts" {
		b, _ := os.ReadFile(q.log)
		t.Fatalf("after the session ended again the catalog holds compound entries %q, want the solution written meanwhile; log:\n%s", titles, b)
	}
}

// writeSolution puts a solution document in the project (the compound
// source), as a session may write one: "Token bucket rate limiter drops
// bursts".
func (q *quietProject) writeSolution() {
	q.t.Helper()
	docs := filepath.Join(q.root, "docs", "solutions")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		q.t.Fatal(err)
	}
	doc := "---\ntitle: Token bucket rate limiter drops bursts\n---\n# Token bucket rate limiter drops bursts\n\n## Root Cause\nThe refill ran once a minute.\n"
	if err := os.WriteFile(filepath.Join(docs, "bursts.md"), []byte(doc), 0o644); err != nil {
		q.t.Fatal(err)
	}
}
