//go:build linux

package confine

import (
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// plainState reports whether the state directory dir is plainly as
// CheckState requires — absent, or a real directory of this user's whose
// every entry is a real file or directory of this user's — read with one
// descriptor: the directory opened without following a link, its entries
// read into one buffer and each stat'ed relative to it (no os.File, no
// fs.FileInfo, the user id asked once). False means CheckState's own
// check decides (and names what is wrong): anything this does not plainly
// accept, an error included, is judged there.
func plainState(dir string) bool {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err == unix.ENOENT {
		return true
	}
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	euid := uint32(unix.Geteuid())
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR || st.Uid != euid {
		return false
	}
	buf := direntBuf()
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return false
		}
		if n == 0 {
			return true
		}
		for b := buf[:n]; len(b) >= 19; {
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < 19 || reclen > len(b) {
				return false
			}
			name := b[19:reclen]
			b = b[reclen:]
			for i, c := range name {
				if c == 0 {
					name = name[:i]
					break
				}
			}
			if s := string(name); s != "." && s != ".." {
				switch err := unix.Fstatat(fd, s, &st, unix.AT_SYMLINK_NOFOLLOW); {
				case err == unix.ENOENT:
					// Removed since the listing (a spool ingest, a rotation).
				case err != nil:
					return false
				case st.Mode&unix.S_IFMT != unix.S_IFREG && st.Mode&unix.S_IFMT != unix.S_IFDIR, st.Uid != euid:
					return false
				}
			}
		}
	}
}

// direntBuf is plainState's getdents buffer (a dozen entries of the state
// directory's names at a time), on the heap — returned by a function not
// inlined, it escapes: half a kilobyte more on the stack of the goroutine
// that checks, a hook's main a few kilobytes deep here, would make its
// stack grow, a copy into fresh pages that costs more than this
// allocation (of a size the hooks allocate anyway: reading the payload
// starts with one).
//
//go:noinline
func direntBuf() []byte { return make([]byte, 512) }
