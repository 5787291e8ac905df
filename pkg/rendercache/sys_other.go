//go:build !linux

package rendercache

// The portable rest of sys_linux.go and listing_linux.go: no descriptor
// is opened to stat from (every stat is checked by its path, which
// reader.group already does for a directory that cannot be opened), a
// resolution is always checked by filepath.EvalSymlinks, and a listing is
// os.ReadDir's. Slower than Linux's, and exactly as strict.

import (
	"errors"
	"os"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// errNoPath is openPath's answer where O_PATH is not: the caller checks
// by path instead.
var errNoPath = errors.New("rendercache: no O_PATH on this system")

// openPath opens nothing here (see errNoPath).
func openPath(path []byte, dir bool) (int, error) { return -1, errNoPath }

// resolvedTo is never reached: openPath gives no descriptor.
func resolvedTo(fd int, real []byte) bool { return false }

// fstatat stats name, an absolute path here (openPath gives no directory
// to stat from), following a link unless flags say not to.
func fstatat(dirfd int, name []byte, st *syscall.Stat_t, flags int) error {
	if dirfd != unix.AT_FDCWD || len(name) == 0 || name[0] != '/' {
		return syscall.EINVAL
	}
	if flags&unix.AT_SYMLINK_NOFOLLOW != 0 {
		return syscall.Lstat(string(name), st)
	}
	return syscall.Stat(string(name), st)
}

// listing is listingVal(os.ReadDir(path)), the directory opened without
// blocking and only if it is one: a path a hostile cache names may be a
// FIFO, whose plain open would wait for a writer.
func listing(path string) string {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return listingVal(nil, &os.PathError{Op: "open", Path: path, Err: err})
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	ents, err := f.ReadDir(-1)
	slices.SortFunc(ents, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return listingVal(ents, err)
}
