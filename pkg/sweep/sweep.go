// Package sweep keeps promoted knowledge true over time. One sweep, for
// every promoted fact (an entry carrying an intermem marker in CLAUDE.md,
// AGENTS.md or docs/intermem/):
//
//  1. re-validates its citations (package cite) and scores it (package
//     score);
//  2. looks for evidence that it still holds: it was re-observed in
//     auto-memory since its last evidence (the same id seen by a hook, or
//     present now), or its citations held — either refreshes its decay
//     clock;
//  3. without evidence, applies decay (score.DecayPenalty: a longer review
//     period for uncited facts, since promotion itself removed them from
//     auto-memory);
//  4. a fact below score.StaleBelow is stale; the first stale sweep only
//     records it, and a second stale sweep at least score.ArchiveGap later
//     archives it (package archive); a sweep that finds it healthy again
//     resets the count;
//  5. every archived fact that was re-observed in auto-memory is restored
//     to where it was, if it would pass validation now (its citations
//     score it above score.StaleBelow); one that would be stale at once (it
//     cites a file that is still gone) stays archived and is reported as
//     held, with the reason.
//
// The memories in the written set (package written) decay by the same
// rules (written.go, EvaluateWritten): archived by a retire line in their
// log, restored when what they cite holds again.
//
// Evaluate decides; it changes nothing. The caller journals the archive
// and restore operations and writes the updated records, or, for a dry
// run, only prints.
package sweep

import (
	"sort"
	"time"

	"github.com/intermem/intermem/pkg/archive"
	"github.com/intermem/intermem/pkg/cite"
	"github.com/intermem/intermem/pkg/mdoc"
	"github.com/intermem/intermem/pkg/redact"
	"github.com/intermem/intermem/pkg/score"
	"github.com/intermem/intermem/pkg/store"
	"github.com/intermem/intermem/pkg/targets"
)

// Actions reported for a fact.
const (
	Refreshed = "refreshed" // evidence found: decay clock reset
	Healthy   = "healthy"   // no evidence needed yet
	Decaying  = "decaying"  // losing confidence, not stale
	Stale     = "stale"     // first stale sweep: archived at the next one ≥24 h later
	Archived  = "archived"
	Restored  = "restored"
	Held      = "held"    // re-observed while archived, but it would be stale: stays archived
	Adopted   = "adopted" // a marked entry the store had no record of
	// Refused: an archived fact auto-memory holds again, not restored
	// because its record names no document it may go back to
	// (archive.CheckOrigin).
	Refused = "refused"
)

// Options configure a sweep.
type Options struct {
	Now       time.Time
	Review    time.Duration
	Threshold int
}

// Change is what a sweep concluded about one fact.
type Change struct {
	ID         string  `json:"id"`
	Action     string  `json:"action"`
	Where      string  `json:"where"`
	Text       string  `json:"text"`
	Confidence float64 `json:"confidence"`
	Reason     string  `json:"reason,omitempty"`
}

// ArchiveTask is a fact to archive.
type ArchiveTask struct {
	Doc    *targets.Doc
	Marked mdoc.Marked
	Block  string
	Reason string
}

// Result is a sweep's decisions.
type Result struct {
	Checked  int                        `json:"checked"`
	Changes  []Change                   `json:"changes"`
	Records  map[string]*store.Promoted `json:"-"` // updated records
	Archive  []ArchiveTask              `json:"-"`
	Restore  []archive.Record           `json:"-"`
	Archived int                        `json:"archived"`
	Restored int                        `json:"restored"`
	Stale    int                        `json:"stale"`
}

