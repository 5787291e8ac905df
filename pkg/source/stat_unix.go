//go:build linux || darwin || freebsd || netbsd || openbsd

package source

import (
	"io/fs"
	"syscall"
)

// sysStat returns the inode and status-change time of fi, when the system
// reports them.
func sysStat(fi fs.FileInfo) (uint64, int64) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0
	}
	return uint64(st.Ino), ctime(st)
}
