package source

import (
	"crypto/sha256"
	"io"
)

// Cursor is where an Appender's parse of a log may resume: a byte offset at
// the start of a line, that line's number, and a checksum of the bytes before
// the offset. The zero Cursor is the start of the file.
type Cursor struct {
	// Offset is the byte offset of the first byte not yet final.
	Offset int64 `json:"offset"`
	// Line is the 1-based number of the line that starts at Offset; 0 is
	// taken as 1.
	Line int `json:"line"`
	// Sum is set by Seal: a checksum of the first and the last sealWindow
	// bytes before Offset.
	Sum []byte `json:"sum,omitempty"`
}

// sealWindow is how many bytes at each end of the parsed prefix Seal
// checksums. A log that is only appended to keeps them; a log that was
// truncated, rotated or rewritten loses them, in practice always.
const sealWindow = 4096

// Seal returns c with the checksum of the bytes of f before c.Offset, for a
// later Resume. An error reading f gives a cursor that never resumes.
func Seal(f io.ReaderAt, c Cursor) Cursor {
	c.Sum = nil
	if c.Offset <= 0 {
		return c
	}
	sum, ok := prefixSum(f, c.Offset)
	if ok {
		c.Sum = sum
	}
	return c
}

// Resume returns the cursor to parse the file f (of size bytes) from, given
// the sealed cursor c of an earlier parse: c when the file still holds the
// same bytes before c.Offset (it only grew), the zero Cursor otherwise (it
// shrank, was rewritten or rotated, or c was never sealed). The check reads
// at most two windows of the file, never the whole prefix; a rewrite that
// keeps the size and both windows is taken for an append.
func Resume(f io.ReaderAt, size int64, c Cursor) Cursor {
	if c.Offset <= 0 || c.Offset > size || len(c.Sum) == 0 {
		return Cursor{}
	}
	sum, ok := prefixSum(f, c.Offset)
	if !ok || string(sum) != string(c.Sum) {
		return Cursor{}
	}
	return c
}

// prefixSum hashes the length of the prefix [0,n) and its first and last
// sealWindow bytes.
func prefixSum(f io.ReaderAt, n int64) ([]byte, bool) {
	h := sha256.New()
	var lenb [8]byte
	for i := range lenb {
		lenb[i] = byte(n >> (8 * i))
	}
	h.Write(lenb[:])
	buf := make([]byte, sealWindow)
	head := min(n, sealWindow)
	if !readFull(f, buf[:head], 0) {
		return nil, false
	}
	h.Write(buf[:head])
	tail := min(n, sealWindow)
	if !readFull(f, buf[:tail], n-tail) {
		return nil, false
	}
	h.Write(buf[:tail])
	return h.Sum(nil)[:16], true
}

// readFull reads len(p) bytes at off; io.ReaderAt may report io.EOF along
// with a full read that ends at the end of the input.
func readFull(f io.ReaderAt, p []byte, off int64) bool {
	n, err := f.ReadAt(p, off)
	return n == len(p) && (err == nil || err == io.EOF)
}
