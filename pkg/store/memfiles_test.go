package store

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// TestMemFileRecordsKeepTheirBytes: the records package snapshot keeps
// through the typed accessors are stored under the keys and in the bytes
// it wrote before they were typed here (a store written by an older build
// reads the same, and the other way round), and read back as written.
func TestMemFileRecordsKeepTheirBytes(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "intermem.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	at := time.Date(2026, 10, 5, 9, 0, 0, 0, time.UTC)
	want := map[string]string{
		"sessions/s1":                 `{"id":"s1","first":"2026-10-05T09:00:00Z","last":"2026-10-05T09:00:00Z","observations":2,"fp":"f"}`,
		"files/MEMORY.md":             `{"at":"2026-10-05T09:00:00Z","ids":["a","b"],"fp":"x","sub":["d/n.md"]}`,
		"files/\x00subs":              `["d/n.md"]`,
		"files/\x00chunk/D/false/0/0": `{"sum":"s","at":"2026-10-05T09:00:00Z","sessions":["s1"]}`,
		"files/\x00gone":              `{"dir":"D","after":"k","active":true}`,
	}
	if err := s.Update(func(tx *bolt.Tx) error {
		for _, err := range []error{
			PutSession(tx, "s1", &Session{ID: "s1", First: at, Last: at, Observations: 2, Fingerprint: "f"}),
			PutFileState(tx, "MEMORY.md", &FileState{At: at, IDs: []string{"a", "b"}, FP: "x", Sub: []string{"d/n.md"}}),
			PutSubs(tx, []string{"d/n.md"}),
			PutChunk(tx, ChunkPrefix+"D/false/0/0", &Chunk{Sum: "s", At: at, Sessions: []string{"s1"}}),
			PutGone(tx, &Gone{Dir: "D", After: "k", Active: true}),
		} {
			if err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	s.View(func(tx *bolt.Tx) error {
		for key, w := range want {
			bucket, k, _ := strings.Cut(key, "/")
			if got := string(tx.Bucket([]byte(bucket)).Get([]byte(k))); got != w {
				t.Errorf("%q = %s, want %s", key, got, w)
			}
		}
		if sess, ok, err := GetSession(tx, "s1"); !ok || err != nil || sess.Observations != 2 || !sess.Last.Equal(at) {
			t.Errorf("GetSession = %+v, %v, %v", sess, ok, err)
		}
		if st, ok, err := GetFileState(tx, "MEMORY.md"); !ok || err != nil || !slices.Equal(st.IDs, []string{"a", "b"}) {
			t.Errorf("GetFileState = %+v, %v, %v", st, ok, err)
		}
		if subs, err := GetSubs(tx); err != nil || !slices.Equal(subs, []string{"d/n.md"}) {
			t.Errorf("GetSubs = %q, %v", subs, err)
		}
		if c, ok, err := GetChunk(tx, ChunkPrefix+"D/false/0/0"); !ok || err != nil || c.Sum != "s" {
			t.Errorf("GetChunk = %+v, %v, %v", c, ok, err)
		}
		if g, ok, err := GetGone(tx); !ok || err != nil || g != (Gone{Dir: "D", After: "k", Active: true}) {
			t.Errorf("GetGone = %+v, %v, %v", g, ok, err)
		}
		if _, ok, err := GetSession(tx, "nobody"); ok || err != nil {
			t.Errorf("GetSession of no session: %v, %v", ok, err)
		}
		return nil
	})
}

// TestFileKeysWalk: FileKeysAfter walks BucketFiles a few keys a call,
// from after the last key the previous call gave, and says when it met
// the last; DropOtherChunks removes the chunks of other directories
// alone; DeleteFileStates removes what it is given.
func TestFileKeysWalk(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "intermem.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Update(func(tx *bolt.Tx) error {
		if !FileKeysAfter(tx, "", 2, func(string) { t.Error("a key in an empty store") }) {
			t.Error("an empty store's walk did not end")
		}
		for _, k := range []string{"a.md", "b.md", "c.md", "d/e.md"} {
			if err := PutFileState(tx, k, &FileState{IDs: []string{}}); err != nil {
				return err
			}
		}
		for _, k := range []string{ChunkPrefix + "old/true/1/0", ChunkPrefix + "new/false/0/0", ChunkPrefix + "newer/false/0/0"} {
			if err := PutChunk(tx, k, &Chunk{Sum: k}); err != nil {
				return err
			}
		}
		return PutGone(tx, &Gone{Dir: "new", Active: true})
	}); err != nil {
		t.Fatal(err)
	}
	s.Update(func(tx *bolt.Tx) error {
		var walked [][]string
		after := ""
		for end := false; !end; {
			var got []string
			end = FileKeysAfter(tx, after, 3, func(k string) { got = append(got, k); after = k })
			walked = append(walked, got)
		}
		want := [][]string{
			{"\x00chunk/new/false/0/0", "\x00chunk/newer/false/0/0", "\x00chunk/old/true/1/0"},
			{"\x00gone", "a.md", "b.md"},
			{"c.md", "d/e.md"},
		}
		if !slices.EqualFunc(walked, want, slices.Equal) {
			t.Errorf("walk %q, want %q", walked, want)
		}
		if err := DropOtherChunks(tx, "new"); err != nil {
			t.Fatal(err)
		}
		if err := DeleteFileStates(tx, []string{"b.md", "d/e.md", "nothing.md"}); err != nil {
			t.Fatal(err)
		}
		var left []string
		FileKeysAfter(tx, "", 100, func(k string) { left = append(left, k) })
		if want := []string{"\x00chunk/new/false/0/0", "\x00gone", "a.md", "c.md"}; !slices.Equal(left, want) {
			t.Errorf("left %q, want %q", left, want)
		}
		return nil
	})
}
