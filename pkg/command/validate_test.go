package command

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/catalog"
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
			{ID: "bbbbbbbbbbbbbbbb", Source: "auto-memory", Where: "memory/MEMORY.md:5", Status: validate.OK, Confidence: conf},
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
	// And in the overlay, of every entry, with when.
	s.View(func(tx *bolt.Tx) error {
		o, ok := store.Catalog(tx).Overlay("bbbbbbbbbbbbbbbb")
		if !ok || o.Confidence != 0.3 || o.Status != validate.OK || !o.Validated.Equal(now.Add(3*time.Hour)) {
			t.Errorf("overlay = %+v, %v; want confidence 0.3, ok, validated at the last run", o, ok)
		}
		return nil
	})
}

// A validation records the cited files' blobs; the next says which of
// them changed, and since when, and the one after that no longer does.
func TestChangedSinceValidated(t *testing.T) {
	s, err := store.Open(filepath.Join(t.TempDir(), "intermem.db"), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	first := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	run := func(at time.Time, blobs map[string]string) *validate.Report {
		rep := &validate.Report{Commit: "0123456789abcdef0123456789abcdef01234567", Entries: []validate.Entry{
			{ID: "cccccccccccccccc", Source: "compound", Where: "docs/solutions/x.md:1", Status: validate.OK, Confidence: 0.8, Blobs: blobs},
		}}
		if err := s.Update(func(tx *bolt.Tx) error { return recordChecks(tx, rep, at) }); err != nil {
			t.Fatal(err)
		}
		return rep
	}
	if rep := run(first, map[string]string{"a.go": "1111111", "b.go": "2222222"}); rep.Changed != 0 || rep.Entries[0].Changed != nil {
		t.Errorf("first validation: changed %d %v, want nothing", rep.Changed, rep.Entries[0].Changed)
	}
	rep := run(first.Add(time.Hour), map[string]string{"a.go": "1111111", "b.go": "3333333"})
	e := rep.Entries[0]
	if rep.Changed != 1 || len(e.Changed) != 1 || e.Changed[0] != (catalog.Drift{Path: "b.go", Was: "2222222", Now: "3333333"}) {
		t.Errorf("second validation: changed %d %+v, want b.go 2222222 → 3333333", rep.Changed, e.Changed)
	}
	if !e.LastValidated.Equal(first) || e.LastCommit != "0123456789abcdef0123456789abcdef01234567" {
		t.Errorf("last validated %v at %q, want the first run's", e.LastValidated, e.LastCommit)
	}
	if rep := run(first.Add(2*time.Hour), map[string]string{"a.go": "1111111"}); len(rep.Entries[0].Changed) != 1 || rep.Entries[0].Changed[0].Now != "" {
		t.Errorf("a cited file no longer hashed: %+v, want b.go gone", rep.Entries[0].Changed)
	}
	if rep := run(first.Add(3*time.Hour), map[string]string{"a.go": "1111111"}); rep.Changed != 0 {
		t.Errorf("unchanged since: changed %d, want 0", rep.Changed)
	}
}
