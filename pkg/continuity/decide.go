package continuity

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/store"
)

// DecisionID is the id of a decision: "d" and 12 hex digits of the
// SHA-256 of its normalized text, rationale and phase, so recording the
// same decision twice is one decision.
func DecisionID(text, why string, phase *int) string {
	norm := func(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }
	ph := "-"
	if phase != nil {
		ph = fmt.Sprint(*phase)
	}
	sum := sha256.Sum256([]byte(norm(text) + "\x00" + norm(why) + "\x00" + ph))
	return "d" + hex.EncodeToString(sum[:6])
}

// Decide records a decision and its rationale, in phase (nil: the head
// phase, if any). An identical decision already recorded is returned
// with created false.
func Decide(tx *bolt.Tx, text, why string, phase *int, session string, now time.Time) (store.PhaseDecision, bool, error) {
	var d store.PhaseDecision
	text, err := typed("decision", text, MaxText)
	if err != nil {
		return d, false, err
	}
	why, err = typed("rationale (--why)", why, MaxText)
	if err != nil {
		return d, false, err
	}
	if phase == nil {
		h, err := store.GetHead(tx)
		if err != nil {
			return d, false, err
		}
		phase = h.Phase
	}
	if phase != nil {
		if *phase < 0 {
			return d, false, fmt.Errorf("phase %d: phases are numbered from 0", *phase)
		}
		p := *phase
		phase = &p
	}
	id := DecisionID(text, why, phase)
	if old, ok, err := store.GetDecided(tx, id); err != nil {
		return d, false, err
	} else if ok && old.ID == id {
		return old, false, nil
	}
	d = store.PhaseDecision{ID: id, Text: text, Why: why, Phase: phase, Time: now.UTC(), Session: session, Status: store.StatusValid}
	return d, true, store.PutDecided(tx, &d)
}

// DecideUser records a decision of scope user (it holds in every project)
// in tx, a transaction of the per-user store. It belongs to no phase.
func DecideUser(tx *bolt.Tx, text, why, session string, now time.Time) (store.PhaseDecision, bool, error) {
	d, created, err := Decide(tx, text, why, nil, session, now)
	if err != nil || !created {
		return d, created, err
	}
	d.Phase, d.Scope = nil, store.ScopeUser
	return d, true, store.PutDecided(tx, &d)
}

// Filter selects records.
type Filter struct {
	// Phase keeps only records of this phase (nil: every one).
	Phase *int
	// All keeps invalidated records too (archived ones are never listed).
	All bool
}

func (f Filter) keep(phase *int, status string) bool {
	if f.Phase != nil && (phase == nil || *phase != *f.Phase) {
		return false
	}
	switch status {
	case store.StatusValid:
		return true
	case store.StatusInvalidated:
		return f.All
	}
	return false
}

// Decisions returns the decisions f keeps, oldest first.
func Decisions(tx *bolt.Tx, f Filter) ([]store.PhaseDecision, error) {
	all, err := store.Decided(tx)
	if err != nil {
		return nil, err
	}
	out := []store.PhaseDecision{}
	for _, d := range all {
		if f.keep(d.Phase, d.Status) {
			out = append(out, d)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].Time.Equal(out[j].Time) {
			return out[i].Time.Before(out[j].Time)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}
