package continuity

import (
	"errors"
	"fmt"
	"sort"
	"time"

	bolt "go.etcd.io/bbolt"

	source "github.com/intermem/intermem/pkg/source/continuity"
	"github.com/intermem/intermem/pkg/store"
)

// Scoped memories. A memory written with a scope other than project is
// kept in a store rather than in the written source's log:
//
//   - phase: in the project's store, with the head phase it was written
//     in; a backtrack below that phase invalidates or archives it like
//     every other record of a later phase (setLater), and Export writes
//     the valid ones to .intermem/continuity.jsonl, so the catalog (search,
//     get, provenance) sees exactly those.
//   - session: in the project's store, with its session; never exported,
//     so never long-term, and deleted when that session ends
//     (ForgetSession, at SessionEnd).
//   - user: in the per-user store (OpenUser), outside every project.
//
// The caller has redacted, screened and checked the text (command.Write,
// the one way a memory is written).

// ErrNoHeadPhase is returned for a memory of scope phase while no phase
// is started.
var ErrNoHeadPhase = errors.New("a memory of scope phase needs a current phase, and none is started")

// ErrNoSession is returned for a memory of scope session whose session
// is not known.
var ErrNoSession = errors.New("a memory of scope session needs the session it belongs to")

// Scopes are the scopes of a memory, in the order they are listed.
var Scopes = []string{store.ScopeProject, store.ScopePhase, store.ScopeSession, store.ScopeUser}

// ValidScope reports whether s is one of Scopes.
func ValidScope(s string) bool {
	for _, x := range Scopes {
		if s == x {
			return true
		}
	}
	return false
}

// AddMemory stores m, of scope phase or session in a project's store or of
// scope user in the per-user store, at now. A memory of scope phase takes
// the head phase. The same memory already stored in the same place is
// returned with created false.
func AddMemory(tx *bolt.Tx, m store.ScopedMemory, now time.Time) (store.ScopedMemory, bool, error) {
	m.Phase = nil
	switch m.Scope {
	case store.ScopePhase:
		h, err := store.GetHead(tx)
		if err != nil {
			return m, false, err
		}
		if h.Phase == nil {
			return m, false, ErrNoHeadPhase
		}
		p := *h.Phase
		m.Phase = &p
	case store.ScopeSession:
		if m.SessionID == "" {
			return m, false, ErrNoSession
		}
	case store.ScopeUser:
	default:
		return m, false, fmt.Errorf("scope %q is not kept in a store (phase, session or user)", m.Scope)
	}
	session := ""
	if m.Scope == store.ScopeSession {
		session = m.SessionID
	}
	m.ID = source.MemoryID(m.Scope, m.Phase, session, m.Type, m.Title, m.Content)
	if old, ok, err := store.GetMemory(tx, m.ID); err != nil {
		return m, false, err
	} else if ok && old.ID == m.ID && old.Status == store.StatusValid {
		return old, false, nil
	}
	m.Created, m.Status = now.UTC().Truncate(time.Second), store.StatusValid
	return m, true, store.PutMemory(tx, &m)
}

// ScopedMemories returns the memories of scope (every scope when "") that
// f keeps, oldest first.
func ScopedMemories(tx *bolt.Tx, scope string, f Filter) ([]store.ScopedMemory, error) {
	all, err := store.Memories(tx)
	if err != nil {
		return nil, err
	}
	out := []store.ScopedMemory{}
	for _, m := range all {
		if (scope == "" || m.Scope == scope) && f.keep(m.Phase, m.Status) {
			out = append(out, m)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.Before(out[j].Created)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// ForgetSession deletes the memories of scope session of session: the
// session is over, and they were kept for it alone. It returns how many.
func ForgetSession(tx *bolt.Tx, session string) (int, error) {
	if session == "" {
		return 0, nil
	}
	all, err := store.Memories(tx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, m := range all {
		if m.Scope == store.ScopeSession && m.SessionID == session {
			if err := store.DeleteMemory(tx, m.ID); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}
