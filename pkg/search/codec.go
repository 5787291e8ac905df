package search

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"unsafe"
)

// ErrCorrupt is returned by Decode for bytes that are not an index Encode
// wrote (a damaged or hostile cache): the caller rebuilds the index.
var ErrCorrupt = errors.New("search index is corrupt")

// magic starts every encoded index; its last byte is the format version.
const magic = "IMSX\x01"

// Encode returns the index as bytes that Decode reads back:
//
//	magic
//	sources: count, then each as length and bytes
//	documents: count, then each as id (length, bytes), source number,
//	           day number (zig-zag), confidence (2 bytes), stale (1 byte)
//	terms, sorted: count, then each as term (length, bytes), postings count,
//	           postings byte length
//	postings of each term in term order: document number delta, weight
//	           (2 bytes)
//
// Counts, lengths and numbers are unsigned varints; fixed-size values are
// little-endian.
func (x *Index) Encode() []byte {
	terms := x.termList()
	b := []byte(magic)
	b = binary.AppendUvarint(b, uint64(len(x.sources)))
	for _, s := range x.sources {
		b = appendString(b, s)
	}
	b = binary.AppendUvarint(b, uint64(len(x.docs)))
	for _, d := range x.docs {
		b = appendString(b, d.id)
		b = binary.AppendUvarint(b, uint64(d.source))
		b = binary.AppendVarint(b, int64(d.days))
		b = binary.LittleEndian.AppendUint16(b, d.conf)
		if d.stale {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
	}
	var blob []byte
	b = binary.AppendUvarint(b, uint64(len(terms)))
	for _, t := range terms {
		ps := x.postings(t)
		start := len(blob)
		prev := uint32(0)
		for _, p := range ps {
			blob = binary.AppendUvarint(blob, uint64(p.doc-prev))
			blob = binary.LittleEndian.AppendUint16(blob, p.w)
			prev = p.doc
		}
		b = appendString(b, t)
		b = binary.AppendUvarint(b, uint64(len(ps)))
		b = binary.AppendUvarint(b, uint64(len(blob)-start))
	}
	return append(b, blob...)
}

func (x *Index) termList() []string {
	if x.byTerm == nil {
		out := make([]string, len(x.dict))
		for i, r := range x.dict {
			out[i] = r.term
		}
		return out
	}
	out := make([]string, 0, len(x.byTerm))
	for t := range x.byTerm {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// reader reads an encoded index, remembering the first error.
type reader struct {
	s   string
	off int
	err error
}

func (r *reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: bad %s at byte %d", ErrCorrupt, what, r.off)
	}
}

func (r *reader) uvarint(what string, limit uint64) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := uvarintString(r.s[r.off:])
	if n <= 0 || v > limit {
		r.fail(what)
		return 0
	}
	r.off += n
	return v
}

func (r *reader) varint(what string) int64 {
	u := r.uvarint(what, 1<<63-1|1<<63)
	return int64(u>>1) ^ -int64(u&1)
}

func (r *reader) str(what string) string {
	n := r.uvarint(what, uint64(len(r.s)))
	if r.err != nil || r.off+int(n) > len(r.s) {
		r.fail(what)
		return ""
	}
	s := r.s[r.off : r.off+int(n)]
	r.off += int(n)
	return s
}

func (r *reader) fixed(what string, n int) string {
	if r.err != nil || r.off+n > len(r.s) {
		r.fail(what)
		return ""
	}
	s := r.s[r.off : r.off+n]
	r.off += n
	return s
}

// uvarintString is binary.Uvarint over a string, without copying it.
func uvarintString(s string) (uint64, int) {
	var x uint64
	var shift uint
	for i := 0; i < len(s) && i < binary.MaxVarintLen64; i++ {
		c := s[i]
		if c < 0x80 {
			if i == binary.MaxVarintLen64-1 && c > 1 {
				return 0, -1
			}
			return x | uint64(c)<<shift, i + 1
		}
		x |= uint64(c&0x7f) << shift
		shift += 7
	}
	return 0, 0
}

// Decode reads an index that Encode wrote. It copies data once and keeps
// the postings encoded until a query reads them. Any inconsistency is
// ErrCorrupt; Decode never panics on hostile bytes.
func Decode(data []byte) (*Index, error) {
	return decode(string(data))
}

// DecodeShared is Decode without the copy: the index reads data in place,
// so only the pages a query touches (the tables and its terms' postings)
// are ever read, which matters for a cache in a memory-mapped store. data
// must stay valid and unchanged for as long as the index is used, for
// instance within the bbolt read transaction it came from.
func DecodeShared(data []byte) (*Index, error) {
	if len(data) == 0 {
		return decode("")
	}
	return decode(unsafe.String(&data[0], len(data)))
}

func decode(s string) (*Index, error) {
	r := &reader{s: s}
	if len(r.s) < len(magic) || r.s[:len(magic)] != magic {
		return nil, fmt.Errorf("%w: not an index of this version", ErrCorrupt)
	}
	r.off = len(magic)
	x := &Index{}
	nSources := r.uvarint("source count", 1<<16)
	for i := uint64(0); i < nSources && r.err == nil; i++ {
		x.sources = append(x.sources, r.str("source name"))
	}
	nDocs := r.uvarint("document count", uint64(len(r.s)))
	if r.err == nil {
		x.docs = make([]docMeta, 0, nDocs)
	}
	for i := uint64(0); i < nDocs && r.err == nil; i++ {
		var d docMeta
		d.id = r.str("document id")
		d.source = uint16(r.uvarint("document source", max(nSources, 1)-1))
		days := r.varint("document date")
		if days < -1<<31 || days > 1<<31-1 {
			r.fail("document date")
		}
		d.days = int32(days)
		if c := r.fixed("confidence", 2); c != "" {
			d.conf = uint16(c[0]) | uint16(c[1])<<8
		}
		switch r.fixed("stale flag", 1) {
		case "\x00":
		case "\x01":
			d.stale = true
		default:
			r.fail("stale flag")
		}
		x.docs = append(x.docs, d)
	}
	if nSources == 0 && nDocs > 0 {
		r.fail("source count")
	}
	nTerms := r.uvarint("term count", uint64(len(r.s)))
	if r.err == nil {
		x.dict = make([]termRef, 0, nTerms)
	}
	var blobLen uint64
	for i := uint64(0); i < nTerms && r.err == nil; i++ {
		t := r.str("term")
		count := r.uvarint("postings count", nDocs)
		size := r.uvarint("postings size", uint64(len(r.s)))
		if i > 0 && t <= x.dict[i-1].term {
			r.fail("term order")
		}
		if count == 0 || size < 3*count || size > uint64(binary.MaxVarintLen32+2)*count {
			r.fail("postings size")
		}
		x.dict = append(x.dict, termRef{term: t, off: uint32(blobLen), count: uint32(count)})
		blobLen += size
	}
	if r.err != nil {
		return nil, r.err
	}
	if uint64(len(r.s)-r.off) != blobLen || blobLen > 1<<32-1 {
		return nil, fmt.Errorf("%w: postings are %d bytes, the terms say %d", ErrCorrupt, len(r.s)-r.off, blobLen)
	}
	x.blob = r.s[r.off:]
	return x, nil
}

// decodePostings reads the postings of one term; corrupt postings (a
// document number out of range, a truncated entry) end the list early.
func decodePostings(blob string, t termRef, nDocs int) []posting {
	ps := make([]posting, 0, t.count)
	off := int(t.off)
	doc := uint64(0)
	for i := uint32(0); i < t.count; i++ {
		delta, n := uvarintString(blob[off:])
		if n <= 0 || off+n+2 > len(blob) {
			break
		}
		off += n
		doc += delta
		if (i > 0 && delta == 0) || doc >= uint64(nDocs) {
			break
		}
		ps = append(ps, posting{doc: uint32(doc), w: uint16(blob[off]) | uint16(blob[off+1])<<8})
		off += 2
	}
	return ps
}
