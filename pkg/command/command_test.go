package command

import (
	"slices"
	"strings"
	"testing"
)

// TestSubcommandsInNameOrder: help lists the table as it is, and lookup
// takes the first command of a name.
func TestSubcommandsInNameOrder(t *testing.T) {
	names := make([]string, len(subcommands))
	for i, sc := range subcommands {
		names[i] = sc.name
		if sc.run == nil || sc.summary == "" {
			t.Errorf("command %q has no run or summary", sc.name)
		}
		if got, ok := lookup(sc.name); !ok || got.name != sc.name {
			t.Errorf("lookup(%q) = %q, %v", sc.name, got.name, ok)
		}
	}
	if !slices.IsSorted(names) || len(slices.Compact(slices.Clone(names))) != len(names) {
		t.Errorf("commands not in name order or repeated: %s", strings.Join(names, " "))
	}
	if _, ok := lookup("nosuch"); ok {
		t.Error("lookup found a command that is not there")
	}
}
