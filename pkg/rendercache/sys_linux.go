package rendercache

// The Linux system calls of a cache hit: descriptors opened O_PATH, stats
// and links read relative to them with the name handed to the kernel from
// the cache file's buffer (sys_other.go is the portable rest).

import (
	"bytes"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// resolvedTo reports whether the kernel names what fd was opened on
// (O_PATH, every link followed) real. For a path that exists, that is
// filepath.EvalSymlinks' answer: both resolve each link as they meet it,
// ".." from what is already resolved, and give a clean absolute path; the
// kernel stops at 40 links where EvalSymlinks goes on to 255, and a file
// deleted since is named with " (deleted)", but neither makes a match
// that is not one. Any mismatch (no /proc, a path too long) is checked by
// filepath.EvalSymlinks itself: this only confirms a fact with three
// system calls instead of an lstat of every component.
func resolvedTo(fd int, real []byte) bool {
	var link [32]byte
	b := append(link[:0], "/proc/self/fd/"...)
	b = strconv.AppendInt(b, int64(fd), 10)
	b = append(b, 0)
	got := heapBytes(len(real) + 1)
	cwd := unix.AT_FDCWD
	n, _, e := syscall.Syscall6(syscall.SYS_READLINKAT, uintptr(cwd), uintptr(unsafe.Pointer(&b[0])),
		uintptr(unsafe.Pointer(&got[0])), uintptr(len(got)), 0, 0)
	return e == 0 && int(n) == len(real) && bytes.Equal(got[:n], real)
}

// openPath opens path (a directory when dir: a place to stat from) with
// O_PATH: no permission needed on it, nothing read, nothing that could
// wait; links are followed as a path through it would follow them. path
// is followed by a NUL in its array (reader.field's bytes are).
func openPath(path []byte, dir bool) (int, error) {
	flags := unix.O_PATH | unix.O_CLOEXEC
	if dir {
		flags |= unix.O_DIRECTORY
	}
	cwd := unix.AT_FDCWD
	fd, _, e := syscall.Syscall6(syscall.SYS_OPENAT, uintptr(cwd), uintptr(unsafe.Pointer(unsafe.SliceData(path))),
		uintptr(flags), 0, 0, 0)
	if e != 0 {
		return -1, e
	}
	return int(fd), nil
}

// fstatat stats name relative to dirfd; name is followed by a NUL in its
// array (reader.field's bytes are), so it goes to the kernel as it is,
// with nothing allocated.
func fstatat(dirfd int, name []byte, st *syscall.Stat_t, flags int) error {
	_, _, e := syscall.Syscall6(unix.SYS_NEWFSTATAT, uintptr(dirfd), uintptr(unsafe.Pointer(unsafe.SliceData(name))),
		uintptr(unsafe.Pointer(st)), uintptr(flags), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}
