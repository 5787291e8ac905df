package search

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/intermem/intermem/pkg/wire"
)

// Averages returns the average field lengths the segment's weights were
// normalised by (see Ranking).
func (x *Index) Averages() [4]float64 { return x.avg }

// Normalise makes the Builder weigh its documents by the average field
// lengths avg instead of those of the documents added: a segment of a
// base built after the first (see Segments) is normalised as the first
// was.
func (b *Builder) Normalise(avg [4]float64) { b.avgOf = &avg }

// Len returns the number of documents added.
func (b *Builder) Len() int { return len(b.x.docs) }

// Merge returns the encoding of one segment over the documents of segs
// (each a base segment Encode wrote, normalised by avg), in order: their
// documents one after the other, each term's postings those of every
// segment that holds it, their weights as they are. It is what a base
// built a segment at a time ends in, and reads like any base: Decode.
// The segments are read in place (DecodeShared); only the result is
// allocated, and each segment's run of a term is copied as it is but for
// its first document number. A segment that does not decode, replaces
// ids, was normalised by other averages or whose postings do not read
// back exactly is ErrCorrupt: a damaged segment is never merged.
func Merge(segs [][]byte, avg [4]float64) ([]byte, error) {
	xs := make([]*Index, len(segs))
	for i, s := range segs {
		x, err := DecodeShared(s)
		if err != nil {
			return nil, fmt.Errorf("segment %d: %w", i, err)
		}
		if len(x.replaced) > 0 || x.avg != avg {
			return nil, fmt.Errorf("%w: segment %d is not one of the base's", ErrCorrupt, i)
		}
		xs[i] = x
	}
	// Sources in order of first appearance, as one Builder numbers them.
	var sources []string
	remap := make([][]uint16, len(xs))
	for i, x := range xs {
		remap[i] = make([]uint16, len(x.sources))
		for j, s := range x.sources {
			k := slices.Index(sources, s)
			if k < 0 {
				k = len(sources)
				sources = append(sources, s)
			}
			remap[i][j] = uint16(k)
		}
	}
	first := make([]uint64, len(xs))
	total := uint64(0)
	for i, x := range xs {
		first[i] = total
		total += uint64(len(x.docs))
	}
	if len(sources) > 1<<16 || total > math.MaxUint32 {
		return nil, fmt.Errorf("%w: %d sources, %d documents", ErrCorrupt, len(sources), total)
	}
	m := merger{xs: xs, first: first, pos: make([]int, len(xs))}
	// The term table first (each term's count and size: a pass over the
	// runs without writing them), then the postings.
	var table []byte
	nTerms, blobLen := 0, 0
	for {
		t, ok := m.next()
		if !ok {
			break
		}
		_, count, size, err := m.runs(nil, t, false)
		if err != nil {
			return nil, err
		}
		table = wire.AppendString(table, t)
		table = wire.AppendUint(table, uint64(count))
		table = wire.AppendUint(table, uint64(size))
		nTerms++
		blobLen += size
		m.advance(t)
	}
	b := make([]byte, 0, 64+m.docBytes()+len(table)+blobLen)
	b = append(b, magic...)
	for _, a := range avg {
		b = wire.AppendUint(b, math.Float64bits(a))
	}
	b = wire.AppendStrings(b, nil)
	b = wire.AppendStrings(b, sources)
	b = wire.AppendUint(b, total)
	for i, x := range xs {
		for _, d := range x.docs {
			b = wire.AppendString(b, d.id)
			b = wire.AppendUint(b, uint64(remap[i][d.source]))
			b = wire.AppendInt(b, int64(d.days))
			b = wire.AppendUint(b, uint64(d.conf))
			b = wire.AppendBool(b, d.stale)
		}
	}
	b = wire.AppendUint(b, uint64(nTerms))
	b = append(b, table...)
	table = nil
	clear(m.pos)
	for {
		t, ok := m.next()
		if !ok {
			break
		}
		var err error
		if b, _, _, err = m.runs(b, t, true); err != nil {
			return nil, err
		}
		m.advance(t)
	}
	return b, nil
}

// merger walks the terms of segments in order.
type merger struct {
	xs    []*Index
	first []uint64 // where each segment's documents start
	pos   []int    // each segment's next term
}

// next returns the least term not yet walked.
func (m *merger) next() (string, bool) {
	t, ok := "", false
	for i, x := range m.xs {
		if m.pos[i] < len(x.dict) {
			if d := x.dict[m.pos[i]].term; !ok || d < t {
				t, ok = d, true
			}
		}
	}
	return t, ok
}

// advance moves past term t in every segment that holds it.
func (m *merger) advance(t string) {
	for i, x := range m.xs {
		if m.pos[i] < len(x.dict) && x.dict[m.pos[i]].term == t {
			m.pos[i]++
		}
	}
}

// runEnd returns where segment i's postings of its next term end in its
// blob.
func (m *merger) runEnd(i int) int {
	x := m.xs[i]
	if m.pos[i]+1 < len(x.dict) {
		return int(x.dict[m.pos[i]+1].off)
	}
	return len(x.blob)
}

// docBytes is about what the merged document table takes.
func (m *merger) docBytes() int {
	n := 0
	for _, x := range m.xs {
		for _, d := range x.docs {
			n += len(d.id) + 12
		}
	}
	return n
}

// runs appends term t's merged postings to dst when write (each segment's
// run as it is, but for its first document number, made a delta from the
// run before it) and returns their count and size. Each run must read
// back exactly: count postings, document numbers rising and in range,
// ending where the segment's next term's begin.
func (m *merger) runs(dst []byte, t string, write bool) ([]byte, int, int, error) {
	count, size := 0, 0
	prev := uint64(0)
	for i, x := range m.xs {
		if m.pos[i] >= len(x.dict) || x.dict[m.pos[i]].term != t {
			continue
		}
		ref := x.dict[m.pos[i]]
		off, end := int(ref.off), m.runEnd(i)
		doc := uint64(0)
		for j := uint32(0); j < ref.count; j++ {
			delta, n := uvarintString(x.blob[off:])
			if n <= 0 || off+n+2 > end {
				return nil, 0, 0, fmt.Errorf("%w: term %q's postings are cut short", ErrCorrupt, t)
			}
			doc += delta
			if (j > 0 && delta == 0) || doc >= uint64(len(x.docs)) {
				return nil, 0, 0, fmt.Errorf("%w: term %q's postings are out of order", ErrCorrupt, t)
			}
			if j == 0 {
				g := m.first[i] + doc
				var v [binary.MaxVarintLen64]byte
				k := binary.PutUvarint(v[:], g-prev)
				size += k + 2
				if write {
					dst = append(dst, v[:k]...)
					dst = append(dst, x.blob[off+n:off+n+2]...)
				}
			} else {
				size += n + 2
				if write {
					dst = append(dst, x.blob[off:off+n+2]...)
				}
			}
			off += n + 2
		}
		if off != end {
			return nil, 0, 0, fmt.Errorf("%w: term %q's postings are %d bytes, not %d", ErrCorrupt, t, off-int(ref.off), end-int(ref.off))
		}
		prev = m.first[i] + doc
		count += int(ref.count)
	}
	return dst, count, size, nil
}
