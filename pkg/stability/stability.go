// Package stability classifies auto-memory entries by how settled they are.
//
// Stability counts sessions, not hook firings: Stop fires every turn (and
// again after a block, and for background-agent notifications), so an
// entry's count is the number of distinct session ids whose observations
// contained it, unchanged (a changed entry has a new id and starts over).
//
//   - stable:   present in at least Threshold distinct sessions;
//   - volatile: not yet stable, seen in one session only, and it replaced a
//     similar entry of the same file and section — it was just edited;
//   - recent:   everything else that has been observed;
//   - unseen:   present now but never observed by a hook (only a manual CLI
//     run has seen it, and CLI runs never manufacture stability).
package stability

import (
	"github.com/intermem/intermem/pkg/settings"
	"github.com/intermem/intermem/pkg/store"
)

// Status of an entry.
type Status string

// Statuses.
const (
	Stable   Status = "stable"
	Recent   Status = "recent"
	Volatile Status = "volatile"
	Unseen   Status = "unseen"
)

// DefaultThreshold is the number of distinct sessions that make an entry
// stable.
const DefaultThreshold = settings.DefaultThreshold

// Threshold reads INTERMEM_STABLE_SESSIONS (settings.Threshold).
func Threshold(getenv func(string) string) int { return settings.Threshold(getenv) }

// Of classifies one entry record; rec may be nil (never observed).
func Of(rec *store.Entry, threshold int) Status {
	switch {
	case rec == nil || rec.Sessions == 0:
		return Unseen
	case rec.Sessions >= threshold:
		return Stable
	case rec.Sessions == 1 && rec.Prev != "":
		return Volatile
	default:
		return Recent
	}
}
