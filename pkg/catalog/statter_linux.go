package catalog

import (
	"io/fs"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/intermem/intermem/pkg/memlist"
	"github.com/intermem/intermem/pkg/source"
)

// statter stats the paths a witness covers: those below its directory by
// name relative to it (one lookup from the open directory instead of
// every directory from the root) into a stat buffer (no os.FileInfo
// made); any other path by its whole name. A Whole source's witness
// stats every path its scan touched at every search.
type statter struct {
	prefix string // the directory and a separator
	fd     int    // the directory, open; -1 when it could not be opened
}

func openStatter(dir string) *statter {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		fd = -1
	}
	return &statter{prefix: dir + "/", fd: fd}
}

func (s *statter) close() {
	if s.fd >= 0 {
		unix.Close(s.fd)
	}
}

// stat is os.Lstat (os.Stat when follow) of abs: its mode as os reports
// it and its fingerprint; false when it cannot be stat'd.
func (s *statter) stat(abs string, follow bool) (fs.FileMode, source.Fingerprint, bool) {
	flags := unix.AT_SYMLINK_NOFOLLOW
	if follow {
		flags = 0
	}
	dir, name := unix.AT_FDCWD, abs
	if s.fd >= 0 && strings.HasPrefix(abs, s.prefix) {
		dir, name = s.fd, abs[len(s.prefix):]
	}
	var st unix.Stat_t
	var err error
	for {
		err = unix.Fstatat(dir, name, &st, flags)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return 0, source.Fingerprint{}, false
	}
	fp := source.Fingerprint{Size: st.Size, ModTime: st.Mtim.Nano(), Inode: st.Ino, Change: st.Ctim.Nano()}
	return memlist.ModeOf(st.Mode), fp, true
}
