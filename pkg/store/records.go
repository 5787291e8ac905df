package store

import (
	"time"

	"github.com/intermem/intermem/pkg/memlist"
)

// Session is one Claude Code session as intermem observed it. A session is
// a distinct session_id: Stop fires every turn, --resume and compaction
// reuse the id, /clear starts a new one.
type Session struct {
	ID           string    `json:"id"`
	First        time.Time `json:"first"`
	Last         time.Time `json:"last"`
	Ended        bool      `json:"ended,omitempty"`
	Observations int       `json:"observations"`
	// Fingerprint of the memory directory at the session's latest
	// complete pass (package snapshot); an unchanged fingerprint lets Stop
	// do almost nothing. Empty while a pass is incomplete.
	Fingerprint string `json:"fp,omitempty"`
	// Synced is when the session's latest complete pass ran: every file
	// state set at or before it was seen by the session.
	Synced time.Time `json:"synced,omitzero"`
	// Sweep is where the session's sweep of a memory directory too large
	// for one turn stands (package snapshot); nil when the next turn
	// starts a new one.
	Sweep *Sweep `json:"sweep,omitempty"`
}

// Sweep is a session's pass over the memory files spread over turns
// (memlist.Sweep).
type Sweep = memlist.Sweep

// Entry is what intermem knows of one auto-memory entry, keyed by the hash
// of its normalized text. Preview is redacted: the store never holds a
// secret. Its record (BucketEntries) holds its description; its count —
// Sessions, FirstSeen, LastSeen — is its Sighting (BucketSightings, where
// a session's first turn can count it without rewriting the record), and
// the accessors (GetSeen, EachSeen, CatalogTx.Seen) join the two. A
// record of a store older than schema 5 holds its count itself.
type Entry struct {
	ID        string    `json:"id"`
	Kind      string    `json:"kind"`
	File      string    `json:"file"`
	Section   string    `json:"section,omitempty"`
	Preview   string    `json:"preview"`
	Type      string    `json:"type,omitempty"`
	Name      string    `json:"name,omitempty"`
	FirstSeen time.Time `json:"first_seen,omitzero"`
	LastSeen  time.Time `json:"last_seen,omitzero"`
	Sessions  int       `json:"sessions,omitempty"` // distinct sessions it was present in
	// Prev is the entry this one replaced when it first appeared (the same
	// file and section lost a similar entry at the same time): an edit.
	Prev string `json:"prev,omitempty"`
	// Agent and AgentType name the agent whose hook first saw the entry:
	// agent_id and agent_type of a subagent's payload (agent_type alone on
	// a main thread started with --agent); empty for the main agent.
	Agent     string `json:"agent,omitempty"`
	AgentType string `json:"agent_type,omitempty"`
	// FirstSession is the session whose hook first saw the entry.
	FirstSession string `json:"first_session,omitempty"`
}

// FileState is the set of entry ids a memory file held at its latest
// observation, used to recognise edits, and what a Stop hook needs to
// tell, with one lstat, that the file has not changed since (package
// snapshot).
type FileState struct {
	At  time.Time `json:"at"`
	IDs []string  `json:"ids"`
	// FP is the file's fingerprint when it was read ("" when recorded
	// from an observation without one: the file is read again).
	FP string `json:"fp,omitempty"`
	// Racy marks a fingerprint taken so soon after the file was written
	// that it could change again without changing FP: read it again.
	Racy bool `json:"racy,omitempty"`
	// Skip is why the file was not read (not a regular file, too large),
	// logged once per fingerprint.
	Skip string `json:"skip,omitempty"`
	// Sub lists the sub-folder files the file's pointers name.
	Sub []string `json:"sub,omitempty"`
}

// Promoted is an entry intermem promoted into a curated document. It is
// also the decay state of that fact (package score): evidence times and
// sweep history.
type Promoted struct {
	ID         string    `json:"id"`
	Target     string    `json:"target"` // document name relative to the root
	Section    string    `json:"section"`
	At         time.Time `json:"at"`
	Op         string    `json:"op"`
	Text       string    `json:"text"`   // the promoted block, redacted, without marker
	Origin     string    `json:"origin"` // memory file it came from
	Kind       string    `json:"kind"`
	Cited      bool      `json:"cited"` // had checkable citations when promoted
	Confidence float64   `json:"confidence"`
	// LastEvidence is the last time something confirmed the fact: its
	// promotion, a re-observation in auto-memory, or valid citations.
	LastEvidence time.Time `json:"last_evidence"`
	// StaleSweeps counts consecutive sweeps that found the fact stale.
	StaleSweeps int       `json:"stale_sweeps,omitempty"`
	LastStale   time.Time `json:"last_stale,omitempty"`
	Archived    bool      `json:"archived,omitempty"`
	ArchivedAt  time.Time `json:"archived_at,omitempty"`
	Reason      string    `json:"reason,omitempty"`
}

// Decision records a user's rejection of an entry in a plan. The id is the
// hash of the entry's text, so an edited entry is a new candidate.
type Decision struct {
	ID      string    `json:"id"`
	At      time.Time `json:"at"`
	Preview string    `json:"preview"`
}

// Check is one validation of one entry: the audit trail of what intermem
// believed about a fact and when. Stored under "<id>/<time>", bounded per
// entry (MaxChecksPerEntry).
type Check struct {
	ID         string    `json:"id"`
	At         time.Time `json:"at"`
	Where      string    `json:"where"`
	Confidence float64   `json:"confidence"`
	Status     string    `json:"status"`
	Valid      int       `json:"valid"`
	Broken     int       `json:"broken"`
	Moved      int       `json:"moved"`
	Reasons    []string  `json:"reasons,omitempty"`
}

// MaxChecksPerEntry bounds the audit trail kept for one entry.
const MaxChecksPerEntry = 20

// Fact is the latest validated confidence of an auto-memory entry (bucket
// facts), kept apart from the audit trail so a session start can read it
// cheaply.
type Fact struct {
	Confidence float64   `json:"confidence"`
	At         time.Time `json:"at"`
}
