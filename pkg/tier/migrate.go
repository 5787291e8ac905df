package tier

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/journal"
	"github.com/intermem/intermem/pkg/mdoc"
	"github.com/intermem/intermem/pkg/targets"
)

// Migration actions.
const (
	// ActDropEmptyHeading removes a marked heading (the older style of
	// promotion marked section headings too) once its section holds
	// nothing but blank lines.
	ActDropEmptyHeading = "drop-empty-heading"
	// actInsert and actRemoveMarked are package promote's actions; tier
	// builds steps for them by name to avoid an import cycle.
	actInsert       = "insert"
	actRemoveMarked = "remove-marked"
)

// Move is one fact moved by a migration.
type Move struct {
	ID      string `json:"id"`
	From    string `json:"from"` // document, relative to the root
	To      string `json:"to"`
	Section string `json:"section"`
	Line    int    `json:"line"`
	Text    string `json:"text"`
}

// RawBlock returns a marked entry's markdown as it stands in the document,
// without its marker, with "\n" line endings: what moves when the entry
// moves.
func RawBlock(content []byte, m mdoc.Marked) string {
	b := string(content[m.Start:m.End])
	b = mdoc.StripMarkers(b)
	b = strings.ReplaceAll(b, "\r\n", "\n")
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(b, "\n"), "\n") {
		lines = append(lines, strings.TrimRight(l, " \t"))
	}
	return strings.Join(lines, "\n")
}

// PrepareMigrate builds the operation that moves every promoted fact of
// the root documents the layout tiers (AGENTS.md, and CLAUDE.md with
// TierClaude) into detail documents, one per section, and refreshes the
// index. Marked headings left empty are removed.
func PrepareMigrate(ts *targets.Set, c Config) (*journal.Op, []Move, error) {
	op := &journal.Op{Kind: "migrate"}
	var moves []Move
	mapper := NewMapper(ts)
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
		idxStart := bytes.Index(doc.Content, []byte(IndexBegin))
		for _, m := range doc.Doc.Marked() {
			if idxStart >= 0 && m.Start >= idxStart && m.Start < idxStart+IndexBytes(doc.Content[idxStart:]) {
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
					title = Title(d.Content)
				}
			}
			if !ensured[path] {
				ensured[path] = true
				inserts = append(inserts, journal.Step{Phase: 1, Path: path, Action: ActEnsureDetail, Section: title})
			}
			block := RawBlock(doc.Content, m)
			inserts = append(inserts, journal.Step{Phase: 1, Path: path, Action: actInsert, ID: m.ID, Section: title, Block: block})
			removals = append(removals, journal.Step{Phase: 1, Path: doc.Path, Action: actRemoveMarked, ID: m.ID})
			rel, _ := filepath.Rel(ts.Root, path)
			moves = append(moves, Move{ID: m.ID, From: doc.Name, To: filepath.ToSlash(rel), Section: title, Line: m.Line, Text: block})
			op.Entries = append(op.Entries, m.ID)
		}
	}
	if len(moves) == 0 {
		return op, nil, nil
	}
	// Copy first, then remove: at any crash point every fact exists in at
	// least one place, and recovery completes the move.
	op.Steps = append(op.Steps, groupSteps(inserts)...)
	op.Steps = append(op.Steps, removals...)
	op.Steps = append(op.Steps, headings...)
	op.Steps = append(op.Steps, IndexStep(ts, mapper.Paths()))
	op.Summary = fmt.Sprintf("move %d promoted %s into docs/intermem/", len(moves), cli.Plural(len(moves), "fact", "facts"))
	return op, moves, nil
}

// PrepareFlatten builds the reverse operation: every fact of the detail
// documents goes back inline into AGENTS.md (or the root document it was
// tiered from), under a section named after its topic; emptied detail
// documents are deleted and the index is removed.
func PrepareFlatten(ts *targets.Set) (*journal.Op, []Move, error) {
	op := &journal.Op{Kind: "migrate"}
	var moves []Move
	var inserts, removals, drops []journal.Step
	var paths []string
	for _, d := range ts.Details {
		paths = append(paths, d.Path)
		title := Title(d.Content)
		for _, m := range d.Doc.Marked() {
			if m.Heading {
				continue
			}
			block := RawBlock(d.Content, m)
			inserts = append(inserts, journal.Step{Phase: 1, Path: ts.Agents.Path, Action: actInsert, ID: m.ID, Section: title, Block: block})
			removals = append(removals, journal.Step{Phase: 1, Path: d.Path, Action: actRemoveMarked, ID: m.ID})
			moves = append(moves, Move{ID: m.ID, From: d.Name, To: targets.Agents, Section: title, Line: m.Line, Text: block})
			op.Entries = append(op.Entries, m.ID)
		}
		drops = append(drops, journal.Step{Phase: 1, Path: d.Path, Action: ActDropEmptyDetail})
	}
	if len(moves) == 0 && !bytes.Contains(ts.Agents.Content, []byte(IndexBegin)) {
		return op, nil, nil
	}
	op.Steps = append(op.Steps, inserts...)
	op.Steps = append(op.Steps, groupSteps(removals)...)
	op.Steps = append(op.Steps, drops...)
	op.Steps = append(op.Steps, IndexStep(ts, paths))
	op.Summary = fmt.Sprintf("move %d promoted %s from docs/intermem/ back inline", len(moves), cli.Plural(len(moves), "fact", "facts"))
	return op, moves, nil
}

func groupSteps(steps []journal.Step) []journal.Step {
	order := map[string]int{}
	for _, s := range steps {
		if _, ok := order[s.Path]; !ok {
			order[s.Path] = len(order)
		}
	}
	out := make([]journal.Step, 0, len(steps))
	for p := 0; p < len(order); p++ {
		for _, s := range steps {
			if order[s.Path] == p {
				out = append(out, s)
			}
		}
	}
	return out
}

// applyDropEmptyHeading removes a marked heading whose section is empty.
func applyDropEmptyHeading(s *journal.Step, cur []byte, exists bool) ([]byte, bool, error) {
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
