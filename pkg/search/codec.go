package search

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"
	"unsafe"

	"github.com/intermem/intermem/pkg/wire"
)

// ErrCorrupt is returned by Decode for bytes that are not an index Encode
// wrote (a damaged or hostile cache): the caller rebuilds the index.
var ErrCorrupt = errors.New("search index is corrupt")

// magic starts every encoded index; its last byte is the format version.
// Version 2 added the average field lengths and the replaced ids (a delta).
const magic = "IMSX\x02"

// Encode returns the segment as bytes that Decode reads back (of a stacked
// index, the delta's own documents: base and delta are stored apart). The
// tables are package wire's values:
//
//	magic
//	average field lengths: 4 unsigned, each a float64's bits
//	replaced ids: strings
//	sources: strings
//	documents: count, then each as id (string), source number (unsigned),
//	           day number (signed), confidence (unsigned, at most 65535),
//	           stale (bool)
//	terms, sorted: count, then each as term (string), postings count,
//	           postings byte length (unsigned)
//	postings of each term in term order: document number delta (uvarint),
//	           weight (2 bytes, little-endian)
//
// The postings are the record's rest, read term by term when a query asks
// (decodePostings), not by the wire.Reader that reads the tables.
func (x *Index) Encode() []byte {
	x = x.segment()
	terms := x.termList()
	b := []byte(magic)
	for _, a := range x.avg {
		b = wire.AppendUint(b, math.Float64bits(a))
	}
	b = wire.AppendStrings(b, x.replaced)
	b = wire.AppendStrings(b, x.sources)
	b = wire.AppendUint(b, uint64(len(x.docs)))
	for _, d := range x.docs {
		b = wire.AppendString(b, d.id)
		b = wire.AppendUint(b, uint64(d.source))
		b = wire.AppendInt(b, int64(d.days))
		b = wire.AppendUint(b, uint64(d.conf))
		b = wire.AppendBool(b, d.stale)
	}
	var blob []byte
	b = wire.AppendUint(b, uint64(len(terms)))
	for _, t := range terms {
		ps := x.postings(t)
		start := len(blob)
		prev := uint32(0)
		for _, p := range ps {
			blob = binary.AppendUvarint(blob, uint64(p.doc-prev))
			blob = binary.LittleEndian.AppendUint16(blob, p.w)
			prev = p.doc
		}
		b = wire.AppendString(b, t)
		b = wire.AppendUint(b, uint64(len(ps)))
		b = wire.AppendUint(b, uint64(len(blob)-start))
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

// Decode reads a segment that Encode wrote. It copies data once and keeps
// the postings encoded until a query reads them. Any inconsistency is
// ErrCorrupt; Decode never panics on hostile bytes.
func Decode(data []byte) (*Index, error) {
	return decode(wire.NewReader(data, magic))
}

// DecodeShared is Decode without the copy: the index reads data in place,
// so only the pages a query touches (the tables and its terms' postings)
// are ever read, which matters for a cache in a memory-mapped store. data
// must stay valid and unchanged for as long as the index is used, for
// instance within the bbolt read transaction it came from.
func DecodeShared(data []byte) (*Index, error) {
	if len(data) == 0 {
		return decode(wire.NewStringReader("", magic))
	}
	return decode(wire.NewStringReader(unsafe.String(&data[0], len(data)), magic))
}

func decode(r *wire.Reader) (*Index, error) {
	x := &Index{}
	for f := range x.avg {
		a := math.Float64frombits(r.Uint("average field length", math.MaxUint64))
		if r.Err() == nil && !(a >= 1 && !math.IsInf(a, 1)) { // NaN fails too
			return nil, fmt.Errorf("%w: average field length %v", ErrCorrupt, a)
		}
		x.avg[f] = a
	}
	x.replaced = r.Strings("replaced ids")
	for i := 1; i < len(x.replaced); i++ {
		if x.replaced[i] <= x.replaced[i-1] {
			return nil, fmt.Errorf("%w: replaced ids out of order", ErrCorrupt)
		}
	}
	x.sources = r.Strings("sources")
	nSources := len(x.sources)
	if nSources > 1<<16 {
		return nil, fmt.Errorf("%w: %d sources", ErrCorrupt, nSources)
	}
	// A document takes at least 5 bytes: id length, source, day,
	// confidence, stale.
	nDocs := r.Count("document count", 5)
	if r.Err() == nil {
		if nSources == 0 && nDocs > 0 {
			return nil, fmt.Errorf("%w: documents without sources", ErrCorrupt)
		}
		x.docs = make([]docMeta, nDocs)
	}
	for i := 0; i < nDocs && r.Err() == nil; i++ {
		d := &x.docs[i]
		d.id = r.String("document id")
		d.source = uint16(r.Uint("document source", uint64(max(nSources, 1)-1)))
		d.days = int32(r.Int("document date", math.MinInt32, math.MaxInt32))
		d.conf = uint16(r.Uint("confidence", math.MaxUint16))
		d.stale = r.Bool("stale flag")
	}
	// A term takes at least 3 bytes: its length, count and size.
	nTerms := r.Count("term count", 3)
	if r.Err() == nil {
		x.dict = make([]termRef, 0, nTerms)
	}
	var blobLen uint64
	for i := 0; i < nTerms && r.Err() == nil; i++ {
		t := r.String("term")
		count := r.Uint("postings count", uint64(nDocs))
		size := r.Uint("postings size", math.MaxUint32)
		if r.Err() != nil {
			break
		}
		if i > 0 && t <= x.dict[i-1].term {
			return nil, fmt.Errorf("%w: terms out of order at %q", ErrCorrupt, t)
		}
		if count == 0 || size < 3*count || size > uint64(binary.MaxVarintLen32+2)*count {
			return nil, fmt.Errorf("%w: term %q has %d postings in %d bytes", ErrCorrupt, t, count, size)
		}
		x.dict = append(x.dict, termRef{term: t, off: uint32(blobLen), count: uint32(count)})
		blobLen += size
	}
	blob := r.Rest()
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if uint64(len(blob)) != blobLen || blobLen > 1<<32-1 {
		return nil, fmt.Errorf("%w: postings are %d bytes, the terms say %d", ErrCorrupt, len(blob), blobLen)
	}
	x.blob = blob
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
