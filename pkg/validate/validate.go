// Package validate checks what memory entries and promoted facts cite
// against the project as it is now, and scores them (package score).
//
// Promoted facts are found by their markers in CLAUDE.md, AGENTS.md and
// docs/intermem/*.md (package mdoc returns each marked entry whole, however
// many lines it spans); auto-memory entries come from a scan. Pointers are
// skipped: an index line's only citation is the memory file beside it.
//
// Status of an entry:
//
//   - stale:     confidence below score.StaleBelow (a broken citation, or
//     several moved ones) — do not trust it;
//   - ok:        at least one citation checked and the entry is not stale;
//   - unchecked: nothing it says could be checked here (no citation, or
//     only URLs, paths outside the project and the like). That is not a
//     defect: most preferences cite nothing.
//
// Independently of the status, an entry citing a path the project has never
// had (templates/invoice.html without templates/, now or in git history) is
// counted and its reasons say "not in this project": it is not stale, but
// nothing anchors it (score.NotInProject lowers its confidence).
package validate

import (
	"fmt"
	"sort"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/cite"
	"github.com/intermem/intermem/pkg/redact"
	"github.com/intermem/intermem/pkg/score"
	"github.com/intermem/intermem/pkg/targets"
)

// Statuses of an entry.
const (
	OK        = "ok"
	Stale     = "stale"
	Unchecked = "unchecked"
)

// Citation is one checked citation, for reports.
type Citation struct {
	Text    string `json:"text"`
	Kind    string `json:"kind"`
	Status  string `json:"status"`
	Detail  string `json:"detail"`
	MovedTo string `json:"moved_to"`
	// Fix suggests an edit for a moved citation.
	Fix string `json:"fix,omitempty"`
	// NotInProject marks an unchecked citation of a path the project has
	// never had (cite.Result.NotInProject).
	NotInProject bool `json:"not_in_project,omitempty"`
}

// Entry is one validated entry.
type Entry struct {
	ID         string     `json:"id"`
	Text       string     `json:"text"`
	Where      string     `json:"where"` // file:line
	File       string     `json:"file"`
	Line       int        `json:"line"`
	Promoted   bool       `json:"promoted"`
	Confidence float64    `json:"confidence"`
	Status     string     `json:"status"`
	Reasons    []string   `json:"reasons"`
	Citations  []Citation `json:"citations"`
}

// Report is the result of a validation run.
type Report struct {
	Checked   int `json:"checked"`
	Stale     int `json:"stale"`
	OK        int `json:"ok"`
	Unchecked int `json:"unchecked"`
	// NotInProject counts the entries (of any status) citing a path the
	// project has never had.
	NotInProject int `json:"not_in_project"`
	// CiteRoot is the directory citations were resolved against when it is
	// not the project root.
	CiteRoot string  `json:"cite_root,omitempty"`
	Entries  []Entry `json:"entries"`
}

// Options select what to validate.
type Options struct {
	Promoted bool
	Memory   bool
	// Sessions returns how many sessions an entry was seen in (for the
	// long-stability bonus), or 0.
	Sessions  func(id string) int
	Threshold int
}

// Run validates the promoted facts in ts and the entries of mem.
func Run(c *cite.Checker, ts *targets.Set, mem *automem.Dir, o Options) *Report {
	r := &Report{Entries: []Entry{}}
	sessions := o.Sessions
	if sessions == nil {
		sessions = func(string) int { return 0 }
	}
	if o.Promoted && ts != nil {
		for _, d := range ts.Docs() {
			for _, m := range d.Doc.Marked() {
				if m.Heading {
					continue // a marked heading carries no claim of its own
				}
				r.add(c, Entry{ID: m.ID, Text: m.Text, File: d.Name, Line: m.Line, Promoted: true}, sessions(m.ID), o.Threshold)
			}
		}
	}
	if o.Memory && mem != nil {
		for _, e := range mem.Entries() {
			if e.Kind == automem.Pointer {
				continue
			}
			r.add(c, Entry{ID: e.ID, Text: e.Text, File: "memory/" + e.File, Line: e.StartLine}, sessions(e.ID), o.Threshold)
		}
	}
	sort.SliceStable(r.Entries, func(i, j int) bool {
		a, b := r.Entries[i], r.Entries[j]
		if a.Promoted != b.Promoted {
			return a.Promoted
		}
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Line < b.Line
	})
	return r
}

// Check validates one entry's text.
func Check(c *cite.Checker, text string, sessions, threshold int) (score.Score, []Citation) {
	results := c.Check(cite.Extract(text))
	sc := score.Of(score.Evidence{Results: results, Sessions: sessions, Threshold: threshold})
	cs := make([]Citation, 0, len(results))
	for _, res := range results {
		ct := Citation{Text: res.Text, Kind: string(res.Kind), Status: string(res.Status), Detail: res.Detail, MovedTo: res.MovedTo,
			NotInProject: res.NotInProject}
		if res.Status == cite.Moved {
			ct.Fix = fmt.Sprintf("replace %s with %s", res.Path, res.MovedTo)
		}
		cs = append(cs, ct)
	}
	return sc, cs
}

func (r *Report) add(c *cite.Checker, e Entry, sessions, threshold int) {
	sc, cs := Check(c, e.Text, sessions, threshold)
	e.Text = redact.String(e.Text)
	e.Where = fmt.Sprintf("%s:%d", e.File, e.Line)
	e.Confidence, e.Citations, e.Reasons = sc.Confidence, cs, sc.Reasons
	if e.Reasons == nil {
		e.Reasons = []string{}
	}
	switch {
	case sc.Stale:
		e.Status = Stale
		r.Stale++
	case sc.Valid+sc.Broken+sc.Moved > 0:
		e.Status = OK
		r.OK++
	default:
		e.Status = Unchecked
		r.Unchecked++
	}
	if sc.NotInProject > 0 {
		r.NotInProject++
	}
	r.Checked++
	r.Entries = append(r.Entries, e)
}
