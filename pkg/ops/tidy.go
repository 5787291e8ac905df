package ops

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/journal"
	"github.com/intermem/intermem/pkg/tidy"
)

// Step actions of a tidy (package tidy: the plan and the rewrite). Steps
// carry no memory text: a section is named by the SHA-256 of its bytes,
// and both steps find it in MEMORY.md as it is when they run.
const (
	// ActTidyCreate (phase 1) creates a topic file holding a section of
	// the MEMORY.md beside it. Path: the topic file; Extra: the SHA-256 of
	// the section's bytes.
	ActTidyCreate = "tidy-create"
	// ActTidyIndex (phase 2) rewrites MEMORY.md (Path): the sections
	// leave, their pointers arrive. Extra: the moves, as JSON
	// []tidy.Moved.
	ActTidyIndex = "tidy-index"
)

// ErrTopicFileExists is returned when a topic file's name is taken by a
// file that does not hold the section: it is never overwritten.
var ErrTopicFileExists = errors.New("a file with the topic file's name already exists")

// Tidy builds the operation that carries out a tidy plan for the memory
// directory dir: phase 1 creates each topic file (accepting one that
// already holds exactly its section), phase 2 rewrites the index, removing
// a section only while its topic file holds exactly its bytes. At every
// moment each moved byte is in MEMORY.md, in its topic file, or in both.
func Tidy(dir string, pl *tidy.Plan) (*journal.Op, error) {
	op := &journal.Op{Kind: KindTidy}
	index := filepath.Join(dir, automem.IndexName)
	extra, err := json.Marshal(pl.Moved())
	if err != nil {
		return nil, fmt.Errorf("tidy: encode moves: %w", err)
	}
	for _, m := range pl.Moves {
		op.Steps = append(op.Steps, journal.Step{Phase: 1, Path: filepath.Join(dir, m.File), Action: ActTidyCreate, Extra: m.Hash})
		op.Entries = append(op.Entries, m.Entries...)
	}
	op.Steps = append(op.Steps, journal.Step{Phase: 2, Path: index, Action: ActTidyIndex, Extra: string(extra)})
	n := len(pl.Moves)
	op.Summary = fmt.Sprintf("tidy: move %d %s of MEMORY.md into topic files", n, cli.Plural(n, "section", "sections"))
	return op, nil
}

func applyTidyCreate(s *journal.Step, cur []byte, exists bool, read journal.Reader) ([]byte, bool, error) {
	name := filepath.Base(s.Path)
	if !tidy.ValidName(name) {
		return nil, false, fmt.Errorf("tidy: %q is not a topic file name", name)
	}
	if exists {
		if journal.Hash(cur) == s.Extra {
			return cur, true, nil
		}
		return nil, false, fmt.Errorf("%w: %s; nothing was moved", ErrTopicFileExists, name)
	}
	idx, ok, err := read(filepath.Join(filepath.Dir(s.Path), automem.IndexName))
	if err != nil {
		return nil, false, fmt.Errorf("tidy: read MEMORY.md: %w", err)
	}
	if ok {
		if sec, found := tidy.Section(idx, s.Extra); found {
			return sec, true, nil
		}
	}
	return nil, false, fmt.Errorf("%w: the section planned for %s is no longer in it as it was; nothing was moved", tidy.ErrChanged, name)
}

func applyTidyIndex(s *journal.Step, cur []byte, exists bool, read journal.Reader) ([]byte, bool, error) {
	var ms []tidy.Moved
	if err := json.Unmarshal([]byte(s.Extra), &ms); err != nil {
		return nil, false, fmt.Errorf("tidy: decode moves: %w", err)
	}
	for _, m := range ms {
		if !tidy.ValidName(m.File) {
			return nil, false, fmt.Errorf("tidy: %q is not a topic file name", m.File)
		}
	}
	if !exists {
		return nil, false, fmt.Errorf("%w: it no longer exists", tidy.ErrChanged)
	}
	dir := filepath.Dir(s.Path)
	holds := func(file string) (string, error) {
		b, ok, err := read(filepath.Join(dir, file))
		if err != nil || !ok {
			return "", err
		}
		return journal.Hash(b), nil
	}
	next, err := tidy.Rewrite(cur, ms, holds)
	if err != nil {
		return nil, false, err
	}
	return next, true, nil
}

// undoTidyCreate reverses a topic file's creation, for discarding an
// interrupted tidy: one that still holds exactly the section goes
// (MEMORY.md still has it); one that holds anything else stays, since it
// is no longer only tidy's copy.
func undoTidyCreate(s *journal.Step, cur []byte, exists bool, read journal.Reader) ([]byte, bool, error) {
	if exists && journal.Hash(cur) == s.Extra {
		return nil, false, nil
	}
	return cur, exists, nil
}
