// Package score turns evidence about a memory entry into a confidence in
// [0, 1], and says when an entry is stale.
//
// The weights live here, in one place, so every consumer (plan, validate,
// injection, sweep) agrees on them:
//
//   - Start at 0.5: an entry Claude Code wrote down is probably right, but
//     nothing has confirmed it.
//   - A valid citation adds 0.3 (once, however many): the entry's claims are
//     anchored in files that exist.
//   - Each broken citation takes 0.4: one broken reference alone (0.5−0.4 =
//     0.1) makes an entry stale, because a fact about a file that no longer
//     exists is worse than no fact; a valid one beside it (0.5+0.3−0.4 = 0.4)
//     leaves it usable but flagged.
//   - Each moved citation takes 0.2: the file still exists under a new name
//     (git recorded the rename), so the fact likely holds but its text is
//     out of date; alone it leaves 0.3, just above the stale line, which is
//     right — it should be fixed, not thrown away.
//   - A citation the project cannot check because it names a path the
//     project never had (templates/invoice.html where there is no
//     templates/, now or in git history) takes 0.1, once: it is no evidence
//     that the entry is wrong (the memory may be about another repository),
//     so alone it leaves 0.4, never stale; but nothing anchors it either,
//     so it ranks below a verified entry (0.8) and below an entry that
//     cites nothing checkable (0.5), and the reason is shown.
//   - Long stability adds 0.1: an entry unchanged across at least twice the
//     stability threshold of sessions has survived many chances to be
//     corrected.
//
// The result is clamped to [0, 1]; below StaleBelow an entry is stale:
// never promoted, flagged when already promoted.
package score

import (
	"fmt"
	"strings"

	"github.com/intermem/intermem/pkg/cite"
)

// The weights. See the package comment for why each has its value.
const (
	Base          = 0.5
	ValidCitation = 0.3
	BrokenEach    = 0.4
	MovedEach     = 0.2
	NotInProject  = 0.1
	LongStable    = 0.1
	StaleBelow    = 0.3
)

// Evidence summarises what is known about one entry.
type Evidence struct {
	Results   []cite.Result
	Sessions  int // distinct sessions the entry was seen in
	Threshold int // sessions that make an entry stable
}

// Score is a confidence with the reasons behind it.
type Score struct {
	Confidence float64
	Stale      bool
	Valid      int
	Broken     int
	Moved      int
	Unchecked  int
	// NotInProject counts the Unchecked citations of paths the project
	// never had (cite.Result.NotInProject).
	NotInProject int
	// Reasons explain a low score for a person, e.g. "cites src/old.py,
	// which no longer exists", "cites templates/invoice.html: not in this
	// project".
	Reasons []string
}

// Of scores an entry.
func Of(ev Evidence) Score {
	s := Score{Confidence: Base}
	for _, r := range ev.Results {
		switch r.Status {
		case cite.Valid:
			s.Valid++
		case cite.Broken:
			s.Broken++
			s.Reasons = append(s.Reasons, fmt.Sprintf("cites %s, which %s", r.Path, brokenDetail(r)))
		case cite.Moved:
			s.Moved++
			s.Reasons = append(s.Reasons, fmt.Sprintf("cites %s, which moved to %s", r.Path, r.MovedTo))
		default:
			s.Unchecked++
			if r.NotInProject {
				s.NotInProject++
				s.Reasons = append(s.Reasons, fmt.Sprintf("cites %s: not in this project", r.Path))
			}
		}
	}
	if s.Valid > 0 {
		s.Confidence += ValidCitation
	}
	if s.NotInProject > 0 {
		s.Confidence -= NotInProject
	}
	s.Confidence -= BrokenEach * float64(s.Broken)
	s.Confidence -= MovedEach * float64(s.Moved)
	if ev.Threshold > 0 && ev.Sessions >= 2*ev.Threshold {
		s.Confidence += LongStable
	}
	s.Confidence = Clamp(s.Confidence)
	s.Stale = s.Confidence < StaleBelow
	return s
}

// brokenDetail says what is wrong with a broken citation. "No longer
// exists" claims the path existed: only git history can say so (package
// cite notes a deletion in the detail); a path that is simply not there
// "does not exist".
func brokenDetail(r cite.Result) string {
	d := strings.TrimSpace(r.Detail)
	switch {
	case strings.HasPrefix(d, "no such") && strings.Contains(d, "in git history"):
		return "no longer exists"
	case d == "" || strings.HasPrefix(d, "no such"):
		return "does not exist"
	default:
		return "is wrong: " + d
	}
}

// Clamp limits c to [0, 1] and rounds it to two decimals, so stored and
// printed confidences are stable across platforms.
func Clamp(c float64) float64 {
	if c < 0 {
		c = 0
	}
	if c > 1 {
		c = 1
	}
	return float64(int(c*100+0.5)) / 100
}
