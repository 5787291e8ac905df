package catalog

import (
	"context"
	"fmt"
	"time"

	"github.com/intermem/intermem/pkg/search"
	"github.com/intermem/intermem/pkg/store"
)

// Query is a search of the catalog.
type Query struct {
	// Text is what to search for.
	Text string
	// Sources keeps only entries of these sources; empty keeps every
	// enabled source.
	Sources []string
	// Since and Until keep entries dated within [Since, Until] by calendar
	// day (an entry's own date, else when intermem first saw it); zero
	// means unbounded.
	Since, Until time.Time
	// Limit is the most hits; 0 means 10.
	Limit int
	// Now is the time recency is measured from.
	Now time.Time
}

// Hit is one search result: the entry, what validation and promotion say
// of it, and its score (relevance adjusted by confidence and recency; see
// pkg/search). Its Overlay leaves the entry's sightings out (FirstSeen,
// LastSeen, Sessions, Replaced, and the agent and session of its first
// sighting when its overlay record does not name them): a result shows
// the confidence and status, and Get has the rest.
type Hit struct {
	Entry
	Overlay Overlay
	Score   float64
}

// Ranked is a search's candidates, best first, as the index ranked them.
// An entry and its overlay are read from the store only when Hit asks for
// one, so a caller that shows ten of thirty candidates reads ten (each
// read is a few lookups scattered over the store's pages, which a fresh
// process maps in one fault at a time).
type Ranked struct {
	c    *Catalog
	hits []search.Hit
}

// Len is how many candidates r holds.
func (r *Ranked) Len() int { return len(r.hits) }

// Hit reads the candidate at rank i; false when the store no longer holds
// its entry (a caller skips it, as Search does).
func (r *Ranked) Hit(i int) (Hit, bool) {
	h := &r.hits[i]
	e, ok := r.c.tx.Entry(h.ID, h.Source)
	if !ok {
		return Hit{}, false
	}
	return Hit{Entry: fromStore(&e), Overlay: judged(r.c.tx, h.ID), Score: h.Score}, true
}

// Search ranks the live entries of the enabled sources by relevance to
// q.Text, then confidence and recency, and reads every hit (Rank reads
// them on demand); stale entries are ranked like any other and marked by
// their overlay's Status. A filter naming an unknown or switched-off
// source is an error (ErrUnknownSource, ErrSwitchedOff).
func (c *Catalog) Search(q Query) ([]Hit, error) {
	r, err := c.Rank(q)
	if err != nil {
		return nil, err
	}
	var out []Hit
	for i := range r.Len() {
		if h, ok := r.Hit(i); ok {
			out = append(out, h)
		}
	}
	return out, nil
}

// Rank is Search without reading the hits: the best q.Limit candidates,
// in order, from the index alone.
func (c *Catalog) Rank(q Query) (*Ranked, error) {
	if err := c.CheckSources(q.Sources); err != nil {
		return nil, err
	}
	srcs := q.Sources
	if len(srcs) == 0 {
		for _, s := range c.srcs {
			if s.On {
				srcs = append(srcs, s.Name)
			}
		}
		if len(srcs) == 0 {
			return &Ranked{c: c}, nil
		}
	}
	x, err := c.Index()
	if err != nil {
		return nil, err
	}
	hits := x.Search(q.Text, search.Options{Sources: srcs, Since: q.Since, Until: q.Until, Limit: q.Limit, Now: q.Now})
	return &Ranked{c: c, hits: hits}, nil
}

// Settle stores the search index when what it ranks by (the entries, or
// the overlays' confidence and staleness) changed since it was stored. A
// writer calls it last in its writable transaction, after its own overlay
// writes, so that the read-only commands and intermem-mcp, which cannot
// store it, decode the index in place instead of building it at every
// search. Usually that stores a delta of the entries changed since the
// base (see Index); past maxDelta of them, a new base. With a read-only
// transaction it does nothing.
func (c *Catalog) Settle() error {
	if !c.current(true) {
		_, err := c.index(true)
		return err
	}
	return nil
}

// SettleDelta is Settle for a hook (SessionEnd's refresh), whose memory is
// bounded: it stores the index when a delta over the stored base brings it
// up to date, and leaves it for the next command's Settle when that takes
// building a new base (none stored, or too many entries changed).
func (c *Catalog) SettleDelta() error {
	if !c.current(false) {
		_, err := c.index(false)
		return err
	}
	return nil
}

// current reports whether there is nothing for Settle to store: the
// transaction is read-only, or the stored index is at the generation —
// and, when deep, decodes. An index at the generation that does not
// decode — one an older intermem stored in another format, or a damaged
// one — is not current for a command's Settle: a read-only search cannot
// replace it and would build the whole index at every search (a second at
// 20,000 entries) until an entry changed. A hook's SettleDelta does not
// decode it (it runs in every source's transaction at a session's end,
// and could not build the new base such an index needs anyway).
func (c *Catalog) current(deep bool) bool {
	if !c.tx.Persistent() {
		return true
	}
	b, at := c.tx.Index()
	if b == nil || at != c.tx.Generation() {
		return false
	}
	if !deep {
		return true
	}
	if _, err := search.DecodeShared(b); err != nil {
		return false
	}
	if d := c.tx.IndexDelta(); d != nil {
		if _, err := search.DecodeShared(d); err != nil {
			return false
		}
	}
	return true
}

