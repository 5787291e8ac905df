// Package journal makes intermem's file changes crash-safe. It is the
// engine — write-ahead records, MACs, confinement, compare-and-swap writes,
// backups, recovery — and knows no kind of operation: what each kind means
// (the state it ends in, how each of its steps applies and undoes, the
// store bookkeeping it does at commit) is its owner's, given as Kinds
// (intermem's are package ops).
//
// Every operation that edits user files is an Op: an ordered list of
// Steps, each one idempotent transformation of one file ("insert this block
// under this section unless its marker is already there", "remove the entry
// with this id if present", "delete this file"). The Op is written to the
// store before any file is touched (write-ahead), and moves through these
// states:
//
//	            phase 1 steps            phase 2 steps
//	pending ──────────────────▶ committed ──────────────────▶ final
//	   │   (curated documents      │  (auto-memory written)     (the kind's own:
//	   │    written)               │                             Kinds.Final)
//	   └──────── discard ──────────┘
//	     (phase-1 changes undone: Kinds.Undo)
//
// Invariants:
//
//   - Write-ahead: a file is changed only after the Op that changes it is
//     durable in the store.
//   - Bound to its user, store and project: every save signs the Op with
//     an HMAC-SHA256 under the user's key (kept outside any project, see
//     package userstate) over the store id, the project root and the Op's
//     whole encoding. Recovery replays only Ops whose MAC verifies and whose
//     every step path is one of intermem's places (package confine) now; any
//     other is refused — never replayed, never touching a file — and listed
//     for the user, who may drop it. A record that no longer decodes is
//     kept and listed the same way. A store copied in with a project (a
//     tarball, a shared folder) therefore cannot make intermem write.
//   - Logical paths, judged at every use: a step names its file as intermem
//     names it (<root>/CLAUDE.md, <memory dir>/MEMORY.md). Every read and
//     write resolves it through confine.Places.Resolve at that moment, so a
//     write lands on the real path judged now, and through a symlink the
//     link stays a link (the temporary file and the rename happen beside
//     the real file).
//   - Atomic files, once per phase: a phase's steps are applied in memory,
//     in order, and each file is then replaced once, by rename(2) of a fully
//     written and fsynced temporary file (package atomicfile: created
//     O_EXCL|O_NOFOLLOW, its name the Op id and random digits), so a crash
//     leaves every file byte-equal to its state before or after the phase's
//     steps, and recovery knows which temporary files to remove.
//   - Compare-and-swap: immediately before the rename the file must still
//     hold what the steps were applied to (same bytes, same inode); if not,
//     another program changed it, and the file's steps are re-applied to
//     what it holds now (they are idempotent by content), a bounded number
//     of times; then the Op stops, left resumable. The replaced file stays
//     open from the read: if it changed after the check (an O_APPEND writer
//     that raced the rename), the late bytes are carried into the new file
//     by the same loop, so another session's append is never lost.
//   - Hashes: each step records the SHA-256 of its file before and after it
//     (Simulate). Replaying a step whose file already has the "after" hash
//     does nothing; otherwise the transformation is re-applied to the
//     current content, and it is idempotent by content (a marker already
//     present, an entry already gone), so replay after a crash at any
//     point, or after the user edited a file in between, converges and
//     never duplicates.
//   - Backups: before its first change in an Op, every file's exact bytes
//     are copied to .intermem/backups/<op id>/ (owner-only), so nothing is
//     lost even if a transformation is wrong. Retention keeps the newest
//     DefaultKeepBackups directories by the creation order the store
//     records (never by names or clocks, which may run backwards), and never
//     deletes the backup of the Op just run.
//   - Recovery runs at the start of every writer: any verified Op left
//     pending or committed is resumed (or, by explicit request, discarded).
package journal

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/atomicfile"
	"github.com/intermem/intermem/pkg/confine"
	"github.com/intermem/intermem/pkg/failpoint"
	"github.com/intermem/intermem/pkg/store"
)

// State of an Op.
type State string

// States every Op can be in. Pending and Committed are incomplete; a
// finished Op is in its kind's final state (Kinds.Final), or Discarded.
const (
	Pending   State = "pending"
	Committed State = "committed"
	Discarded State = "discarded"
)

