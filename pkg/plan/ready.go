package plan

import (
	"strings"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/match"
	"github.com/intermem/intermem/pkg/score"
	"github.com/intermem/intermem/pkg/stability"
	"github.com/intermem/intermem/pkg/store"
)

// Readiness: the one decision of what a plan offers.
//
// World.Judge decides, for one memory entry, what a plan does with it.
// Build calls it for every entry of the catalog; status (its "ready"
// count, computed by Ready), "intermem context" and the SessionStart hook
// (package inject, from its cached derived records) call it too, so
// "ready for /intermem:synthesize" means one thing everywhere: the
// entries a plan without --max would number.
//
// Every reason to keep an entry out of a plan belongs here: in Judge
// when the project decides it (stability, promotion, rejection, what the
// documents already say, citations), in Intrinsic when the entry's own
// text does. A caller that filtered on its own would make the counts
// disagree again.

// Verdict is what a plan does with one entry.
type Verdict string

// The verdicts, in the order Judge tries them.
const (
	// Unstable: not yet unchanged in enough sessions.
	Unstable Verdict = "unstable"
	// IsPointer: an index line; the file it names is an entry of its own.
	IsPointer Verdict = "pointer"
	// Promoted: promoted before (the store says so, or a curated document
	// carries its marker and says it).
	Promoted Verdict = "promoted"
	// Rejected: the user rejected it (a changed text is a new entry).
	Rejected Verdict = "rejected"
	// Withheld: its own text keeps it out of every plan (Intrinsic).
	Withheld Verdict = "withheld"
	// PruneOnly: a file Claude Code loads every session already says it;
	// it is offered for pruning from memory, never for promotion.
	PruneOnly Verdict = "prune"
	// Duplicate: a curated document Claude Code does not load says it.
	// Pruning it would move knowledge out of what sessions load, so it
	// is left alone.
	Duplicate Verdict = "duplicate"
	// Stale: its citations make it stale; listed as blocked.
	Stale Verdict = "stale"
	// Documented: a solution document of the project already says it
	// (Documents); it is offered for pruning from memory, never for
	// promotion. Judged after the citations: a stale entry is blocked, a
	// secret kept private, as if no document said it.
	Documented Verdict = "documented"
	// Private: it holds a secret, so it is kept in memory, listed apart
	// (numbered after the candidates, for apply --promote-redacted) and
	// never approved by --approve.
	Private Verdict = "private"
	// Offer: a candidate for promotion.
	Offer Verdict = "offer"
)

// Ready reports whether a plan numbers entries with this verdict.
func (v Verdict) Ready() bool { return v == Offer || v == PruneOnly || v == Documented }

// Subject is what readiness reads of one memory entry. SubjectOf makes
// it from the entry; the SessionStart hook keeps one per entry in its
// derived-data cache, so a session start does not parse memory again.
type Subject struct {
	ID       string
	Kind     automem.Kind
	Sessions int // distinct sessions the entry was seen in (the store)
	// Key is the exact-dedup key (match.Key) of the entry as it would be
	// promoted (Block); DescKey that of a one-memory file's description.
	Key, DescKey uint64
	HasDesc      bool
	// Withhold says why the entry's own text keeps it out of every plan
	// (Intrinsic); "" when nothing does.
	Withhold string
	// Secret is automem.Entry.Secret: pruning the entry would remove a
	// secret from memory.
	Secret bool
	// Deliberate marks a memory written through intermem (package
	// written): stable from the moment it is written. Stability guards
	// against auto-memory's churn (the model rewrites its notes as it
	// works); a written memory cannot churn — its id is its type, title
	// and content, so a changed one is another memory — and its writer
	// chose to record it, so it waits for no sessions.
	Deliberate bool
}

// SubjectOf derives an entry's Subject (Sessions left zero).
func SubjectOf(e automem.Entry) Subject {
	s := Subject{ID: e.ID, Kind: e.Kind, Key: match.Key(Block(e)), Withhold: Intrinsic(e), Secret: e.Secret}
	if e.Kind == automem.Memory && strings.TrimSpace(e.Description) != "" {
		s.DescKey, s.HasDesc = match.Key(e.Description), true
	}
	return s
}

// Intrinsic says why an entry's own text keeps it out of every plan, or
// "" when nothing does: today, that it is time-bound (TimeBound). It reads
// nothing but the entry, so the SessionStart hook computes it once per
// version of a memory file. A new reason of this kind goes here.
func Intrinsic(e automem.Entry) string {
	if why, ok := TimeBound(e); ok {
		return why
	}
	return ""
}

