package ops

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/journal"
	"github.com/intermem/intermem/pkg/mdoc"
	"github.com/intermem/intermem/pkg/targets"
)

// Promotion's step actions. Phase 1 (targets): insert an entry under a
// section, and import AGENTS.md into CLAUDE.md. Phase 2 (memory): remove a
// fact from its memory file, delete a one-memory file, and remove the
// index lines that named it (by file name, or listed by id when only the
// whole directory tells what they name). No phase-2 step removes an entry
// that holds a secret (automem.Entry.Secret): the builder plans none, and
// a step replayed over a file that gained one since leaves that entry
// where it is. A delete-file step refuses to delete a file whose memory
// changed since the plan, because that would lose what changed.
const (
	// ActInsert puts Block, marked with ID, at the end of Section (created
	// at the end of the document when absent); Extra becomes "created"
	// when the simulation created the section.
	ActInsert = "insert"
	// ActImport adds the line "@AGENTS.md" to CLAUDE.md.
	ActImport = "import"
	// ActRemoveEntry removes the fact ID from a memory file.
	ActRemoveEntry = "remove-entry"
	// ActDeleteFile deletes a one-memory file holding the memory ID.
	ActDeleteFile = "delete-file"
	// ActRemovePointers removes the pointers to the file Extra from a
	// memory file, and those listed by id in Block.
	ActRemovePointers = "remove-pointers"
	// ActRemoveMarked removes the entry carrying marker ID from a curated
	// document (archiving, tier migration).
	ActRemoveMarked = "remove-marked"
)

// ErrChanged is returned when a memory file changed in a way that makes a
// step unsafe.
var ErrChanged = errors.New("file changed since the plan")

// Insert is one entry a promotion writes.
type Insert struct {
	Path    string // the document, as targets names it
	ID      string
	Section string // for a detail document, its title
	Block   string // redacted, links rewritten for Path
	// Detail marks a detail document (docs/intermem): it is created with
	// its header before its first insert, and the index lists it.
	Detail bool
}

// PromoteSpec is what package promote decided a promotion does.
type PromoteSpec struct {
	// Inserts in the order they land (source order: each lands at the end
	// of its section).
	Inserts []Insert
	// Prune are promoted entries removed from auto-memory (never those
	// kept for holding a secret), in the order of Inserts.
	Prune []automem.Entry
	// PruneOnly are entries a file Claude Code loads already says: only
	// removed from auto-memory.
	PruneOnly []automem.Entry
	// Import adds "@AGENTS.md" to CLAUDE.md.
	Import bool
	// Index are the detail documents the AGENTS.md index lists, refreshed
	// at the end of phase 1 when an insert goes to one.
	Index []string
	// Retire are the steps (RetireStep, phase 2) that take approved written
	// memories (package written) out of the written set: promoted ones,
	// and ones only pruned (listed in RetireOnly too). Like pruning
	// auto-memory, they run once every insert is durable.
	Retire     []journal.Step
	RetireOnly []string
}

// Promote builds a promotion: phase 1 writes the targets (each file's
// steps together, in the order files are first named; the index last, once
// the detail documents are complete), phase 2 prunes auto-memory (mem)
// the same way. Nothing in phase 2 runs before every insert is durable.
func Promote(ts *targets.Set, mem *automem.Dir, sp PromoteSpec) *journal.Op {
	op := &journal.Op{Kind: KindPromote}
	var phase1, phase2 []journal.Step
	ensured := map[string]bool{}
	tiered := false
	for _, in := range sp.Inserts {
		if in.Detail {
			if !ensured[in.Path] {
				ensured[in.Path] = true
				phase1 = append(phase1, journal.Step{Phase: 1, Path: in.Path, Action: ActEnsureDetail, Section: in.Section})
			}
			tiered = true
		}
		phase1 = append(phase1, journal.Step{Phase: 1, Path: in.Path, Action: ActInsert, ID: in.ID, Section: in.Section, Block: in.Block})
		op.Entries = append(op.Entries, in.ID)
	}
	pointers := map[string]bool{}
	for _, e := range sp.Prune {
		phase2 = append(phase2, pruneSteps(mem, e, pointers)...)
	}
	for _, e := range sp.PruneOnly {
		op.Entries = append(op.Entries, e.ID)
		phase2 = append(phase2, pruneSteps(mem, e, pointers)...)
	}
	op.Entries = append(op.Entries, sp.RetireOnly...)
	phase2 = append(phase2, sp.Retire...)
	if sp.Import {
		phase1 = append(phase1, journal.Step{Phase: 1, Path: ts.Claude.Path, Action: ActImport})
	}
	phase1 = groupByFile(phase1)
	if tiered {
		phase1 = append(phase1, indexStep(ts, sp.Index))
	}
	op.Steps = append(phase1, groupByFile(phase2)...)
	promoted, pruned := len(sp.Inserts), len(sp.PruneOnly)+len(sp.RetireOnly)
	op.Summary = fmt.Sprintf("promote %d %s", promoted, cli.Plural(promoted, "entry", "entries"))
	if promoted == 0 && pruned > 0 {
		// Still a "promote" operation (its journal kind): only its
		// pruning phase has steps.
		op.Summary = fmt.Sprintf("prune %d already loaded %s", pruned, cli.Plural(pruned, "entry", "entries"))
	} else if pruned > 0 {
		op.Summary += fmt.Sprintf(", prune %d already loaded", pruned)
	}
	return op
}

