package store

import (
	"bytes"
	"time"

	bolt "go.etcd.io/bbolt"
)

// RecordCheck appends rec to the audit trail of rec.ID (BucketChecks, key
// "<id>/<time>") and trims the trail to MaxChecksPerEntry. With always
// false, a check that says the same as the entry's latest one (status,
// confidence, where) is not recorded: a large memory would otherwise grow
// the store by one record per entry per run.
func RecordCheck(tx *bolt.Tx, rec *Check, always bool) error {
	b, err := tx.CreateBucketIfNotExists(BucketChecks)
	if err != nil {
		return err
	}
	if !always {
		if last, ok := LatestCheck(tx, rec.ID); ok && last.Status == rec.Status && last.Confidence == rec.Confidence && last.Where == rec.Where {
			return nil
		}
	}
	if err := Put(tx, BucketChecks, rec.ID+"/"+rec.At.Format(time.RFC3339Nano), rec); err != nil {
		return err
	}
	prefix := []byte(rec.ID + "/")
	var keys [][]byte
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		keys = append(keys, append([]byte{}, k...))
	}
	for len(keys) > MaxChecksPerEntry {
		if err := b.Delete(keys[0]); err != nil {
			return err
		}
		keys = keys[1:]
	}
	return nil
}

// PutFact records the latest validated confidence of an auto-memory entry.
func PutFact(tx *bolt.Tx, id string, f *Fact) error { return Put(tx, BucketFacts, id, f) }

// GetPromoted returns the promotion record of id; ok is false when there
// is none (or it no longer decodes).
func GetPromoted(tx *bolt.Tx, id string) (p Promoted, ok bool) {
	ok, err := Get(tx, BucketPromoted, id, &p)
	return p, ok && err == nil
}

// PutPromoted stores a promotion record under its id.
func PutPromoted(tx *bolt.Tx, p *Promoted) error { return Put(tx, BucketPromoted, p.ID, p) }

// EachPromoted calls fn with every promotion record.
func EachPromoted(tx *bolt.Tx, fn func(p *Promoted) error) error {
	return Each(tx, BucketPromoted, func(id string, p *Promoted) error {
		if p.ID == "" {
			p.ID = id
		}
		return fn(p)
	})
}

// PlanDecisions returns the ids of every promotion record and every rejection:
// what a plan no longer offers. tx may be nil (no store yet).
func PlanDecisions(tx *bolt.Tx) (promoted, rejected map[string]bool, err error) {
	promoted, rejected = map[string]bool{}, map[string]bool{}
	if tx == nil {
		return promoted, rejected, nil
	}
	if err := Each(tx, BucketPromoted, func(id string, _ *Promoted) error {
		promoted[id] = true
		return nil
	}); err != nil {
		return nil, nil, err
	}
	if rejected, err = Rejected(tx); err != nil {
		return nil, nil, err
	}
	return promoted, rejected, nil
}

// DeletePromoted forgets the promotion record of id.
func DeletePromoted(tx *bolt.Tx, id string) error { return Delete(tx, BucketPromoted, id) }

// HasPromoted reports whether a promotion record of id is stored. Unlike
// GetPromoted, a record that no longer decodes is an error, not none: a
// writer that would otherwise put a record in its place stops instead.
func HasPromoted(tx *bolt.Tx, id string) (bool, error) {
	var p Promoted
	return Get(tx, BucketPromoted, id, &p)
}

// GetSeen returns what the hooks recorded of the auto-memory entry id
// (its record joined with its sighting); ok is false when nothing is, and
// a record that no longer decodes is an error. The record's ID is id.
func GetSeen(tx *bolt.Tx, id string) (e Entry, ok bool, err error) {
	ok, err = Get(tx, BucketEntries, id, &e)
	if ok {
		join(sightings(tx), id, &e)
		if e.ID == "" {
			e.ID = id
		}
	}
	return e, ok, err
}

// PutSeen stores what is recorded of an auto-memory entry under its ID:
// its record and its sighting.
func PutSeen(tx *bolt.Tx, e *Entry) error {
	if err := PutEntryRecord(tx, e); err != nil {
		return err
	}
	return PutSighting(tx, e.ID, sightingOf(e))
}

// EachSeen calls fn with what the hooks recorded of every auto-memory
// entry (each record joined with its sighting), in key order.
func EachSeen(tx *bolt.Tx, fn func(e *Entry) error) error {
	b := sightings(tx)
	return Each(tx, BucketEntries, func(id string, e *Entry) error {
		join(b, id, e)
		if e.ID == "" {
			e.ID = id
		}
		return fn(e)
	})
}

// currentPlan is the key of the plan "apply" acts on.
const currentPlan = "current"

// PutPlan saves the plan apply acts on (BucketPlans; the value is the
// plan package's Plan, which the store does not know).
func PutPlan(tx *bolt.Tx, plan any) error { return Put(tx, BucketPlans, currentPlan, plan) }

// GetPlan decodes the saved plan into plan; ok is false when there is
// none.
func GetPlan(tx *bolt.Tx, plan any) (ok bool, err error) {
	return Get(tx, BucketPlans, currentPlan, plan)
}
