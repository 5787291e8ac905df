package sweep

import (
	"time"

	"github.com/intermem/intermem/pkg/cite"
	"github.com/intermem/intermem/pkg/score"
	"github.com/intermem/intermem/pkg/source/written"
	"github.com/intermem/intermem/pkg/store"
)

// Written memories decay by the rules of promoted facts.
//
// A memory in the written set (package written) is a fact nobody keeps
// re-observing: its writer recorded it once. So a sweep treats it as a
// promoted fact: its decay clock starts when it was written (the created_at
// of its latest record line, so writing it again is evidence), and a
// validation in which its citations hold (the files its writer named and
// those its text names) refreshes it; without evidence it decays
// (score.DecayPenalty: the cited grace or the review period); stale by two
// sweeps at least score.ArchiveGap apart, it is archived — a retire line
// with reason "archived", the record staying in the log. An archived
// written memory is restored (its record appended again) when what it
// cites comes back: its citations hold again. One whose citations still
// fail is held; one that cites nothing checkable has no evidence to come
// back on, and stays archived until it is written again.

// Written is a memory in the written set as a sweep judges it.
type Written struct {
	ID string
	// Where is the log and the line that last wrote it; Text a one-line
	// view (redacted title).
	Where, Text string
	// Cites is the text whose citations are the memory's
	// (plan.WrittenCites: its content and the files named).
	Cites string
	// Created is when its latest record line was written.
	Created time.Time
	// State is its overlay: the decay state of earlier sweeps.
	State store.Overlay
}

// WrittenResult is a sweep's decisions about written memories.
type WrittenResult struct {
	Checked, Stale int
	Archived       int
	Restored       int
	Changes        []Change
	Overlays       map[string]store.Overlay // updated decay state, by id
	Archive        []string                 // ids to archive (retire)
	Restore        []*written.Record        // records to append again
}

// EvaluateWritten decides a sweep of the memories in the written set
// (live) and of those a sweep archived before (out: written.Out, only
// the ones whose last retire line says "archived" are considered). It
// changes nothing.
func EvaluateWritten(live []Written, out []written.Left, cites func(*written.Record) string, c *cite.Checker, o Options) *WrittenResult {
	r := &WrittenResult{Overlays: map[string]store.Overlay{}}
	now := o.Now
	for _, w := range live {
		r.Checked++
		st := w.State
		results := c.Check(cite.Extract(w.Cites))
		sc := score.Of(score.Evidence{Results: results, Threshold: o.Threshold})
		cited := sc.Valid+sc.Broken+sc.Moved > 0
		ch := Change{ID: w.ID, Where: w.Where, Text: clip(w.Text)}
		evidence := false
		if st.LastEvidence.IsZero() || w.Created.After(st.LastEvidence) {
			// Written (again) since the last evidence.
			st.LastEvidence, evidence = w.Created, !st.LastEvidence.IsZero()
		}
		if sc.Valid > 0 && sc.Broken == 0 && sc.Moved == 0 {
			st.LastEvidence, evidence = now, true
		}
		penalty, _ := score.DecayPenalty(st.LastEvidence, now, cited, o.Review)
		conf := score.Clamp(sc.Confidence - penalty)
		ch.Confidence = conf
		reason := ""
		if len(sc.Reasons) > 0 {
			reason = sc.Reasons[0]
		} else if penalty > 0 {
			reason = "no evidence it still holds since " + st.LastEvidence.Format("2006-01-02")
		}
		switch {
		case conf < score.StaleBelow:
			if st.StaleSweeps > 0 && now.Sub(st.LastStale) >= score.ArchiveGap {
				ch.Action = Archived
				r.Archive = append(r.Archive, w.ID)
				r.Archived++
			} else {
				if st.StaleSweeps == 0 {
					st.LastStale = now
				}
				st.StaleSweeps = 1
				ch.Action = Stale
				r.Stale++
			}
			ch.Reason = reason
		case evidence:
			ch.Action, st.StaleSweeps = Refreshed, 0
		case penalty > 0:
			ch.Action, ch.Reason, st.StaleSweeps = Decaying, reason, 0
		default:
			ch.Action, st.StaleSweeps = Healthy, 0
		}
		st.Confidence, st.Validated = conf, now
		st.Status = statusOf(conf, cited)
		r.Overlays[w.ID] = st
		r.Changes = append(r.Changes, ch)
	}
	for _, l := range out {
		if l.Retire.Reason != written.Archived {
			continue // promoted or pruned: its text lives in a document
		}
		rec := l.Record
		sc := score.Of(score.Evidence{Results: c.Check(cite.Extract(cites(rec))), Threshold: o.Threshold})
		where := written.LogPath
		switch {
		case sc.Valid > 0 && sc.Broken == 0 && sc.Moved == 0:
			r.Restore = append(r.Restore, rec)
			r.Restored++
			r.Overlays[rec.ID] = store.Overlay{Confidence: sc.Confidence, Validated: now, Status: statusOf(sc.Confidence, true), LastEvidence: now}
			r.Changes = append(r.Changes, Change{ID: rec.ID, Action: Restored, Where: where, Text: clip(rec.Title),
				Confidence: sc.Confidence, Reason: "what it cites holds again"})
		case sc.Broken+sc.Moved > 0:
			reason := "archived written memory"
			if len(sc.Reasons) > 0 {
				reason += ": it " + sc.Reasons[0]
			}
			r.Changes = append(r.Changes, Change{ID: rec.ID, Action: Held, Where: where, Text: clip(rec.Title),
				Confidence: sc.Confidence, Reason: reason})
		}
	}
	return r
}

// statusOf is the overlay status of a confidence (catalog.StatusOK,
// StatusStale, or "unchecked" for a memory citing nothing checkable).
func statusOf(conf float64, cited bool) string {
	switch {
	case conf < score.StaleBelow:
		return "stale"
	case cited:
		return "ok"
	}
	return "unchecked"
}
