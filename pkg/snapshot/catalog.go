package snapshot

import (
	"context"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/catalog"
	"github.com/intermem/intermem/pkg/source"
	"github.com/intermem/intermem/pkg/source/automemory"
	"github.com/intermem/intermem/pkg/source/sources"
	"github.com/intermem/intermem/pkg/store"
)

// CatalogBudget bounds what one SessionEnd spends bringing the catalog's
// other sources up to date: no source is started past it, and sources not
// reached are brought up to date at the next session's end.
const CatalogBudget = 2 * time.Second

// maxProblemLines bounds the log lines of one refresh: the problems it
// found first, then a count.
const maxProblemLines = 10

// maxWrites bounds the auto-memory entries one session's end writes or
// tombstones (catalog.Config.MaxWrites): each is a page of the store
// written at random, which its commit maps again (64 KiB at a time), so
// the hook's peak grows with them. Measured at 19,905 entries, the whole
// session's end peaked at 26.2 MB with 98 written, 29.0 MB with 118 and
// 31.5 MB with 192 (a memory file of 96 facts rewritten).
const maxWrites = 128

// maxFiles bounds the changed files of a per-file source one transaction
// of a session's end parses and stores (catalog.Config.MaxFiles); the
// refresh goes on in another, until none is left or CatalogBudget. Its
// commit maps again, 64 KiB at a time, a page for about each entry
// written (the entries are keyed at random): measured at 19,905 entries
// after 2,612 documents changed, 64 files a transaction mapped ~8 MB at
// each commit and the session's end peaked at 28–31 MB; 32 files, ~5 MB
// (about a quarter more CPU for the whole refresh).
const maxFiles = 32

// Refresh is what RefreshCatalog needs.
type Refresh struct {
	Env source.Env
	// Switches are the "sources" of .intermem/config.json.
	Switches map[string]bool
	Now      time.Time
	// Deadline: no source is started after it (zero: none).
	Deadline time.Time
	Logf     func(string, ...any)
}

// RefreshCatalog brings every enabled source up to date in the catalog
// (package catalog: incrementally, an unchanged file costs a stat), one
// source per write transaction, so that what one session end did stands
// when the next one goes on, and each stores the search index when a
// delta of the entries changed brings it up to date
// (catalog.SettleDelta). SessionStart reads what it stored without
// scanning a file, and a read-only search (intermem search, the MCP
// server's tools) finds every source's stored state current, reading
// nothing but stats.
//
// Auto-memory comes last: it is read whole (whether an index line is a
// fact depends on the other files), from the parses the session's turns
// stored (Sync), so once the memory changed it costs a decode of every
// memory file's parse, where another source costs a stat a file. Before,
// it was left to the commands that write, and every read-only search
// after a memory edit scanned it whole again (0.3 s at 19,905 entries)
// until a user ran one.
// Problems are logged once, when the file content that has them is
// parsed. It reports whether every source was reached.
func RefreshCatalog(s *store.Store, r Refresh) (bool, error) {
	if r.Logf == nil {
		r.Logf = func(string, ...any) {}
	}
	reg := sources.Registry()
	if unknown := reg.Unknown(r.Switches); len(unknown) > 0 {
		return false, fmt.Errorf("catalog: .intermem/config.json switches unknown sources %q", unknown)
	}
	logged := 0
	// Auto-memory last (see above): the others cost a stat a file.
	var order, last []source.Source
	for _, src := range reg.Enabled(r.Switches) {
		if src.Name() == automemory.Name {
			last = append(last, src)
		} else {
			order = append(order, src)
		}
	}
	for _, src := range append(order, last...) {
		name := src.Name()
		if s.Waited() {
			r.Logf("catalog: a command is waiting for the store; %s and the sources after it are brought up to date at the next session end", name)
			return false, nil
		}
		if !r.Deadline.IsZero() && time.Now().After(r.Deadline) {
			r.Logf("catalog: %s and the sources after it are brought up to date at the next session end", name)
			return false, nil
		}
		only := map[string]bool{}
		for _, n := range reg.Names() {
			only[n] = n == name
		}
		// A per-file source's changed files are brought in maxFiles a
		// transaction, until none is left or the deadline.
		partial := true
		for first := true; partial; first = false {
			if !first && (s.Waited() || !r.Deadline.IsZero() && time.Now().After(r.Deadline)) {
				r.Logf("catalog: %s: changed files left for the next session end", name)
				return false, nil
			}
			partial = false
			if err := s.Update(func(tx *bolt.Tx) error {
				// Most of what a refresh reads it does not write (every
				// memory file's stored parse, to write one file's entries):
				// its pages are given back as they grow, and again before
				// the index and the commit.
				ct := store.Catalog(tx)
				ct.ShedReads()
				c, err := catalog.Build(ct, catalog.Config{Env: r.Env, Registry: reg, Switches: only, Now: r.Now, MaxWrites: maxWrites, MaxFiles: maxFiles})
				if err != nil {
					return err
				}
				store.Shed(tx)
				partial = c.Partial()
				fresh := c.Fresh()
				for _, p := range fresh {
					if logged < maxProblemLines {
						r.Logf("catalog: %s:%d: %s", p.Path, p.Line, p.Message)
					}
					logged++
				}
				// What changed is indexed (a delta over the stored index),
				// once the source is done, so that the next search decodes
				// the index instead of building it; a new base is left to
				// SettleBase.
				if partial {
					return nil
				}
				if err := c.SettleDelta(); err != nil {
					return err
				}
				store.Shed(tx)
				return nil
			}); errors.Is(err, catalog.ErrTooManyWrites) {
				r.Logf("%v: brought in by the next intermem command that writes (validate, sweep, synthesize)", err)
			} else if err != nil {
				return false, err
			}
		}
	}
	if logged > maxProblemLines {
		r.Logf("catalog: %d more problems: intermem sources lists them", logged-maxProblemLines)
	}
	return true, nil
}

// SettleBase stores a new base of the search index when the stored one
// cannot be brought up to date by a delta (catalog.BaseNeeded: none, one
// an older intermem stored, damage, or too many entries changed since),
// which no SettleDelta of RefreshCatalog stores: else every read-only
// search builds the whole index until a command that writes runs. The
// base is built in a read transaction (catalog.NewBase: the store's pages
// given back as they are read, within the hook's memory bound) and
// stored in a write transaction, unless the catalog changed between the
// two or a command is waiting for the store (it settles the index
// itself). It gives up when ctx is done. It reports whether it stored a
// base.
func SettleBase(ctx context.Context, s *store.Store) (bool, error) {
	var (
		base []byte
		gen  uint64
	)
	if err := s.View(func(tx *bolt.Tx) error {
		// The pages the refresh's commits mapped are given back first:
		// a read transaction sheds only as its own reads grow.
		store.Shed(tx)
		ct := store.Catalog(tx)
		if !catalog.BaseNeeded(ct) {
			return nil
		}
		var err error
		base, gen, err = catalog.NewBase(ctx, ct)
		// What the build read (up to the shedding threshold past the
		// pages given back last) is given back before the write, whose
		// commit maps its own pages on top.
		store.Shed(tx)
		return err
	}); err != nil || base == nil {
		return false, err
	}
	if s.Waited() || ctx.Err() != nil {
		return false, ctx.Err()
	}
	stored := false
	err := s.Update(func(tx *bolt.Tx) error {
		var err error
		stored, err = catalog.PutBase(store.Catalog(tx), base, gen)
		return err
	})
	return stored, err
}
