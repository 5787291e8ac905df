//go:build linux

package store

import (
	"bytes"
	"os"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// shed drops the pages mapped of the file at path: the one mapping in
// /proc/self/maps whose device and inode are the file's. It reports
// whether it did.
func shed(path string) bool {
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil {
		return false
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return false
	}
	dev := []byte(strconv.FormatUint(uint64(unix.Major(st.Dev)), 16) + ":" + strconv.FormatUint(uint64(unix.Minor(st.Dev)), 16))
	ino := []byte(strconv.FormatUint(st.Ino, 10))
	var start, end uint64
	found := 0
	for line := range bytes.SplitSeq(maps, []byte("\n")) {
		// start-end perms offset dev inode [path]
		f := bytes.Fields(line)
		if len(f) < 5 || !bytes.Equal(f[4], ino) || !sameDev(f[3], dev) {
			continue
		}
		r := bytes.SplitN(f[0], []byte("-"), 2)
		if len(r) != 2 {
			return false
		}
		s, err1 := strconv.ParseUint(string(r[0]), 16, 64)
		e, err2 := strconv.ParseUint(string(r[1]), 16, 64)
		if err1 != nil || err2 != nil || e <= s {
			return false
		}
		start, end = s, e
		found++
	}
	if found != 1 {
		return false
	}
	_, _, errno := unix.Syscall(unix.SYS_MADVISE, uintptr(start), uintptr(end-start), unix.MADV_DONTNEED)
	return errno == 0
}

// sameDev compares a device as /proc/self/maps writes it (hexadecimal
// major:minor, zero-padded) with dev (the same, not padded).
func sameDev(field, dev []byte) bool {
	maj, min, ok := bytes.Cut(field, []byte(":"))
	if !ok {
		return false
	}
	want, wantMin, _ := bytes.Cut(dev, []byte(":"))
	return bytes.Equal(trimZeros(maj), want) && bytes.Equal(trimZeros(min), wantMin)
}

func trimZeros(b []byte) []byte {
	for len(b) > 1 && b[0] == '0' {
		b = b[1:]
	}
	return b
}

var statm struct {
	once sync.Once
	f    *os.File
}

// residentFile returns the process's resident file-backed and shared
// pages in bytes (the third field of /proc/self/statm), read with one
// pread of a descriptor kept open.
func residentFile() (int64, bool) {
	statm.once.Do(func() { statm.f, _ = os.Open("/proc/self/statm") })
	if statm.f == nil {
		return 0, false
	}
	var buf [128]byte
	n, _ := statm.f.ReadAt(buf[:], 0)
	f := bytes.Fields(buf[:n])
	if len(f) < 3 {
		return 0, false
	}
	pages, err := strconv.ParseInt(string(f[2]), 10, 64)
	if err != nil {
		return 0, false
	}
	return pages * int64(os.Getpagesize()), true
}
