package plan

import (
	"path"
	"strings"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/catalog"
	"github.com/intermem/intermem/pkg/cite"
	"github.com/intermem/intermem/pkg/match"
	"github.com/intermem/intermem/pkg/source"
)

// Documents are the solution documents a project keeps (the compound
// source: docs/solutions/**), against which a memory entry is judged
// "documented": a committed document already says it, so the plan offers
// it for pruning from memory, never for promotion (World.Documented,
// verdict Documented).
//
// An entry is covered by a document when
//
//   - it cites the document's path (a link or a path naming it, whole or
//     by its file name when no other document has that name): whoever
//     wrote the memory pointed at the document; or
//   - each of its statements (sentences, clauses, table rows: match.Units)
//     says what a sentence (or the title) of that one document says, in
//     the same or other words, or says less than it (package match's
//     Notes: "similar" or "narrower"; a statement that adds to a
//     sentence, "refines", is knowledge the document lacks, and the entry
//     stays a candidate).
//
// Notes are lexical and deliberately strict (a wrong note costs the user
// an entry's pruning), so a paraphrase sharing few words is not found: it
// is then offered for promotion as before.
type Documents struct {
	notes  *match.Notes
	paths  []string        // by note id: the document's path
	byPath map[string]bool // every document path
	byName map[string]int  // file name → how many documents have it
}

// NewDocuments indexes the solution documents among entries (entries of
// other kinds are ignored).
func NewDocuments(entries []catalog.Entry) *Documents {
	d := &Documents{notes: match.NewNotes(), byPath: map[string]bool{}, byName: map[string]int{}}
	for i := range entries {
		e := &entries[i]
		if e.Kind != source.Solution || !e.Gone.IsZero() {
			continue
		}
		id := len(d.paths)
		d.paths = append(d.paths, e.Path)
		d.byPath[e.Path] = true
		d.byName[path.Base(e.Path)]++
		if e.Title != "" {
			d.notes.Add(id, e.Title)
		}
		for _, s := range e.Sections {
			if s.Text != "" {
				d.notes.Add(id, s.Text)
			}
		}
		if len(e.Sections) == 0 {
			d.notes.Add(id, e.Text)
		}
	}
	return d
}

// Len is how many documents there are.
func (d *Documents) Len() int {
	if d == nil {
		return 0
	}
	return len(d.paths)
}

// Covering returns the path of the document that already says the entry
// e, or "" when none does.
func (d *Documents) Covering(e automem.Entry) string {
	if d.Len() == 0 || e.Kind == automem.Pointer {
		return ""
	}
	for _, c := range cite.Extract(e.Text) {
		p := strings.TrimPrefix(c.Path, "/")
		if d.byPath[p] {
			return p
		}
		if !strings.Contains(p, "/") && d.byName[p] == 1 {
			for _, dp := range d.paths {
				if path.Base(dp) == p {
					return dp
				}
			}
		}
	}
	// Every statement of the entry (sentence, clause, row) must be said
	// by one document: an entry of two clauses, both in a document's one
	// sentence, is covered, though taken whole it says more than either
	// of that sentence's clauses.
	doc := -1
	for _, u := range match.Units(Block(e)) {
		n, ok := d.notes.Find(u)
		if !ok || n.Kind != match.KindSimilar && n.Kind != match.KindNarrower || doc >= 0 && n.ID != doc {
			return ""
		}
		doc = n.ID
	}
	if doc < 0 {
		return ""
	}
	return d.paths[doc]
}
