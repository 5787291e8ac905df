//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package store

import (
	"os"
	"syscall"
)

// unlockFile releases the flock bbolt took on f. Closing f alone would not
// when bbolt had mapped the file: the mapping holds the open file, and
// with it the lock, until it is unmapped.
func unlockFile(f *os.File) {
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}
