// Package promoted is the source of intermem's own promoted facts: the
// entries intermem placed in the curated documents (CLAUDE.md, AGENTS.md,
// .claude/CLAUDE.md and the detail documents docs/intermem/*.md), each
// tagged by a marker "<!-- intermem:<id> -->" (package mdoc).
//
// An entry's id is the marker's id, not a hash of the path: it is the id
// the fact had as a memory and the key of its promotion record in the
// store, so a fact keeps its history (sessions seen, confidence, the
// operation that promoted it) across the move from memory to document, and
// across tier migrations between documents. The same id in the
// auto-memory source names the memory it came from; within this source an
// id is kept once per file: a marker copied twice into one document is
// read once, from its first line, and the copy reported as a problem.
//
// The archive (docs/intermem/.archived.md) is not read: an archived fact
// is no longer promoted, and the catalog shows it as the promotion
// record's tombstone (status "archived"). A marker on a heading tags the
// section, not a fact, and yields no entry. Promoted facts already live in
// a committed document, so they are not promotable.
package promoted

import (
	"bytes"
	"fmt"
	"path"
	"strings"

	"github.com/intermem/intermem/pkg/cite"
	"github.com/intermem/intermem/pkg/mdoc"
	"github.com/intermem/intermem/pkg/source"
	"github.com/intermem/intermem/pkg/source/docrecord"
	"github.com/intermem/intermem/pkg/targets"
)

// Name is the source's name.
const Name = "promoted"

// Source reads intermem's promoted facts.
type Source struct{}

// Name returns "promoted".
func (Source) Name() string { return Name }

// Patterns returns the curated documents intermem writes.
func (Source) Patterns() []string {
	return []string{targets.Claude, targets.Agents, ".claude/CLAUDE.md", targets.DetailDir + "/*.md"}
}

// Parse returns the file's marked facts in document order.
func (Source) Parse(p string, content []byte) ([]source.Entry, []source.Problem) {
	if path.Base(p) == targets.ArchiveName {
		return nil, nil
	}
	d := mdoc.Parse(content)
	var out []source.Entry
	var problems []source.Problem
	seen := map[string]int{} // id → the line of its first marker
	for _, m := range d.Marked() {
		// intermem writes markers with entry ids (16 hex digits); mdoc
		// reads any 8 to 64. A marker of another length is not one of
		// intermem's facts — typed by hand or planted — and an id of the
		// wrong shape would not be an entry id the rest of the catalog
		// can key.
		if m.Heading || !entryID(m.ID) {
			continue
		}
		if first, dup := seen[m.ID]; dup {
			// Two lines cannot be one fact: the second is not read, and
			// says so rather than vanish.
			problems = append(problems, source.Problem{Path: p, Line: LineAt(content, m.Start),
				Message: fmt.Sprintf("marker intermem:%s also tags line %d: an id names one fact, so this line is not read (remove its marker, or the copy)", m.ID, first)})
			continue
		}
		seen[m.ID] = LineAt(content, m.Start)
		text := strings.TrimSpace(m.Text)
		if text == "" {
			continue
		}
		e := source.Entry{
			ID:      m.ID,
			Source:  Name,
			Kind:    source.Fact,
			Path:    p,
			Line:    LineAt(content, m.Start),
			EndLine: LineAt(content, max(m.End-1, m.Start)),
			Title:   source.OneLine(strings.TrimLeft(text, "#*_ "), 120),
			Text:    text,
		}
		source.SetField(&e, "section", m.Section)
		for _, ct := range cite.Extract(text) {
			e.Citations = append(e.Citations, ct.Text)
		}
		out = append(out, e)
	}
	return out, problems
}

// LineAt is the 1-based line of byte offset off in content.
func LineAt(content []byte, off int) int {
	off = min(max(off, 0), len(content))
	return 1 + bytes.Count(content[:off], []byte{'\n'})
}

// entryID reports whether id has the shape of an entry id: 16 lower-case
// hex digits.
func entryID(id string) bool {
	if len(id) != 16 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// Record implements source.Recorder: what a session start needs of the
// curated document (docrecord.Derive), stored beside its entries.
func (Source) Record(content []byte) []byte { return docrecord.Encode(docrecord.Derive(content)) }

// RecordVersion implements source.Recorder.
func (Source) RecordVersion() string { return docrecord.Magic }
