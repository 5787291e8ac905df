// Package promote applies a user's approvals of a synthesis plan: each
// approved entry is inserted into its target document with its marker,
// then pruned from auto-memory, through one journaled operation (package
// journal) so that a crash at any point is recovered without losing or
// duplicating an entry.
//
// Phase 1 (targets): "insert" an entry under a section, and optionally
// "import" AGENTS.md into CLAUDE.md. Phase 2 (memory): "remove-entry" a
// fact from its memory file, "delete-file" a one-memory file, and
// "remove-pointers" the index lines that named it (by file name, or listed
// by id when only the whole directory tells what they name). Every step is
// idempotent by content: an insert whose marker is present does nothing, a
// removal of an entry that is gone does nothing. A "delete-file" step
// refuses to delete a file whose memory changed since the plan, because
// that would lose what changed. No step removes an entry that holds a
// secret (automem.Entry.Secret): Prepare plans none, and a step replayed
// over a file that gained one since leaves that entry where it is.
package promote

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/journal"
	"github.com/intermem/intermem/pkg/mdoc"
	"github.com/intermem/intermem/pkg/targets"
)

// Step actions.
const (
	ActInsert         = "insert"
	ActImport         = "import"
	ActRemoveEntry    = "remove-entry"
	ActDeleteFile     = "delete-file"
	ActRemovePointers = "remove-pointers"
	// ActRemoveMarked removes the entry carrying marker ID from a curated
	// document (archiving, tier migration).
	ActRemoveMarked = "remove-marked"
)

// ErrChanged is returned when a memory file changed in a way that makes a
// step unsafe.
var ErrChanged = errors.New("file changed since the plan")

// Apply is the journal.Applier for promotion steps.
func Apply(s *journal.Step, cur []byte, exists bool, read journal.Reader) ([]byte, bool, error) {
	switch s.Action {
	case ActInsert:
		d := mdoc.Parse(cur)
		for _, m := range d.Marked() {
			if m.ID == s.ID {
				return cur, true, nil
			}
		}
		ins, err := d.Place(s.Section, s.Block, s.ID)
		if err != nil {
			return nil, false, err
		}
		if ins.Created {
			s.Extra = "created"
		}
		return ins.Content, true, nil
	case ActImport:
		return targets.AddImport(cur), true, nil
	case ActRemoveEntry:
		if !exists {
			return nil, false, nil
		}
		f := automem.Parse(filepath.Base(s.Path), cur)
		for _, e := range f.Entries {
			if e.ID == s.ID && !e.Secret {
				return f.Remove(s.ID), true, nil
			}
		}
		return cur, true, nil
	case ActDeleteFile:
		if !exists {
			return nil, false, nil
		}
		f := automem.Parse(filepath.Base(s.Path), cur)
		for _, e := range f.Entries {
			if e.ID == s.ID && e.Kind == automem.Memory {
				if e.Secret {
					return cur, true, nil
				}
				return nil, false, nil
			}
		}
		return nil, false, fmt.Errorf("%w: %s no longer holds the approved memory; it was kept", ErrChanged, filepath.Base(s.Path))
	case ActRemoveMarked:
		if !exists {
			return nil, false, nil
		}
		out, _, ok := mdoc.Parse(cur).Remove(s.ID, false)
		if !ok {
			return cur, true, nil
		}
		return out, true, nil
	case ActRemovePointers:
		if !exists {
			return nil, false, nil
		}
		// The pointers that name the file as written, and those the plan
		// resolved to it ("[[Gate Notes]]" names project_gate.md by its
		// title), listed by id in Block.
		f := automem.Parse(filepath.Base(s.Path), cur)
		listed := strings.Fields(s.Block)
		var ids []string
		for _, e := range f.Entries {
			if e.Kind == automem.Pointer && (e.Link == s.Extra || slices.Contains(listed, e.ID)) && !e.Secret {
				ids = append(ids, e.ID)
			}
		}
		if len(ids) == 0 {
			return cur, true, nil
		}
		return f.Remove(ids...), true, nil
	}
	return nil, false, fmt.Errorf("unknown step action %q", s.Action)
}

// Undo reverses phase-1 steps, for discarding an operation: it removes the
// inserted entry (and a section intermem created for it) and the import.
func Undo(s *journal.Step, cur []byte, exists bool, read journal.Reader) ([]byte, bool, error) {
	switch s.Action {
	case ActInsert:
		if !exists {
			return nil, false, nil
		}
		out, _, ok := mdoc.Parse(cur).Remove(s.ID, s.Extra == "created")
		if !ok {
			return cur, true, nil
		}
		return out, !createdEmpty(s, out), nil
	case ActImport:
		if !exists {
			return nil, false, nil
		}
		out := targets.RemoveImport(cur)
		return out, !createdEmpty(s, out), nil
	}
	return cur, exists, nil
}

// createdEmpty reports whether undoing left only blank space in a file the
// operation created: the file goes away again.
func createdEmpty(s *journal.Step, out []byte) bool {
	return s.Before == "" && len(bytes.TrimSpace(out)) == 0
}
