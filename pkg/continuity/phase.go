package continuity

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/redact"
	"github.com/intermem/intermem/pkg/screen"
	"github.com/intermem/intermem/pkg/store"
)

// Choice is what to do with the records of later phases at a backtrack.
type Choice string

// The choices at a backtrack.
const (
	// Continue invalidates the records of later phases.
	Continue Choice = "continue"
	// Forget archives them (restorable with RestorePhase).
	Forget Choice = "forget"
	// Abort cancels the phase start.
	Abort Choice = "abort"
)

// ParseChoice reads a choice as typed ("continue", "c", …).
func ParseChoice(s string) (Choice, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "continue", "c":
		return Continue, true
	case "forget", "f":
		return Forget, true
	case "abort", "a":
		return Abort, true
	}
	return "", false
}

// ErrBacktrack is returned by StartPhase for a backtrack without a choice.
var ErrBacktrack = errors.New("starting this phase is a backtrack")

// ErrAborted is returned by StartPhase when the choice was Abort.
var ErrAborted = errors.New("backtrack aborted; nothing changed")

// ErrOpen is returned by StartPhase for a phase already started and not
// closed.
var ErrOpen = errors.New("phase is already started and not closed")

// ErrNoPhase is returned for a phase that was never started (close,
// restore).
var ErrNoPhase = errors.New("no such phase")

// ErrFlagged is returned for text a person typed that screening flags as
// a possible prompt injection: it would be injected into later sessions.
var ErrFlagged = errors.New("text looks like a prompt injection")

// ErrEmpty is returned for a required text that is empty.
var ErrEmpty = errors.New("text is empty")

// Text limits: a summary or decision is a few sentences, not a document.
const (
	MaxText    = 4000
	MaxMessage = 600
	MaxName    = 120
)

// Clean redacts s and trims it to max bytes (at a rune boundary, marked
// with "…"). flagged reports what screening found in the redacted text.
func Clean(s string, max int) (out string, flagged []screen.Flag) {
	s = strings.TrimSpace(redact.String(s))
	if len(s) > max {
		cut := max
		for cut > 0 && (s[cut]&0xC0) == 0x80 {
			cut--
		}
		s = strings.TrimSpace(s[:cut]) + "…"
	}
	return s, screen.Check(s)
}

// typed cleans text a person typed: redacted, refused when empty or
// flagged.
func typed(what, s string, max int) (string, error) {
	out, flags := Clean(s, max)
	if out == "" {
		return "", fmt.Errorf("%s: %w", what, ErrEmpty)
	}
	if len(flags) > 0 {
		return "", fmt.Errorf("%s: %w (%s: %s)", what, ErrFlagged, flags[0].Kind, flags[0].Detail)
	}
	return out, nil
}

// Backtrack reports whether starting phase n is a backtrack, and the later
// phases whose records it would touch.
func Backtrack(tx *bolt.Tx, n int) (bool, []int, error) {
	h, err := store.GetHead(tx)
	if err != nil {
		return false, nil, err
	}
	if h.Phase == nil || n >= *h.Phase {
		return false, nil, nil
	}
	later := map[int]bool{}
	phases, err := store.Phases(tx)
	if err != nil {
		return false, nil, err
	}
	for _, p := range phases {
		if p.N > n && p.Status == store.StatusValid {
			later[p.N] = true
		}
	}
	var out []int
	for k := range later {
		out = append(out, k)
	}
	sort.Ints(out)
	return true, out, nil
}

// StartResult says what StartPhase did.
type StartResult struct {
	Phase     store.Phase `json:"phase"`
	Backtrack bool        `json:"backtrack"`
	// From is the head phase before the start (nil: none).
	From   *int   `json:"from"`
	Choice Choice `json:"choice,omitempty"`
	// Invalidated and Archived count the records the backtrack touched.
	Invalidated int `json:"invalidated"`
	Archived    int `json:"archived"`
}

