package catalog

import (
	"sort"
	"time"

	"github.com/intermem/intermem/pkg/cite"
	"github.com/intermem/intermem/pkg/score"
	"github.com/intermem/intermem/pkg/store"
)

// The statuses of an entry, as validation leaves them.
const (
	// StatusOK: what the entry cites was checked and holds.
	StatusOK = "ok"
	// StatusStale: a citation is broken (or several moved): do not trust it.
	StatusStale = "stale"
	// StatusUnchecked: it cites nothing that can be checked here.
	StatusUnchecked = "unchecked"
	// StatusUnvalidated: nothing has validated it yet.
	StatusUnvalidated = "unvalidated"
	// StatusArchived: intermem archived it; it no longer holds.
	StatusArchived = "archived"
)

// Overlay is what intermem knows about an entry beyond its text: the
// latest validation, and where the entry came from and what happened to
// it. It joins the store's overlay record with what older records keep
// (auto-memory's confidence and sessions, promotions).
type Overlay struct {
	// Confidence is in [0, 1]; Known is false when nothing has scored the
	// entry (Confidence is then the neutral score.Base).
	Confidence float64
	Known      bool
	Status     string
	// Validated is when the confidence was computed; Commit and Blobs what
	// the cited files were then (see store.Overlay).
	Validated time.Time
	Commit    string
	Blobs     map[string]string
	// Agent, AgentType and Session: who first saw it (auto-memory).
	Agent, AgentType, Session string
	// FirstSeen and LastSeen bound the sessions that saw an auto-memory
	// entry; Sessions counts them; Replaced is the entry it replaced (an
	// edit).
	FirstSeen, LastSeen time.Time
	Sessions            int
	Replaced            string
	// Promoted is set when intermem promoted the entry (and perhaps
	// archived it since).
	Promoted *store.Promoted
	// PromotedBy and ArchivedBy are the journal operations that did.
	PromotedBy, ArchivedBy string
}

// Overlay returns what intermem knows about the entry id.
func (c *Catalog) Overlay(id string) Overlay {
	return overlayOf(c.tx, id)
}

func overlayOf(tx *store.CatalogTx, id string) Overlay {
	o := judged(tx, id)
	if s, ok := tx.Seen(id); ok {
		o.FirstSeen, o.LastSeen, o.Sessions, o.Replaced = s.FirstSeen, s.LastSeen, s.Sessions, s.Prev
		// The Stop hook records who first saw an auto-memory entry with its
		// sightings (an overlay write there would bump the generation).
		if o.Agent == "" && o.AgentType == "" {
			o.Agent, o.AgentType = s.Agent, s.AgentType
		}
		if o.Session == "" {
			o.Session = s.FirstSession
		}
	}
	return o
}

// judged is the overlay of id without its sightings: what validation and
// promotion say (confidence, status, the cited files' blobs, the writer
// its overlay record names), all a search result shows. A sighting is
// the costliest record to join (store.CatalogTx.Seen).
func judged(tx *store.CatalogTx, id string) Overlay {
	o := Overlay{Confidence: score.Base, Status: StatusUnvalidated}
	setConf := func(conf float64, at time.Time, status string) {
		o.Confidence, o.Known, o.Validated = conf, true, at
		o.Status = status
		if status == "" {
			o.Status = StatusOK
			if conf < score.StaleBelow {
				o.Status = StatusStale
			}
		}
	}
	if f, ok := tx.Fact(id); ok {
		status := ""
		if ch, ok := tx.LatestCheck(id); ok {
			status = ch.Status
		}
		setConf(f.Confidence, f.At, status)
	}
	if r, ok := tx.Overlay(id); ok {
		if !r.Validated.IsZero() && !r.Validated.Before(o.Validated) {
			setConf(r.Confidence, r.Validated, r.Status)
		}
		o.Commit, o.Blobs = r.Commit, r.Blobs
		o.Agent, o.AgentType, o.Session = r.Agent, r.AgentType, r.Session
		o.PromotedBy, o.ArchivedBy = r.PromotedBy, r.ArchivedBy
	}
	if p, ok := tx.Promoted(id); ok {
		o.Promoted = &p
		if o.PromotedBy == "" {
			o.PromotedBy = p.Op
		}
		if p.Confidence > 0 && !o.Known {
			setConf(p.Confidence, time.Time{}, "")
		}
		if p.Archived {
			o.Status = StatusArchived
		}
	}
	return o
}

// Drift is one file an entry cited whose content is not what it was when
// the entry was last validated.
type Drift struct {
	Path string `json:"path"`
	// Was is the file's git blob hash at the validation; Now its hash
	// now, "" when the file is gone or cannot be read.
	Was string `json:"was"`
	Now string `json:"now,omitempty"`
}

// Changed compares the cited files' blob hashes recorded at the last
// validation (Blobs) with the files under root now, hashed as git does
// (cite.Blob; git is never run), and returns those that differ, by path:
// "the cited code changed since the entry was validated", which a check of
// the citation alone (the file still exists) cannot tell.
func (o *Overlay) Changed(root string) []Drift {
	var out []Drift
	for p, was := range o.Blobs {
		now, err := cite.Blob(root, p)
		if err != nil {
			now = ""
		}
		if now != was {
			out = append(out, Drift{Path: p, Was: was, Now: now})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}
