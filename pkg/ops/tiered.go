package ops

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/journal"
	"github.com/intermem/intermem/pkg/mdoc"
	"github.com/intermem/intermem/pkg/targets"
	"github.com/intermem/intermem/pkg/tier"
)

// Step actions of the tiered layout (package tier): detail documents and
// the managed AGENTS.md index. Promote, archive, restore and migrate use
// them.
const (
	// ActEnsureDetail creates a detail document with its header (titled
	// Section) if absent.
	ActEnsureDetail = "ensure-detail"
	// ActSetIndex rewrites AGENTS.md's managed index from the detail
	// documents listed in Block (one absolute path per line); Extra is
	// the project root. It is Derived: a discard renders it again from
	// the documents as the undo leaves them.
	ActSetIndex = "set-index"
	// ActDropEmptyDetail deletes a detail document that holds no fact.
	ActDropEmptyDetail = "drop-empty-detail"
	// ActDropEmptyHeading removes a marked heading (the older style of
	// promotion marked section headings too) once its section holds
	// nothing but blank lines.
	ActDropEmptyHeading = "drop-empty-heading"
)

// indexStep refreshes AGENTS.md's index from the detail documents paths.
func indexStep(ts *targets.Set, paths []string) journal.Step {
	return journal.Step{Phase: 1, Path: ts.Agents.Path, Action: ActSetIndex, Block: strings.Join(paths, "\n"), Extra: ts.Root, Derived: true}
}

// Migrate builds the operation that moves every promoted fact of the root
// documents the layout tiers (AGENTS.md, and CLAUDE.md with TierClaude)
// into detail documents, one per section, and refreshes the index. Marked
// headings left empty are removed. Copy first, then remove: at any crash
// point every fact exists in at least one place, and recovery completes
// the move.
func Migrate(ts *targets.Set, c tier.Config) (*journal.Op, []tier.Move) {
	op := &journal.Op{Kind: KindMigrate}
	var moves []tier.Move
	mapper := tier.NewMapper(ts)
	var inserts, removals, headings []journal.Step
	ensured := map[string]bool{}
	seen := map[string]bool{}
	for _, name := range []string{targets.Agents, targets.Claude} {
		doc := ts.Target(name)
		if !doc.Exists || seen[doc.Real] || (name == targets.Claude && !c.TierClaude) {
			continue
		}
		if name == targets.Agents && ts.Same() && !c.TierClaude {
			continue // CLAUDE.md is a link to AGENTS.md: it is always loaded as CLAUDE.md
		}
		seen[doc.Real] = true
		idxStart := bytes.Index(doc.Content, []byte(tier.IndexBegin))
		for _, m := range doc.Doc.Marked() {
			if idxStart >= 0 && m.Start >= idxStart && m.Start < idxStart+tier.IndexBytes(doc.Content[idxStart:]) {
				continue
			}
			if m.Heading {
				headings = append(headings, journal.Step{Phase: 1, Path: doc.Path, Action: ActDropEmptyHeading, ID: m.ID})
				continue
			}
			section := m.Section
			if section == "" {
				section = "Notes"
			}
			path := mapper.Path(section)
			title := section
			for _, d := range ts.Details {
				if d.Path == path {
					title = tier.Title(d.Content)
				}
			}
			if !ensured[path] {
				ensured[path] = true
				inserts = append(inserts, journal.Step{Phase: 1, Path: path, Action: ActEnsureDetail, Section: title})
			}
			block := tier.RawBlock(doc.Content, m)
			inserts = append(inserts, journal.Step{Phase: 1, Path: path, Action: ActInsert, ID: m.ID, Section: title, Block: block})
			removals = append(removals, journal.Step{Phase: 1, Path: doc.Path, Action: ActRemoveMarked, ID: m.ID})
			rel, _ := filepath.Rel(ts.Root, path)
			moves = append(moves, tier.Move{ID: m.ID, From: doc.Name, To: filepath.ToSlash(rel), Section: title, Line: m.Line, Text: block})
			op.Entries = append(op.Entries, m.ID)
		}
	}
	if len(moves) == 0 {
		return op, nil
	}
	op.Steps = append(op.Steps, groupByFile(inserts)...)
	op.Steps = append(op.Steps, removals...)
	op.Steps = append(op.Steps, headings...)
	op.Steps = append(op.Steps, indexStep(ts, mapper.Paths()))
	op.Summary = fmt.Sprintf("move %d promoted %s into docs/intermem/", len(moves), cli.Plural(len(moves), "fact", "facts"))
	return op, moves
}

