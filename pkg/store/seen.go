package store

import (
	"sort"
	"time"

	bolt "go.etcd.io/bbolt"
)

// KeepSeen bounds the sessions whose seen buckets (BucketSeen) are kept.
// A session's bucket holds a key for every entry it saw: it tells a pass
// which entries it already counted for the session (so a session counts
// an entry once however many turns it has) and provenance which recent
// sessions saw an entry (retrieve shows the latest ten). Kept for every
// session, the store grew by about 50 bytes per memory entry at every
// session, without end: half a megabyte a session at 10,000 entries,
// five at 100,000. So when a session begins, the buckets of the sessions
// active longest ago beyond KeepSeen go (PruneSeen); their Session records
// (small: status and plan count the sessions) and the entries' counts
// stay. A session that resumes after its bucket went does not count
// again the entries it may have counted (package snapshot, openSeen).
const KeepSeen = 32

// pruneSeenMax bounds the buckets one PruneSeen deletes: deleting a
// bucket reads every page of it, so a store holding many sessions' buckets
// from before the bound is brought under it over several sessions' starts.
const pruneSeenMax = 4

// PruneSeen deletes the seen buckets of the sessions least recently
// active (Session.Last; a bucket without a session record first) but the
// KeepSeen-1 others latest, at most pruneSeenMax of them, leaving room
// for the bucket of session, which begins (its record may not be written
// yet, its bucket may not exist: it is never deleted). It returns how many
// it deleted.
func PruneSeen(tx *bolt.Tx, session string) (int, error) {
	root := tx.Bucket(BucketSeen)
	if root == nil {
		return 0, nil
	}
	type seen struct {
		id   string
		last time.Time
	}
	var all []seen
	if err := root.ForEachBucket(func(k []byte) error {
		if string(k) != session {
			all = append(all, seen{id: string(k)})
		}
		return nil
	}); err != nil {
		return 0, err
	}
	if len(all) < KeepSeen {
		return 0, nil
	}
	for i := range all {
		var s Session
		if _, err := Get(tx, BucketSessions, all[i].id, &s); err == nil {
			all[i].last = s.Last
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if !all[i].last.Equal(all[j].last) {
			return all[i].last.Before(all[j].last)
		}
		return all[i].id < all[j].id
	})
	n := 0
	for _, s := range all[:len(all)-(KeepSeen-1)] {
		if n == pruneSeenMax {
			break
		}
		if err := root.DeleteBucket([]byte(s.id)); err != nil {
			return n, err
		}
		Shed(tx) // the deletion read every page of the bucket
		n++
	}
	return n, nil
}

// SeenMarks is a session's seen bucket (BucketSeen): a key for every entry
// the session counted, so that it counts each once however many turns it
// has (package snapshot).
type SeenMarks struct{ b *bolt.Bucket }

// seenMark is the value stored for an entry seen in a session: not empty,
// since bbolt reads a nil value back as absent within the transaction that
// wrote it, which would let one batch count a session several times.
var seenMark = []byte{1}

// OpenSeenMarks returns the seen bucket of session, made when it is
// missing, and whether it was there before (a known session whose bucket
// is not was pruned: PruneSeen).
func OpenSeenMarks(tx *bolt.Tx, session string) (m SeenMarks, existed bool, err error) {
	root, err := tx.CreateBucketIfNotExists(BucketSeen)
	if err != nil {
		return m, false, err
	}
	existed = root.Bucket([]byte(session)) != nil
	b, err := root.CreateBucketIfNotExists([]byte(session))
	if err != nil {
		return m, false, err
	}
	return SeenMarks{b}, existed, nil
}

// Has reports whether the session counted the entry id.
func (m SeenMarks) Has(id string) bool { return m.b.Get([]byte(id)) != nil }

// Mark records that the session counted the entry id.
func (m SeenMarks) Mark(id string) error { return m.b.Put([]byte(id), seenMark) }
