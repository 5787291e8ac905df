package store

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Glance is what a session start needs of an auto-memory entry's record
// (BucketEntries): how many sessions saw it and when it was last seen.
// A session start reads it for every entry of the memory directory, so it
// is read without decoding the whole record (see Glancer).
type Glance struct {
	Sessions int
	lastSeen string // RFC 3339, parsed on demand
}

// LastSeen is when a hook last saw the entry; zero when unknown.
func (g Glance) LastSeen() time.Time {
	t, _ := time.Parse(time.RFC3339Nano, g.lastSeen)
	return t
}

// Glancer reads Glances and validated confidences (BucketFacts) of many
// entries inside one read transaction.
type Glancer struct {
	tx             *bolt.Tx
	entries, facts *bolt.Bucket
}

// NewGlancer returns the reader of tx's entry and fact records.
func NewGlancer(tx *bolt.Tx) *Glancer {
	g := &Glancer{tx: tx, entries: tx.Bucket(BucketEntries), facts: tx.Bucket(BucketFacts)}
	if g.facts != nil {
		if k, _ := g.facts.Cursor().First(); k == nil {
			g.facts = nil // most stores never validated: skip the lookups
		}
	}
	return g
}

// Empty reports whether no entry and no confidence is recorded at all.
func (g *Glancer) Empty() bool {
	if g.facts != nil {
		return false
	}
	if g.entries == nil {
		return true
	}
	k, _ := g.entries.Cursor().First()
	return k == nil
}

// Glance returns the Glance of the entry id (one B+tree search); ok is
// false when no hook recorded it.
func (g *Glancer) Glance(id string) (Glance, bool) {
	if g.entries == nil {
		return Glance{}, false
	}
	touched(g.tx)
	raw := g.entries.Get([]byte(id))
	if raw == nil {
		return Glance{}, false
	}
	return glanceOf(raw), true
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
	if g.entries == nil {
		return
	}
	c := g.entries.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if v != nil {
			touched(g.tx)
			fn(string(k), glanceOf(v))
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
// wrote it (compact, known field names), falling back to decoding the
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
	return Glance{Sessions: sessions, lastSeen: last}
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
