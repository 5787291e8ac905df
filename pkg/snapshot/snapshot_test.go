package snapshot

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/store"
)

// Several observations of one session recorded in one transaction (how
// spooled observations are ingested) count the session once.
func TestRecordCountsASessionOnceInOneTransaction(t *testing.T) {
	s, err := store.Open(filepath.Join(t.TempDir(), "intermem.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	at := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	obs := func(session string, d time.Duration) Observation {
		return Observation{SessionID: session, At: at.Add(d), Fingerprint: "f", Files: []string{"MEMORY.md"},
			Entries: []Seen{{ID: "1111111111111111", Kind: "fact", File: "MEMORY.md", Preview: "a fact"}}}
	}
	err = s.Update(func(tx *bolt.Tx) error {
		for i, o := range []Observation{obs("A", 0), obs("A", time.Minute), obs("A", 2*time.Minute), obs("B", time.Hour), obs("B", 2*time.Hour)} {
			if err := Record(tx, o); err != nil {
				t.Fatalf("observation %d: %v", i, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var rec store.Entry
	s.View(func(tx *bolt.Tx) error {
		var err error
		rec, _, err = store.GetSeen(tx, "1111111111111111")
		return err
	})
	if rec.Sessions != 2 {
		t.Fatalf("sessions = %d, want 2 (A and B, whatever the number of observations)", rec.Sessions)
	}
}

// The same entry in two files of one observation counts once.
func TestRecordDuplicateEntriesCountOnce(t *testing.T) {
	s, err := store.Open(filepath.Join(t.TempDir(), "intermem.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	at := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	o := Observation{SessionID: "A", At: at, Fingerprint: "f", Files: []string{"MEMORY.md", "topic.md"},
		Entries: []Seen{
			{ID: "2222222222222222", Kind: "fact", File: "MEMORY.md", Preview: "same fact"},
			{ID: "2222222222222222", Kind: "fact", File: "topic.md", Preview: "same fact"},
		}}
	if err := s.Update(func(tx *bolt.Tx) error { return Record(tx, o) }); err != nil {
		t.Fatal(err)
	}
	var rec store.Entry
	s.View(func(tx *bolt.Tx) error {
		var err error
		rec, _, err = store.GetSeen(tx, "2222222222222222")
		return err
	})
	if rec.Sessions != 1 {
		t.Fatalf("sessions = %d, want 1", rec.Sessions)
	}
}

// BenchmarkRecordFirstObservation100k is a first observation of a very
// large memory: every entry new. (Random-order inserts took 25–53 s here;
// key-ordered ones about a second.)
func BenchmarkRecordFirstObservation100k(b *testing.B) {
	entries := make([]Seen, 100000)
	for i := range entries {
		entries[i] = Seen{ID: fmt.Sprintf("%016x", uint64(i)*0x9E3779B97F4A7C15), Kind: "fact", File: fmt.Sprintf("t%03d.md", i%100), Preview: "a fact"}
	}
	files := make([]string, 100)
	for i := range files {
		files[i] = fmt.Sprintf("t%03d.md", i)
	}
	for b.Loop() {
		b.StopTimer()
		s, err := store.Open(filepath.Join(b.TempDir(), "intermem.db"), store.Options{NoSync: true})
		if err != nil {
			b.Fatal(err)
		}
		o := Observation{SessionID: "A", At: time.Unix(0, 0), Fingerprint: "f", Files: files, Entries: entries}
		b.StartTimer()
		if err := s.Update(func(tx *bolt.Tx) error { return Record(tx, o) }); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		s.Close()
		b.StartTimer()
	}
}