// StartPhase starts phase n (named name) at now and moves the head to it.
// For a backtrack, choice must be Continue or Forget (Abort returns
// ErrAborted, "" ErrBacktrack) and is applied to every valid record of a
// later phase.
func StartPhase(tx *bolt.Tx, n int, name string, choice Choice, session string, now time.Time) (StartResult, error) {
	var res StartResult
	if n < 0 {
		return res, fmt.Errorf("phase %d: phases are numbered from 0", n)
	}
	name, err := cleanName(name)
	if err != nil {
		return res, err
	}
	h, err := store.GetHead(tx)
	if err != nil {
		return res, err
	}
	res.From = h.Phase
	old, had, err := store.GetPhase(tx, n)
	if err != nil {
		return res, err
	}
	if had && old.Closed.IsZero() && old.Status == store.StatusValid && h.Phase != nil && *h.Phase == n {
		return res, fmt.Errorf("phase %d: %w", n, ErrOpen)
	}
	back := h.Phase != nil && n < *h.Phase
	if back {
		res.Backtrack = true
		switch choice {
		case "":
			return res, fmt.Errorf("phase %d is below the head (phase %d): %w", n, *h.Phase, ErrBacktrack)
		case Abort:
			res.Choice = Abort
			return res, ErrAborted
		case Continue, Forget:
			res.Choice = choice
		default:
			return res, fmt.Errorf("unknown backtrack choice %q", choice)
		}
		to := store.StatusInvalidated
		if choice == Forget {
			to = store.StatusArchived
		}
		count, err := setLater(tx, n, to)
		if err != nil {
			return res, err
		}
		if to == store.StatusArchived {
			res.Archived = count
		} else {
			res.Invalidated = count
		}
	}
	p := store.Phase{N: n, Name: name, Started: now.UTC(), Status: store.StatusValid}
	if had && name == "" {
		p.Name = old.Name
	}
	if back {
		p.OnBacktrack = string(choice)
	}
	cp := store.Checkpoint{
		ID: fmt.Sprintf("phase%d-%s", n, now.UTC().Format("20060102-150405")), Kind: store.CheckpointPhase,
		Session: session, Time: now.UTC(), Phase: &n, Scope: store.ScopeProject, Status: store.StatusValid,
	}
	if p.Name != "" {
		cp.Summary = "Phase " + fmt.Sprint(n) + " started: " + p.Name
	} else {
		cp.Summary = "Phase " + fmt.Sprint(n) + " started"
	}
	cp.ID = uniqueCheckpointID(tx, cp.ID)
	p.Checkpoint = cp.ID
	if err := store.PutCheckpoint(tx, &cp); err != nil {
		return res, err
	}
	if err := store.PutPhase(tx, &p); err != nil {
		return res, err
	}
	res.Phase = p
	return res, store.PutHead(tx, store.Head{Phase: &n, Checkpoint: cp.ID, Moved: now.UTC()})
}

func cleanName(name string) (string, error) {
	if strings.TrimSpace(name) == "" {
		return "", nil
	}
	name = strings.Join(strings.Fields(name), " ")
	return typed("phase name", name, MaxName)
}

