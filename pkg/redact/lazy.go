package redact

import "github.com/intermem/intermem/pkg/lazyre"

// lazy is a pattern compiled on first use (package lazyre: every hook
// links this package, and most runs redact nothing new).
func lazy(expr string) *lazyre.Regexp { return lazyre.New(expr) }
