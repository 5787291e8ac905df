package source

import (
	"io/fs"
	"time"

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
// followed), whose path is real: one name looked up instead of every
// directory from the root, and no FileInfo made. A walk that finds a
// directory of thousands of unchanged files pays little else.
func statAt(dir int, name, real string) (regular bool, f File, err error) {
	var st unix.Stat_t
	for {
		err = unix.Fstatat(dir, name, &st, 0)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return false, File{}, &fs.PathError{Op: "stat", Path: real, Err: err}
	}
	fp := Fingerprint{Size: st.Size, ModTime: st.Mtim.Nano(), Inode: st.Ino, Change: st.Ctim.Nano()}
	return st.Mode&unix.S_IFMT == unix.S_IFREG, File{Size: fp.Size, ModTime: time.Unix(0, fp.ModTime), FP: fp, real: real}, nil
}
