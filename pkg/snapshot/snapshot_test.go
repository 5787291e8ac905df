package snapshot

import (
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
		_, err := store.Get(tx, store.BucketEntries, "1111111111111111", &rec)
		return err
	})
	if rec.Sessions != 2 {
		t.Fatalf("sessions = %d, want 2 (A and B, whatever the number of observations)", rec.Sessions)
	}
}
