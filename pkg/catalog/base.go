package catalog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/intermem/intermem/pkg/search"
	"github.com/intermem/intermem/pkg/store"
	"github.com/intermem/intermem/pkg/wire"
)

// A new base of the search index is built a segment at a time: each
// segment over the next segmentDocs live entries in key order (entry ids
// are hashes, so each is a sample of every source), the first normalised
// by its own average field lengths and every later one by the first's,
// and the segments merged into the base once the last is built
// (search.Merge: the same bytes as one build of every entry normalised
// by the first segment's averages). A hook builds each segment in a read
// transaction and stores it with the build's record in a write
// transaction of its own (NewSegment, PutSegment), so a session's end
// holds one segment's analysis at a time, not the collection's, and one
// that runs out of time keeps what it built: the next goes on after the
// record's last key, never starting over. A command's Settle and a
// read-only search finish the build the same way in memory (completeBase).
//
// From the first segment stored, the ids whose entries or overlays
// change are marked (store.StartIndexBuild), and the base the build ends
// in is current at the generation the build began at but for them: a
// delta indexes them again (PutIndexBuilt keeps the marks). A build
// record or a segment that does not decode, or merged segments that do
// not read back exactly, are never trusted: the build starts over.

// segmentDocs is how many live entries a segment of a base holds. At
// 20,000 entries a segment's build holds about 2 MB (its term numbers and
// postings) where the whole base's held 20, and takes about a fifth of
// the whole's time.
var segmentDocs = 4096

// buildMagic starts a build's record; its last byte is the format
// version.
const buildMagic = "IMSB\x01"

// baseBuild is the record of a base being built.
type baseBuild struct {
	// gen is the generation the build began at (its first segment's).
	gen uint64
	// avg are the first segment's average field lengths, which every
	// later segment is normalised by.
	avg [4]float64
	// segs is how many segments are stored.
	segs int
	// after is the key of the last entry the last segment read.
	after string
}

func encodeBuild(b *baseBuild) []byte {
	out := []byte(buildMagic)
	out = wire.AppendUint(out, b.gen)
	for _, a := range b.avg {
		out = wire.AppendUint(out, math.Float64bits(a))
	}
	out = wire.AppendUint(out, uint64(b.segs))
	return wire.AppendString(out, b.after)
}

// errBuildCorrupt is returned by decodeBuild for bytes that are not a
// record encodeBuild wrote: the build starts over.
var errBuildCorrupt = errors.New("search index build record is corrupt")

func decodeBuild(data []byte) (*baseBuild, error) {
	r := wire.NewReader(data, buildMagic)
	b := &baseBuild{gen: r.Uint("generation", math.MaxUint64)}
	for f := range b.avg {
		a := math.Float64frombits(r.Uint("average field length", math.MaxUint64))
		if r.Err() == nil && !(a >= 1 && !math.IsInf(a, 1)) {
			return nil, fmt.Errorf("%w: average field length %v", errBuildCorrupt, a)
		}
		b.avg[f] = a
	}
	b.segs = int(r.Uint("segments", 1<<20))
	b.after = r.String("last key")
	if err := r.Done(); err != nil {
		return nil, fmt.Errorf("%w: %w", errBuildCorrupt, err)
	}
	if b.segs == 0 {
		return nil, fmt.Errorf("%w: no segment", errBuildCorrupt)
	}
	return b, nil
}

// storedBuild returns the build stored in tx to go on with, nil when
// there is none or it cannot be trusted: a base is stored beside it (an
// intermem that knows no builds stored one since), or its record does
// not decode.
func storedBuild(tx *store.CatalogTx) (*baseBuild, []byte) {
	rec := tx.IndexBuild()
	if rec == nil {
		return nil, nil
	}
	if raw, _ := tx.Index(); raw != nil {
		return nil, rec
	}
	b, err := decodeBuild(rec)
	if err != nil {
		return nil, rec
	}
	return b, rec
}

// buildSegment indexes the next segment of the base after b (nil: the
// first): the next segmentDocs live entries after b's last key, each
// analysed as it is read. It returns the segment, the build's record with
// it, and whether it is the last (no entry is left after it). It gives up
// when ctx is done.
func buildSegment(ctx context.Context, tx *store.CatalogTx, b *baseBuild) ([]byte, baseBuild, bool, error) {
	next := baseBuild{gen: tx.Generation()}
	if b != nil {
		next = *b
	}
	sb := search.NewBuilder()
	if b != nil {
		sb.Normalise(b.avg)
	}
	last, n := true, 0
	err := tx.EntriesAfter(next.after, func(key string, e *store.CatalogEntry) error {
		if n++; n%256 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if !e.Gone.IsZero() {
			next.after = key
			return nil
		}
		if sb.Len() == segmentDocs {
			last = false
			return store.ErrStop
		}
		d := docOf(tx, e)
		sb.Add(&d)
		next.after = key
		return nil
	})
	if err != nil {
		return nil, baseBuild{}, false, fmt.Errorf("catalog: index: %w", err)
	}
	x := sb.Index()
	if b == nil {
		next.avg = x.Averages()
	}
	next.segs++
	return x.Encode(), next, last, nil
}