// SettleStore is Settle for a writable transaction that did not build the
// catalog (a command recording validation results, an operation's
// bookkeeping): it stores the index over what the store holds, if stale.
func SettleStore(tx *store.CatalogTx) error {
	return (&Catalog{tx: tx}).Settle()
}

// maxDelta is how many ids may have changed since the index's base was
// built before a new base is built instead of a delta: an eighth of the
// base, so that a delta costs at most about an eighth of a base to build
// and to read past, and the average field lengths it is normalised by
// (the base's) are those of most of the collection.
func maxDelta(base int) int { return base/8 + 64 }

// Index returns the search index over every live entry the catalog holds,
// its bytes valid only inside the transaction. It is stored in two parts
// (store.CatalogTx.Index): a base over every entry, and a delta over it
// of the entries whose ids changed since (search.BuildDelta, search.Stack).
// While they are at the catalog's generation both are decoded in place;
// else, when a base decodes and at most maxDelta ids changed, the delta
// is built again over those ids' entries alone (reading no other entry);
// else a new base is built over every entry. What is built is stored when
// the transaction is writable. A part that does not decode is built
// again, never trusted.
func (c *Catalog) Index() (*search.Index, error) { return c.index(true) }

// index is Index; without full, a new base is not built (nil, nil).
func (c *Catalog) index(full bool) (*search.Index, error) {
	gen := c.tx.Generation()
	raw, at := c.tx.Index()
	if raw != nil {
		if base, err := search.DecodeShared(raw); err == nil {
			x, err := c.delta(base, at == gen, gen)
			if x != nil || err != nil {
				return x, err
			}
		}
		// A damaged base, or too much changed: a new base below.
	}
	if !full {
		return nil, nil
	}
	ctx := context.Background()
	b, from, fresh, err := completeBase(ctx, c.tx)
	if err != nil {
		return nil, err
	}
	if c.tx.Persistent() {
		if fresh {
			err = c.tx.PutIndex(b, gen)
		} else {
			err = c.tx.PutIndexBuilt(b, from)
		}
		if err != nil {
			return nil, fmt.Errorf("catalog: store index: %w", err)
		}
	}
	x, err := search.DecodeShared(b)
	if err != nil || from == gen {
		return x, err
	}
	// A build gone on with: the ids changed since it began, in a delta.
	if d, err := c.delta(x, false, gen); d != nil || err != nil {
		return d, err
	}
	// Too many: a base over every entry as they are.
	if b, err = completeFresh(ctx, c.tx); err != nil {
		return nil, err
	}
	if c.tx.Persistent() {
		if err := c.tx.PutIndex(b, gen); err != nil {
			return nil, fmt.Errorf("catalog: store index: %w", err)
		}
	}
	return search.DecodeShared(b)
}

// BaseNeeded reports whether the search index stored in tx cannot be
// brought up to date without a new base, which SettleDelta leaves to the
// next command: none is stored (or one is being built), the base or a
// delta at the generation does not decode (an older intermem's format,
// damage), or more than maxDelta ids changed since the base. Until one is
// stored, every read-only search builds what is missing of it in memory
// (at 20,000 entries, the whole index: a second and 35 MB). A hook that
// finds it so builds the base a segment at a time (NewSegment, PutSegment).
func BaseNeeded(tx *store.CatalogTx) bool {
	raw, at := tx.Index()
	if raw == nil {
		return true
	}
	base, err := search.DecodeShared(raw)
	if err != nil {
		return true
	}
	if at == tx.Generation() {
		if d := tx.IndexDelta(); d != nil {
			if _, err := search.DecodeShared(d); err != nil {
				return true
			}
		}
		return false
	}
	return len(tx.IndexChanged()) > maxDelta(base.Len())
}

// delta returns base with its delta stacked on it: the stored one when
// current says it is at the generation and it decodes, else one built
// over the ids changed since base (stored when the transaction is
// writable); nil when more than maxDelta ids changed.
func (c *Catalog) delta(base *search.Index, current bool, gen uint64) (*search.Index, error) {
	if current {
		raw := c.tx.IndexDelta()
		if raw == nil {
			return base, nil
		}
		if d, err := search.DecodeShared(raw); err == nil {
			return search.Stack(base, d), nil
		}
		// A damaged delta is built again.
	}
	ids := c.tx.IndexChanged()
	if len(ids) > maxDelta(base.Len()) {
		return nil, nil
	}
	var docs []search.Doc
	for _, id := range ids {
		for _, e := range c.tx.EntriesOf(id) {
			if e.Gone.IsZero() {
				docs = append(docs, docOf(c.tx, &e))
			}
		}
	}
	d := search.BuildDelta(base, docs, ids)
	if c.tx.Persistent() {
		if err := c.tx.PutIndexDelta(d.Encode(), gen); err != nil {
			return nil, fmt.Errorf("catalog: store index delta: %w", err)
		}
	}
	return search.Stack(base, d), nil
}

// docOf is what the index knows of a live entry: its fields, its date
// (else when it was first seen), its overlay's confidence and staleness.
func docOf(tx *store.CatalogTx, e *store.CatalogEntry) search.Doc {
	d := search.FromEntry(&e.Entry)
	if d.Date.IsZero() {
		d.Date = e.FirstSeen
	}
	o := overlayOf(tx, e.ID)
	d.Confidence, d.Stale = o.Confidence, o.Status == StatusStale
	return d
}