// pruneSteps removes an entry from auto-memory: a fact's lines, or a
// one-memory file and the index lines pointing to it (once per file).
func pruneSteps(mem *automem.Dir, e automem.Entry, pointers map[string]bool) []journal.Step {
	memPath := filepath.Join(mem.Path, filepath.FromSlash(e.File))
	if e.Kind != automem.Memory {
		return []journal.Step{{Phase: 2, Path: memPath, Action: ActRemoveEntry, ID: e.ID}}
	}
	steps := []journal.Step{{Phase: 2, Path: memPath, Action: ActDeleteFile, ID: e.ID}}
	for _, f := range mem.Files {
		var ids []string
		for _, p := range f.Entries {
			if p.Kind == automem.Pointer && p.Link == e.File {
				ids = append(ids, p.ID)
			}
		}
		if len(ids) > 0 && !pointers[f.Name+"\x00"+e.File] {
			pointers[f.Name+"\x00"+e.File] = true
			steps = append(steps, journal.Step{Phase: 2, Path: filepath.Join(mem.Path, filepath.FromSlash(f.Name)),
				Action: ActRemovePointers, Extra: e.File, Block: strings.Join(ids, " ")})
		}
	}
	return steps
}

// groupByFile orders steps by the file they name, files in the order they
// are first named, keeping the order of each file's steps.
func groupByFile(steps []journal.Step) []journal.Step {
	order := map[string]int{}
	for _, s := range steps {
		if _, ok := order[s.Path]; !ok {
			order[s.Path] = len(order)
		}
	}
	sort.SliceStable(steps, func(a, b int) bool { return order[steps[a].Path] < order[steps[b].Path] })
	return steps
}

func applyInsert(s *journal.Step, cur []byte, exists bool, read journal.Reader) ([]byte, bool, error) {
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
}

// undoInsert removes the inserted entry, and the section when the insert
// created it; a file the operation created goes when nothing else is left.
func undoInsert(s *journal.Step, cur []byte, exists bool, read journal.Reader) ([]byte, bool, error) {
	if !exists {
		return nil, false, nil
	}
	out, _, ok := mdoc.Parse(cur).Remove(s.ID, s.Extra == "created")
	if !ok {
		return cur, true, nil
	}
	return out, !createdEmpty(s, out), nil
}

func applyImport(s *journal.Step, cur []byte, exists bool, read journal.Reader) ([]byte, bool, error) {
	return targets.AddImport(cur), true, nil
}

func undoImport(s *journal.Step, cur []byte, exists bool, read journal.Reader) ([]byte, bool, error) {
	if !exists {
		return nil, false, nil
	}
	out := targets.RemoveImport(cur)
	return out, !createdEmpty(s, out), nil
}

// createdEmpty reports whether undoing left only blank space in a file the
// operation created: the file goes away again.
func createdEmpty(s *journal.Step, out []byte) bool {
	return s.Before == "" && len(bytes.TrimSpace(out)) == 0
}

func applyRemoveEntry(s *journal.Step, cur []byte, exists bool, read journal.Reader) ([]byte, bool, error) {
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
}

func applyDeleteFile(s *journal.Step, cur []byte, exists bool, read journal.Reader) ([]byte, bool, error) {
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
}

func applyRemovePointers(s *journal.Step, cur []byte, exists bool, read journal.Reader) ([]byte, bool, error) {
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

func applyRemoveMarked(s *journal.Step, cur []byte, exists bool, read journal.Reader) ([]byte, bool, error) {
	if !exists {
		return nil, false, nil
	}
	out, _, ok := mdoc.Parse(cur).Remove(s.ID, false)
	if !ok {
		return cur, true, nil
	}
	return out, true, nil
}

// Describe says in words what a promotion's step does, for apply's dry
// run: detail ("insert entry … under section …") and, for an insert, the
// text that lands with its marker. ok is false for a step not worth
// showing (a detail document that already exists).
func Describe(s *journal.Step) (detail, text string, ok bool) {
	switch s.Action {
	case ActInsert:
		where := "section " + strconv.Quote(s.Section)
		if s.Extra == "created" {
			where = "new section " + strconv.Quote(s.Section)
		}
		detail = fmt.Sprintf("insert entry %s under %s", s.ID, where)
		first, rest, multi := strings.Cut(s.Block, "\n")
		text = first + " " + mdoc.Marker(s.ID)
		if multi {
			text += "\n" + rest
		}
	case ActImport:
		detail = "add the line @AGENTS.md"
	case ActRemoveEntry:
		detail = "remove entry " + s.ID
	case ActDeleteFile:
		detail = "delete the memory file (its content was promoted)"
	case ActRemovePointers:
		detail = "remove the index lines pointing to " + s.Extra
	case ActWriteRetire:
		detail = "take written memory " + s.ID + " out of the written set (a retire line; the record stays)"
	case ActEnsureDetail:
		if s.Before != "" {
			return "", "", false // the detail document exists: nothing to say
		}
		detail = fmt.Sprintf("create the detail document for topic %q", s.Section)
	case ActSetIndex:
		detail = "rewrite the managed index of topics (one line each)"
	}
	if s.Before == s.After {
		detail += " (no change needed)"
	}
	return detail, text, true
}
