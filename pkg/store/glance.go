package store

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Glance is what a session start needs of an auto-memory entry: how many
// sessions saw it and when it was last seen. A session start reads it for
// every entry of the memory directory: from the entry's sighting
// (BucketSightings, a few dozen bytes), never the whole record — except
// in a store older than schema 5, where it is read from the record's JSON
// without decoding all of it (see Glancer).
type Glance struct {
	Sessions int
	last     time.Time
	lastRaw  string // RFC 3339 of a record older than schema 5, parsed on demand
}

// LastSeen is when a hook last saw the entry; zero when unknown.
func (g Glance) LastSeen() time.Time {
	if g.lastRaw != "" {
		t, _ := time.Parse(time.RFC3339Nano, g.lastRaw)
		return t
	}
	return g.last
}

// Glancer reads Glances and validated confidences (BucketFacts) of many
// entries inside one read transaction.
type Glancer struct {
	tx             *bolt.Tx
	entries, facts *bolt.Bucket
	// sightings is nil in a store older than schema 5: the records are
	// read instead (entries).
	sightings *bolt.Bucket
}

// NewGlancer returns the reader of tx's entry and fact records.
func NewGlancer(tx *bolt.Tx) *Glancer {
	g := &Glancer{tx: tx, entries: tx.Bucket(BucketEntries), facts: tx.Bucket(BucketFacts), sightings: sightings(tx)}
	if g.sightings != nil {
		g.entries = nil // the counts are the sightings'
	}
	if g.facts != nil {
		if k, _ := g.facts.Cursor().First(); k == nil {
			g.facts = nil // most stores never validated: skip the lookups
		}
	}
	return g
}

// counts is the bucket a Glance is read from.
func (g *Glancer) counts() *bolt.Bucket {
	if g.sightings != nil {
		return g.sightings
	}
	return g.entries
}

// glance decodes a value of counts().
func (g *Glancer) glance(raw []byte) Glance {
	if g.sightings != nil {
		s, _ := decodeSighting(raw)
		return Glance{Sessions: s.Sessions, last: s.LastSeen}
	}
	return glanceOf(raw)
}

// Empty reports whether no entry and no confidence is recorded at all.
func (g *Glancer) Empty() bool {
	if g.facts != nil {
		return false
	}
	b := g.counts()
	if b == nil {
		return true
	}
	k, _ := b.Cursor().First()
	return k == nil
}

// Glance returns the Glance of the entry id (one B+tree search); ok is
// false when no hook recorded it.
func (g *Glancer) Glance(id string) (Glance, bool) {
	b := g.counts()
	if b == nil {
		return Glance{}, false
	}
	touched(g.tx)
	raw := b.Get([]byte(id))
	if raw == nil {
		return Glance{}, false
	}
	return g.glance(raw), true
}

// Lookup calls fn with the Glance of each of ids that is recorded,
// searching for them in key order (it sorts ids): successive searches then
// share their pages, so each page of the bucket is read (and, cold or
// shed, faulted in) once, where searches in any order read a leaf, and
// fault it in, per id.
func (g *Glancer) Lookup(ids []string, fn func(id string, gl Glance)) {
	slices.Sort(ids)
	for _, id := range ids {
		if gl, ok := g.Glance(id); ok {
			fn(id, gl)
		}
	}
}

// Each calls fn with the Glance of every recorded entry in key order: one
// pass over the bucket, cheaper than a search per entry when most of the
// bucket is wanted.
func (g *Glancer) Each(fn func(id string, gl Glance)) {
	b := g.counts()
	if b == nil {
		return
	}
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if v != nil {
			touched(g.tx)
			fn(string(k), g.glance(v))
		}
	}
}

// Confidence returns the latest validated confidence of the entry id
// (Fact); ok is false when none was recorded or it no longer decodes.
func (g *Glancer) Confidence(id string) (float64, bool) {
	if g.facts == nil {
		return 0, false
	}
	touched(g.tx)
	raw := g.facts.Get([]byte(id))
	if raw == nil {
		return 0, false
	}
	var f struct {
		Confidence *float64 `json:"confidence"`
	}
	if json.Unmarshal(raw, &f) != nil || f.Confidence == nil {
		return 0, false
	}
	return *f.Confidence, true
}

// glanceOf reads "sessions" and "last_seen" from an Entry as encoding/json
// wrote it before schema 5 (compact, known field names), falling back to decoding the
// record when it is not in that shape. A key with its closing quote and
// colon cannot occur inside a JSON string (a quote there is escaped), so
// its one occurrence is the field.
func glanceOf(raw []byte) Glance {
	// Both keys follow the long preview, near the end of the record.
	tail := raw[max(0, len(raw)-320):]
	sessions, ok1 := rawInt(tail, `"sessions":`)
	last, ok2 := rawString(tail, `"last_seen":"`)
	if !ok1 || !ok2 {
		sessions, ok1 = rawInt(raw, `"sessions":`)
		last, ok2 = rawString(raw, `"last_seen":"`)
	}
	if !ok1 || !ok2 {
		var e struct {
			Sessions int    `json:"sessions"`
			LastSeen string `json:"last_seen"`
		}
		_ = json.Unmarshal(raw, &e)
		sessions, last = e.Sessions, e.LastSeen
	}
	return Glance{Sessions: sessions, lastRaw: last}
}

func rawInt(raw []byte, key string) (int, bool) {
	i := bytes.Index(raw, []byte(key))
	if i < 0 {
		return 0, false
	}
	j := i + len(key)
	k := j
	for k < len(raw) && raw[k] >= '0' && raw[k] <= '9' {
		k++
	}
	n, err := strconv.Atoi(string(raw[j:k]))
	return n, err == nil
}

func rawString(raw []byte, key string) (string, bool) {
	i := bytes.Index(raw, []byte(key))
	if i < 0 {
		return "", false
	}
	j := i + len(key)
	k := bytes.IndexByte(raw[j:], '"')
	if k < 0 || bytes.IndexByte(raw[j:j+k], '\\') >= 0 {
		return "", false
	}
	return string(raw[j : j+k]), true
}

// Rejected returns the ids of every entry a user rejected in a plan
// (BucketDecisions), as PlanDecisions does.
func Rejected(tx *bolt.Tx) (map[string]bool, error) {
	out := map[string]bool{}
	err := Each(tx, BucketDecisions, func(id string, _ *Decision) error {
		out[id] = true
		return nil
	})
	return out, err
}
