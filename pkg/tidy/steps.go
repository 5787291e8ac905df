package tidy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/journal"
)

// Kind is the journal kind of a tidy operation.
const Kind = "tidy"

// Step actions.
const (
	// ActCreate (phase 1) creates a topic file holding a section of the
	// MEMORY.md beside it. Path: the topic file; Extra: the SHA-256 of the
	// section's bytes.
	ActCreate = "tidy-create"
	// ActIndex (phase 2) rewrites MEMORY.md (Path): the sections leave,
	// their pointers arrive. Extra: the moves, as JSON []Moved.
	ActIndex = "tidy-index"
)

// ErrExists is returned when a topic file's name is taken by a file that
// does not hold the section: it is never overwritten.
var ErrExists = errors.New("a file with the topic file's name already exists")

// Op builds the journaled operation that carries out a plan for the
// memory directory dir.
func Op(dir string, pl *Plan) (*journal.Op, error) {
	op := &journal.Op{Kind: Kind}
	index := filepath.Join(dir, automem.IndexName)
	ms := moved(pl.Moves)
	extra, err := json.Marshal(ms)
	if err != nil {
		return nil, fmt.Errorf("tidy: encode moves: %w", err)
	}
	for _, m := range pl.Moves {
		op.Steps = append(op.Steps, journal.Step{Phase: 1, Path: filepath.Join(dir, m.File), Action: ActCreate, Extra: m.Hash})
		op.Entries = append(op.Entries, m.Entries...)
	}
	op.Steps = append(op.Steps, journal.Step{Phase: 2, Path: index, Action: ActIndex, Extra: string(extra)})
	n := len(pl.Moves)
	op.Summary = fmt.Sprintf("tidy: move %d %s of MEMORY.md into topic files", n, cli.Plural(n, "section", "sections"))
	return op, nil
}

// Apply is the journal.Applier for tidy steps; ok is false for a step
// that is not tidy's.
func Apply(s *journal.Step, cur []byte, exists bool, read journal.Reader) (next []byte, keep, ok bool, err error) {
	switch s.Action {
	case ActCreate:
		next, keep, err = applyCreate(s, cur, exists, read)
		return next, keep, true, err
	case ActIndex:
		next, keep, err = applyIndex(s, cur, exists, read)
		return next, keep, true, err
	}
	return nil, false, false, nil
}

func applyCreate(s *journal.Step, cur []byte, exists bool, read journal.Reader) ([]byte, bool, error) {
	name := filepath.Base(s.Path)
	if !validName(name) {
		return nil, false, fmt.Errorf("tidy: %q is not a topic file name", name)
	}
	if exists {
		if hashOf(cur) == s.Extra {
			return cur, true, nil
		}
		return nil, false, fmt.Errorf("%w: %s; nothing was moved", ErrExists, name)
	}
	idx, ok, err := read(filepath.Join(filepath.Dir(s.Path), automem.IndexName))
	if err != nil {
		return nil, false, fmt.Errorf("tidy: read MEMORY.md: %w", err)
	}
	if ok {
		f := automem.Parse(automem.IndexName, idx)
		for _, sec := range sections(f, splitLines(idx)) {
			if sec.hash == s.Extra {
				return idx[sec.start:sec.end:sec.end], true, nil
			}
		}
	}
	return nil, false, fmt.Errorf("%w: the section planned for %s is no longer in it as it was; nothing was moved", ErrChanged, name)
}

func applyIndex(s *journal.Step, cur []byte, exists bool, read journal.Reader) ([]byte, bool, error) {
	var ms []Moved
	if err := json.Unmarshal([]byte(s.Extra), &ms); err != nil {
		return nil, false, fmt.Errorf("tidy: decode moves: %w", err)
	}
	for _, m := range ms {
		if !validName(m.File) {
			return nil, false, fmt.Errorf("tidy: %q is not a topic file name", m.File)
		}
	}
	if !exists {
		return nil, false, fmt.Errorf("%w: it no longer exists", ErrChanged)
	}
	dir := filepath.Dir(s.Path)
	holds := func(file string) (string, error) {
		b, ok, err := read(filepath.Join(dir, file))
		if err != nil || !ok {
			return "", err
		}
		return hashOf(b), nil
	}
	next, err := Rewrite(cur, ms, holds)
	if err != nil {
		return nil, false, err
	}
	return next, true, nil
}

// Undo reverses a phase-1 step, for discarding an interrupted tidy: a
// topic file that still holds exactly the section goes (MEMORY.md still
// has it); one that holds anything else stays, since it is no longer
// only tidy's copy. ok is false for a step that is not tidy's.
func Undo(s *journal.Step, cur []byte, exists bool) (next []byte, keep, ok bool) {
	if s.Action != ActCreate {
		return nil, false, false
	}
	if exists && hashOf(cur) == s.Extra {
		return nil, false, true
	}
	return cur, exists, true
}

func hashOf(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
