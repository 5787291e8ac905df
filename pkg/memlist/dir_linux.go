//go:build linux

package memlist

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Dir reads a memory directory a bounded number of entries at a
// time, resuming where an earlier process stopped: on Linux, getdents64
// gives each entry the offset (d_off) of the entry after it, and lseek to
// that offset on a fresh descriptor continues from there. The offset is
// the filesystem's directory cookie (a hash on ext4, an index on btrfs
// and XFS, a stable id on tmpfs since 6.6), valid for as long as the
// directory exists; the names a resumed read returns are those a single
// read would have returned while no entry is added, removed or renamed
// (sweep.go says what happens when one is).
type Dir struct {
	fd  int
	buf []byte
	// fps holds the fingerprints of the files listed (file), each File's
	// FP a substring of it: one buffer for a listing's fingerprints, not
	// an allocation each (a Builder never changes what it has written).
	fps strings.Builder
}

// dirBuf is the getdents buffer: about 700 entries of memory-file names.
const dirBuf = 32 << 10

func OpenDir(dir string) (*Dir, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	return &Dir{fd: fd}, nil
}

func (d *Dir) Close() error { return unix.Close(d.fd) }

// fp is the directory's own fingerprint: inode, modification and change
// times. Adding, removing or renaming an entry sets both times (POSIX
// link, unlink and rename); only the change time cannot be set back.
func (d *Dir) FP() (string, error) {
	var st unix.Stat_t
	if err := unix.Fstat(d.fd, &st); err != nil {
		return "", err
	}
	var buf [64]byte
	b := strconv.AppendUint(buf[:0], st.Ino, 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, st.Mtim.Nano(), 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, st.Ctim.Nano(), 10)
	return string(b), nil
}

// Dirent is one directory entry: its name, its type (fs.ModeType bits,
// or ModeUnknown), and the cookie that resumes a read after it.
type Dirent struct {
	Name string
	Type fs.FileMode
	Next int64
}

// ModeUnknown marks an entry whose type the filesystem did not give.
const ModeUnknown = fs.ModeIrregular

// read returns up to max entries from cookie on (0: the start), the
// cookie after the last one returned, and whether the directory's end was
// reached. "." and ".." are not returned but count.
func (d *Dir) Read(cookie int64, max int) (ents []Dirent, next int64, eof bool, err error) {
	if _, err := unix.Seek(d.fd, cookie, 0); err != nil {
		return nil, cookie, false, fmt.Errorf("seek directory: %w", err)
	}
	if d.buf == nil {
		d.buf = make([]byte, dirBuf)
	}
	next = cookie
	for n := 0; n < max; {
		m, err := unix.Getdents(d.fd, d.buf)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return ents, next, false, fmt.Errorf("read directory: %w", err)
		}
		if m == 0 {
			return ents, next, true, nil
		}
		b := d.buf[:m]
		ents = slices.Grow(ents, min(records(b), max-n))
		d.fps.Grow(min(records(b), max-n) * 48) // a fingerprint is about 45 bytes
		for len(b) >= 19 {
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < 19 || reclen > len(b) {
				return ents, next, false, errors.New("read directory: malformed entry")
			}
			off := int64(binary.NativeEndian.Uint64(b[8:16]))
			typ := b[18]
			name := b[19:reclen]
			for i, c := range name {
				if c == 0 {
					name = name[:i]
					break
				}
			}
			b = b[reclen:]
			next = off
			n++
			if s := string(name); s != "." && s != ".." {
				ents = append(ents, Dirent{Name: s, Type: direntType(typ), Next: off})
			}
			if n >= max {
				// What getdents returned beyond this entry is read again
				// from its cookie next time.
				return ents, next, false, nil
			}
		}
	}
	return ents, next, false, nil
}

// records counts the entries getdents returned in b, to size the slice
// they go to once.
func records(b []byte) int {
	n := 0
	for len(b) >= 19 {
		reclen := int(binary.NativeEndian.Uint16(b[16:18]))
		if reclen < 19 || reclen > len(b) {
			break
		}
		b = b[reclen:]
		n++
	}
	return n
}

func direntType(t uint8) fs.FileMode {
	switch t {
	case unix.DT_REG:
		return 0
	case unix.DT_LNK:
		return fs.ModeSymlink
	case unix.DT_DIR:
		return fs.ModeDir
	case unix.DT_FIFO:
		return fs.ModeNamedPipe
	case unix.DT_SOCK:
		return fs.ModeSocket
	case unix.DT_CHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.DT_BLK:
		return fs.ModeDevice
	}
	return ModeUnknown
}

// Stat is the lstat of name (relative to the directory, slash
// separated), or its stat to follow a link.
func (d *Dir) Stat(name string, follow bool) (fs.FileInfo, error) {
	var st unix.Stat_t
	if err := d.stat(name, follow, &st); err != nil {
		return nil, err
	}
	return statInfo{name: name, st: st}, nil
}

func (d *Dir) stat(name string, follow bool, st *unix.Stat_t) error {
	flags := unix.AT_SYMLINK_NOFOLLOW
	if follow {
		flags = 0
	}
	for {
		err := unix.Fstatat(d.fd, name, st, flags)
		if err == nil {
			return nil
		}
		if !errors.Is(err, unix.EINTR) {
			return &fs.PathError{Op: "stat", Path: name, Err: err}
		}
	}
}

// file fingerprints the directory entry name of type typ, as FileOf over
// Stat would, without an fs.FileInfo (whose every value would be an
// allocation: a quiet turn fingerprints every memory file).
func (d *Dir) file(name string, typ fs.FileMode) File {
	var st unix.Stat_t
	if typ == ModeUnknown {
		if err := d.stat(name, false, &st); err != nil {
			return File{Name: name, Skip: "cannot be read: " + ErrText(err)}
		}
		typ = ModeOf(st.Mode).Type()
	}
	if !typ.IsRegular() && typ&fs.ModeSymlink == 0 {
		return File{Name: name, Skip: "not a regular file"}
	}
	if err := d.stat(name, typ&fs.ModeSymlink != 0, &st); err != nil {
		return File{Name: name, Skip: "cannot be read: " + ErrText(err)}
	}
	mod, mode := time.Unix(st.Mtim.Unix()), ModeOf(st.Mode)
	var buf [64]byte
	start := d.fps.Len()
	d.fps.Write(appendFingerprint(buf[:0], st.Size, mod, st.Ino, mode))
	return fileFrom(name, d.fps.String()[start:], st.Size, mod, mode)
}

// statInfo is an fs.FileInfo over a unix.Stat_t, with the mode as package
// os reports it, so that fingerprints taken either way are equal.
type statInfo struct {
	name string
	st   unix.Stat_t
}

func (s statInfo) Name() string       { return s.name }
func (s statInfo) Size() int64        { return s.st.Size }
func (s statInfo) ModTime() time.Time { return time.Unix(s.st.Mtim.Unix()) }
func (s statInfo) IsDir() bool        { return s.Mode().IsDir() }
func (s statInfo) Sys() any           { return s.st.Ino }
func (s statInfo) Mode() fs.FileMode  { return ModeOf(s.st.Mode) }

// ModeOf is a stat's st_mode as package os reports it (os.Lstat's
// FileInfo.Mode), for a stat taken by a system call without an
// os.FileInfo: here and in package catalog's walk.
func ModeOf(mode uint32) fs.FileMode {
	m := fs.FileMode(mode & 0o777)
	switch mode & unix.S_IFMT {
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	}
	if mode&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if mode&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if mode&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}