// completeBase returns a new base of the search index over every live
// entry tx holds, and the generation it is current at but for the ids
// marked changed since (see above): the build stored in tx gone on with
// to its end in memory, or, when there is none to trust (fresh), one built
// from the start, current at the generation. The bytes outlive tx.
func completeBase(ctx context.Context, tx *store.CatalogTx) (base []byte, gen uint64, fresh bool, err error) {
	if b, _ := storedBuild(tx); b != nil {
		if base, err := finishBuild(ctx, tx, b); err == nil {
			return base, b.gen, false, nil
		} else if ctx.Err() != nil {
			return nil, 0, false, err
		}
		// A damaged segment: from the start.
	}
	base, err = completeFresh(ctx, tx)
	return base, tx.Generation(), true, err
}

// completeFresh builds a new base from the start, whatever build tx holds.
func completeFresh(ctx context.Context, tx *store.CatalogTx) ([]byte, error) {
	return finishBuild(ctx, tx, nil)
}

// finishBuild builds the segments after b's (nil: every one) and merges
// them with b's stored ones.
func finishBuild(ctx context.Context, tx *store.CatalogTx, b *baseBuild) ([]byte, error) {
	var segs [][]byte
	if b != nil {
		for i := range b.segs {
			s := tx.IndexSegment(i)
			if s == nil {
				return nil, fmt.Errorf("catalog: index: %w: segment %d of %d is missing", search.ErrCorrupt, i, b.segs)
			}
			segs = append(segs, s)
		}
	}
	for {
		seg, next, last, err := buildSegment(ctx, tx, b)
		if err != nil {
			return nil, err
		}
		segs = append(segs, seg)
		b = &next
		if last {
			break
		}
	}
	base, err := search.Merge(segs, b.avg)
	if err != nil {
		return nil, fmt.Errorf("catalog: index: %w", err)
	}
	return base, nil
}

// Segment is the next segment of a new base of the search index, built
// by NewSegment in a read transaction for PutSegment to store in a write
// transaction.
type Segment struct {
	data []byte
	// prev is the build's record it was built after (nil: the first
	// segment); next is the record with it.
	prev, next []byte
	// first: it starts a build; last: it ends one.
	first, last bool
	// gen is the generation it was built at.
	gen uint64
}

// Last reports whether s is the last segment of its base.
func (s *Segment) Last() bool { return s.last }

// NewSegment builds the next segment of the new base the search index
// stored in tx needs (BaseNeeded): the first of a build, or the one after
// the stored build's last. nil when no base is needed. Its bytes outlive
// tx, which a hook makes a read transaction whose store pages are given
// back as its scan reads them (package store's mapped pages), with its
// garbage collected under the hook's memory limit: the segment's analysis
// is all it holds.
func NewSegment(ctx context.Context, tx *store.CatalogTx) (*Segment, error) {
	if !BaseNeeded(tx) {
		return nil, nil
	}
	b, rec := storedBuild(tx)
	data, next, last, err := buildSegment(ctx, tx, b)
	if err != nil {
		return nil, err
	}
	return &Segment{data: data, prev: bytes.Clone(rec), next: encodeBuild(&next), first: b == nil, last: last, gen: tx.Generation()}, nil
}

// PutSegment stores s, which NewSegment built, unless the build it goes
// on with is no longer the one stored (another process stored a base or a
// segment since: false, nothing stored), or, for a build's first segment,
// the generation moved on (the changes since are not marked). A last
// segment is merged with the stored ones into the base
// (store.PutIndexBuilt), and a delta over it stored of the ids changed
// since the build began. A stored segment that turns out damaged drops
// the build (false): the next starts over. done reports a base stored.
func PutSegment(tx *store.CatalogTx, s *Segment) (stored, done bool, err error) {
	if !tx.Persistent() || !BaseNeeded(tx) {
		return false, false, nil
	}
	if s.first {
		if tx.Generation() != s.gen {
			return false, false, nil
		}
		if err := tx.StartIndexBuild(s.data, s.next); err != nil {
			return false, false, fmt.Errorf("catalog: store index segment: %w", err)
		}
	} else {
		if !bytes.Equal(tx.IndexBuild(), s.prev) {
			return false, false, nil
		}
		b, err := decodeBuild(s.next)
		if err != nil {
			return false, false, err
		}
		if err := tx.PutIndexSegment(b.segs-1, s.data, s.next); err != nil {
			return false, false, fmt.Errorf("catalog: store index segment: %w", err)
		}
	}
	if !s.last {
		return true, false, nil
	}
	b, err := decodeBuild(s.next)
	if err != nil {
		return false, false, err
	}
	segs := make([][]byte, b.segs)
	for i := range segs {
		segs[i] = tx.IndexSegment(i)
	}
	base, err := search.Merge(segs, b.avg)
	if err != nil {
		if err := tx.DropIndexBuild(); err != nil {
			return false, false, err
		}
		return false, false, nil
	}
	if err := tx.PutIndexBuilt(base, b.gen); err != nil {
		return false, false, fmt.Errorf("catalog: store index: %w", err)
	}
	if err := (&Catalog{tx: tx}).SettleDelta(); err != nil {
		return false, false, err
	}
	return true, true, nil
}
