package store

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// writeSchema4 writes, as the intermem of schema 4 did, a store whose
// entry records hold their counts: three records as that build encoded
// them (one with its last sighting at nanosecond precision, one never
// seen by a session) and one that no longer decodes.
func writeSchema4(t *testing.T, path string) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(func(tx *bolt.Tx) error {
		for _, b := range allBuckets() {
			if bytes.Equal(b, BucketSightings) {
				continue // schema 5's
			}
			if _, err := tx.CreateBucket(b); err != nil {
				return err
			}
		}
		meta := tx.Bucket(BucketMeta)
		for k, v := range map[string]string{"schema": "4", "id": "0123456789abcdef0123456789abcdef", "created": "2026-09-01T00:00:00Z"} {
			if err := meta.Put([]byte(k), []byte(v)); err != nil {
				return err
			}
		}
		entries := tx.Bucket(BucketEntries)
		for k, v := range map[string]string{
			"aaaaaaaaaaaaaaaa": `{"id":"aaaaaaaaaaaaaaaa","kind":"fact","file":"MEMORY.md","section":"Build","preview":"Run the ledger tests with -race.","first_seen":"2026-10-01T09:00:00Z","last_seen":"2026-10-03T10:30:00.123456789Z","sessions":3,"last_session":"s3","first_session":"s1"}`,
			"bbbbbbbbbbbbbbbb": `{"id":"bbbbbbbbbbbbbbbb","kind":"fact","file":"ledger.md","preview":"The cursor is 1-based.","first_seen":"2026-10-02T11:00:00Z","last_seen":"2026-10-02T11:00:00Z","sessions":1,"last_session":"s2","prev":"cccccccccccccccc","agent":"a7","agent_type":"Explore"}`,
			"dddddddddddddddd": `{"id":"dddddddddddddddd","kind":"fact","file":"MEMORY.md","preview":"Imported.","first_seen":"0001-01-01T00:00:00Z","last_seen":"0001-01-01T00:00:00Z","sessions":0}`,
			"eeeeeeeeeeeeeeee": `{"id":`,
		} {
			if err := entries.Put([]byte(k), []byte(v)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// counts renders what every reader of a store says of each entry's count:
// GetSeen, EachSeen, the catalog's Seen and the session start's Glancer.
func counts(t *testing.T, s *Store) string {
	t.Helper()
	var out bytes.Buffer
	if err := s.View(func(tx *bolt.Tx) error {
		each := map[string]Entry{}
		if err := EachSeen(tx, func(e *Entry) error { each[e.ID] = *e; return nil }); err != nil {
			return err
		}
		g := NewGlancer(tx)
		for _, id := range []string{"aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb", "dddddddddddddddd", "ffffffffffffffff"} {
			e, ok, err := GetSeen(tx, id)
			if err != nil {
				return err
			}
			c, cok := Catalog(tx).Seen(id)
			gl, gok := g.Glance(id)
			fmt.Fprintf(&out, "%s ok=%v sessions=%d first=%s last=%s prev=%q agent=%q",
				id, ok, e.Sessions, e.FirstSeen.Format(time.RFC3339Nano), e.LastSeen.Format(time.RFC3339Nano), e.Prev, e.Agent)
			if ev := each[id]; ev.Sessions != e.Sessions || !ev.FirstSeen.Equal(e.FirstSeen) || !ev.LastSeen.Equal(e.LastSeen) {
				fmt.Fprintf(&out, " EachSeen=%d/%s/%s", ev.Sessions, ev.FirstSeen, ev.LastSeen)
			}
			if cok != ok || c.Sessions != e.Sessions || !c.LastSeen.Equal(e.LastSeen) {
				fmt.Fprintf(&out, " Catalog.Seen=%v/%d/%s", cok, c.Sessions, c.LastSeen)
			}
			if gok && (gl.Sessions != e.Sessions || !gl.LastSeen().Equal(e.LastSeen)) {
				fmt.Fprintf(&out, " Glance=%d/%s", gl.Sessions, gl.LastSeen())
			}
			out.WriteString("\n")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// A store of schema 4 reads the same counts as it did, read-only (not
// migrated: counts from the records) and after the first read-write open
// migrates it in one transaction (counts from the sightings, the records
// rewritten without them).
func TestMigrateFrom4MovesCounts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "intermem.db")
	writeSchema4(t, path)
	want := `aaaaaaaaaaaaaaaa ok=true sessions=3 first=2026-10-01T09:00:00Z last=2026-10-03T10:30:00.123456789Z prev="" agent=""
bbbbbbbbbbbbbbbb ok=true sessions=1 first=2026-10-02T11:00:00Z last=2026-10-02T11:00:00Z prev="cccccccccccccccc" agent="a7"
dddddddddddddddd ok=true sessions=0 first=0001-01-01T00:00:00Z last=0001-01-01T00:00:00Z prev="" agent=""
ffffffffffffffff ok=false sessions=0 first=0001-01-01T00:00:00Z last=0001-01-01T00:00:00Z prev="" agent=""
`
	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := counts(t, ro); got != want {
		t.Errorf("schema 4 read-only:\n%s\nwant\n%s", got, want)
	}
	ro.Close()

	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := counts(t, s); got != want {
		t.Errorf("after the migration:\n%s\nwant\n%s", got, want)
	}
	s.View(func(tx *bolt.Tx) error {
		if v := string(tx.Bucket(BucketMeta).Get([]byte("schema"))); v != "5" {
			t.Errorf("schema = %q, want 5", v)
		}
		if n := tx.Bucket(BucketSightings).Stats().KeyN; n != 3 {
			t.Errorf("%d sightings, want 3 (the records that decode)", n)
		}
		entries := tx.Bucket(BucketEntries)
		for _, field := range []string{`"sessions"`, `"first_seen"`, `"last_seen"`, `"last_session"`} {
			for _, id := range []string{"aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb"} {
				if raw := entries.Get([]byte(id)); bytes.Contains(raw, []byte(field)) {
					t.Errorf("record %s still holds %s after the migration: %s", id, field, raw)
				}
			}
		}
		if raw := string(entries.Get([]byte("eeeeeeeeeeeeeeee"))); raw != `{"id":` {
			t.Errorf("a record that does not decode became %q, want it kept as it was", raw)
		}
		if raw := string(entries.Get([]byte("bbbbbbbbbbbbbbbb"))); raw != `{"id":"bbbbbbbbbbbbbbbb","kind":"fact","file":"ledger.md","preview":"The cursor is 1-based.","prev":"cccccccccccccccc","agent":"a7","agent_type":"Explore"}` {
			t.Errorf("record after the migration: %s", raw)
		}
		return nil
	})
}

// A sighting is 28 bytes whatever the times; one of another length, or
// with nanoseconds past a second, is not one.
func TestSightingEncoding(t *testing.T) {
	for _, s := range []Sighting{
		{},
		{Sessions: 7, FirstSeen: time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC), LastSeen: time.Date(2026, 10, 3, 10, 30, 0, 123456789, time.UTC)},
		{Sessions: 1, FirstSeen: time.Date(1969, 7, 20, 20, 17, 0, 0, time.UTC), LastSeen: time.Date(3000, 1, 1, 0, 0, 0, 1, time.UTC)},
	} {
		raw := s.encode()
		if len(raw) != 28 {
			t.Fatalf("%+v encodes in %d bytes, want 28", s, len(raw))
		}
		got, ok := decodeSighting(raw)
		if !ok || got.Sessions != s.Sessions || !got.FirstSeen.Equal(s.FirstSeen) || !got.LastSeen.Equal(s.LastSeen) || got.FirstSeen.IsZero() != s.FirstSeen.IsZero() {
			t.Errorf("%+v decodes as %+v, %v", s, got, ok)
		}
	}
	bad := Sighting{Sessions: 1}.encode()
	bad[27] = 0xff // nanoseconds 0x3b9aca..ff, past a second
	bad[24], bad[25], bad[26] = 0xff, 0xff, 0xff
	if _, ok := decodeSighting(bad); ok {
		t.Error("a sighting with nanoseconds past a second decodes")
	}
	if _, ok := decodeSighting(make([]byte, 27)); ok {
		t.Error("27 bytes decode as a sighting")
	}
}
