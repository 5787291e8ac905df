// Package validate checks what entries cite against the project as it is
// now, and scores them (package score).
//
// Entries come from the catalog, every source that cites code: promoted
// facts (marked in CLAUDE.md, AGENTS.md and docs/intermem/*.md, each
// marked entry whole however many lines it spans), auto-memory entries
// (pointers skipped: an index line's only citation is the memory file
// beside it), and the documents other tools keep (compound solution
// docs, clavain learnings with their Evidence lines, statements of the
// instruction files), whose citations the sources list as written. The
// caller turns each into an Item; Run checks them all with one Checker.
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
//
// Each entry also carries the git blob hash of every file it validly cites
// (cite.Blobs, hashed from the bytes, git never run): recorded in the
// store's overlay, they let the next validation, and provenance, say "the
// cited code changed since it was validated", which a check of the
// citation alone (the file still exists) cannot. Only the entries of
// intermem's own sources (promoted facts, auto-memory) are ever archived
// or edited because of what validation finds; the others are reported.
package validate

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/intermem/intermem/pkg/catalog"
	"github.com/intermem/intermem/pkg/cite"
	"github.com/intermem/intermem/pkg/redact"
	"github.com/intermem/intermem/pkg/score"
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
	ID string `json:"id"`
	// Source is the catalog source the entry comes from.
	Source     string     `json:"source"`
	Text       string     `json:"text"`
	Where      string     `json:"where"` // file:line
	File       string     `json:"file"`
	Line       int        `json:"line"`
	Promoted   bool       `json:"promoted"`
	Confidence float64    `json:"confidence"`
	Status     string     `json:"status"`
	Reasons    []string   `json:"reasons"`
	Citations  []Citation `json:"citations"`
	// Blobs is the git blob hash of each file the entry validly cites, by
	// path (kept in the store's overlay, never printed).
	Blobs map[string]string `json:"-"`
	// LastValidated and LastCommit are when the entry was validated
	// before and the project's commit then (zero and "" when never);
	// Changed lists the cited files whose content differs from then.
	LastValidated time.Time       `json:"last_validated,omitzero"`
	LastCommit    string          `json:"last_commit,omitempty"`
	Changed       []catalog.Drift `json:"changed_since_validated,omitempty"`
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
	CiteRoot string `json:"cite_root,omitempty"`
	// Changed counts the entries whose cited code changed since they were
	// last validated (Entry.Changed).
	Changed int `json:"changed_since_validated"`
	// Commit is the project's checked-out commit (project.Head), "" when
	// unknown.
	Commit  string  `json:"commit,omitempty"`
	Entries []Entry `json:"entries"`
}

// Item is one entry to validate.
type Item struct {
	ID, Source string
	// Text is what is shown for the entry (redacted on output); Cites the
	// text citations are extracted from (Text when empty, unless Listed).
	Text, Cites string
	// Listed says Cites is the whole of the citations the entry's source
	// found, even when empty: an entry citing nothing is then validated as
	// citing nothing checkable, its shown text never read for citations.
	Listed bool
	// File is where the entry is, as shown (a target's name,
	// "memory/<file>", a path relative to the project root); Line its
	// first line.
	File string
	Line int
	// Promoted marks a fact intermem promoted (marked in a curated
	// document).
	Promoted bool
	// Sessions is how many sessions saw the entry (auto-memory; the
	// long-stability bonus).
	Sessions int
}

// Run validates items with c. root is where cited files are hashed (the
// checker's root); "" leaves Blobs empty.
func Run(c *cite.Checker, root string, items []Item, threshold int) *Report {
	r := &Report{Entries: []Entry{}}
	for _, it := range items {
		cites := it.Cites
		if cites == "" && !it.Listed {
			cites = it.Text
		}
		r.add(c, root, Entry{ID: it.ID, Source: it.Source, Text: it.Text, File: it.File, Line: it.Line, Promoted: it.Promoted}, cites, it.Sessions, threshold)
	}
	sort.SliceStable(r.Entries, func(i, j int) bool {
		a, b := r.Entries[i], r.Entries[j]
		if a.Promoted != b.Promoted {
			return a.Promoted
		}
		if a.Source != b.Source {
			return a.Source < b.Source
		}
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Line < b.Line
	})
	return r
}

// CitesOf is the text whose citations are an entry's listed ones
// (source.Entry.Citations, each as written): one per line, in backticks,
// so cite.Extract reads each as code and ties a bare symbol to the file
// cited before it ("middleware/auth.go:47-52, handleRequest()").
func CitesOf(citations []string) string {
	var b strings.Builder
	for _, c := range citations {
		if strings.ContainsAny(c, "`\n") {
			continue
		}
		b.WriteString("`" + c + "`\n")
	}
	return b.String()
}

// StatusOf is the status of an entry scored sc (the package comment): one
// rule for validate and for a plan, which records what it checked as the
// entry's validation too.
func StatusOf(sc score.Score) string {
	switch {
	case sc.Stale:
		return Stale
	case sc.Valid+sc.Broken+sc.Moved > 0:
		return OK
	}
	return Unchecked
}

// Check validates one entry's text.
func Check(c *cite.Checker, text string, sessions, threshold int) (score.Score, []Citation) {
	sc, cs, _ := check(c, text, sessions, threshold)
	return sc, cs
}

func check(c *cite.Checker, text string, sessions, threshold int) (score.Score, []Citation, []cite.Result) {
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
	return sc, cs, results
}

func (r *Report) add(c *cite.Checker, root string, e Entry, cites string, sessions, threshold int) {
	sc, cs, results := check(c, cites, sessions, threshold)
	if root != "" {
		e.Blobs = cite.Blobs(root, results)
	}
	e.Text = redact.String(e.Text)
	e.Where = fmt.Sprintf("%s:%d", e.File, e.Line)
	e.Confidence, e.Citations, e.Reasons = sc.Confidence, cs, sc.Reasons
	if e.Reasons == nil {
		e.Reasons = []string{}
	}
	switch e.Status = StatusOf(sc); e.Status {
	case Stale:
		r.Stale++
	case OK:
		r.OK++
	default:
		r.Unchecked++
	}
	if sc.NotInProject > 0 {
		r.NotInProject++
	}
	r.Checked++
	r.Entries = append(r.Entries, e)
}
