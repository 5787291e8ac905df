package continuity

import (
	"fmt"
	"sort"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/store"
)

// NewCheckpointID is the id of a checkpoint taken at now:
// "cp-<UTC stamp>-<8 random hex>", so ids sort by time.
func NewCheckpointID(now time.Time) string {
	return "cp-" + now.UTC().Format("20060102T150405Z") + "-" + randomHex(4)
}

// Manual is a checkpoint written by a person or the model.
type Manual struct {
	Summary string
	// Phase is the phase it belongs to (nil: the head phase, if any).
	Phase   *int
	Session string
	// Scope is store.ScopeProject ("save": long-term) or
	// store.ScopeSession ("skip": kept for the session's resume only).
	Scope  string
	Branch string
	Commit string
}

// AddManual records a manual checkpoint and, when it belongs to the head
// phase, makes it the head's checkpoint.
func AddManual(tx *bolt.Tx, m Manual, now time.Time) (store.Checkpoint, error) {
	var c store.Checkpoint
	summary, err := typed("summary", m.Summary, MaxText)
	if err != nil {
		return c, err
	}
	if m.Scope == "" {
		m.Scope = store.ScopeProject
	}
	if m.Scope != store.ScopeProject && m.Scope != store.ScopeSession {
		return c, fmt.Errorf("unknown scope %q (project or session)", m.Scope)
	}
	h, err := store.GetHead(tx)
	if err != nil {
		return c, err
	}
	phase := m.Phase
	if phase == nil {
		phase = h.Phase
	}
	if phase != nil {
		if *phase < 0 {
			return c, fmt.Errorf("phase %d: phases are numbered from 0", *phase)
		}
		p := *phase
		phase = &p
	}
	c = store.Checkpoint{
		ID: NewCheckpointID(now), Kind: store.CheckpointManual, Session: m.Session, Time: now.UTC(),
		Branch: m.Branch, Commit: m.Commit, Summary: summary, Phase: phase, Scope: m.Scope, Status: store.StatusValid,
	}
	if err := store.PutCheckpoint(tx, &c); err != nil {
		return c, err
	}
	if phase != nil && h.Phase != nil && *phase == *h.Phase && m.Scope == store.ScopeProject {
		h.Checkpoint, h.Moved = c.ID, now.UTC()
		if err := store.PutHead(tx, h); err != nil {
			return c, err
		}
	}
	return c, nil
}

// ListCheckpoints returns the checkpoints f keeps, oldest first.
func ListCheckpoints(tx *bolt.Tx, f Filter) ([]store.Checkpoint, error) {
	all, err := store.Checkpoints(tx)
	if err != nil {
		return nil, err
	}
	out := []store.Checkpoint{}
	for _, c := range all {
		if f.keep(c.Phase, c.Status) {
			out = append(out, c)
		}
	}
	sortCheckpoints(out)
	return out, nil
}

func sortCheckpoints(cs []store.Checkpoint) {
	sort.SliceStable(cs, func(i, j int) bool {
		if !cs[i].Time.Equal(cs[j].Time) {
			return cs[i].Time.Before(cs[j].Time)
		}
		if cs[i].Turn != cs[j].Turn {
			return cs[i].Turn < cs[j].Turn
		}
		return cs[i].ID < cs[j].ID
	})
}

// Latest returns the checkpoint a session on branch should resume from:
// the latest valid checkpoint of another session than session taken on
// branch (on any branch when branch is "": outside git, or detached).
// Phase markers are not resume points. ok is false when there is none.
func Latest(tx *bolt.Tx, branch, session string) (store.Checkpoint, bool, error) {
	all, err := store.Checkpoints(tx)
	if err != nil {
		return store.Checkpoint{}, false, err
	}
	var on, any []store.Checkpoint
	for _, c := range all {
		if c.Status != store.StatusValid || c.Kind == store.CheckpointPhase || c.Time.IsZero() {
			continue
		}
		if session != "" && c.Session == session {
			continue
		}
		any = append(any, c)
		if branch != "" && c.Branch == branch {
			on = append(on, c)
		}
	}
	pick := any
	if branch != "" {
		pick = on
	}
	if len(pick) == 0 {
		return store.Checkpoint{}, false, nil
	}
	sortCheckpoints(pick)
	return pick[len(pick)-1], true, nil
}
