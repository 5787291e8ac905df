// Package wire is the compact binary form of the records intermem keeps in
// its store and reads back on a hook's hot path, where decoding JSON (a
// reflective walk over every byte, checked twice) costs more than the rest
// of the work: a session start decodes the stored parse of up to 2,000
// memory files.
//
// A record is a sequence of values, each written by an Append function and
// read back in the same order by a Reader:
//
//	unsigned integer   uvarint
//	signed integer     zig-zag uvarint
//	bool               one byte, 0 or 1
//	string             uvarint length, then the bytes
//
// The record's own code says what comes in which order and puts a magic
// prefix with a version first, so that bytes of another format or version
// are told apart rather than misread (the caller then parses its source
// again).
//
// # Invariants
//
// Stored bytes are read as hostile (the store is a file anyone with the
// user's rights can edit): a Reader never panics and never allocates more
// than the bytes it reads justify. Every read is bounds-checked; the first
// failure sticks (later reads return zero values) and Err reports it, so a
// decoder reads straight through and checks once. Counts of lists are
// bounded by the bytes left (Count), so a hostile count cannot make a
// decoder allocate gigabytes. Strings are substrings of one copy of the
// record, made once by NewReader (or of the caller's own string,
// NewStringReader).
package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// ErrCorrupt is returned (wrapped) by Reader.Err for bytes that are not a
// record of the expected form: truncated, a value out of its range, or
// bytes left over.
var ErrCorrupt = errors.New("corrupt record")

// AppendUint appends v as a uvarint.
func AppendUint(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }

// AppendInt appends v zig-zag encoded.
func AppendInt(b []byte, v int64) []byte { return binary.AppendUvarint(b, uint64(v<<1)^uint64(v>>63)) }

// AppendBool appends b as one byte.
func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// AppendString appends s's length and bytes.
func AppendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// AppendStrings appends a list of strings: its count, then each string.
func AppendStrings(b []byte, ss []string) []byte {
	b = AppendUint(b, uint64(len(ss)))
	for _, s := range ss {
		b = AppendString(b, s)
	}
	return b
}

// Reader reads the values of one record.
type Reader struct {
	s   string
	off int
	err error
}

// NewReader returns a Reader of a copy of b (one allocation: the strings
// read are substrings of it), or of b itself when prefix, which it must
// start with, does not match — then Err is ErrCorrupt at once.
func NewReader(b []byte, prefix string) *Reader {
	if len(b) < len(prefix) || string(b[:len(prefix)]) != prefix {
		return &Reader{err: fmt.Errorf("%w: not a record of this version", ErrCorrupt)}
	}
	return &Reader{s: string(b), off: len(prefix)}
}

// NewStringReader is NewReader over s in place, without the copy: the
// strings read are substrings of s. A caller whose bytes stay valid and
// unchanged for as long as what it reads is used (a record read inside the
// bbolt transaction it came from) makes s with unsafe.String, so that only
// the pages it reads are ever touched.
func NewStringReader(s string, prefix string) *Reader {
	if len(s) < len(prefix) || s[:len(prefix)] != prefix {
		return &Reader{err: fmt.Errorf("%w: not a record of this version", ErrCorrupt)}
	}
	return &Reader{s: s, off: len(prefix)}
}

// HasPrefix reports whether b starts with prefix (a record's magic).
func HasPrefix(b []byte, prefix string) bool {
	return len(b) >= len(prefix) && string(b[:len(prefix)]) == prefix
}

func (r *Reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: bad %s at byte %d", ErrCorrupt, what, r.off)
	}
}

// Err is the first failure, nil when every read succeeded.
func (r *Reader) Err() error { return r.err }

// Done is Err, and a failure when bytes are left after the last value.
func (r *Reader) Done() error {
	if r.err == nil && r.off != len(r.s) {
		r.fail("end (bytes left over)")
	}
	return r.err
}

// Uint reads an unsigned integer of at most limit.
func (r *Reader) Uint(what string, limit uint64) uint64 {
	if r.err != nil {
		return 0
	}
	var x uint64
	var shift uint
	for i := 0; i < binary.MaxVarintLen64; i++ {
		if r.off+i >= len(r.s) {
			break
		}
		c := r.s[r.off+i]
		if c < 0x80 {
			if i == binary.MaxVarintLen64-1 && c > 1 {
				break // overflows 64 bits
			}
			x |= uint64(c) << shift
			if x > limit {
				break
			}
			r.off += i + 1
			return x
		}
		x |= uint64(c&0x7f) << shift
		shift += 7
	}
	r.fail(what)
	return 0
}

// Int reads a signed integer in [lo, hi].
func (r *Reader) Int(what string, lo, hi int64) int64 {
	u := r.Uint(what, math.MaxUint64)
	v := int64(u>>1) ^ -int64(u&1)
	if r.err == nil && (v < lo || v > hi) {
		r.fail(what)
		return 0
	}
	return v
}

// Small reads an int that fits in 32 bits, as offsets, lines and counts of
// a file of bounded size do, in [lo, math.MaxInt32].
func (r *Reader) Small(what string, lo int) int {
	return int(r.Int(what, int64(lo), math.MaxInt32))
}

// Bool reads a bool; a byte other than 0 or 1 is corrupt.
func (r *Reader) Bool(what string) bool {
	if r.err != nil {
		return false
	}
	if r.off >= len(r.s) || r.s[r.off] > 1 {
		r.fail(what)
		return false
	}
	r.off++
	return r.s[r.off-1] == 1
}

// String reads a string.
func (r *Reader) String(what string) string {
	n := r.Uint(what, uint64(len(r.s)))
	if r.err != nil {
		return ""
	}
	if n > uint64(len(r.s)-r.off) { // checked after the length's own bytes
		r.fail(what)
		return ""
	}
	s := r.s[r.off : r.off+int(n)]
	r.off += int(n)
	return s
}

// Rest reads every byte left, for a record that ends in a section its
// code reads by its own means (a search index's postings, read term by
// term as queries ask for them); "" after a failure.
func (r *Reader) Rest() string {
	if r.err != nil {
		return ""
	}
	s := r.s[r.off:]
	r.off = len(r.s)
	return s
}

// Count reads the length of a list whose every element takes at least min
// bytes (at least 1): a count the bytes left cannot hold is corrupt, so a
// decoder may allocate the list at once.
func (r *Reader) Count(what string, min int) int {
	min = max(min, 1)
	n := r.Uint(what, uint64(len(r.s)))
	if r.err == nil && n > uint64((len(r.s)-r.off)/min) { // after the count's own bytes
		r.fail(what)
		return 0
	}
	return int(n)
}

// Strings reads a list AppendStrings wrote (nil when empty or on a
// failure).
func (r *Reader) Strings(what string) []string {
	n := r.Count(what, 1)
	if r.err != nil || n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		if out[i] = r.String(what); r.err != nil {
			return nil
		}
	}
	return out
}
