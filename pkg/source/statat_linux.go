package source

import (
	"strings"

	"golang.org/x/sys/unix"
)

// dirFD opens the directory at path to stat its files by name (statAt),
// or returns -1.
func dirFD(path string) int {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1
	}
	return fd
}

func closeFD(fd int) { unix.Close(fd) }

// statAt is os.Stat of the file name in the directory open as dir (a link
// followed): one name looked up instead of every directory from the root,
// no FileInfo made, and the name passed to the kernel from buf, which it
// reuses, rather than from a copy made for each file. A walk that finds a
// directory of thousands of unchanged files pays little else.
func statAt(dir int, name string, buf *[]byte) (regular bool, fp Fingerprint, err error) {
	if strings.IndexByte(name, 0) >= 0 {
		// (A name from a stored listing, read as hostile: the kernel
		// would read it only up to the NUL.)
		return false, Fingerprint{}, unix.EINVAL
	}
	*buf = append(append((*buf)[:0], name...), 0)
	var st unix.Stat_t
	for {
		err = fstatat(dir, *buf, &st)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return false, Fingerprint{}, err
	}
	fp = Fingerprint{Size: st.Size, ModTime: st.Mtim.Nano(), Inode: st.Ino, Change: st.Ctim.Nano()}
	return st.Mode&unix.S_IFMT == unix.S_IFREG, fp, nil
}
