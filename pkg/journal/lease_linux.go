//go:build linux

package journal

import (
	"os"
	"syscall"
)

// noWriters reports whether no process has f's file open for writing: the
// kernel grants a read lease only then (fcntl(2), F_SETLEASE), and the
// lease is released at once. ok is false where leases are unavailable
// (disabled, or a file system without them). Lease-break signals are
// SIGIO, which a Go program ignores unless it asks for them.
func noWriters(f *os.File) (none, ok bool) {
	fd := f.Fd()
	_, _, errno := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_SETLEASE, syscall.F_RDLCK)
	switch errno {
	case 0:
		_, _, _ = syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_SETLEASE, syscall.F_UNLCK)
		return true, true
	case syscall.EAGAIN:
		return false, true
	}
	return false, false
}
