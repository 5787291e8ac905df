package score

import (
	"math"
	"strconv"
	"time"
)

// Decay model for promoted facts.
//
// A fact's decay clock starts at its last evidence: its promotion, a
// re-observation in auto-memory (Claude Code wrote it down again), or a
// validation in which its citations held. Without evidence it loses
// DecayStep of confidence per started DecayPeriod once its grace period
// has passed:
//
//   - a cited fact (one with a citation that can be checked) has a grace of
//     CitedGrace (14 days): but a cited fact whose citations hold is
//     refreshed by every sweep, so in practice only facts whose citations
//     cannot be checked here decay this fast;
//   - an uncited fact cannot be checked at all, and promotion itself
//     pruned it from auto-memory, so "not re-observed" is what promotion
//     looks like, not evidence against it. It gets a review period
//     (DefaultReview, 90 days; INTERMEM_REVIEW_DAYS) before it starts to
//     decay. From 0.5 it crosses StaleBelow after three started periods:
//     about four months without any confirmation (from 0.4, a fact citing
//     only paths the project never had, after two).
//
// A stale fact is archived (package sweep) only after two consecutive
// stale sweeps at least ArchiveGap apart, so one bad moment (a file
// briefly moved during a refactor) never retires a fact.
const (
	CitedGrace    = 14 * 24 * time.Hour
	DefaultReview = 90 * 24 * time.Hour
	DecayPeriod   = 14 * 24 * time.Hour
	DecayStep     = 0.1
	ArchiveGap    = 24 * time.Hour
)

// Review reads INTERMEM_REVIEW_DAYS (a positive number of days), with a
// default of DefaultReview.
func Review(getenv func(string) string) time.Duration {
	if v := getenv("INTERMEM_REVIEW_DAYS"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			return time.Duration(n) * 24 * time.Hour
		}
	}
	return DefaultReview
}

// DecayPenalty returns how much confidence a fact has lost since its last
// evidence, and the number of started periods.
func DecayPenalty(last, now time.Time, cited bool, review time.Duration) (float64, int) {
	grace := review
	if cited {
		grace = CitedGrace
	}
	age := now.Sub(last)
	if age <= grace {
		return 0, 0
	}
	periods := int(math.Ceil(float64(age-grace) / float64(DecayPeriod)))
	return DecayStep * float64(periods), periods
}
