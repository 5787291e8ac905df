//go:build linux && (amd64 || arm64)

package source

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// fstatat stats the NUL-terminated name in the directory open as dir,
// following a link: unix.Fstatat without its copy of the name.
func fstatat(dir int, name []byte, st *unix.Stat_t) error {
	_, _, e := syscall.Syscall6(sysFstatat, uintptr(dir), uintptr(unsafe.Pointer(&name[0])), uintptr(unsafe.Pointer(st)), 0, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}
