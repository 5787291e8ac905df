// Package settings reads the environment variables the hooks depend on,
// each in one place: the full hooks (inject, snapshot, continuity,
// stability) and the hook front (package hookfront) must read them
// alike, since the front decides from them whether a turn is quiet or a
// cached rendering still stands. It links nothing but the standard
// library's smallest packages.
package settings

import (
	"strconv"
	"strings"
)

// Getenv reads one variable (cli.Env.Get).
type Getenv func(string) string

// ThresholdVar names the number of distinct sessions that make an entry
// stable.
const ThresholdVar = "INTERMEM_STABLE_SESSIONS"

// DefaultThreshold is the number of distinct sessions that make an entry
// stable.
const DefaultThreshold = 3

// Threshold reads ThresholdVar (a positive integer) with a default of
// DefaultThreshold.
func Threshold(getenv Getenv) int { return number(getenv, ThresholdVar, 1, DefaultThreshold) }

// BudgetVar names the variable holding SessionStart's token budget.
const BudgetVar = "INTERMEM_TOKEN_BUDGET"

// DefaultBudget is the token budget when BudgetVar is unset.
const DefaultBudget = 1200

// Budget reads BudgetVar (a positive integer), defaulting to
// DefaultBudget.
func Budget(getenv Getenv) int { return number(getenv, BudgetVar, 1, DefaultBudget) }

// IntervalVar names the variable holding the checkpoint interval in turns.
const IntervalVar = "INTERMEM_CHECKPOINT_INTERVAL"

// DefaultInterval is the checkpoint interval when IntervalVar is unset.
const DefaultInterval = 10

// Interval reads IntervalVar: a non-negative integer, 0 switching hook
// checkpoints off; anything else is the default.
func Interval(getenv Getenv) int { return number(getenv, IntervalVar, 0, DefaultInterval) }

// number is the one rule for a numeric setting: the variable name holds a
// decimal integer (strconv.Atoi: an optional sign, no spaces inside, no
// other base) of at least least, spaces around it ignored; unset, empty,
// junk, too large for an int or below least, it is def. The hook front
// and the full hooks read every setting through it, so they agree on the
// render cache's key (Budget and Threshold are in it) and on the turn
// that takes a checkpoint.
func number(getenv Getenv, name string, least, def int) int {
	v := strings.TrimSpace(getenv(name))
	if v == "" {
		return def // what Atoi's error would give, without making the error
	}
	if n, err := strconv.Atoi(v); err == nil && n >= least {
		return n
	}
	return def
}

// ModeVar names the variable that selects meta mode ("meta").
const ModeVar = "INTERMEM_MODE"

// Meta reports whether the session is in meta mode: ModeVar is "meta",
// or, when it is unset, the mode configured returns ("mode" in
// .intermem/config.json, read only then).
func Meta(getenv Getenv, configured func() string) bool {
	if v := strings.TrimSpace(getenv(ModeVar)); v != "" {
		return strings.EqualFold(v, "meta")
	}
	return strings.EqualFold(configured(), "meta")
}
