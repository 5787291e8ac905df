package rendercache

import (
	"bytes"
	"encoding/binary"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"github.com/intermem/intermem/pkg/memlist"
	"golang.org/x/sys/unix"
)

// listing is listingVal(os.ReadDir(path)) without an os.File: the
// directory opened as openDir opens it, its entries read with getdents
// into one buffer, their types taken as package os takes them (the
// entry's type, else an lstat of it; an entry gone by then is left out,
// as os leaves it out), "!" for any error. What a session start checks of
// a directory listed (docs/intermem, the rules directories) costs a few
// system calls and no os.File, whose first use starts the runtime's
// network poller and allocates a dirent buffer of its own.
func listing(path string) string {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return "!"
	}
	defer syscall.Close(fd)
	buf := heapBytes(4 << 10)
	n := 0
	for {
		if len(buf)-n < 1<<10 {
			buf = slices.Grow(buf[:n], len(buf))[:2*len(buf)]
		}
		m, err := syscall.Getdents(fd, buf[n:])
		if err != nil {
			return "!"
		}
		if m <= 0 {
			break
		}
		n += m
	}
	// Each entry: inode (8 bytes), offset (8), record length (2), type
	// (1), the name, NUL-terminated.
	type entry struct {
		name string
		typ  fs.FileMode
	}
	var ents []entry
	for off := 0; off+19 <= n; {
		reclen := int(binary.NativeEndian.Uint16(buf[off+16:]))
		if reclen < 19 || off+reclen > n {
			return "!"
		}
		rec := buf[off : off+reclen]
		off += reclen
		i := bytes.IndexByte(rec[19:], 0)
		if i < 0 {
			return "!" // the kernel ends every name with a NUL
		}
		name := rec[19 : 19+i]
		if len(name) == 0 || string(name) == "." || string(name) == ".." {
			continue
		}
		typ, ok := direntType(rec[18])
		if !ok {
			var st syscall.Stat_t
			if err := fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				if err == syscall.ENOENT {
					continue // gone since: os leaves it out
				}
				return "!"
			}
			typ = memlist.ModeOf(st.Mode).Type()
		}
		ents = append(ents, entry{unsafe.String(&name[0], len(name)), typ})
	}
	slices.SortFunc(ents, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	// listingVal's hash: FNV-1a of name, NUL, the type in decimal, NUL.
	const offset64, prime64 = 14695981039346656037, 1099511628211
	h := uint64(offset64)
	var num [12]byte
	add := func(b []byte) {
		for _, c := range b {
			h ^= uint64(c)
			h *= prime64
		}
	}
	for _, e := range ents {
		add(unsafe.Slice(unsafe.StringData(e.name), len(e.name)))
		add([]byte{0})
		add(strconv.AppendUint(num[:0], uint64(uint32(e.typ)), 10))
		add([]byte{0})
	}
	out := strconv.AppendInt(make([]byte, 0, 24), int64(len(ents)), 10)
	out = append(out, ' ')
	return string(strconv.AppendUint(out, h, 16))
}

// direntType is the type of a directory entry as package os gives it;
// false when the entry does not say (DT_UNKNOWN).
func direntType(t byte) (fs.FileMode, bool) {
	switch t {
	case syscall.DT_BLK:
		return fs.ModeDevice, true
	case syscall.DT_CHR:
		return fs.ModeDevice | fs.ModeCharDevice, true
	case syscall.DT_DIR:
		return fs.ModeDir, true
	case syscall.DT_FIFO:
		return fs.ModeNamedPipe, true
	case syscall.DT_LNK:
		return fs.ModeSymlink, true
	case syscall.DT_REG:
		return 0, true
	case syscall.DT_SOCK:
		return fs.ModeSocket, true
	}
	return 0, false
}
