//go:build linux && !amd64 && !arm64

package source

import "golang.org/x/sys/unix"

// fstatat stats the NUL-terminated name in the directory open as dir,
// following a link.
func fstatat(dir int, name []byte, st *unix.Stat_t) error {
	return unix.Fstatat(dir, string(name[:len(name)-1]), st, 0)
}