// uniqueCheckpointID returns id, or id with a random suffix when a
// checkpoint holds it.
func uniqueCheckpointID(tx *bolt.Tx, id string) string {
	if !store.HasCheckpoint(tx, id) {
		return id
	}
	return id + "-" + randomHex(4)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// setLater gives every valid record of a phase above n the status to,
// and returns how many it changed.
func setLater(tx *bolt.Tx, n int, to string) (int, error) {
	return restatus(tx, func(ph *int, status string) bool {
		return ph != nil && *ph > n && status == store.StatusValid
	}, to)
}

// RestorePhase brings the archived records of phase n back as
// invalidated (they are still of an abandoned timeline: searchable with
// --all, never recalled) and returns how many.
func RestorePhase(tx *bolt.Tx, n int) (int, error) {
	if _, had, err := store.GetPhase(tx, n); err != nil {
		return 0, err
	} else if !had {
		return 0, fmt.Errorf("phase %d: %w", n, ErrNoPhase)
	}
	return restatus(tx, func(ph *int, status string) bool {
		return ph != nil && *ph == n && status == store.StatusArchived
	}, store.StatusInvalidated)
}

// restatus gives every phase, checkpoint, decision and memory of scope
// phase that match selects
// (by the phase it belongs to and its status) the status to, and returns
// how many it changed. A backtrack and a restore are the same walk over
// the kinds of record with a different selection.
func restatus(tx *bolt.Tx, match func(phase *int, status string) bool, to string) (int, error) {
	ps, err := restatusEach(tx, store.Phases, store.PutPhase, func(p *store.Phase) (*int, *string) { return &p.N, &p.Status }, match, to)
	if err != nil {
		return 0, err
	}
	cs, err := restatusEach(tx, store.Checkpoints, store.PutCheckpoint, func(c *store.Checkpoint) (*int, *string) { return c.Phase, &c.Status }, match, to)
	if err != nil {
		return 0, err
	}
	ds, err := restatusEach(tx, store.Decided, store.PutDecided, func(d *store.PhaseDecision) (*int, *string) { return d.Phase, &d.Status }, match, to)
	if err != nil {
		return 0, err
	}
	ms, err := restatusEach(tx, store.Memories, store.PutMemory, func(m *store.ScopedMemory) (*int, *string) { return m.Phase, &m.Status }, match, to)
	if err != nil {
		return 0, err
	}
	return ps + cs + ds + ms, nil
}

// restatusEach is restatus over one kind of record: list reads them,
// fields names a record's phase and status, put stores a changed one.
func restatusEach[T any](tx *bolt.Tx, list func(*bolt.Tx) ([]T, error), put func(*bolt.Tx, *T) error,
	fields func(*T) (*int, *string), match func(*int, string) bool, to string) (int, error) {
	recs, err := list(tx)
	if err != nil {
		return 0, err
	}
	count := 0
	for i := range recs {
		ph, status := fields(&recs[i])
		if !match(ph, *status) {
			continue
		}
		*status = to
		if err := put(tx, &recs[i]); err != nil {
			return 0, err
		}
		count++
	}
	return count, nil
}

// DecisionInput is a decision as typed.
type DecisionInput struct {
	Text, Why string
}

// Closeout is what closing a phase records.
type Closeout struct {
	Summary   string
	Decisions []DecisionInput
	Artifacts []string
	Issues    []string
}

// ClosePhase closes phase n with its closeout: the summary, each decision
// (recorded as a decision of phase n), artifacts and issues. The phase
// must have been started and be valid.
func ClosePhase(tx *bolt.Tx, n int, c Closeout, session string, now time.Time) (store.Phase, []store.PhaseDecision, error) {
	p, had, err := store.GetPhase(tx, n)
	if err != nil {
		return p, nil, err
	}
	if !had {
		return p, nil, fmt.Errorf("phase %d: %w", n, ErrNoPhase)
	}
	if p.Status != store.StatusValid {
		return p, nil, fmt.Errorf("phase %d is %s (a backtrack left it): start it again first", n, p.Status)
	}
	summary, err := typed("summary", c.Summary, MaxText)
	if err != nil {
		return p, nil, err
	}
	var arts, issues []string
	for _, a := range c.Artifacts {
		s, err := typed("artifact", a, MaxName*4)
		if err != nil {
			return p, nil, err
		}
		arts = append(arts, s)
	}
	for _, is := range c.Issues {
		s, err := typed("issue", is, MaxText)
		if err != nil {
			return p, nil, err
		}
		issues = append(issues, s)
	}
	var ds []store.PhaseDecision
	var ids []string
	for _, d := range c.Decisions {
		rec, _, err := Decide(tx, d.Text, d.Why, &n, session, now)
		if err != nil {
			return p, nil, err
		}
		ds = append(ds, rec)
		ids = append(ids, rec.ID)
	}
	p.Closed, p.Summary, p.Artifacts, p.Issues = now.UTC(), summary, arts, issues
	p.Decisions = ids
	cp := store.Checkpoint{
		ID: fmt.Sprintf("phase%d-close-%s", n, now.UTC().Format("20060102-150405")), Kind: store.CheckpointCloseout,
		Session: session, Time: now.UTC(), Phase: &n, Summary: summary, Scope: store.ScopeProject, Status: store.StatusValid,
	}
	cp.ID = uniqueCheckpointID(tx, cp.ID)
	if err := store.PutCheckpoint(tx, &cp); err != nil {
		return p, nil, err
	}
	if err := store.PutPhase(tx, &p); err != nil {
		return p, nil, err
	}
	h, err := store.GetHead(tx)
	if err != nil {
		return p, nil, err
	}
	if h.Phase != nil && *h.Phase == n {
		h.Checkpoint, h.Moved = cp.ID, now.UTC()
		if err := store.PutHead(tx, h); err != nil {
			return p, nil, err
		}
	}
	return p, ds, nil
}

// CheckpointRef is one checkpoint as the head lists it.
type CheckpointRef struct {
	ID     string `json:"id"`
	Phase  int    `json:"phase"`
	Status string `json:"status"`
}

// HeadView is the phase state as `intermem head --json` prints it and
// other tools read it.
type HeadView struct {
	HeadPhase      *int            `json:"head_phase"`
	HeadCheckpoint *string         `json:"head_checkpoint"`
	Checkpoints    []CheckpointRef `json:"checkpoints"`
	// Phases are every phase not archived, by number.
	Phases []store.Phase `json:"phases"`
}

// Head returns the phase state: the head and every checkpoint that
// belongs to a phase and is valid or invalidated, in id order.
func Head(tx *bolt.Tx) (HeadView, error) {
	v := HeadView{Checkpoints: []CheckpointRef{}, Phases: []store.Phase{}}
	h, err := store.GetHead(tx)
	if err != nil {
		return v, err
	}
	v.HeadPhase = h.Phase
	if h.Checkpoint != "" {
		id := h.Checkpoint
		v.HeadCheckpoint = &id
	}
	cps, err := store.Checkpoints(tx)
	if err != nil {
		return v, err
	}
	sortCheckpoints(cps)
	for _, c := range cps {
		if c.Phase == nil || c.Kind == store.CheckpointAuto || c.Kind == store.CheckpointFinal {
			continue
		}
		if c.Status == store.StatusValid || c.Status == store.StatusInvalidated {
			v.Checkpoints = append(v.Checkpoints, CheckpointRef{ID: c.ID, Phase: *c.Phase, Status: c.Status})
		}
	}
	ps, err := store.Phases(tx)
	if err != nil {
		return v, err
	}
	for _, p := range ps {
		if p.Status != store.StatusArchived {
			v.Phases = append(v.Phases, p)
		}
	}
	return v, nil
}
