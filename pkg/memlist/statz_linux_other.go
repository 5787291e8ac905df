//go:build linux && !amd64

package memlist

import "golang.org/x/sys/unix"

// fstatatz is fstatat(2) of the NUL-terminated name z relative to fd.
func fstatatz(fd int, z []byte, st *unix.Stat_t, flags int) error {
	return unix.Fstatat(fd, string(z[:len(z)-1]), st, flags)
}
