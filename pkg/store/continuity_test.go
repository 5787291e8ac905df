package store

import (
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// A schema-3 store (before continuity) keeps its data, reads as having no
// head and no checkpoints while opened read-only, and gains continuity's
// buckets at its first read-write open.
func TestMigrateFrom3(t *testing.T) {
	path := filepath.Join(t.TempDir(), "intermem.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{BucketCheckpoints, BucketPhases, BucketDecided, BucketHead} {
			if err := tx.DeleteBucket(b); err != nil {
				return err
			}
		}
		if err := Put(tx, BucketFacts, "aaaa", &Fact{Confidence: 0.5}); err != nil {
			return err
		}
		return tx.Bucket(BucketMeta).Put([]byte("schema"), []byte("3"))
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()

	r, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	r.View(func(tx *bolt.Tx) error {
		if h, err := GetHead(tx); err != nil || h.Phase != nil {
			t.Errorf("schema-3 head = %+v, %v; want none", h, err)
		}
		if cs, err := Checkpoints(tx); err != nil || len(cs) != 0 {
			t.Errorf("schema-3 checkpoints = %v, %v", cs, err)
		}
		return nil
	})
	r.Close()

	w, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	two := 2
	now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	err = w.Update(func(tx *bolt.Tx) error {
		if v := string(tx.Bucket(BucketMeta).Get([]byte("schema"))); v != "5" {
			t.Errorf("schema after migration = %q, want 5", v)
		}
		for _, b := range [][]byte{BucketCheckpoints, BucketPhases, BucketDecided, BucketHead} {
			if tx.Bucket(b) == nil {
				t.Errorf("no bucket %s after migration", b)
			}
		}
		var f Fact
		if ok, _ := Get(tx, BucketFacts, "aaaa", &f); !ok || f.Confidence != 0.5 {
			t.Errorf("fact lost in migration: %+v", f)
		}
		if err := PutPhase(tx, &Phase{N: 2, Started: now, Status: StatusValid}); err != nil {
			return err
		}
		return PutHead(tx, Head{Phase: &two, Checkpoint: "phase2-x"})
	})
	if err != nil {
		t.Fatal(err)
	}
	w.View(func(tx *bolt.Tx) error {
		if p, ok, err := GetPhase(tx, 2); err != nil || !ok || p.N != 2 {
			t.Errorf("phase 2 = %+v %v %v", p, ok, err)
		}
		if h, _ := GetHead(tx); h.Phase == nil || *h.Phase != 2 || h.Checkpoint != "phase2-x" {
			t.Errorf("head = %+v", h)
		}
		return nil
	})
}

// A phase record stored under another phase's key is not that phase.
func TestPhaseUnderWrongKey(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "intermem.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Update(func(tx *bolt.Tx) error {
		return Put(tx, BucketPhases, PhaseKey(1), &Phase{N: 7, Status: StatusValid})
	})
	s.View(func(tx *bolt.Tx) error {
		if _, ok, _ := GetPhase(tx, 1); ok {
			t.Error("phase 1 read from a record of phase 7")
		}
		if ps, _ := Phases(tx); len(ps) != 0 {
			t.Errorf("phases = %+v, want none", ps)
		}
		return nil
	})
}
