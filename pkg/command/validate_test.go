package command

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/store"
	"github.com/intermem/intermem/pkg/validate"
)

// Every validation of a promoted fact is kept; an auto-memory entry's is
// kept only when its status or confidence changed.
func TestAuditTrail(t *testing.T) {
	s, err := store.Open(filepath.Join(t.TempDir(), "intermem.db"), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	report := func(conf float64) *validate.Report {
		return &validate.Report{Entries: []validate.Entry{
			{ID: "aaaaaaaaaaaaaaaa", Promoted: true, Where: "AGENTS.md:3", Status: validate.OK, Confidence: 0.8},
			{ID: "bbbbbbbbbbbbbbbb", Where: "memory/MEMORY.md:5", Status: validate.OK, Confidence: conf},
		}}
	}
	now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	for i, conf := range []float64{0.8, 0.8, 0.8, 0.3} {
		if err := s.Update(func(tx *bolt.Tx) error { return recordChecks(tx, report(conf), now.Add(time.Duration(i)*time.Hour)) }); err != nil {
			t.Fatal(err)
		}
	}
	counts := map[string]int{}
	s.View(func(tx *bolt.Tx) error {
		return tx.Bucket(store.BucketChecks).ForEach(func(k, _ []byte) error {
			id, _, _ := strings.Cut(string(k), "/")
			counts[id]++
			return nil
		})
	})
	if counts["aaaaaaaaaaaaaaaa"] != 4 {
		t.Errorf("promoted fact: %d checks kept, want all 4", counts["aaaaaaaaaaaaaaaa"])
	}
	if counts["bbbbbbbbbbbbbbbb"] != 2 {
		t.Errorf("memory entry: %d checks kept, want 2 (the first, and the change)", counts["bbbbbbbbbbbbbbbb"])
	}
	// The latest confidence of the memory entry is kept for ranking.
	var f store.Fact
	s.View(func(tx *bolt.Tx) error {
		_, err := store.Get(tx, store.BucketFacts, "bbbbbbbbbbbbbbbb", &f)
		return err
	})
	if f.Confidence != 0.3 {
		t.Errorf("latest confidence = %v, want 0.3", f.Confidence)
	}
}