// Kinds says what the journal's Ops mean; the journal runs them. Every
// method must be deterministic: recovery calls them again, in another
// process, on what a crash left.
type Kinds interface {
	// Final returns the state an Op of kind ends in; ok is false for a
	// kind that is not one (such an Op is never run or replayed).
	Final(kind string) (state State, ok bool)
	// Apply performs a step's transformation (an Applier).
	Apply(s *Step, cur []byte, exists bool, read Reader) (next []byte, keep bool, err error)
	// Undo reverses a phase-1 step for Discard (an Applier). Phase-2 steps
	// are never undone.
	Undo(s *Step, cur []byte, exists bool, read Reader) (next []byte, keep bool, err error)
	// Commit applies op's bookkeeping (Op.Commit) in the transaction that
	// marks it committed, on its first run and on recovery alike.
	Commit(tx *bolt.Tx, op *Op) error
}

// Op is one journaled operation.
type Op struct {
	ID      string    `json:"id"`
	Kind    string    `json:"kind"`
	State   State     `json:"state"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	// Summary is a one-line human description ("promote 3 entries").
	Summary string `json:"summary"`
	// Entries are the entry ids the Op is about.
	Entries []string `json:"entries"`
	Steps   []Step   `json:"steps"`
	// Commit is the store bookkeeping the operation does when it commits
	// (promoted records, rejections, archive state), encoded by its
	// owner. It is part of the journaled record so that recovery commits
	// it too: Kinds.Commit applies it, in the commit transaction.
	Commit json.RawMessage `json:"commit,omitempty"`
	// AllowOutside lets the Op's target and docs/intermem steps write
	// through a link whose real path is outside the project: the user's
	// explicit --allow-outside. It never widens the set of places.
	AllowOutside bool `json:"allow_outside,omitempty"`
	// MAC binds the Op to the user, the store and the project root that
	// recorded it (see the package comment); set by every save.
	MAC string `json:"mac,omitempty"`
}

// Step is one idempotent transformation of one file.
type Step struct {
	Phase int `json:"phase"` // 1 or 2
	// Path is the file as intermem names it: absolute and clean, symlinks
	// not resolved (<root>/CLAUDE.md, <memory dir>/MEMORY.md). Every use
	// resolves it through confine.
	Path    string `json:"path"`
	Action  string `json:"action"`
	ID      string `json:"id,omitempty"`      // entry id the step concerns
	Section string `json:"section,omitempty"` // target section
	Block   string `json:"block,omitempty"`   // redacted text to insert
	Extra   string `json:"extra,omitempty"`   // action-specific
	// Derived steps compute their result from other files (the tiered
	// index); discarding re-derives them after undoing the others.
	Derived bool   `json:"derived,omitempty"`
	Before  string `json:"before"` // sha256 hex; "" = absent
	After   string `json:"after"`  // sha256 hex; "" = absent
	Done    bool   `json:"done,omitempty"`
}

// Applier performs a step's transformation on a file's current content.
// It must be deterministic and idempotent by content: applying it to its
// own output returns that output unchanged. exists reports whether the file
// exists; the returned keep=false deletes the file. read gives the other
// files as this operation sees them at this step (the simulated contents,
// or the phase applied in memory), for steps whose result depends on other
// files — the index of the tiered documents is rendered from them. Paths
// given to read are judged by confine like step paths.
type Applier func(s *Step, cur []byte, exists bool, read Reader) (next []byte, keep bool, err error)

// Reader returns a file's content, or exists=false.
type Reader func(path string) (content []byte, exists bool, err error)

// Journal runs Ops against one project.
type Journal struct {
	Store    *store.Store // open read-write (read-only suffices for Scan)
	StateDir string       // the project's .intermem
	// Places are the project's writable places: every step path is
	// resolved through them at every read and write.
	Places confine.Places
	// Key is the user's secret key (package userstate) that signs and
	// verifies Ops. Without one, every recorded Op is refused and no new
	// Op can be saved.
	Key []byte
	// Kinds is what the Ops mean; required.
	Kinds     Kinds
	Now       func() time.Time
	Logf      func(string, ...any)
	KeepBacks int // backup directories to keep; 0 means DefaultKeepBackups
}

// DefaultKeepBackups bounds .intermem/backups.
const DefaultKeepBackups = 20

// ErrConflict is returned when a step's transformation fails on the
// current content (for example a file became a directory).
var ErrConflict = errors.New("journal: conflicting change")

// Hash returns the hex SHA-256 of b, the content identity used for CAS.
func Hash(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// NewID returns a unique op id. Ids start with the time for people; the
// order of operations is the store's, never the clock's.
func NewID(now time.Time) string {
	var r [4]byte
	_, _ = rand.Read(r[:])
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(r[:])
}

// ReadFile reads a file for a step: (nil, false, nil) when it is absent.
// The path must already be resolved.
func ReadFile(path string) ([]byte, bool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, false, nil
		}
		return nil, false, err
	}
	return b, true, nil
}

// Simulate fills in each step's Before and After hashes by applying the
// steps in order to in-memory copies of the files, and returns the final
// content of every file (nil for deleted), keyed by real path. Every path
// is resolved through places first, so a step that would write outside
// them fails here, before anything is recorded. It changes nothing on
// disk, so it also serves --dry-run.
func Simulate(places confine.Places, op *Op, apply Applier) (map[string][]byte, map[string]bool, error) {
	v := newView(places, op.AllowOutside)
	for i := range op.Steps {
		s := &op.Steps[i]
		f, err := v.file(s.Path)
		if err != nil {
			return nil, nil, fmt.Errorf("%s %s: %w", s.Action, s.Path, err)
		}
		s.Before = hashOf(f.cur, f.ok)
		next, keep, err := apply(s, f.cur, f.ok, v.read)
		if err != nil {
			return nil, nil, fmt.Errorf("%s %s: %w", s.Action, s.Path, err)
		}
		if !keep {
			next = nil
		}
		f.cur, f.ok = next, keep
		s.After = hashOf(next, keep)
	}
	content := map[string][]byte{}
	exists := map[string]bool{}
	for _, f := range v.order {
		content[f.real], exists[f.real] = f.cur, f.ok
	}
	return content, exists, nil
}

func hashOf(b []byte, exists bool) string {
	if !exists {
		return ""
	}
	return Hash(b)
}

// Run executes a new Op: records it (pending), runs phase 1, commits (with
// the Op's Commit bookkeeping, through Kinds.Commit), runs phase 2 and
// marks it final.
func (j *Journal) Run(op *Op) error {
	if _, ok := j.Kinds.Final(op.Kind); !ok {
		return fmt.Errorf("journal: unknown op kind %q", op.Kind)
	}
	now := j.now()
	if op.ID == "" {
		op.ID = NewID(now)
	}
	if !validID(op.ID) {
		return fmt.Errorf("journal: bad op id %q", op.ID)
	}
	op.State, op.Created, op.Updated = Pending, now, now
	if err := j.save(op, func(tx *bolt.Tx) error { return store.RecordBackup(tx, op.ID) }); err != nil {
		return fmt.Errorf("journal: record %s: %w", op.ID, err)
	}
	failpoint.Inject(op.Kind + ":after-journal")
	return j.resume(op)
}

// Resume completes an incomplete Op, from wherever it stopped, first
// removing the temporary files an interrupted run left. The Op must be
// verified (Scan).
func (j *Journal) Resume(op *Op) error {
	j.cleanTemps(op)
	return j.resume(op)
}

// resume runs op from its state: a new Op (Run, which has no temporary
// files yet) or a recovered one.
func (j *Journal) resume(op *Op) error {
	if op.State == Pending {
		if err := j.runPhase(op, 1); err != nil {
			return err
		}
		failpoint.Inject(op.Kind + ":after-target")
		op.State = Committed
		if err := j.save(op, func(tx *bolt.Tx) error { return j.Kinds.Commit(tx, op) }); err != nil {
			return fmt.Errorf("journal: commit %s: %w", op.ID, err)
		}
		failpoint.Inject(op.Kind + ":after-commit")
	}
	if op.State == Committed {
		if err := j.runPhase(op, 2); err != nil {
			return err
		}
		final, ok := j.Kinds.Final(op.Kind)
		if !ok {
			return fmt.Errorf("journal: unknown op kind %q", op.Kind)
		}
		op.State = final
		if err := j.save(op, nil); err != nil {
			return fmt.Errorf("journal: finish %s: %w", op.ID, err)
		}
	}
	j.trimBackups(op.ID)
	return nil
}

// runPhase applies a phase's pending steps: every file is read and backed
// up, the steps are applied in memory in their order (so a derived step
// reads the others as this phase leaves them), and each file is then
// written once, in the order the steps first name it — the order the
// operation's builder chose so that at any crash point every fact exists
// somewhere.
func (j *Journal) runPhase(op *Op, phase int) error {
	var pending []*Step
	for i := range op.Steps {
		if s := &op.Steps[i]; s.Phase == phase && !s.Done {
			pending = append(pending, s)
		}
	}
	if len(pending) == 0 {
		return nil
	}
	v := newView(j.Places, op.AllowOutside)
	v.apply = j.replay
	files := make([]*file, len(pending))
	for i, s := range pending {
		f, err := v.file(s.Path)
		if err != nil {
			return fmt.Errorf("%w: %s %s: %v", ErrConflict, s.Action, s.Path, err)
		}
		f.steps = append(f.steps, s)
		files[i] = f
	}
	// Back up every file this phase may change before changing any.
	for _, f := range v.order {
		if err := j.backup(op.ID, f); err != nil {
			return err
		}
	}
	if phase == 2 {
		failpoint.Inject("prune:after-backup")
	}
	for i, s := range pending {
		f := files[i]
		next, keep, err := v.apply(s, f.cur, f.ok, v.read)
		if err != nil {
			return fmt.Errorf("%w: %s %s: %v", ErrConflict, s.Action, s.Path, err)
		}
		f.cur, f.ok = next, keep
	}
	for _, f := range v.order {
		if err := j.commit(op.ID, v, f); err != nil {
			return err
		}
		if err := j.unlinkGone(f); err != nil {
			return err
		}
		for _, s := range f.steps {
			s.Done = true
		}
		if phase == 2 {
			// Between two files of the pruning phase (auto-memory, then
			// the log of written memories): the first is written, the
			// second not yet.
			failpoint.Inject("prune:after-file")
		}
	}
	if phase == 2 {
		failpoint.Inject("prune:after-write")
	}
	return nil
}

// replay applies a recorded step: nothing when its file already holds the
// step's result, else the transformation (idempotent by content).
func (j *Journal) replay(s *Step, cur []byte, exists bool, read Reader) ([]byte, bool, error) {
	if hashOf(cur, exists) == s.After && s.After != s.Before {
		return cur, exists, nil
	}
	next, keep, err := j.Kinds.Apply(s, cur, exists, read)
	if err != nil {
		return nil, false, err
	}
	if !keep {
		next = nil
	}
	return next, keep, nil
}

// tempTag names an Op's temporary files (atomicfile.Temp's tag): each is
// ".<file>.intermem-<op id>-<16 random hex digits>.tmp", beside its file,
// so recovery finds the ones a crash left and no name can be planted in
// advance.
func tempTag(opID string) string { return "intermem-" + opID }

// cleanTemps removes the temporary files an interrupted run of op (or of
// its discard) may have left beside its files, reading each directory once.
func (j *Journal) cleanTemps(op *Op) {
	bases := map[string][]string{}
	var dirs []string
	seen := map[string]bool{}
	for _, s := range op.Steps {
		real, err := j.Places.Resolve(s.Path, op.AllowOutside)
		if err != nil || seen[real] {
			continue
		}
		seen[real] = true
		dir := filepath.Dir(real)
		if bases[dir] == nil {
			dirs = append(dirs, dir)
		}
		bases[dir] = append(bases[dir], filepath.Base(real))
	}
	tags := []string{tempTag(op.ID), tempTag(op.ID + undoSuffix)}
	for _, dir := range dirs {
		for _, tmp := range atomicfile.Leftovers(dir, bases[dir], tags) {
			_ = os.Remove(tmp)
		}
	}
}

func (j *Journal) now() time.Time {
	if j.Now != nil {
		return j.Now().UTC()
	}
	return time.Now().UTC()
}

func (j *Journal) logf(format string, args ...any) {
	if j.Logf != nil {
		j.Logf(format, args...)
	}
}

// save records op, signed, with extra bookkeeping in the same transaction.
func (j *Journal) save(op *Op, extra func(tx *bolt.Tx) error) error {
	op.Updated = j.now()
	return j.Store.Update(func(tx *bolt.Tx) error {
		mac, err := j.sign(store.ID(tx), op)
		if err != nil {
			return err
		}
		op.MAC = mac
		if err := store.PutJournal(tx, op.ID, op); err != nil {
			return err
		}
		if extra != nil {
			return extra(tx)
		}
		return nil
	})
}

// Recovery is what Recover did and what it left alone.
type Recovery struct {
	Resumed []*Op
	// Problems are the records recovery refused or could not read; they
	// are kept for intermem-recover.
	Problems []Problem
}

// Recover resumes every verified incomplete Op and reports what it did and
// what it refused.
func (j *Journal) Recover() (*Recovery, error) {
	var sc *Scan
	if err := j.Store.View(func(tx *bolt.Tx) error {
		var err error
		sc, err = j.Scan(tx)
		return err
	}); err != nil {
		return nil, err
	}
	rec := &Recovery{Problems: sc.Problems}
	for _, p := range sc.Problems {
		j.logf("left journal record %s alone: %s", p.ID, p.Why)
	}
	for _, op := range sc.Ops {
		if err := j.Resume(op); err != nil {
			return rec, fmt.Errorf("recover %s (%s): %w", op.ID, op.Summary, err)
		}
		j.logf("recovered %s operation %s (%s)", op.Kind, op.ID, op.Summary)
		rec.Resumed = append(rec.Resumed, op)
	}
	return rec, nil
}

// ErrNotDiscardable is returned when an Op has already changed files that
// cannot be undone without losing data (phase 2 has begun).
var ErrNotDiscardable = errors.New("operation has progressed past the point where it can be discarded")

const undoSuffix = "-undo"

// Discard abandons an incomplete, verified Op safely: phase-1 changes are
// undone by Kinds.Undo (for promotion: remove the inserted marked
// entries), leaving every entry where it was before the Op. An Op whose
// phase 2 has begun must be resumed instead. The undo is applied in memory
// and each file written once, like a phase.
func (j *Journal) Discard(op *Op) error {
	if op.State != Pending && op.State != Committed {
		return fmt.Errorf("operation %s is %s, not incomplete", op.ID, op.State)
	}
	for _, s := range op.Steps {
		if s.Phase == 2 && s.Done {
			return ErrNotDiscardable
		}
	}
	if op.State == Committed {
		// Phase 2 may have run partly without being recorded: refuse if
		// any phase-2 file already differs from its before-state.
		for _, s := range op.Steps {
			if s.Phase != 2 {
				continue
			}
			real, err := j.Places.Resolve(s.Path, op.AllowOutside)
			if err != nil {
				return err
			}
			cur, ok, err := ReadFile(real)
			if err != nil {
				return err
			}
			if hashOf(cur, ok) != s.Before && hashOf(cur, ok) == s.After {
				return ErrNotDiscardable
			}
		}
	}
	j.cleanTemps(op)
	undoID := op.ID + undoSuffix
	var order []*Step
	for i := len(op.Steps) - 1; i >= 0; i-- {
		if s := &op.Steps[i]; s.Phase == 1 && !s.Derived {
			order = append(order, s)
		}
	}
	for i := range op.Steps {
		if s := &op.Steps[i]; s.Phase == 1 && s.Derived {
			order = append(order, s)
		}
	}
	if err := j.Store.Update(func(tx *bolt.Tx) error { return store.RecordBackup(tx, undoID) }); err != nil {
		return err
	}
	v := newView(j.Places, op.AllowOutside)
	v.apply = func(s *Step, cur []byte, exists bool, read Reader) ([]byte, bool, error) {
		next, keep, err := j.Kinds.Undo(s, cur, exists, read)
		if err != nil {
			return nil, false, err
		}
		if !keep {
			next = nil
		}
		return next, keep, nil
	}
	files := make([]*file, len(order))
	for i, s := range order {
		f, err := v.file(s.Path)
		if err != nil {
			return fmt.Errorf("%w: undo %s %s: %v", ErrConflict, s.Action, s.Path, err)
		}
		f.steps = append(f.steps, s)
		files[i] = f
	}
	for _, f := range v.order {
		if err := j.backup(undoID, f); err != nil {
			return err
		}
	}
	for i, s := range order {
		f := files[i]
		next, keep, err := v.apply(s, f.cur, f.ok, v.read)
		if err != nil {
			return fmt.Errorf("%w: undo %s %s: %v", ErrConflict, s.Action, s.Path, err)
		}
		f.cur, f.ok = next, keep
	}
	for _, f := range v.order {
		if err := j.commit(undoID, v, f); err != nil {
			return err
		}
	}
	op.State = Discarded
	if err := j.save(op, nil); err != nil {
		return err
	}
	j.trimBackups(undoID)
	return nil
}

// Describe returns a short description of where an incomplete Op stopped.
func Describe(op *Op) string {
	var done, total int
	var files []string
	seen := map[string]bool{}
	for _, s := range op.Steps {
		total++
		if s.Done {
			done++
		}
		if !seen[s.Path] {
			seen[s.Path] = true
			files = append(files, filepath.Base(s.Path))
		}
	}
	return fmt.Sprintf("%s (%s): %s; %d/%d steps recorded done; files: %s",
		op.Kind, op.State, op.Summary, done, total, strings.Join(files, ", "))
}
