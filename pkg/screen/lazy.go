package screen

import "github.com/intermem/intermem/pkg/lazyre"

// lazy is a rule's pattern compiled on first use (package lazyre: the
// SessionStart hook links this package and most sessions screen nothing
// new). TestPatternsCompile compiles them all.
func lazy(expr string) *lazyre.Regexp { return lazyre.New(expr) }
