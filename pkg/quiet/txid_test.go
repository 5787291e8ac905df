package quiet

import (
	"encoding/binary"
	"hash/fnv"
	"testing"
)

// meta builds a bbolt meta as bbolt lays it out (magic, version, page
// size, flags, root bucket, freelist, high-water page, txid, then the
// FNV-1a checksum of the 56 bytes before it, by hash/fnv).
func metaOf(pageSize uint32, txid uint64) []byte {
	m := make([]byte, metaBytes)
	e := binary.NativeEndian
	e.PutUint32(m[0:], 0xED0CDAED)
	e.PutUint32(m[4:], 2)
	e.PutUint32(m[8:], pageSize)
	e.PutUint64(m[16:], 3)  // root
	e.PutUint64(m[32:], 2)  // freelist
	e.PutUint64(m[40:], 10) // high water
	e.PutUint64(m[48:], txid)
	h := fnv.New64a()
	h.Write(m[:56])
	e.PutUint64(m[56:], h.Sum64())
	return m
}

func TestDecodeMeta(t *testing.T) {
	if m, ok := decodeMeta(metaOf(4096, 77)); !ok || m.txid != 77 || m.pageSize != 4096 {
		t.Fatalf("a valid meta: %+v %v", m, ok)
	}
	for name, b := range map[string][]byte{
		"checksum":     func() []byte { m := metaOf(4096, 77); m[60] ^= 1; return m }(),
		"txid changed": func() []byte { m := metaOf(4096, 77); m[48] ^= 1; return m }(),
		"magic":        func() []byte { m := metaOf(4096, 77); m[0] ^= 1; return m }(),
		"page size":    metaOf(4095, 77),
		"short":        metaOf(4096, 77)[:60],
		"empty":        nil,
	} {
		if m, ok := decodeMeta(b); ok {
			t.Errorf("%s: decoded %+v", name, m)
		}
	}
}

// FuzzDecodeMeta: any bytes decode without a panic, and only a meta whose
// magic, version and checksum (by hash/fnv) hold is taken.
func FuzzDecodeMeta(f *testing.F) {
	f.Add(metaOf(4096, 1))
	f.Add(metaOf(65536, 1<<40))
	f.Add([]byte("intermem stop quiet v1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, ok := decodeMeta(b)
		if !ok {
			return
		}
		e := binary.NativeEndian
		h := fnv.New64a()
		h.Write(b[:56])
		if e.Uint32(b) != 0xED0CDAED || e.Uint32(b[4:]) != 2 || e.Uint64(b[56:]) != h.Sum64() || m.txid != e.Uint64(b[48:]) {
			t.Fatalf("took %x as %+v", b, m)
		}
	})
}
