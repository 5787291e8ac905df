// Package ops says what each kind of intermem operation means: its steps
// (the builders), how each step applies and undoes, its final state, and
// the store bookkeeping it does when it commits. Package journal is the
// engine that runs them — write-ahead, MACs, confinement, compare-and-swap,
// backups, recovery — and knows none of this; Kinds is what this package
// hands it. Commands (package command) decide what to do, build an Op here,
// simulate it (Simulate) and give it to the journal.
//
// The kinds:
//
//	kind     builder          phase 1 (curated documents)             phase 2 (auto-memory)   final
//	promote  Promote          ensure-detail, insert, import,          remove-entry,           pruned
//	                          set-index                               delete-file,
//	                                                                  remove-pointers,
//	                                                                  write-retire (written)
//	archive  Archive          archive-add, remove-marked,             —                       archived
//	                          drop-empty-detail, set-index
//	restore  Restore          ensure-detail, insert, archive-remove,  —                       restored
//	                          set-index
//	migrate  Migrate,         ensure-detail, insert, remove-marked,   —                       migrated
//	         Flatten          drop-empty-heading, drop-empty-detail,
//	                          set-index
//	tidy     Tidy             tidy-create (topic files)               tidy-index (MEMORY.md)  tidied
//	write    Write            write-append (.intermem/written.jsonl)  —                       written
//
// Invariants every kind keeps (the journal's guarantees rest on them):
//
//   - Idempotent by content: a step applied to its own output returns it
//     unchanged (a marker already present, an entry already gone, a topic
//     file already holding its section), so a replay after a crash at any
//     point converges and never duplicates.
//   - Copy before remove: each builder orders its steps so that at every
//     crash point every fact exists in at least one place (inserted into
//     its new home before it leaves the old one; archived before it leaves
//     its document; a topic file written before MEMORY.md drops the
//     section). Steps are grouped by file so each file is written once per
//     phase; derived steps (the AGENTS.md index, rendered from the detail
//     documents) come last in their phase.
//   - Steps carry only redacted text and name files by their logical path;
//     a value read back from a step (a topic file name, a path list) is
//     validated before a path is built from it.
//   - Undo (a discard, before phase 2 has begun) removes only what the
//     operation added: an inserted entry by its marker, a file it created
//     once nothing else is in it. Phase-2 steps are never undone.
//   - Bookkeeping (Book) travels inside the Op and is applied in the
//     commit transaction, on the first run and on recovery alike.
//
// A new kind of operation: its constants and builder in a file of its own
// here, its actions in the steps table below, its final state in final;
// then a command that builds, confines (command.confineOp), simulates and
// runs it.
package ops

import (
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/confine"
	"github.com/intermem/intermem/pkg/journal"
	"github.com/intermem/intermem/pkg/lazy"
)

// Kinds of operation (journal.Op.Kind).
const (
	KindPromote = "promote"
	KindArchive = "archive"
	KindRestore = "restore"
	KindMigrate = "migrate"
	KindTidy    = "tidy"
	KindWrite   = "write"
)

// Final states of the kinds.
const (
	Pruned   journal.State = "pruned"
	Archived journal.State = "archived"
	Restored journal.State = "restored"
	Migrated journal.State = "migrated"
	Tidied   journal.State = "tidied"
	Written  journal.State = "written"
)

var final = lazy.New(buildFinal)

func buildFinal() map[string]journal.State {
	return map[string]journal.State{
		KindPromote: Pruned,
		KindArchive: Archived,
		KindRestore: Restored,
		KindMigrate: Migrated,
		KindTidy:    Tidied,
		KindWrite:   Written,
	}
}

// applier is one way of changing a file (journal.Applier).
type applier = func(s *journal.Step, cur []byte, exists bool, read journal.Reader) ([]byte, bool, error)

// action is what one step action means.
type action struct {
	apply applier
	// undo reverses the step for a discard; nil leaves the file as it is
	// (a phase-2 step, never undone, or a phase-1 step whose effect a
	// discard keeps: a fact archived stays in the archive).
	undo applier
}

// actions is every step action of every kind.
var actions = lazy.New(buildActions)

func buildActions() map[string]action {
	return map[string]action{
		// promote (promote.go); insert and remove-marked also move facts for
		// archive, restore and migrate.
		ActInsert:         {applyInsert, undoInsert},
		ActImport:         {applyImport, undoImport},
		ActRemoveEntry:    {applyRemoveEntry, nil},
		ActDeleteFile:     {applyDeleteFile, nil},
		ActRemovePointers: {applyRemovePointers, nil},
		ActRemoveMarked:   {applyRemoveMarked, nil},
		// the tiered layout (tiered.go)
		ActEnsureDetail:     {applyEnsureDetail, undoEnsureDetail},
		ActSetIndex:         {applySetIndex, undoSetIndex},
		ActDropEmptyDetail:  {applyDropEmptyDetail, nil},
		ActDropEmptyHeading: {applyDropEmptyHeading, nil},
		// archive and restore (archive.go)
		ActArchiveAdd:    {applyArchiveAdd, nil},
		ActArchiveRemove: {applyArchiveRemove, nil},
		// tidy (tidy.go)
		ActTidyCreate: {applyTidyCreate, undoTidyCreate},
		ActTidyIndex:  {applyTidyIndex, nil},
		// write (write.go)
		ActWriteAppend: {applyWriteAppend, undoWriteAppend},
		ActWriteRetire: {applyWriteRetire, undoWriteRetire},
		ActWriteRevive: {applyWriteRevive, undoWriteAppend},
	}
}

// ErrUnknownAction is returned for a step whose action no kind defines.
var ErrUnknownAction = errors.New("unknown step action")

// Kinds is what intermem's operations mean, for the journal.
var Kinds journal.Kinds = kinds{}

type kinds struct{}

func (kinds) Final(kind string) (journal.State, bool) {
	s, ok := final.Get()[kind]
	return s, ok
}

func (kinds) Apply(s *journal.Step, cur []byte, exists bool, read journal.Reader) ([]byte, bool, error) {
	a, ok := actions.Get()[s.Action]
	if !ok {
		return nil, false, fmt.Errorf("%w %q", ErrUnknownAction, s.Action)
	}
	return a.apply(s, cur, exists, read)
}

func (kinds) Undo(s *journal.Step, cur []byte, exists bool, read journal.Reader) ([]byte, bool, error) {
	a, ok := actions.Get()[s.Action]
	if !ok {
		return nil, false, fmt.Errorf("%w %q", ErrUnknownAction, s.Action)
	}
	if a.undo == nil {
		return cur, exists, nil
	}
	return a.undo(s, cur, exists, read)
}

func (kinds) Commit(tx *bolt.Tx, op *journal.Op) error { return commit(tx, op) }

// Simulate fills in op's step hashes by applying its steps in memory and
// returns every file's final content (journal.Simulate with these kinds);
// it writes nothing, so it also serves dry runs.
func Simulate(places confine.Places, op *journal.Op) (map[string][]byte, map[string]bool, error) {
	return journal.Simulate(places, op, Kinds.Apply)
}
