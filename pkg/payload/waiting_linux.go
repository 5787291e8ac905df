package payload

import (
	"io"
	"syscall"

	"golang.org/x/sys/unix"
)

// fileWaiting is how many bytes r's file holds that a read would return
// at once (FIONREAD, TIOCINQ by its Linux name: what a pipe, a socket or
// a terminal holds, what is left of a regular file); 0 when r is no file
// or the kernel does not say. Asking costs one ioctl, made only once the
// first read has left the value incomplete.
func fileWaiting(r io.Reader) int {
	sc, ok := r.(syscall.Conn)
	if !ok {
		return 0
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0
	}
	n, ierr := 0, error(nil)
	if err := rc.Control(func(fd uintptr) {
		n, ierr = unix.IoctlGetInt(int(fd), unix.TIOCINQ)
	}); err != nil || ierr != nil || n < 0 {
		return 0
	}
	return n
}
