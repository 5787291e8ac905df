package snapshot

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/confine"
	"github.com/intermem/intermem/pkg/store"
)

func spoolFixture(t *testing.T) (state, outside string, s *store.Store) {
	t.Helper()
	base := t.TempDir()
	state = filepath.Join(base, "proj", ".intermem")
	outside = filepath.Join(base, "outside")
	for _, d := range []string{state, outside} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	s, err := store.Open(filepath.Join(state, "intermem.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return state, outside, s
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

// A spool that is a link to a directory elsewhere: ingest reads nothing
// there, moves nothing out of it and deletes nothing in it; spooling does
// not write into it.
func TestIngestRefusesLinkedSpool(t *testing.T) {
	state, outside, s := spoolFixture(t)
	for _, n := range []string{"a.json", "garbage.json", "notes.txt"} {
		body := `{"session_id":"S","at":"2026-11-01T09:00:00Z","fp":"f","files":[],"entries":[]}`
		if n != "a.json" {
			body = "not json"
		}
		if err := os.WriteFile(filepath.Join(outside, n), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, SpoolDir(state)); err != nil {
		t.Fatal(err)
	}
	n, err := Ingest(s, state, "", nil)
	if n != 0 || !errors.Is(err, confine.ErrLink) {
		t.Fatalf("Ingest = %d, %v; want 0 and ErrLink", n, err)
	}
	if got := names(t, outside); len(got) != 3 || got[0] != "a.json" || got[1] != "garbage.json" || got[2] != "notes.txt" {
		t.Fatalf("outside directory changed: %v", got)
	}
	if err := Spool(state, Observation{SessionID: "S", At: time.Now()}); !errors.Is(err, confine.ErrLink) {
		t.Fatalf("Spool into a linked spool: err = %v, want ErrLink", err)
	}
	if got := names(t, outside); len(got) != 3 {
		t.Fatalf("Spool wrote into the outside directory: %v", got)
	}
}

// Entries of a real spool that are links or FIFOs are never read through
// (a FIFO would block) nor their targets touched; the entries themselves
// are set aside.
func TestIngestReadsOnlyRegularFiles(t *testing.T) {
	state, outside, s := spoolFixture(t)
	spool := SpoolDir(state)
	if err := Spool(state, Observation{SessionID: "S", At: time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC), Fingerprint: "f"}); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(outside, "id_rsa.json")
	body := `{"session_id":"planted","at":"2026-11-01T09:00:00Z","fp":"f","files":[],"entries":[]}`
	if err := os.WriteFile(secret, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(spool, "link.json")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(spool, "fifo.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	// bad/ as a link elsewhere: nothing is moved into it.
	if err := os.Symlink(outside, filepath.Join(spool, "bad")); err != nil {
		t.Fatal(err)
	}
	var logged []string
	n, err := Ingest(s, state, "", func(f string, a ...any) { logged = append(logged, f) })
	if err != nil || n != 1 {
		t.Fatalf("Ingest = %d, %v; want the one real observation", n, err)
	}
	if b, _ := os.ReadFile(secret); string(b) != body {
		t.Error("the link's target changed")
	}
	if got := names(t, outside); len(got) != 1 {
		t.Errorf("something was moved into the linked bad/: %v", got)
	}
	// With a real bad/, the odd entries are set aside as they are.
	os.Remove(filepath.Join(spool, "bad"))
	if _, err := Ingest(s, state, "", nil); err != nil {
		t.Fatal(err)
	}
	if got := names(t, filepath.Join(spool, "bad")); len(got) != 2 || got[0] != "fifo.json" || got[1] != "link.json" {
		t.Errorf("bad/ holds %v, want fifo.json and link.json", got)
	}
	if st, err := os.Lstat(filepath.Join(spool, "bad", "link.json")); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Error("the link was not moved as a link")
	}
	if _, err := os.Stat(secret); err != nil {
		t.Error("the link's target was moved or deleted")
	}
	var sess store.Session
	s.View(func(tx *bolt.Tx) error {
		_, err := store.Get(tx, store.BucketSessions, "planted", &sess)
		return err
	})
	if sess.ID != "" {
		t.Error("the observation behind the link was ingested")
	}
}

// An observation spooled by an older build (files and entries, no
// listing) is recorded by Record, which removes the states of the files
// it no longer lists: only theirs. The sweeps' records beside them in the
// files bucket (keys that start with a NUL byte: a chunk, the removal of
// gone files' states, the sub-folder files) are no memory file's, and a
// chunk or the removal's record decodes as a file state: they used to go
// with the gone files, and a sweep lost its chunks and where its removal
// stood.
func TestIngestOldSpoolKeepsSweepRecords(t *testing.T) {
	state, _, s := spoolFixture(t)
	at := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	chunkKey := store.ChunkPrefix + "d1/false/0/0"
	chunk := store.Chunk{Sum: "sum", At: at.Add(-time.Hour), Sessions: []string{"S0"}}
	gone := store.Gone{Dir: "d1", After: "a.md", Active: true}
	subs := []string{"sub/a.md"}
	err := s.Update(func(tx *bolt.Tx) error {
		for _, f := range []string{"MEMORY.md", "gone.md"} {
			if err := store.PutFileState(tx, f, &store.FileState{At: at.Add(-time.Hour), IDs: []string{"3333333333333333"}}); err != nil {
				return err
			}
		}
		if err := store.PutChunk(tx, chunkKey, &chunk); err != nil {
			return err
		}
		if err := store.PutGone(tx, &gone); err != nil {
			return err
		}
		return store.PutSubs(tx, subs)
	})
	if err != nil {
		t.Fatal(err)
	}
	old := Observation{SessionID: "S", At: at, Fingerprint: "f", Files: []string{"MEMORY.md"},
		Entries: []Seen{{ID: "4444444444444444", Kind: "fact", File: "MEMORY.md", Preview: "a fact"}}}
	if err := Spool(state, old); err != nil {
		t.Fatal(err)
	}
	if n, err := Ingest(s, state, "", nil); n != 1 || err != nil {
		t.Fatalf("Ingest = %d, %v; want the one observation", n, err)
	}
	s.View(func(tx *bolt.Tx) error {
		if _, ok, err := store.GetFileState(tx, "gone.md"); ok || err != nil {
			t.Errorf("gone.md's state: ok %v, err %v; want it removed (the observation does not list it)", ok, err)
		}
		if st, ok, err := store.GetFileState(tx, "MEMORY.md"); !ok || err != nil || !st.At.Equal(at) {
			t.Errorf("MEMORY.md's state: %+v, ok %v, err %v; want the observation's", st, ok, err)
		}
		if c, ok, err := store.GetChunk(tx, chunkKey); !ok || err != nil || c.Sum != chunk.Sum {
			t.Errorf("the sweep's chunk: %+v, ok %v, err %v; want it kept", c, ok, err)
		}
		if g, ok, err := store.GetGone(tx); !ok || err != nil || g != gone {
			t.Errorf("the removal of gone files' states: %+v, ok %v, err %v; want %+v kept", g, ok, err, gone)
		}
		if got, err := store.GetSubs(tx); err != nil || len(got) != 1 || got[0] != subs[0] {
			t.Errorf("the sub-folder files: %v, %v; want %v kept", got, err, subs)
		}
		return nil
	})
}

// A spooled observation is hostile input: one that names a file by a key
// of the sweeps' records (no memory file's name holds a NUL byte) records
// nothing under it, and the record stays as the sweep wrote it.
func TestIngestSpoolNamingASweepRecord(t *testing.T) {
	state, _, s := spoolFixture(t)
	at := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	chunkKey := store.ChunkPrefix + "d1/false/0/0"
	chunk := store.Chunk{Sum: "sum", At: at.Add(-time.Hour), Sessions: []string{"S0"}}
	gone := store.Gone{Dir: "d1", After: "a.md", Active: true}
	err := s.Update(func(tx *bolt.Tx) error {
		if err := store.PutChunk(tx, chunkKey, &chunk); err != nil {
			return err
		}
		return store.PutGone(tx, &gone)
	})
	if err != nil {
		t.Fatal(err)
	}
	planted := Observation{SessionID: "S", At: at, Fingerprint: "f", Files: []string{"MEMORY.md", "\x00gone", chunkKey},
		Entries: []Seen{
			{ID: "5555555555555555", Kind: "fact", File: "MEMORY.md", Preview: "a fact"},
			{ID: "6666666666666666", Kind: "fact", File: "\x00gone", Preview: "planted"},
			{ID: "7777777777777777", Kind: "fact", File: chunkKey, Preview: "planted"},
		}}
	if err := Spool(state, planted); err != nil {
		t.Fatal(err)
	}
	if n, err := Ingest(s, state, "", nil); n != 1 || err != nil {
		t.Fatalf("Ingest = %d, %v; want the one observation", n, err)
	}
	s.View(func(tx *bolt.Tx) error {
		if c, ok, err := store.GetChunk(tx, chunkKey); !ok || err != nil || c.Sum != chunk.Sum || !c.At.Equal(chunk.At) {
			t.Errorf("the sweep's chunk: %+v, ok %v, err %v; want %+v kept", c, ok, err, chunk)
		}
		if g, ok, err := store.GetGone(tx); !ok || err != nil || g != gone {
			t.Errorf("the removal of gone files' states: %+v, ok %v, err %v; want %+v kept", g, ok, err, gone)
		}
		for _, id := range []string{"6666666666666666", "7777777777777777"} {
			if _, ok, err := store.GetSeen(tx, id); ok || err != nil {
				t.Errorf("entry %s of a file named by a sweep's key was recorded (err %v)", id, err)
			}
		}
		if _, ok, err := store.GetSeen(tx, "5555555555555555"); !ok || err != nil {
			t.Errorf("MEMORY.md's entry: ok %v, err %v; want it recorded", ok, err)
		}
		return nil
	})
}
