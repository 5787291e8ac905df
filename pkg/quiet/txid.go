package quiet

import (
	"encoding/binary"
	"os"
	"syscall"
)

// The store is a bbolt file, which begins with two meta pages, at offset 0
// and at the file's page size: each a page header (16 bytes) and a meta
// of 64 — magic, version, page size, flags, the root bucket (16 bytes),
// the freelist's page, the high-water page, the transaction id and a
// checksum, FNV-1a (64 bits) of the 56 bytes before it. A commit writes
// its data pages, then the meta page of its id's parity: the last
// committed transaction is the higher id of the two metas that check out,
// bbolt's own rule when it opens a file. Reading it takes two reads of 80
// bytes, no lock and no map of the file.
const (
	boltMagic   = 0xED0CDAED
	boltVersion = 2
	pageHeader  = 16
	metaBytes   = 64
	sumOffset   = 56
)

// openStore opens the store file for its meta pages: never through a
// link, never blocking.
func openStore(path string) (int, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

// lastTxid is the id of the store's last committed transaction: the
// higher of its two metas' that check out; false when neither does.
func lastTxid(fd int) (uint64, bool) {
	var buf [pageHeader + metaBytes]byte
	m0, ok0 := readMeta(fd, 0, buf[:])
	// The second meta is one page on: the page size the first meta gives,
	// or, when it does not check out (a write cut short), the system's,
	// which the file was made with (bbolt's fallback too).
	size := int64(os.Getpagesize())
	if ok0 {
		size = int64(m0.pageSize)
	}
	m1, ok1 := readMeta(fd, size, buf[:])
	switch {
	case ok0 && ok1:
		return max(m0.txid, m1.txid), true
	case ok0:
		return m0.txid, true
	case ok1:
		return m1.txid, true
	}
	return 0, false
}

type meta struct {
	pageSize uint32
	txid     uint64
}

// readMeta reads and checks the meta page at off.
func readMeta(fd int, off int64, buf []byte) (meta, bool) {
	n, err := preadFull(fd, buf, off)
	if err != nil || n < len(buf) {
		return meta{}, false
	}
	return decodeMeta(buf[pageHeader:])
}

// decodeMeta checks a meta (magic, version, checksum, a page size bbolt
// could have written) and returns what is read of it.
func decodeMeta(m []byte) (meta, bool) {
	if len(m) < metaBytes {
		return meta{}, false
	}
	e := binary.NativeEndian
	if e.Uint32(m[0:]) != boltMagic || e.Uint32(m[4:]) != boltVersion {
		return meta{}, false
	}
	if fnv64a(m[:sumOffset]) != e.Uint64(m[sumOffset:]) {
		return meta{}, false
	}
	ps := e.Uint32(m[8:])
	if ps < 512 || ps > 1<<20 || ps&(ps-1) != 0 {
		return meta{}, false
	}
	return meta{pageSize: ps, txid: e.Uint64(m[48:])}, true
}

func fnv64a(b []byte) uint64 {
	const offset64, prime64 = 14695981039346656037, 1099511628211
	h := uint64(offset64)
	for _, c := range b {
		h ^= uint64(c)
		h *= prime64
	}
	return h
}

func preadFull(fd int, b []byte, off int64) (int, error) {
	n := 0
	for n < len(b) {
		m, err := syscall.Pread(fd, b[n:], off+int64(n))
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return n, err
		}
		if m == 0 {
			break
		}
		n += m
	}
	return n, nil
}