// World is what an entry is judged against: the store's records and the
// documents.
type World struct {
	Threshold int             // sessions that make an entry stable
	Promoted  map[string]bool // ids promoted before (store)
	Rejected  map[string]bool // ids the user rejected (store)
	// Marked holds the ids marked in a curated document; a marked entry
	// is promoted only when a curated document says it too (saysIt) or
	// the store recorded its promotion (Promoted).
	Marked map[string]bool
	// Loaded maps the exact-dedup key of every statement Claude Code
	// loads each session (loaded.Said) to the file saying it.
	Loaded map[uint64]string
	// Curated holds the keys of every statement of the curated documents
	// (CLAUDE.md, AGENTS.md, docs/intermem/), loaded or not.
	Curated map[uint64]bool
	// Documented maps the id of an entry a solution document already says
	// to that document's path (Documents.Covering). A Documented verdict
	// is ready like the Offer it replaces, so a caller that cannot afford
	// to fill it (the SessionStart hook) still counts the same.
	Documented map[string]string
}

// Decision is Judge's answer for one entry.
type Decision struct {
	Verdict Verdict
	// Reason is why an entry is Withheld, or the name of the file that
	// already says a PruneOnly or Documented one.
	Reason string
	// Score is the citation evidence, set for Stale and Offer.
	Score score.Score
}

// Evidence is what an entry's citations say.
type Evidence struct {
	Score score.Score
	// Corrected is set when a cited path was renamed (in git history) and
	// the entry is offered in the wording true now; CorrectedKey is that
	// wording's exact-dedup key.
	Corrected    bool
	CorrectedKey uint64
}

// Judge decides what a plan does with the entry s. evidence returns what
// its citations say; it is called only when nothing cheaper decided,
// since checking citations is the costly part (the plan checks them on
// disk and in git history; the SessionStart hook reads the last recorded
// verdict).
func (w *World) Judge(s *Subject, evidence func() Evidence) Decision {
	if d, decided := w.Before(s); decided {
		return d
	}
	return w.After(s, evidence())
}

// Before is Judge up to the citations: decided is false when only the
// entry's Evidence can decide, which After then does. Split so that a
// caller judging many entries (the SessionStart hook) needs no closure
// per entry.
func (w *World) Before(s *Subject) (d Decision, decided bool) {
	switch {
	case !s.Deliberate && stability.Of(&store.Entry{Sessions: s.Sessions}, w.Threshold) != stability.Stable:
		return Decision{Verdict: Unstable}, true
	case s.Kind == automem.Pointer:
		return Decision{Verdict: IsPointer}, true
	case w.Promoted[s.ID] || w.Marked[s.ID] && w.saysIt(s):
		return Decision{Verdict: Promoted}, true
	case w.Rejected[s.ID]:
		return Decision{Verdict: Rejected}, true
	case s.Withhold != "":
		return Decision{Verdict: Withheld, Reason: s.Withhold}, true
	}
	return w.said(s, s.Key, s.HasDesc && (w.Curated[s.DescKey] || w.loads(s.DescKey)))
}

// After finishes Judge with the entry's citation evidence.
func (w *World) After(s *Subject, ev Evidence) Decision {
	if ev.Corrected {
		// The corrected wording is what would be promoted.
		if d, ok := w.said(s, ev.CorrectedKey, false); ok {
			return d
		}
	}
	switch {
	case ev.Score.Stale:
		return Decision{Verdict: Stale, Score: ev.Score}
	case s.Secret:
		return Decision{Verdict: Private, Score: ev.Score}
	}
	if doc, ok := w.Documented[s.ID]; ok {
		return Decision{Verdict: Documented, Reason: doc, Score: ev.Score}
	}
	return Decision{Verdict: Offer, Score: ev.Score}
}

// said judges text already written somewhere: a whole entry Claude Code
// already loads is offered for pruning; one a curated document says (or
// whose description alone is said: a one-memory file still holds its
// body) is skipped.
func (w *World) said(s *Subject, key uint64, descSaid bool) (Decision, bool) {
	if name, ok := w.Loaded[key]; ok {
		if s.Secret {
			// A secret is never pruned (the backup would hold the only
			// usable copy): already loaded, it is left alone.
			return Decision{Verdict: Duplicate}, true
		}
		return Decision{Verdict: PruneOnly, Reason: name}, true
	}
	if w.Curated[key] || descSaid {
		return Decision{Verdict: Duplicate}, true
	}
	return Decision{}, false
}

// saysIt reports whether a curated document says the entry s: what makes
// a marker carrying its id, with no promotion recorded (the store rebuilt,
// the marker copied by hand), its promotion. A marker typed by hand on
// other text does not make an entry promoted that no document says.
func (w *World) saysIt(s *Subject) bool {
	return w.Curated[s.Key] || s.HasDesc && w.Curated[s.DescKey]
}

func (w *World) loads(k uint64) bool {
	_, ok := w.Loaded[k]
	return ok
}

// Recorded is the citation evidence the SessionStart hook has: the last
// confidence a plan or validate recorded for the entry (store.Fact), or
// none (negative), which counts as unchecked.
func Recorded(confidence float64) Evidence {
	if confidence < 0 {
		return Evidence{Score: score.Score{Confidence: score.Base}}
	}
	return Evidence{Score: score.Score{Confidence: confidence, Stale: confidence < score.StaleBelow}}
}