// Flatten builds the reverse operation: every fact of the detail documents
// goes back inline into AGENTS.md, under a section named after its topic;
// emptied detail documents are deleted and the index is removed.
func Flatten(ts *targets.Set) (*journal.Op, []tier.Move) {
	op := &journal.Op{Kind: KindMigrate}
	var moves []tier.Move
	var inserts, removals, drops []journal.Step
	var paths []string
	for _, d := range ts.Details {
		paths = append(paths, d.Path)
		title := tier.Title(d.Content)
		for _, m := range d.Doc.Marked() {
			if m.Heading {
				continue
			}
			block := tier.RawBlock(d.Content, m)
			inserts = append(inserts, journal.Step{Phase: 1, Path: ts.Agents.Path, Action: ActInsert, ID: m.ID, Section: title, Block: block})
			removals = append(removals, journal.Step{Phase: 1, Path: d.Path, Action: ActRemoveMarked, ID: m.ID})
			moves = append(moves, tier.Move{ID: m.ID, From: d.Name, To: targets.Agents, Section: title, Line: m.Line, Text: block})
			op.Entries = append(op.Entries, m.ID)
		}
		drops = append(drops, journal.Step{Phase: 1, Path: d.Path, Action: ActDropEmptyDetail})
	}
	if len(moves) == 0 && !bytes.Contains(ts.Agents.Content, []byte(tier.IndexBegin)) {
		return op, nil
	}
	op.Steps = append(op.Steps, inserts...)
	op.Steps = append(op.Steps, groupByFile(removals)...)
	op.Steps = append(op.Steps, drops...)
	op.Steps = append(op.Steps, indexStep(ts, paths))
	op.Summary = fmt.Sprintf("move %d promoted %s from docs/intermem/ back inline", len(moves), cli.Plural(len(moves), "fact", "facts"))
	return op, moves
}

func applyEnsureDetail(s *journal.Step, cur []byte, exists bool, read journal.Reader) ([]byte, bool, error) {
	if exists {
		return cur, true, nil
	}
	return []byte(tier.Header(s.Section)), true, nil
}

// undoEnsureDetail deletes a detail document this operation created once
// it holds no fact; one that existed before stays as it is.
func undoEnsureDetail(s *journal.Step, cur []byte, exists bool, read journal.Reader) ([]byte, bool, error) {
	if s.Before != "" {
		return cur, exists, nil
	}
	return applyDropEmptyDetail(s, cur, exists, read)
}

func applySetIndex(s *journal.Step, cur []byte, exists bool, read journal.Reader) ([]byte, bool, error) {
	var paths []string
	for _, p := range strings.Split(s.Block, "\n") {
		if p != "" {
			paths = append(paths, p)
		}
	}
	topics, err := tier.Topics(s.Extra, paths, read)
	if err != nil {
		return nil, false, err
	}
	block := tier.RenderIndex(topics)
	if !exists && block == "" {
		return nil, false, nil
	}
	return tier.SetIndex(cur, block), true, nil
}

// undoSetIndex renders the index again from the documents as they are
// after the undo of the inserts before it; an AGENTS.md the operation
// created for the index alone goes.
func undoSetIndex(s *journal.Step, cur []byte, exists bool, read journal.Reader) ([]byte, bool, error) {
	next, keep, err := applySetIndex(s, cur, exists, read)
	if s.Before == "" && len(bytes.TrimSpace(next)) == 0 {
		keep = false
	}
	return next, keep, err
}

func applyDropEmptyDetail(s *journal.Step, cur []byte, exists bool, read journal.Reader) ([]byte, bool, error) {
	if !exists {
		return nil, false, nil
	}
	for _, m := range mdoc.Parse(cur).Marked() {
		if !m.Heading {
			return cur, true, nil
		}
	}
	return nil, false, nil
}

// applyDropEmptyHeading removes a marked heading whose section is empty.
func applyDropEmptyHeading(s *journal.Step, cur []byte, exists bool, read journal.Reader) ([]byte, bool, error) {
	if !exists {
		return nil, false, nil
	}
	d := mdoc.Parse(cur)
	for _, m := range d.Marked() {
		if m.ID != s.ID || !m.Heading {
			continue
		}
		for _, sec := range d.Sections {
			if sec.Start != m.Start {
				continue
			}
			if len(bytes.TrimSpace(cur[m.End:sec.End])) > 0 {
				return cur, true, nil // still holds something
			}
			out, _, ok := d.Remove(s.ID, false)
			if !ok {
				return cur, true, nil
			}
			return out, true, nil
		}
	}
	return cur, true, nil
}
