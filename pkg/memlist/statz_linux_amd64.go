package memlist

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// fstatatz is fstatat(2) of the NUL-terminated name z relative to fd,
// without the copy of the name unix.Fstatat makes to terminate it.
func fstatatz(fd int, z []byte, st *unix.Stat_t, flags int) error {
	_, _, e := unix.Syscall6(unix.SYS_NEWFSTATAT, uintptr(fd), uintptr(unsafe.Pointer(&z[0])), uintptr(unsafe.Pointer(st)), uintptr(flags), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}
