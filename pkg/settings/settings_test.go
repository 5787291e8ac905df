package settings

import (
	"strconv"
	"testing"
)

// TestNumbers: every numeric setting read by the one rule — its bounds,
// spaces around the number, junk and the default — with the values
// written out by hand.
func TestNumbers(t *testing.T) {
	threshold, budget, interval := Threshold, Budget, Interval
	big := 2147483648 // past a 32-bit int, a budget on a 64-bit one
	if strconv.IntSize == 32 {
		big = DefaultBudget
	}
	const unset = "\x00unset"
	for _, tc := range []struct {
		name  string
		read  func(Getenv) int
		value string
		want  int
	}{
		{ThresholdVar, threshold, unset, 3},
		{ThresholdVar, threshold, "", 3},
		{ThresholdVar, threshold, "5", 5},
		{ThresholdVar, threshold, " 5 ", 5},
		{ThresholdVar, threshold, "\t7\n", 7},
		{ThresholdVar, threshold, "1", 1},
		{ThresholdVar, threshold, "0", 3},
		{ThresholdVar, threshold, "-2", 3},
		{ThresholdVar, threshold, "+4", 4},
		{ThresholdVar, threshold, "three", 3},
		{ThresholdVar, threshold, "5 sessions", 3},
		{ThresholdVar, threshold, "5.0", 3},
		{ThresholdVar, threshold, "0x10", 3},
		{ThresholdVar, threshold, "1 0", 3},
		{ThresholdVar, threshold, "99999999999999999999", 3},

		{BudgetVar, budget, unset, 1200},
		{BudgetVar, budget, "", 1200},
		{BudgetVar, budget, "   ", 1200},
		{BudgetVar, budget, "800", 800},
		{BudgetVar, budget, " 800 ", 800},
		{BudgetVar, budget, "1", 1},
		{BudgetVar, budget, "0", 1200},
		{BudgetVar, budget, "-800", 1200},
		{BudgetVar, budget, "800tokens", 1200},
		{BudgetVar, budget, "1e3", 1200},
		{BudgetVar, budget, "2147483648", big},
		{BudgetVar, budget, "99999999999999999999", 1200},

		{IntervalVar, interval, unset, 10},
		{IntervalVar, interval, "", 10},
		{IntervalVar, interval, "3", 3},
		{IntervalVar, interval, " 3 ", 3},
		{IntervalVar, interval, "0", 0},
		{IntervalVar, interval, " 0\n", 0},
		{IntervalVar, interval, "-1", 10},
		{IntervalVar, interval, "ten", 10},
		{IntervalVar, interval, "3 turns", 10},
		{IntervalVar, interval, "99999999999999999999", 10},
	} {
		getenv := func(name string) string {
			if name == tc.name && tc.value != unset {
				return tc.value
			}
			return ""
		}
		if got := tc.read(getenv); got != tc.want {
			t.Errorf("%s=%q: %d, want %d", tc.name, tc.value, got, tc.want)
		}
	}
	if DefaultThreshold != 3 || DefaultBudget != 1200 || DefaultInterval != 10 {
		t.Errorf("defaults %d, %d, %d; the cases above expect 3, 1200, 10", DefaultThreshold, DefaultBudget, DefaultInterval)
	}
}

// TestOwnVariable: a setting reads its own variable alone.
func TestOwnVariable(t *testing.T) {
	read := map[string]int{}
	getenv := func(name string) string { read[name]++; return "7" }
	if Threshold(getenv) != 7 || Budget(getenv) != 7 || Interval(getenv) != 7 {
		t.Fatal("a setting does not read its variable")
	}
	if len(read) != 3 || read[ThresholdVar] != 1 || read[BudgetVar] != 1 || read[IntervalVar] != 1 {
		t.Errorf("the settings read %v, want each of their three variables once", read)
	}
}
