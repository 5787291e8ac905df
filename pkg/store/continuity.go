package store

import (
	"fmt"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Session continuity's buckets (schema 4). Package continuity is their only
// user. Every value was written by intermem but is read back as untrusted
// (a store may be copied with a project): readers redact, screen and
// escape what they show.
var (
	// BucketCheckpoints maps a checkpoint id to a Checkpoint. Ids sort by
	// time ("cp-<UTC stamp>-<8 hex>", "phase<N>-<stamp>").
	BucketCheckpoints = []byte("checkpoints")
	// BucketPhases maps PhaseKey(n) to the Phase record of phase n.
	BucketPhases = []byte("phases")
	// BucketDecided maps a decision id to a PhaseDecision. (BucketDecisions
	// is older and holds rejections of plan candidates.)
	BucketDecided = []byte("decided")
	// BucketHead holds "head" → Head.
	BucketHead = []byte("head")
	// BucketProjects, in the per-user store only, maps a project root to
	// the UserProject that registers it.
	BucketProjects = []byte("projects")
	// BucketMemories maps a memory id to a ScopedMemory: in a project's
	// store the memories of scope phase and session, in the per-user
	// store those of scope user. (Memories of scope project are the
	// written source's log.) Stores of schema 4 made before it have no
	// such bucket until the first such memory: readers take its absence
	// for an empty bucket.
	BucketMemories = []byte("memories")
)

// UserProject is a project this user has used intermem's continuity
// commands in, as the per-user store registers it.
type UserProject struct {
	Root  string    `json:"root"`
	First time.Time `json:"first"`
	Last  time.Time `json:"last"`
}

// The statuses of continuity records.
const (
	// StatusValid is a record of the agreed timeline: recalled, searched,
	// injected.
	StatusValid = "valid"
	// StatusInvalidated is a record of a phase beyond a backtrack that the
	// user chose to continue from: kept, never recalled or injected,
	// searched only when asked for everything.
	StatusInvalidated = "invalidated"
	// StatusArchived is a record the user chose to forget at a backtrack:
	// kept (restorable), listed only among archived records.
	StatusArchived = "archived"
)

// The kinds of checkpoint.
const (
	// CheckpointAuto is taken by the Stop hook every N turns.
	CheckpointAuto = "auto"
	// CheckpointFinal is taken by the SessionEnd hook.
	CheckpointFinal = "final"
	// CheckpointManual is a summary the user or the model wrote
	// (intermem checkpoint, the checkpoint skill).
	CheckpointManual = "manual"
	// CheckpointPhase marks the start of a phase.
	CheckpointPhase = "phase"
	// CheckpointCloseout is the checkpoint a phase's closeout makes.
	CheckpointCloseout = "closeout"
)

// The scopes of continuity records.
const (
	// ScopeSession is kept for the session's own resume only.
	ScopeSession = "session"
	// ScopeProject is long-term project memory: searchable, exported.
	ScopeProject = "project"
	// ScopeUser holds across every project of the user: kept in the
	// per-user store, outside every project.
	ScopeUser = "user"
	// ScopePhase belongs to the phase that was current when it was
	// written: a backtrack below that phase invalidates or archives it
	// like every other record of a later phase.
	ScopePhase = "phase"
)

// ScopedMemory is a memory of scope phase, session or user (see
// BucketMemories): what intermem write and memory_write store, with the
// scope that says how long it holds.
type ScopedMemory struct {
	ID        string    `json:"id"`
	Type      string    `json:"type"`
	Title     string    `json:"title"`
	Content   string    `json:"content"`
	Tags      []string  `json:"tags,omitempty"`
	Files     []string  `json:"files,omitempty"`
	Source    string    `json:"source"`
	AgentID   string    `json:"agent_id,omitempty"`
	SessionID string    `json:"session_id,omitempty"`
	ToolUseID string    `json:"tool_use_id,omitempty"`
	Created   time.Time `json:"created"`
	Scope     string    `json:"scope"`
	// Phase is the phase a memory of scope phase belongs to.
	Phase  *int   `json:"phase,omitempty"`
	Status string `json:"status"`
}

// Memories returns every scoped memory that decodes under its own id, in
// id order.
func Memories(tx *bolt.Tx) ([]ScopedMemory, error) {
	var out []ScopedMemory
	err := Each(tx, BucketMemories, func(k string, m *ScopedMemory) error {
		if m.ID == k {
			out = append(out, *m)
		}
		return nil
	})
	return out, err
}

// PutMemory stores m under its id.
func PutMemory(tx *bolt.Tx, m *ScopedMemory) error { return Put(tx, BucketMemories, m.ID, m) }

// DeleteMemory removes the memory id.
func DeleteMemory(tx *bolt.Tx, id string) error { return Delete(tx, BucketMemories, id) }

// Checkpoint is one point in the work a later session can resume from.
type Checkpoint struct {
	ID      string    `json:"id"`
	Kind    string    `json:"kind"`
	Session string    `json:"session,omitempty"`
	Time    time.Time `json:"time"`
	// Turn is the session's turn count when the checkpoint was taken (0
	// when not taken by a hook).
	Turn int `json:"turn,omitempty"`
	// Branch and Commit are the git branch and HEAD of the session's
	// working tree, read from .git files ("" outside git; Branch "" when
	// detached).
	Branch string `json:"branch,omitempty"`
	Commit string `json:"commit,omitempty"`
	// Files are files the session changed, relative to the project root
	// where inside it.
	Files []string `json:"files,omitempty"`
	// Message is the last assistant message, redacted, screened and
	// truncated (hooks), or empty.
	Message string `json:"message,omitempty"`
	// Summary is a written summary (manual checkpoints, phase closeouts).
	Summary string `json:"summary,omitempty"`
	// Phase is the phase the checkpoint belongs to, nil for none.
	Phase  *int   `json:"phase,omitempty"`
	Scope  string `json:"scope"`
	Status string `json:"status"`
	// Flagged is set when screening found the message or summary may be a
	// prompt injection: never injected.
	Flagged bool `json:"flagged,omitempty"`
}

// Phase is one phase of the work and, once closed, its closeout.
type Phase struct {
	N       int       `json:"n"`
	Name    string    `json:"name,omitempty"`
	Started time.Time `json:"started"`
	// Checkpoint is the id of the checkpoint its start made.
	Checkpoint string    `json:"checkpoint,omitempty"`
	Closed     time.Time `json:"closed,omitzero"`
	Summary    string    `json:"summary,omitempty"`
	// Decisions are the ids of the decisions recorded at its closeout.
	Decisions []string `json:"decisions,omitempty"`
	Artifacts []string `json:"artifacts,omitempty"`
	Issues    []string `json:"issues,omitempty"`
	// OnBacktrack is the choice made for a backtrack to this phase when
	// it was started ("" when none).
	OnBacktrack string `json:"on_backtrack,omitempty"`
	Status      string `json:"status"`
}

// PhaseDecision is a decision with its rationale ("why did we choose X").
type PhaseDecision struct {
	ID      string    `json:"id"`
	Text    string    `json:"text"`
	Why     string    `json:"why"`
	Phase   *int      `json:"phase,omitempty"`
	Time    time.Time `json:"time"`
	Session string    `json:"session,omitempty"`
	Status  string    `json:"status"`
	// Scope is ScopeUser for a decision of the per-user store, else empty
	// (the project's).
	Scope string `json:"scope,omitempty"`
}

// Head is where the agreed timeline stands: the current phase and its
// latest checkpoint.
type Head struct {
	Phase      *int      `json:"phase"`
	Checkpoint string    `json:"checkpoint,omitempty"`
	Moved      time.Time `json:"moved,omitzero"`
}

// PhaseKey is the key of phase n in BucketPhases: fixed width, so keys
// sort by phase.
func PhaseKey(n int) string { return fmt.Sprintf("%010d", n) }

var keyHead = "head"

// GetHead returns the head (zero when none was set).
func GetHead(tx *bolt.Tx) (Head, error) {
	var h Head
	_, err := Get(tx, BucketHead, keyHead, &h)
	return h, err
}

// PutHead stores the head.
func PutHead(tx *bolt.Tx, h Head) error { return Put(tx, BucketHead, keyHead, &h) }

// Checkpoints returns every checkpoint that decodes, in id order.
func Checkpoints(tx *bolt.Tx) ([]Checkpoint, error) {
	var out []Checkpoint
	err := Each(tx, BucketCheckpoints, func(_ string, c *Checkpoint) error {
		out = append(out, *c)
		return nil
	})
	return out, err
}

// PutCheckpoint stores c under its id.
func PutCheckpoint(tx *bolt.Tx, c *Checkpoint) error { return Put(tx, BucketCheckpoints, c.ID, c) }

// Phases returns every phase that decodes, by number.
func Phases(tx *bolt.Tx) ([]Phase, error) {
	var out []Phase
	err := Each(tx, BucketPhases, func(k string, p *Phase) error {
		if n, err := strconv.Atoi(k); err != nil || n != p.N {
			return nil // a record under another phase's key is not trusted
		}
		out = append(out, *p)
		return nil
	})
	return out, err
}

// GetPhase returns phase n.
func GetPhase(tx *bolt.Tx, n int) (Phase, bool, error) {
	var p Phase
	ok, err := Get(tx, BucketPhases, PhaseKey(n), &p)
	if ok && p.N != n {
		return Phase{}, false, nil
	}
	return p, ok, err
}

// PutPhase stores p under PhaseKey(p.N).
func PutPhase(tx *bolt.Tx, p *Phase) error { return Put(tx, BucketPhases, PhaseKey(p.N), p) }

// Decided returns every decision that decodes, in id order.
func Decided(tx *bolt.Tx) ([]PhaseDecision, error) {
	var out []PhaseDecision
	err := Each(tx, BucketDecided, func(_ string, d *PhaseDecision) error {
		out = append(out, *d)
		return nil
	})
	return out, err
}

// PutDecided stores d under its id.
func PutDecided(tx *bolt.Tx, d *PhaseDecision) error { return Put(tx, BucketDecided, d.ID, d) }
