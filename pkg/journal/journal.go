// Package journal makes intermem's file changes crash-safe.
//
// Every operation that edits user files (promote, archive, restore, tier
// migration) is an Op: an ordered list of Steps, each one idempotent
// transformation of one file ("insert this block under this section unless
// its marker is already there", "remove the entry with this id if present",
// "delete this file"). The Op is written to the store before any file is
// touched (write-ahead), and moves through these states:
//
//	            phase 1 steps            phase 2 steps
//	pending ──────────────────▶ committed ──────────────────▶ final
//	   │   (targets written)       │  (memory pruned; for        (promote: "pruned",
//	   │                           │   promote; MEMORY.md         archive: "archived",
//	   │                           │   rewritten, for tidy)       restore: "restored",
//	   └──────── discard ──────────┘                              migrate: "migrated",
//	     (phase-1 changes undone)                                 tidy: "tidied")
//
// Invariants:
//
//   - Write-ahead: a file is changed only after the Op that changes it is
//     durable in the store.
//   - Atomic files: each file is replaced by rename(2) of a fully written
//     and fsynced temporary file with a name derived from the Op id, so a
//     crash leaves every file byte-equal to its state before or after the
//     step, and recovery knows which temporary files to remove.
//   - Compare-and-swap: each step records the SHA-256 of its file before and
//     after. Replaying a step whose file already has the "after" hash does
//     nothing; otherwise the transformation is re-applied to the current
//     content, and it is idempotent by content (a marker already present, an
//     entry already gone), so replay after a crash at any point, or after
//     the user edited a file in between, converges and never duplicates.
//   - Backups: before its first change in an Op, every file's exact bytes
//     are copied to .intermem/backups/<op id>/ (owner-only), so nothing is
//     lost even if a transformation is wrong. Retention is bounded.
//   - Recovery runs at the start of every writer: any Op left pending or
//     committed is resumed (or, by explicit request, discarded).
package journal

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/failpoint"
	"github.com/intermem/intermem/pkg/store"
)

// State of an Op.
type State string

// States. Pending and Committed are incomplete.
const (
	Pending   State = "pending"
	Committed State = "committed"
	Pruned    State = "pruned"
	Archived  State = "archived"
	Restored  State = "restored"
	Migrated  State = "migrated"
	Tidied    State = "tidied"
	Discarded State = "discarded"
)

// Kinds of Op and their final states.
var finalState = map[string]State{
	"promote": Pruned,
	"archive": Archived,
	"restore": Restored,
	"migrate": Migrated,
	"tidy":    Tidied,
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
	// it too: Journal.OnCommit applies it, in the commit transaction.
	Commit json.RawMessage `json:"commit,omitempty"`
	// AllowOutside lets the Op's target and docs/intermem steps write
	// through a link whose real path is outside the project: the user's
	// explicit --allow-outside. It never widens the set of places.
	AllowOutside bool `json:"allow_outside,omitempty"`
}

// Step is one idempotent transformation of one file.
type Step struct {
	Phase   int    `json:"phase"` // 1 or 2
	Path    string `json:"path"`  // absolute, symlinks resolved
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
// files as this operation sees them at this step (the simulated contents
// during Simulate, the disk during Run), for steps whose result depends on
// other files — the index of the tiered documents is rendered from them.
type Applier func(s *Step, cur []byte, exists bool, read Reader) (next []byte, keep bool, err error)

// Reader returns a file's content, or exists=false.
type Reader func(path string) (content []byte, exists bool, err error)

// Journal runs Ops against one project.
type Journal struct {
	Store     *store.Store // open read-write
	StateDir  string       // the project's .intermem
	Apply     Applier
	Now       func() time.Time
	Logf      func(string, ...any)
	KeepBacks int // backup directories to keep; 0 means DefaultKeepBackups
	// OnCommit, if set, runs inside the transaction that marks an Op
	// committed — on its first run and on recovery alike — to apply the
	// Op's Commit bookkeeping atomically with the state change.
	OnCommit func(tx *bolt.Tx, op *Op) error
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

// NewID returns a sortable, unique op id.
func NewID(now time.Time) string {
	var r [4]byte
	_, _ = rand.Read(r[:])
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(r[:])
}

// ReadFile reads a file for a step: (nil, false, nil) when it is absent.
func ReadFile(path string) ([]byte, bool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, false, nil
		}
		return nil, false, err
	}
	return b, true, nil
}

