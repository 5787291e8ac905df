package store

import (
	"encoding/binary"
	"encoding/json"
	"time"

	bolt "go.etcd.io/bbolt"
)

// BucketSightings maps an auto-memory entry id to its Sighting (schema 5).
//
// Why apart from the entry's record (BucketEntries): a session's first
// turn counts the session in every entry of the memory. When the count
// lived in the entry's JSON record, that turn read, decoded, re-encoded and
// put every record — the whole entries bucket dirty in one transaction,
// a page buffer per dirty page at commit, 40 to 47 MB of peak RSS at
// 20,000 entries. A Sighting is a fixed-size binary value of sightingSize
// bytes (about 60 bytes a key with bbolt's element header, where a record
// is several hundred), so the same turn dirties a bucket a tenth the
// size, and never reads or writes a record: a record is written when an
// entry first appears or its description changes (package snapshot).
//
// Invariants: in a store of schema 5 or later, every entry record has its
// sighting (PutSeen writes both; the 4→5 migration moved every record's
// count here, in the migration's one transaction), and a record holds no
// count. A store of schema 4 or older (read by a read-only open, which does
// not migrate) has no sightings bucket: its counts are read from its
// records' JSON, as that schema wrote them (legacy).
var BucketSightings = []byte("sightings")

// Sighting is what the hooks counted of one auto-memory entry: the
// sessions it was present in, the first and the last time one saw it.
type Sighting struct {
	Sessions            int
	FirstSeen, LastSeen time.Time
}

// sightingSize is the length of an encoded Sighting: sessions (uint32),
// then each time as seconds since the Unix epoch (int64) and nanoseconds
// (uint32), big-endian. Any other length is not a sighting.
const sightingSize = 4 + 12 + 12

func (s Sighting) encode() []byte {
	b := make([]byte, sightingSize)
	binary.BigEndian.PutUint32(b[0:], uint32(min(max(s.Sessions, 0), 1<<32-1)))
	putTime(b[4:], s.FirstSeen)
	putTime(b[16:], s.LastSeen)
	return b
}

func putTime(b []byte, t time.Time) {
	binary.BigEndian.PutUint64(b[0:], uint64(t.Unix()))
	binary.BigEndian.PutUint32(b[8:], uint32(t.Nanosecond()))
}

// decodeSighting decodes raw; ok is false when it is not one.
func decodeSighting(raw []byte) (s Sighting, ok bool) {
	if len(raw) != sightingSize {
		return Sighting{}, false
	}
	s.Sessions = int(binary.BigEndian.Uint32(raw[0:]))
	s.FirstSeen, ok = getTime(raw[4:])
	if !ok {
		return Sighting{}, false
	}
	s.LastSeen, ok = getTime(raw[16:])
	if !ok {
		return Sighting{}, false
	}
	return s, true
}

func getTime(b []byte) (time.Time, bool) {
	sec, ns := int64(binary.BigEndian.Uint64(b[0:])), binary.BigEndian.Uint32(b[8:])
	if ns >= 1e9 {
		return time.Time{}, false
	}
	t := time.Unix(sec, int64(ns)).UTC()
	if t.IsZero() {
		return time.Time{}, true
	}
	return t, true
}

// sightings returns the bucket of sightings, nil in a store older than
// schema 5 (whose counts are in the records).
func sightings(tx *bolt.Tx) *bolt.Bucket { return tx.Bucket(BucketSightings) }

// GetSighting returns what the hooks counted of the entry id; ok is false
// when no entry is recorded, or its sighting is not one (damage: the
// caller then takes the entry as unrecorded — a Stop hook reads its file
// again and counts it afresh — rather than fail at every turn). It reads
// the entry's record only in a store older than schema 5 (a record that
// no longer decodes is then an error, as GetSeen's).
func GetSighting(tx *bolt.Tx, id string) (s Sighting, ok bool, err error) {
	if b := sightings(tx); b != nil {
		touched(tx)
		s, ok = decodeSighting(b.Get([]byte(id)))
		return s, ok, nil
	}
	var e Entry
	ok, err = Get(tx, BucketEntries, id, &e)
	return Sighting{Sessions: e.Sessions, FirstSeen: e.FirstSeen, LastSeen: e.LastSeen}, ok, err
}

// PutSighting stores what the hooks counted of the entry id.
func PutSighting(tx *bolt.Tx, id string, s Sighting) error {
	b, err := tx.CreateBucketIfNotExists(BucketSightings)
	if err != nil {
		return err
	}
	touched(tx)
	return b.Put([]byte(id), s.encode())
}

// PutEntryRecord stores the description of an entry (kind, file, preview,
// lineage, first agent and session) as its record, without its count,
// which only PutSighting writes: a writer that changed the description
// alone calls this, one that changed the count alone PutSighting, and
// PutSeen does both.
func PutEntryRecord(tx *bolt.Tx, e *Entry) error {
	rec := *e
	rec.Sessions, rec.FirstSeen, rec.LastSeen = 0, time.Time{}, time.Time{}
	return Put(tx, BucketEntries, e.ID, &rec)
}

// sightingOf returns e's Sighting as a store older than schema 5 kept it
// in e's record.
func sightingOf(e *Entry) Sighting {
	return Sighting{Sessions: e.Sessions, FirstSeen: e.FirstSeen, LastSeen: e.LastSeen}
}

// join sets e's count from its sighting, when the store keeps sightings
// (a record of schema 5 holds none; one of an older store holds its own).
func join(b *bolt.Bucket, id string, e *Entry) {
	if b == nil {
		return
	}
	s, _ := decodeSighting(b.Get([]byte(id)))
	e.Sessions, e.FirstSeen, e.LastSeen = s.Sessions, s.FirstSeen, s.LastSeen
}

// migrateSightings (schema 4→5) moves every entry record's count into
// BucketSightings and rewrites the record without it, in the migration's
// one transaction (checkSchema): a crash leaves the store of schema 4 as
// it was, and the next writer migrates it again. A record that no longer
// decodes is left as it is (its readers report it as before).
func migrateSightings(tx *bolt.Tx) error {
	if err := createBuckets(tx); err != nil {
		return err
	}
	entries := tx.Bucket(BucketEntries)
	type rec struct {
		key string
		e   Entry
	}
	var recs []rec
	if err := entries.ForEach(func(k, raw []byte) error {
		if raw == nil {
			return nil
		}
		var e Entry
		if json.Unmarshal(raw, &e) != nil {
			return nil
		}
		recs = append(recs, rec{string(k), e})
		return nil
	}); err != nil {
		return err
	}
	// ForEach runs in key order: the puts are in key order too.
	for i := range recs {
		if err := PutSighting(tx, recs[i].key, sightingOf(&recs[i].e)); err != nil {
			return err
		}
	}
	for i := range recs {
		e := recs[i].e
		e.Sessions, e.FirstSeen, e.LastSeen = 0, time.Time{}, time.Time{}
		if err := Put(tx, BucketEntries, recs[i].key, &e); err != nil {
			return err
		}
	}
	return nil
}
