//go:build darwin || freebsd || netbsd || openbsd

package command

import "golang.org/x/sys/unix"

// isTerminal reports whether fd is a terminal (not merely a character
// device such as /dev/null).
func isTerminal(fd uintptr) bool {
	_, err := unix.IoctlGetTermios(int(fd), unix.TIOCGETA)
	return err == nil
}