// Simulate fills in each step's Before and After hashes by applying the
// steps in order to in-memory copies of the files, and returns the final
// content of every file (nil for deleted). It changes nothing on disk, so
// it also serves --dry-run.
func Simulate(op *Op, apply Applier) (map[string][]byte, map[string]bool, error) {
	content := map[string][]byte{}
	exists := map[string]bool{}
	for i := range op.Steps {
		s := &op.Steps[i]
		if _, ok := exists[s.Path]; !ok {
			b, ok, err := ReadFile(s.Path)
			if err != nil {
				return nil, nil, fmt.Errorf("read %s: %w", s.Path, err)
			}
			content[s.Path], exists[s.Path] = b, ok
		}
		cur, ok := content[s.Path], exists[s.Path]
		s.Before = hashOf(cur, ok)
		read := func(path string) ([]byte, bool, error) {
			if ok, seen := exists[path]; seen {
				return content[path], ok, nil
			}
			return ReadFile(path)
		}
		next, keep, err := apply(s, cur, ok, read)
		if err != nil {
			return nil, nil, fmt.Errorf("%s %s: %w", s.Action, s.Path, err)
		}
		if !keep {
			next = nil
		}
		content[s.Path], exists[s.Path] = next, keep
		s.After = hashOf(next, keep)
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
// the Op's Commit bookkeeping, through OnCommit), runs phase 2 and marks it
// final.
func (j *Journal) Run(op *Op) error {
	if _, ok := finalState[op.Kind]; !ok {
		return fmt.Errorf("journal: unknown op kind %q", op.Kind)
	}
	now := j.now()
	if op.ID == "" {
		op.ID = NewID(now)
	}
	op.State, op.Created, op.Updated = Pending, now, now
	if err := j.save(op, nil); err != nil {
		return fmt.Errorf("journal: record %s: %w", op.ID, err)
	}
	failpoint.Inject(op.Kind + ":after-journal")
	return j.Resume(op)
}

// Resume completes an incomplete Op, from wherever it stopped.
func (j *Journal) Resume(op *Op) error {
	j.cleanTemps(op)
	if op.State == Pending {
		if err := j.runPhase(op, 1); err != nil {
			return err
		}
		failpoint.Inject(op.Kind + ":after-target")
		op.State = Committed
		var commit func(tx *bolt.Tx) error
		if j.OnCommit != nil {
			commit = func(tx *bolt.Tx) error { return j.OnCommit(tx, op) }
		}
		if err := j.save(op, commit); err != nil {
			return fmt.Errorf("journal: commit %s: %w", op.ID, err)
		}
		failpoint.Inject(op.Kind + ":after-commit")
	}
	if op.State == Committed {
		if err := j.runPhase(op, 2); err != nil {
			return err
		}
		op.State = finalState[op.Kind]
		if err := j.save(op, nil); err != nil {
			return fmt.Errorf("journal: finish %s: %w", op.ID, err)
		}
	}
	j.trimBackups()
	return nil
}

func (j *Journal) runPhase(op *Op, phase int) error {
	backedUp := map[string]bool{}
	var pending []*Step
	for i := range op.Steps {
		if s := &op.Steps[i]; s.Phase == phase && !s.Done {
			pending = append(pending, s)
		}
	}
	if len(pending) == 0 {
		return nil
	}
	// Back up every file this phase may change before changing any.
	for _, s := range pending {
		if backedUp[s.Path] {
			continue
		}
		backedUp[s.Path] = true
		if err := j.backup(op, s.Path); err != nil {
			return err
		}
	}
	if phase == 2 {
		failpoint.Inject("prune:after-backup")
	}
	for _, s := range pending {
		if err := j.runStep(op, s); err != nil {
			return err
		}
	}
	if phase == 2 {
		failpoint.Inject("prune:after-write")
	}
	return nil
}

func (j *Journal) runStep(op *Op, s *Step) error {
	cur, exists, err := ReadFile(s.Path)
	if err != nil {
		return fmt.Errorf("%w: read %s: %v", ErrConflict, s.Path, err)
	}
	if hashOf(cur, exists) != s.After || s.After == s.Before {
		next, keep, err := j.Apply(s, cur, exists, ReadFile)
		if err != nil {
			return fmt.Errorf("%w: %s %s: %v", ErrConflict, s.Action, s.Path, err)
		}
		switch {
		case !keep && exists:
			if err := os.Remove(s.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("journal: remove %s: %w", s.Path, err)
			}
		case keep && (!exists || !bytes.Equal(next, cur)):
			if err := WriteFileAtomic(s.Path, next, tempName(s.Path, op.ID)); err != nil {
				return err
			}
		}
	}
	s.Done = true
	return nil
}

// tempName is deterministic per (file, op) so recovery can find it.
func tempName(path, opID string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".intermem-"+opID+".tmp")
}

func (j *Journal) cleanTemps(op *Op) {
	for _, s := range op.Steps {
		_ = os.Remove(tempName(s.Path, op.ID))
	}
}

// WriteFileAtomic replaces path with data through tmp: write, fsync,
// rename, fsync the directory. An existing file's mode is kept.
func WriteFileAtomic(path string, data []byte, tmp string) error {
	mode := fs.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return fmt.Errorf("journal: write %s: %w", path, err)
	}
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp, mode)
	}
	if werr == nil {
		werr = os.Rename(tmp, path)
	}
	if werr != nil {
		os.Remove(tmp)
		return fmt.Errorf("journal: write %s: %w", path, werr)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// BackupDir returns where an Op's backups live.
func (j *Journal) BackupDir(opID string) string {
	return filepath.Join(j.StateDir, "backups", opID)
}

// backup copies path's current bytes into the Op's backup directory once.
// The name keeps the file's base name and a short hash of its directory,
// so files from different directories cannot collide.
func (j *Journal) backup(op *Op, path string) error {
	b, exists, err := ReadFile(path)
	if err != nil || !exists {
		return err
	}
	dir := j.BackupDir(op.ID)
	name := Hash([]byte(filepath.Dir(path)))[:8] + "-" + filepath.Base(path)
	dst := filepath.Join(dir, name)
	if _, err := os.Stat(dst); err == nil {
		return nil // already backed up by an earlier attempt: keep the oldest bytes
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("journal: backup: %w", err)
	}
	if err := WriteFileAtomic(dst, b, dst+".tmp"); err != nil {
		return fmt.Errorf("journal: backup: %w", err)
	}
	return os.Chmod(dst, 0o600)
}

func (j *Journal) trimBackups() {
	keep := j.KeepBacks
	if keep <= 0 {
		keep = DefaultKeepBackups
	}
	root := filepath.Join(j.StateDir, "backups")
	ents, err := os.ReadDir(root)
	if err != nil {
		return
	}
	var dirs []string
	for _, e := range ents {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	sort.Strings(dirs) // op ids sort by time
	for len(dirs) > keep {
		_ = os.RemoveAll(filepath.Join(root, dirs[0]))
		dirs = dirs[1:]
	}
}

func (j *Journal) now() time.Time {
	if j.Now != nil {
		return j.Now().UTC()
	}
	return time.Now().UTC()
}

func (j *Journal) save(op *Op, extra func(tx *bolt.Tx) error) error {
	op.Updated = j.now()
	return j.Store.Update(func(tx *bolt.Tx) error {
		if err := store.Put(tx, store.BucketJournal, op.ID, op); err != nil {
			return err
		}
		if extra != nil {
			return extra(tx)
		}
		return nil
	})
}

// Incomplete lists Ops left pending or committed, oldest first.
func Incomplete(tx *bolt.Tx) ([]*Op, error) {
	var ops []*Op
	err := store.Each(tx, store.BucketJournal, func(_ string, op *Op) error {
		if op.State == Pending || op.State == Committed {
			ops = append(ops, op)
		}
		return nil
	})
	sort.Slice(ops, func(a, b int) bool { return ops[a].ID < ops[b].ID })
	return ops, err
}

// Recover resumes every incomplete Op and reports what it did.
func (j *Journal) Recover() ([]*Op, error) {
	var ops []*Op
	if err := j.Store.View(func(tx *bolt.Tx) error {
		var err error
		ops, err = Incomplete(tx)
		return err
	}); err != nil {
		return nil, err
	}
	for _, op := range ops {
		if err := j.Resume(op); err != nil {
			return ops, fmt.Errorf("recover %s (%s): %w", op.ID, op.Summary, err)
		}
		if j.Logf != nil {
			j.Logf("recovered %s operation %s (%s)", op.Kind, op.ID, op.Summary)
		}
	}
	return ops, nil
}

// ErrNotDiscardable is returned when an Op has already changed files that
// cannot be undone without losing data (phase 2 has begun).
var ErrNotDiscardable = errors.New("operation has progressed past the point where it can be discarded")

// Discard abandons an incomplete Op safely: phase-1 changes are undone by
// the given undo applier (for promotion: remove the inserted marked
// entries), leaving every entry where it was before the Op. An Op whose
// phase 2 has begun must be resumed instead.
func (j *Journal) Discard(op *Op, undo Applier) error {
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
			cur, ok, err := ReadFile(s.Path)
			if err != nil {
				return err
			}
			if hashOf(cur, ok) != s.Before && hashOf(cur, ok) == s.After {
				return ErrNotDiscardable
			}
		}
	}
	j.cleanTemps(op)
	undoOp := &Op{ID: op.ID + "-undo"}
	var order []Step
	for i := len(op.Steps) - 1; i >= 0; i-- {
		if s := op.Steps[i]; s.Phase == 1 && !s.Derived {
			order = append(order, s)
		}
	}
	for _, s := range op.Steps {
		if s.Phase == 1 && s.Derived {
			order = append(order, s)
		}
	}
	for _, s := range order {
		cur, exists, err := ReadFile(s.Path)
		if err != nil {
			return err
		}
		next, keep, err := undo(&s, cur, exists, ReadFile)
		if err != nil {
			return fmt.Errorf("%w: undo %s %s: %v", ErrConflict, s.Action, s.Path, err)
		}
		if err := j.backup(undoOp, s.Path); err != nil {
			return err
		}
		switch {
		case !keep && exists:
			if err := os.Remove(s.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		case keep && (!exists || !bytes.Equal(next, cur)):
			if err := WriteFileAtomic(s.Path, next, tempName(s.Path, undoOp.ID)); err != nil {
				return err
			}
		}
	}
	op.State = Discarded
	return j.save(op, nil)
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
