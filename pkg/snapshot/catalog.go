package snapshot

import (
	"context"
	"fmt"
	"strconv"
	"strings"
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

// maxWrites bounds the auto-memory entries one transaction of a
// session's end writes (catalog.Config.MaxWrites; its tombstones apart):
// each is a page of the store written at random, which its commit maps
// again (64 KiB at a time), so the hook's peak grows with them. A memory
// change of more entries goes on in the next transaction (the files past
// the bound left as stored, the one that reached it stored to be made
// again), until CatalogBudget, and at the next session end. Measured at
// 19,905 entries with every memory file changed (~400 entries to write,
// load 4-5), the session's end peaked at 25.4-38.1 MB with 128 a
// transaction and 23.0-28.3 MB with 32; with 128 a session end that
// refused the change peaked at 26-27.5 MB, writing nothing.
const maxWrites = 32

// maxFileWrites bounds the entries a per-file source's transaction of a
// session's end writes (catalog.Config.MaxFileWrites; its files'
// tombstones apart): a file of more entries is brought in over several,
// its parse carried from one to the next (catalog.Memo). A session's end
// that took in a 1,500-line CLAUDE.md and an edit log of 2,000
// observations in one transaction each peaked at 46 MB at 19,905 entries.
// Each entry written is a page its commit maps again, 64 KiB at a time:
// measured on that intake, a commit of 128 mapped ~9.5 MB of the store,
// of 32 ~4.5 MB, and the session ends peaked at 24.4–27.9 MB with 128,
// 24.7–27.0 MB with 64 and 23.4–25.7 MB with 32 (load 3.8–5). With the
// parse carried, a transaction of 32 costs ~15 ms, and the intake's
// transactions ~1.3 s in all (with 128 and no parse carried, 2.3 s).
const maxFileWrites = 32

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
		q := make([]string, len(unknown))
		for i, n := range unknown {
			q[i] = strconv.Quote(n)
		}
		return false, fmt.Errorf("catalog: .intermem/config.json switches unknown sources %s", strings.Join(q, ", "))
	}
	logged := 0
	// A source's transactions after its first take the records of its
	// files that the one before read from it (catalog.Memo).
	memo := new(catalog.Memo)
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
		// transaction, and any source's entries maxWrites (auto-memory)
		// or maxFileWrites a transaction, until none is left or the
		// deadline.
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
				// the index and the commit. What the last transaction's
				// commit mapped again (a page for about each entry it wrote,
				// 64 KiB at a time: 4–10 MB) is given back before this
				// one's Build grows the heap.
				store.Shed(tx)
				ct := store.Catalog(tx)
				ct.ShedReads()
				c, err := catalog.Build(ct, catalog.Config{Env: r.Env, Registry: reg, Switches: only, Now: r.Now, MaxWrites: maxWrites, MaxFileWrites: maxFileWrites, MaxFiles: maxFiles, Memo: memo})
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
			}); err != nil {
				return false, err
			}
		}
	}
	if logged > maxProblemLines {
		r.Logf("catalog: %d more problems: intermem sources lists them", logged-maxProblemLines)
	}
	return true, nil
}

// SettleBase builds the new base of the search index that the stored one
// needs when a delta cannot bring it up to date (catalog.BaseNeeded: none,
// one an older intermem stored, damage, or too many entries changed
// since), which no SettleDelta of RefreshCatalog stores: else every
// read-only search builds what is missing of it until a command that
// writes runs. It is built a segment at a time (catalog.NewSegment,
// PutSegment): each in a read transaction (the store's pages given back
// as they are read, the segment's analysis all it holds, within the
// hook's memory bound) and stored in a write transaction of its own, the
// last merged with the others into the base. It goes on while ctx leaves
// time for another segment (about as long as the last took, and at least
// segmentTime), and stops when a command is waiting for the store (which
// settles the index itself), when the catalog changed under a build's
// first segment, or at ctx's end: what it stored stands, and the next
// session's end goes on from there. It reports whether it stored the
// base.
func SettleBase(ctx context.Context, s *store.Store) (bool, error) {
	return settleBase(ctx, s, func() bool { return true })
}

// settleBase is SettleBase asking more after each segment stored but the
// last whether to go on (a test cuts a build as a deadline would).
func settleBase(ctx context.Context, s *store.Store, more func() bool) (bool, error) {
	took := segmentTime
	for {
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < took {
			return false, nil
		}
		start := time.Now()
		var seg *catalog.Segment
		if err := s.View(func(tx *bolt.Tx) error {
			// The pages the refresh's commits mapped are given back first:
			// a read transaction sheds only as its own reads grow.
			store.Shed(tx)
			var err error
			seg, err = catalog.NewSegment(ctx, store.Catalog(tx))
			// What the build read (up to the shedding threshold past the
			// pages given back last) is given back before the write, whose
			// commit maps its own pages on top.
			store.Shed(tx)
			return err
		}); err != nil || seg == nil {
			return false, err
		}
		if s.Waited() || ctx.Err() != nil {
			return false, ctx.Err()
		}
		var stored, done bool
		if err := s.Update(func(tx *bolt.Tx) error {
			var err error
			stored, done, err = catalog.PutSegment(store.Catalog(tx), seg)
			return err
		}); err != nil || !stored || done {
			return done, err
		}
		if !more() {
			return false, nil
		}
		took = max(time.Since(start), segmentTime)
	}
}

// segmentTime is what a session's end must have left before its deadline
// to start building a segment of the search index's base: about what one
// takes at 4,096 entries on a loaded machine. Past the first, the last
// segment's time (a later one is no larger).
const segmentTime = 500 * time.Millisecond
