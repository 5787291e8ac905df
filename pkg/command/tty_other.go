//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd

package command

// isTerminal reports false where intermem cannot tell: commands then take
// their flags instead of asking.
func isTerminal(fd uintptr) bool { return false }
