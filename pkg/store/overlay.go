package store

import (
	"bytes"
	"encoding/json"
	"time"

	bolt "go.etcd.io/bbolt"
)

// BucketOverlay maps an entry id to its Overlay (schema 3).
var BucketOverlay = []byte("overlay")

// Overlay is what intermem knows about one entry of any source beyond its
// text, keyed by the entry's id: its provenance and its latest
// validation. Auto-memory's per-session history stays in BucketEntries,
// BucketSightings and BucketSeen (package snapshot writes them), promotions in
// BucketPromoted; the catalog joins them.
type Overlay struct {
	// Confidence is the latest validated confidence, in [0, 1]; Validated
	// is when it was computed (zero: never) and Status what validation
	// said ("ok", "stale", "unchecked").
	Confidence float64   `json:"confidence"`
	Validated  time.Time `json:"validated,omitzero"`
	Status     string    `json:"status,omitempty"`
	// Commit is the project's HEAD commit at the validation; Blobs the git
	// blob hash of each cited file then (path → hash), computed from the
	// file's bytes as git would, so "the cited code changed since it was
	// validated" can be told, not only "the file is missing".
	Commit string            `json:"commit,omitempty"`
	Blobs  map[string]string `json:"blobs,omitempty"`
	// Agent and AgentType name the agent whose session first saw the entry
	// (hook payloads of subagents carry agent_id and agent_type); empty
	// for the main agent or when not known.
	Agent     string `json:"agent,omitempty"`
	AgentType string `json:"agent_type,omitempty"`
	// Session is the session that first saw the entry.
	Session string `json:"session,omitempty"`
	// PromotedBy and ArchivedBy are the journal operations that promoted
	// and archived the entry.
	PromotedBy string `json:"promoted_by,omitempty"`
	ArchivedBy string `json:"archived_by,omitempty"`
	// LastEvidence, StaleSweeps and LastStale are the decay state of a
	// memory in the written set (package sweep), as store.Promoted keeps a
	// promoted fact's: when it last had evidence that it holds (its
	// writing, citations that held), and its stale sweeps.
	LastEvidence time.Time `json:"last_evidence,omitzero"`
	StaleSweeps  int       `json:"stale_sweeps,omitempty"`
	LastStale    time.Time `json:"last_stale,omitzero"`
}

// Overlay returns the overlay of id; ok is false when there is none.
func (c *CatalogTx) Overlay(id string) (o Overlay, ok bool) {
	raw := c.get(BucketOverlay, id)
	if raw == nil || json.Unmarshal(raw, &o) != nil {
		return Overlay{}, false
	}
	return o, true
}

// PutOverlay stores the overlay of id and bumps the catalog's generation:
// the search index ranks by confidence and marks stale entries.
func (c *CatalogTx) PutOverlay(id string, o *Overlay) error {
	if err := putJSON(c, BucketOverlay, id, o); err != nil {
		return err
	}
	if err := c.markChanged(id); err != nil {
		return err
	}
	return c.Bump()
}

// DeleteOverlay forgets the overlay of id (its entry is purged).
func (c *CatalogTx) DeleteOverlay(id string) error {
	if err := c.del(BucketOverlay, id); err != nil {
		return err
	}
	return c.markChanged(id)
}

// Fact returns the latest validated confidence of an auto-memory entry.
func (c *CatalogTx) Fact(id string) (f Fact, ok bool) {
	raw := c.get(BucketFacts, id)
	if raw == nil || json.Unmarshal(raw, &f) != nil {
		return Fact{}, false
	}
	return f, true
}

// Promoted returns the promotion record of id.
func (c *CatalogTx) Promoted(id string) (p Promoted, ok bool) {
	raw := c.get(BucketPromoted, id)
	if raw == nil || json.Unmarshal(raw, &p) != nil {
		return Promoted{}, false
	}
	return p, true
}

// Seen returns what the hooks recorded of an auto-memory entry across
// sessions (its record joined with its sighting).
func (c *CatalogTx) Seen(id string) (e Entry, ok bool) {
	raw := c.get(BucketEntries, id)
	if raw == nil || json.Unmarshal(raw, &e) != nil {
		return Entry{}, false
	}
	if c.tx != nil {
		join(sightings(c.tx), id, &e)
	}
	return e, true
}

// LatestCheck returns the latest validation of id in the audit trail
// (BucketChecks, keys "<id>/<RFC 3339 time>").
func (c *CatalogTx) LatestCheck(id string) (Check, bool) {
	return LatestCheck(c.tx, id)
}

// LatestCheck returns the latest validation of id in the audit trail.
func LatestCheck(tx *bolt.Tx, id string) (Check, bool) {
	var ch Check
	if tx == nil {
		return ch, false
	}
	b := tx.Bucket(BucketChecks)
	if b == nil {
		return ch, false
	}
	prefix := []byte(id + "/")
	var last []byte
	cur := b.Cursor()
	for k, v := cur.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = cur.Next() {
		last = v
	}
	if last == nil || json.Unmarshal(last, &ch) != nil {
		return Check{}, false
	}
	return ch, true
}

// SessionSeen is one session that saw an entry.
type SessionSeen struct {
	ID          string
	First, Last time.Time
}

// SessionsOf lists the sessions whose observations held id (BucketSeen),
// in no particular order.
func (c *CatalogTx) SessionsOf(id string) []SessionSeen {
	if c.tx == nil {
		return nil
	}
	seen := c.tx.Bucket(BucketSeen)
	if seen == nil {
		return nil
	}
	var out []SessionSeen
	_ = seen.ForEachBucket(func(sid []byte) error {
		if seen.Bucket(sid).Get([]byte(id)) == nil {
			return nil
		}
		var s Session
		_, _ = Get(c.tx, BucketSessions, string(sid), &s)
		out = append(out, SessionSeen{ID: string(sid), First: s.First, Last: s.Last})
		return nil
	})
	return out
}

// Sessions calls fn with every session the hooks recorded.
func (c *CatalogTx) Sessions(fn func(s *Session) error) error {
	if c.tx == nil {
		return nil
	}
	return Each(c.tx, BucketSessions, func(_ string, s *Session) error { return fn(s) })
}