// Evaluate decides a sweep. recs are the store's promoted records (by
// id); seen maps entry ids to the last time auto-memory held them (from
// the store's observations and the current scan).
func Evaluate(ts *targets.Set, recs map[string]*store.Promoted, seen map[string]time.Time, c *cite.Checker, o Options) *Result {
	r := &Result{Records: map[string]*store.Promoted{}, Changes: []Change{}}
	now := o.Now
	marked := map[string]bool{}
	for _, d := range ts.Docs() {
		for _, m := range d.Doc.Marked() {
			if m.Heading {
				continue
			}
			marked[m.ID] = true
			r.Checked++
			rec, ok := recs[m.ID]
			if !ok {
				rec = &store.Promoted{ID: m.ID, Target: d.Name, Section: m.Section, At: now, LastEvidence: now, Text: redact.String(m.Text)}
			} else {
				cp := *rec
				rec = &cp
			}
			rec.Target, rec.Section = d.Name, m.Section
			rec.Archived = false
			results := c.Check(cite.Extract(m.Text))
			sc := score.Of(score.Evidence{Results: results, Threshold: o.Threshold})
			checkable := sc.Valid + sc.Broken + sc.Moved
			rec.Cited = checkable > 0
			ch := Change{ID: m.ID, Where: d.Name + ":" + itoa(m.Line), Text: clip(redact.String(m.Text))}

			evidence := false
			if t, ok := seen[m.ID]; ok && t.After(rec.LastEvidence) {
				rec.LastEvidence, evidence = t, true
			}
			if sc.Valid > 0 && sc.Broken == 0 && sc.Moved == 0 {
				rec.LastEvidence, evidence = now, true
			}
			penalty, _ := score.DecayPenalty(rec.LastEvidence, now, rec.Cited, o.Review)
			conf := score.Clamp(sc.Confidence - penalty)
			rec.Confidence = conf
			ch.Confidence = conf
			reason := ""
			if len(sc.Reasons) > 0 {
				reason = sc.Reasons[0]
			} else if penalty > 0 {
				reason = "no evidence it still holds since " + rec.LastEvidence.Format("2006-01-02")
			}
			switch {
			case !ok:
				ch.Action = Adopted
			case conf < score.StaleBelow:
				if rec.StaleSweeps > 0 && now.Sub(rec.LastStale) >= score.ArchiveGap {
					ch.Action = Archived
					r.Archive = append(r.Archive, ArchiveTask{Doc: d, Marked: m, Reason: reason})
				} else {
					if rec.StaleSweeps == 0 {
						rec.LastStale = now
					}
					rec.StaleSweeps = 1
					ch.Action = Stale
					r.Stale++
				}
				ch.Reason = reason
			case evidence:
				ch.Action = Refreshed
				rec.StaleSweeps = 0
			case penalty > 0:
				ch.Action, ch.Reason = Decaying, reason
				rec.StaleSweeps = 0
			default:
				ch.Action = Healthy
				rec.StaleSweeps = 0
			}
			if ch.Action == Archived {
				rec.Archived, rec.ArchivedAt, rec.Reason = true, now, reason
				r.Archived++
			}
			r.Records[m.ID] = rec
			r.Changes = append(r.Changes, ch)
		}
	}
	// Archived facts that auto-memory holds again come back.
	if ts.Archive.Exists {
		for _, a := range archive.Parse(ts.Archive.Content) {
			if marked[a.ID] {
				continue
			}
			t, ok := seen[a.ID]
			if !ok || !t.After(a.At) {
				continue
			}
			if err := a.CheckOrigin(); err != nil {
				r.Changes = append(r.Changes, Change{ID: a.ID, Action: Refused, Where: targets.DetailDir + "/" + targets.ArchiveName,
					Text: clip(redact.String(a.Block)), Reason: err.Error()})
				continue
			}
			// Re-observed is not enough: what comes back must pass
			// validation now, or the next sweep would find it stale again
			// (a fact citing a file that is still deleted).
			sc := score.Of(score.Evidence{Results: c.Check(cite.Extract(a.Block)), Threshold: o.Threshold})
			if sc.Stale {
				reason := "auto-memory holds it again"
				if len(sc.Reasons) > 0 {
					reason += ", but it " + sc.Reasons[0]
				}
				r.Changes = append(r.Changes, Change{ID: a.ID, Action: Held, Where: a.From, Text: clip(redact.String(a.Block)),
					Confidence: sc.Confidence, Reason: reason})
				continue
			}
			r.Restore = append(r.Restore, a)
			r.Restored++
			rec := &store.Promoted{ID: a.ID, Target: a.From, Section: a.Section, LastEvidence: t, Text: redact.String(a.Block)}
			if old, ok := recs[a.ID]; ok {
				cp := *old
				rec = &cp
				rec.LastEvidence = t
			}
			rec.Archived, rec.StaleSweeps, rec.Reason = false, 0, ""
			rec.Confidence, rec.Cited = sc.Confidence, sc.Valid+sc.Broken+sc.Moved > 0
			r.Records[a.ID] = rec
			r.Changes = append(r.Changes, Change{ID: a.ID, Action: Restored, Where: a.From, Text: clip(redact.String(a.Block)), Confidence: rec.Confidence,
				Reason: "auto-memory holds it again"})
		}
	}
	Sort(r.Changes)
	return r
}

// Sort orders changes as a sweep reports them: what moved first
// (refused, archived, restored, held), then stale, decaying, adopted,
// refreshed and healthy facts, each kind in the order found.
func Sort(cs []Change) {
	sort.SliceStable(cs, func(i, j int) bool { return rank(cs[i].Action) < rank(cs[j].Action) })
}

func rank(action string) int {
	for i, a := range []string{Refused, Archived, Restored, Held, Stale, Decaying, Adopted, Refreshed, Healthy} {
		if a == action {
			return i
		}
	}
	return 99
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

// clip is s's first line, at most 100 runes, redacted first: a written
// memory's title is read from the log as written, and a secret cut in half
// would no longer be recognised.
func clip(s string) string {
	r := []rune(redact.String(s))
	for i, c := range r {
		if c == '\n' {
			r = r[:i]
			break
		}
	}
	if len(r) > 100 {
		return string(r[:99]) + "…"
	}
	return string(r)
}
