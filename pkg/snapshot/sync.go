package snapshot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/memlist"
	"github.com/intermem/intermem/pkg/source"
	"github.com/intermem/intermem/pkg/source/automemory"
	"github.com/intermem/intermem/pkg/store"
)

// Incremental sync
//
// A Stop hook brings one session's sightings up to date with the memory
// files (Sync). What it costs is set by what changed, not by how much
// memory there is:
//
//   - Each file's state is kept between runs (store.FileState, keyed by
//     the file's redacted name): the fingerprint it had when it was last
//     read (List: size, modification time, inode, mode — one lstat), the
//     ids of its entries then, and when (At).
//   - A file whose fingerprint equals its state's is not read. If the
//     session completed a pass (Session.Synced) at or after the state was
//     set, it saw those entries already, and the file costs nothing more;
//     otherwise its ids are marked seen from the state (an entry already
//     seen in the session counts nothing).
//   - A changed file is read and parsed (automem.Parse, which redacts),
//     and its entries are recorded as Record records an observation: once
//     per session, a new entry linked to the similar one its file lost.
//     Its parse, unscreened (automemory.Encode), is stored in
//     the catalog at the fingerprint the open file had before it was read
//     (store.CatalogTx.PutParse), for the session start and the next
//     catalog.Build to decode rather than read the file again.
//   - A fingerprint taken within RacyWindow of the file's modification
//     time is not trusted (the file could change again within the clock's
//     granularity, keeping it): the next pass reads the file again.
//   - A pass stops starting new files at its deadline and commits what it
//     did; the next pass — the next turn — finds those files settled and
//     goes on with the rest. Only a completed pass sets the session's
//     fingerprint (the hook's "nothing changed" check) and Synced, so a
//     session is never taken to have seen what no pass read.
//   - A hook's pass is bounded by memory as well as by time (SyncStore):
//     it commits every batch of files read (HookBatch: 512 entries,
//     1,024 files, 1 MiB read) as a pass stopped at its deadline
//     commits — the session's sweep resumed at the first file not reached,
//     no fingerprint —, lets go of their parses and records, and goes on
//     in the next transaction with the next file. What it holds across
//     transactions is the listing's (at most memlist.ChunkEntries
//     directory entries and the sub-folder files pointers name, their
//     names and keys) and the counts it writes in key order (below, at
//     most 16,384), never what the files hold; a pass over every file
//     of a memory changed at once (a first install, a pull, a directory
//     replaced) holds one batch at a time, and one cut short between two
//     commits is resumed by the next turn like one stopped at its
//     deadline.
//   - A skipped file (not a regular file, too large, unreadable) is logged
//     once per fingerprint, its reason kept in its state.
//
// Sync and Record keep the same records, so spooled observations (Record)
// and passes (Sync) mix freely: a state Record wrote has no fingerprint,
// and the next pass reads that file again.
//
// Counting in key order
//
// What a commit adds to the hook's resident set is set by the pages it
// rewrites, not by what its transaction holds: bbolt reads each page it
// replaces again at the commit (its other keys are copied into the new
// page, and the page is freed), through its mapping of the file, and the
// kernel maps 64 KiB around each page faulted there (fault-around, which
// bbolt's MADV_RANDOM does not stop; store/mapped.go). Entry ids are
// hashes, so the counts of a batch's entries fall on pages all over the
// sightings and the session's seen marks: a new session's pass after
// every memory file changed (a session's end that had no turn, 19,905
// entries) rewrote every page of both in each batch, and each commit
// mapped 15–17 MB of the store again.
//
// So SyncStore's pass holds the counts of entries already recorded — their
// sighting stored: most of what such a pass counts — in memory
// (recorder.later, at most Batch.Marks of them), and writes them in key
// order, laterChunk a transaction (writeLater; the last in the transaction
// that ends the pass, and a transaction that read no file writes a chunk
// itself), once the pass met its last file or its deadline, or holds
// Batch.Marks: a transaction rewrites the pages of a range of keys, and a
// page is rewritten about once over the pass, as in one transaction. A new entry's count is written with its
// record, in its batch (a record is never without its sighting). Until
// the counts held are written, a commit leaves the session's sweep to
// resume at the first file they came from (syncPass.held): a pass cut
// short there loses none — the next turn finds those files unchanged,
// their states written, and marks whatever of their entries is not marked
// seen — and counts none twice (a count and its seen mark are written
// together).

// minWork is how many files needing work a pass does whatever its
// deadline (a variable for tests).
var minWork = 64

// RacyWindow is how recently before a pass a file may have been modified
// for its fingerprint to be trusted at the next pass.
const RacyWindow = 2 * time.Second

// Pass says who is looking and until when.
type Pass struct {
	Session   string
	Event     string
	At        time.Time // the observation's time (the hook's clock)
	Agent     string    // agent_id of a subagent's hook, "" for the main agent
	AgentType string    // agent_type, when the payload has one
	// Deadline, when set, is the wall-clock time after which no new file
	// is started; Sync returns with Complete false and the rest is left for
	// the next pass.
	Deadline time.Time
	// Spooled marks a listing spooled while the store was busy: files
	// whose state matches are marked seen; a changed file is read only if
	// it still has the listed fingerprint (it then holds what the spooling
	// hook would have read), else left for a later pass.
	Spooled bool
	// Logf receives one line per skipped file (once per fingerprint).
	Logf func(string, ...any)
	// now reads the wall clock (tests replace it).
	now func() time.Time
}

// Progress is what one pass did.
type Progress struct {
	Files   int // listed
	Done    int // brought up to date in this pass (or already)
	Read    int // read and parsed
	Entries int // newly marked seen in the session
	Unread  int // changed files a spooled listing could not mark (changed again since)
	// Complete is set when the pass ended a clean sweep: every file was
	// met (sweep.go).
	Complete bool
	// Stopped is set when the pass stopped at its deadline with files
	// left to read.
	Stopped bool
	// Settled counts the files of a chunk a pass had nothing to do with
	// (sweep.go).
	Settled int
	// Commits counts the transactions SyncStore committed before its
	// last (batches, and the counts it wrote in key order).
	Commits int
}

// Subs returns the sub-folder files that pointers named at the last pass
// (for List).
func Subs(tx *bolt.Tx) []string {
	subs, err := store.GetSubs(tx)
	if err != nil {
		return nil
	}
	return subs
}

// Sync brings the session's sightings up to date with l, reading only
// files whose fingerprint changed, until p.Deadline. It runs in one write
// transaction; what it did stands even when it stops early. A hook runs
// its pass with SyncStore, in transactions of bounded size.
func Sync(tx *bolt.Tx, l *Listing, p Pass) (Progress, error) {
	ps := newSyncPass(l, p, Batch{})
	_, err := ps.step(tx)
	return ps.pr, err
}

// Batch bounds what one transaction of a pass holds (SyncStore): the
// changed files it reads, their bytes and their entries — each read
// file's entries and parse are held until the commit, each entry's
// record and count read at random, the state, parse and new entries of
// each file written, and the commit maps again the page of every record
// it replaces — and the counts of entries already recorded the pass holds
// to write in key order (Counting in key order). A zero field is no
// bound; a zero Batch is one transaction, counts written in it.
type Batch struct {
	Files   int
	Bytes   int
	Entries int // of the files read
	Marks   int // counts held for writeLater
}

// HookBatch is the batch of a hook's pass. A commit maps again, 64 KiB
// around each, the pages it rewrites: a read file's state and parse, a
// new entry's record, sighting and seen mark, each at a random place of
// the store (Counting in key order). Measured at 19,905 entries (401
// memory files, every one changed by a line; load 7–10), with the counts
// of recorded entries written in key order, a new session's SessionEnd
// peaked at 28–29 MB in batches of 1,024 entries and 24–26 MB in batches
// of 512 (38–39 MB before, in batches of 2,048, its counts written with
// them: every page of the sightings and seen marks rewritten by each),
// and a settled session's Stop after the same change at 26–27 MB and
// 24–25 MB (29–30 MB at 2,048): about 25 files a batch, 20 commits for
// the pass. Files bounds a memory of many one-memory files, where a
// commit costs most (TestStopAtScale's 100,000: a commit of that store is
// an fdatasync and a freelist of many pages, and a turn meets up to 4,096
// files; read 512 a transaction, its first sweep took 81 turns, 83 at
// 1,024), Marks the counts a pass holds (16,384: about 1 MB).
var HookBatch = Batch{Files: 1024, Bytes: 1 << 20, Entries: 512, Marks: 1 << 14}

// SyncStore is Sync in write transactions of s, each holding at most
// batch b of work: a transaction commits what it did as a pass stopped
// there would (the session's sweep resumed at the first file it did not
// reach, or at the first whose counts it holds, no "nothing changed"
// fingerprint), its parses and records are let go, and the next
// transaction goes on from that file, until the pass is done or past
// p.Deadline; the counts of recorded entries are written in key order in
// transactions of their own (Counting in key order). A command waiting for the store ends the
// pass at a commit (Progress.Stopped: the rest is the next turn's). A
// pass cut short anywhere — an error, the process killed between two
// transactions — leaves the store as the last commit left it, which the
// next turn resumes from; one that runs to its end leaves the store as
// Sync in one transaction leaves it.
func SyncStore(s *store.Store, l *Listing, p Pass, b Batch) (Progress, error) {
	ps := newSyncPass(l, p, b)
	for {
		var done bool
		if err := s.Update(func(tx *bolt.Tx) error {
			// The pages the last commit mapped are given back first.
			store.Shed(tx)
			var err error
			done, err = ps.step(tx)
			return err
		}); err != nil {
			return ps.pr, err
		}
		if done {
			return ps.pr, nil
		}
		ps.pr.Commits++
		if s.Waited() {
			// The last commit left the pass as one stopped there: at the
			// first file whose counts it held, which the next turn counts.
			ps.pr.Stopped = true
			return ps.pr, nil
		}
		// The counts held, once the pass ended (but those its last
		// transaction writes) or as many as it may hold.
		keep := -1
		switch {
		case ps.ended:
			keep = laterChunk
		case ps.r.full(ps.batch):
			keep = 0
		}
		if keep >= 0 {
			if waited, err := ps.writeLater(s, keep); err != nil || waited {
				ps.pr.Stopped = ps.pr.Stopped || waited
				return ps.pr, err
			}
		}
	}
}

// laterChunk bounds the counts one transaction writes in key order (a
// variable for tests).
var laterChunk = 4096

// writeLater writes the counts the recorder holds (recorder.later) in key
// order, laterChunk a transaction, each committed apart (Counting in key
// order), until it holds at most keep: the pass's last transaction, which
// reads no file, writes those (step). A command waiting for the store
// stops it between two transactions (it reports waited): the counts not
// written are the next turn's, whose sweep resumes at the first file they
// came from (commit), and it counts only what is not marked seen by then.
func (ps *syncPass) writeLater(s *store.Store, keep int) (waited bool, err error) {
	for len(ps.r.later) > keep {
		if err := s.Update(func(tx *bolt.Tx) error {
			// The pages the last commit mapped are given back first.
			store.Shed(tx)
			return ps.writeHeld(tx)
		}); err != nil {
			return false, err
		}
		ps.pr.Commits++
		if len(ps.r.later) > keep && s.Waited() {
			return true, nil
		}
	}
	return false, nil
}

// writeHeld writes in tx the laterChunk counts of the lowest keys that
// the recorder holds: each entry marked seen for the session, and the
// session added to its sighting unless count only marked it.
func (ps *syncPass) writeHeld(tx *bolt.Tx) error {
	r := ps.r
	ids := make([]string, 0, len(r.later))
	for id := range r.later {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	ids = ids[:min(len(ids), laterChunk)]
	seen, _, err := store.OpenSeenMarks(tx, ps.p.Session)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := seen.Mark(id); err != nil {
			return err
		}
	}
	for _, id := range ids {
		if !r.later[id] {
			continue // marked seen, not counted (count)
		}
		// As count read it: no other writer meanwhile, and no other count
		// of it in the pass.
		s, _, err := store.GetSighting(tx, id)
		if err != nil {
			return err
		}
		if err := store.PutSighting(tx, id, r.bump(s)); err != nil {
			return err
		}
	}
	ps.pr.Entries += len(ids)
	for _, id := range ids {
		delete(r.later, id)
	}
	if len(r.later) == 0 {
		r.later = map[string]bool{}
		ps.held = -1
	}
	return nil
}

// syncPass is one pass over a listing, which SyncStore spreads over
// transactions: what it carries from one to the next is bounded by the
// listing (at most memlist.ChunkEntries directory entries and the
// sub-folder files pointers name), never by what the files hold.
type syncPass struct {
	l     *Listing
	p     Pass
	batch Batch
	at    time.Time
	pr    Progress
	r     *recorder
	sess  store.Session
	begun bool
	// The files to bring up to date: the listing, then the sub-folder
	// files that pointers in files read by this pass name (as automem.Scan
	// reads them in the same scan), each once.
	files   []File
	names   map[string]bool
	drained int             // r.found added to files
	listed  map[string]bool // the state keys of the files reached
	subs    []string        // the sub-folder files the reached files' states name
	next    int             // the next file of files
	stopped bool            // at the deadline
	worked  int             // files that needed work
	// held is the first file of files whose counts the recorder holds
	// (recorder.later), -1 when none: a commit leaves the session's
	// sweep to resume there (commit), until writeLater wrote them.
	held int
	// ended is set when the pass met its last file or its deadline with
	// counts held: they are written (writeLater) before the transaction
	// that ends it.
	ended bool
	// A chunk of a sweep that a pass found all recorded, unchanged since,
	// and recorded before the session's last clean sweep began, costs
	// nothing more (chunk).
	ck, sum   string
	old       chunk
	settled   bool
	chunkRead bool // a file of the chunk was read
}

func newSyncPass(l *Listing, p Pass, b Batch) *syncPass {
	if p.now == nil {
		p.now = time.Now
	}
	if p.Logf == nil {
		p.Logf = func(string, ...any) {}
	}
	ps := &syncPass{l: l, p: p, batch: b, at: p.At.UTC(), files: l.Files, held: -1,
		names: make(map[string]bool, len(l.Files)), listed: make(map[string]bool, len(l.Files))}
	for _, f := range l.Files {
		ps.names[f.Name] = true
	}
	return ps
}

// begin reads the session in the pass's first transaction, and counts
// the pass as one observation of it.
func (ps *syncPass) begin(tx *bolt.Tx) error {
	p, at := ps.p, ps.at
	sess := &ps.sess
	var err error
	if *sess, _, err = store.GetSession(tx, p.Session); err != nil {
		return err
	}
	prior := *sess
	if sess.ID == "" {
		*sess = store.Session{ID: p.Session, First: at, Last: at}
		// A session begins: the oldest sessions' seen buckets beyond
		// store.KeepSeen go.
		if _, err := store.PruneSeen(tx, p.Session); err != nil {
			return err
		}
	}
	if at.Before(sess.First) {
		sess.First = at
	}
	if !at.Before(sess.Last) {
		sess.Last = at
	}
	sess.Observations++
	sess.Ended = sess.Ended || p.Event == "SessionEnd"
	// counted is taken here and kept for the whole pass: the first
	// commit makes the session's seen bucket, and a later transaction's
	// openSeen would no longer know it had been pruned.
	seen, counted, err := openSeen(tx, p.Session, prior)
	if err != nil {
		return err
	}
	ps.r = &recorder{tx: tx, seen: seen, counted: counted, at: at, session: p.Session, agent: p.Agent, agentType: p.AgentType,
		shed: ps.batch != (Batch{})}
	if ps.batch != (Batch{}) {
		ps.r.later = map[string]bool{}
	}
	ps.r.reset(tx, seen)
	ps.ck, ps.sum = chunkOf(ps.l)
	if p.Spooled {
		ps.ck = ""
	}
	ps.old, ps.settled, err = chunkState(tx, ps.ck, ps.sum, sess)
	ps.begun = true
	return err
}

// full reports whether the transaction holds a batch of work, or the
// recorder as many counts as it may hold.
func (ps *syncPass) full() bool {
	r, b := ps.r, ps.batch
	return b.Files > 0 && r.batchFiles >= b.Files ||
		b.Bytes > 0 && r.batchBytes >= b.Bytes ||
		b.Entries > 0 && r.batchEntries >= b.Entries ||
		r.full(b)
}

// full reports whether r holds batch b's bound of counts for writeLater.
func (r *recorder) full(b Batch) bool {
	return b.Marks > 0 && len(r.later) >= b.Marks
}

// late reports, before a file that needs work, whether the pass is past
// its deadline; a pass always does at least minWork such files, so that
// every turn makes progress however slow the machine.
func (ps *syncPass) late() bool {
	if ps.p.Deadline.IsZero() || ps.worked < minWork || !ps.p.now().After(ps.p.Deadline) {
		ps.worked++
		return false
	}
	ps.stopped = true
	return true
}

// discover adds the sub-folder files that pointers of the files read
// name to the files of the pass.
func (ps *syncPass) discover() {
	if ps.p.Spooled {
		return
	}
	r := ps.r
	for ; ps.drained < len(r.found); ps.drained++ {
		if f, ok := memlist.SubFile(ps.l.Dir, r.found[ps.drained]); ok && !ps.names[f.Name] {
			ps.names[f.Name] = true
			ps.files = append(ps.files, f)
		}
	}
}

// step runs the pass in tx until it is done (the last file met, or the
// deadline) or tx holds a batch of work, and commits what it did to tx.
// It reports whether the pass is done.
func (ps *syncPass) step(tx *bolt.Tx) (bool, error) {
	if !ps.begun {
		if err := ps.begin(tx); err != nil {
			return false, err
		}
	} else {
		seen, _, err := store.OpenSeenMarks(tx, ps.p.Session) // openSeen made it in the first
		if err != nil {
			return false, err
		}
		ps.r.reset(tx, seen)
	}
	p, r, pr := ps.p, ps.r, &ps.pr
	sess := &ps.sess
loop:
	for ; ; ps.next++ {
		ps.discover()
		if ps.next >= len(ps.files) {
			break
		}
		if ps.full() {
			// A batch: committed as a pass stopped here, the next
			// transaction going on from this file.
			return false, ps.commit(tx, false)
		}
		f := ps.files[ps.next]
		if ps.settled && f.At != memlist.AtNone {
			pr.Done++
			pr.Settled++
			continue
		}
		read, later := pr.Read, len(r.later)
		key := safeName(f.Name)
		ps.listed[key] = true
		st, had, err := store.GetFileState(tx, key)
		if err != nil {
			return false, err
		}
		ps.subs = append(ps.subs, st.Sub...)
		switch {
		case f.Skip != "":
			if !had || st.FP != f.FP || st.Skip != f.Skip {
				p.Logf("memory file %s skipped: %s", key, f.Skip)
				if err := store.PutFileState(tx, key, &store.FileState{At: ps.at, FP: f.FP, Skip: f.Skip, IDs: []string{}}); err != nil {
					return false, err
				}
			}
		case had && st.FP == f.FP && !st.Racy && st.Skip == "":
			if !sess.Synced.IsZero() && !st.At.After(sess.Synced) {
				break // seen in a pass that completed after this state
			}
			fresh := r.freshOf(st.IDs)
			if len(fresh) == 0 {
				break
			}
			if ps.late() {
				break loop // this file is the next turn's
			}
			ok, err := r.markAll(fresh)
			if err != nil {
				return false, err
			}
			if ok {
				break
			}
			if p.Spooled {
				if f, ok = stillAsListed(ps.l.Dir, f); !ok {
					pr.Unread++
					continue
				}
			}
			// An entry the store lost: read the file.
			if err := r.readInto(ps.l.Dir, f, key, &st, had, &ps.subs, pr); err != nil {
				return false, err
			}
		default:
			if p.Spooled {
				var ok bool
				if f, ok = stillAsListed(ps.l.Dir, f); !ok {
					pr.Unread++
					continue
				}
			}
			if ps.late() {
				break loop // this file is the next turn's
			}
			if err := r.readInto(ps.l.Dir, f, key, &st, had, &ps.subs, pr); err != nil {
				return false, err
			}
		}
		if pr.Read > read && f.At != memlist.AtNone {
			ps.chunkRead = true
		}
		if len(r.later) > later && ps.held < 0 {
			ps.held = ps.next
		}
		pr.Done++
	}
	if len(r.later) > 0 && r.batchFiles == 0 {
		// A transaction that read no file writes held counts itself
		// (the pass's last, or one that only marked unchanged files).
		if err := ps.writeHeld(tx); err != nil {
			return false, err
		}
	}
	if len(r.later) > 0 {
		// The counts held are written first (writeLater), then a
		// transaction of its own ends the pass (step again: at its end,
		// or at the same file past the deadline).
		ps.ended = true
		return false, ps.commit(tx, false)
	}
	return true, ps.commit(tx, true)
}

// commit writes what the transaction did: its records, and the session
// as the pass leaves it — ended when done is set, else stopped before
// file ps.next, which the next transaction goes on with.
func (ps *syncPass) commit(tx *bolt.Tx, done bool) error {
	p, r, l, at := ps.p, ps.r, ps.l, ps.at
	pr, sess := &ps.pr, &ps.sess
	// The files before ps.next were reached (the one the deadline
	// stopped at was not); the files not reached are the next turn's,
	// and so are those from the first whose counts are held.
	reached := ps.next
	if ps.held >= 0 {
		reached = min(reached, ps.held)
	}
	pr.Stopped = ps.stopped
	pr.Files = len(ps.files)
	pr.Entries += len(r.seenPuts)
	if err := r.flush(); err != nil {
		return err
	}
	start := l.Start.Start
	if start.IsZero() {
		start = at
	}
	if !p.Spooled {
		// Where the session's sweep goes on (nil: the next turn starts
		// one); files a pointer named this turn are beyond the listing.
		sess.Sweep = resume(l, min(reached, len(l.Files)))
		if sess.Sweep != nil {
			sess.Sweep.Start = start
			sess.Sweep.Resubs = sess.Sweep.Resubs || r.resubs
		}
	}
	switch {
	case !done || ps.stopped || p.Spooled:
		sess.Fingerprint = "" // the next transaction, or turn, goes on
	case !l.Whole:
		// A turn of a sweep over turns (sweep.go).
		sess.Fingerprint = ""
		if !ps.settled && !r.racy && ps.ck != "" {
			if err := putChunk(tx, ps.ck, ps.sum, ps.old, ps.chunkRead, p.Session, at); err != nil {
				return err
			}
		}
		if err := r.addSubs(); err != nil {
			return err
		}
		if l.Last && !l.End.Dirty {
			pr.Complete = true
			if start.After(sess.Synced) {
				sess.Synced = start
			}
			if err := startGone(tx, l.End.Dir); err != nil {
				return err
			}
			if l.End.Resubs || r.resubs {
				if err := rebuildSubs(tx); err != nil {
					return err
				}
			}
		}
	default:
		pr.Complete = true
		// Files that no longer exist lose their state, if this pass is the
		// newest word on them.
		var gone []string
		if err := store.EachFileState(tx, func(k string, fs *store.FileState) error {
			if !strings.HasPrefix(k, "\x00") && !ps.listed[k] && !at.Before(fs.At) {
				gone = append(gone, k)
			}
			return nil
		}); err != nil {
			return err
		}
		if err := store.DeleteFileStates(tx, gone); err != nil {
			return err
		}
		subs := ps.subs
		sort.Strings(subs)
		subs = compact(subs)
		if err := store.PutSubs(tx, subs); err != nil {
			return err
		}
		// A racy file must be read again: no "nothing changed" until then.
		if r.racy {
			sess.Fingerprint = ""
		} else if !at.Before(sess.Last) || sess.Synced.IsZero() {
			sess.Fingerprint = l.FP
		}
		if at.After(sess.Synced) {
			sess.Synced = at
		}
	}
	if done && !p.Spooled && l.Dir != "" {
		if err := cleanGone(tx, l.Dir, Subs(tx)); err != nil {
			return err
		}
	}
	return store.PutSession(tx, p.Session, sess)
}

// addSubs adds the sub-folder files that files read in this pass named
// to the stored list, for the next turns of the sweep (a sweep over
// turns only adds; its end rebuilds the list when a file's changed).
func (r *recorder) addSubs() error {
	if len(r.found) == 0 {
		return nil
	}
	subs := append(Subs(r.tx), r.found...)
	sort.Strings(subs)
	subs = compact(subs)
	return store.PutSubs(r.tx, subs)
}

// rebuildSubs sets the stored list of sub-folder files to those the
// stored file states name.
func rebuildSubs(tx *bolt.Tx) error {
	var subs []string
	if err := store.EachFileState(tx, func(k string, fs *store.FileState) error {
		if !strings.HasPrefix(k, "\x00") {
			subs = append(subs, fs.Sub...)
		}
		return nil
	}); err != nil {
		return err
	}
	sort.Strings(subs)
	return store.PutSubs(tx, compact(subs))
}

// stillAsListed reports whether the file a spooled listing named still
// has the fingerprint it had then, so that reading it now reads what the
// spooling hook would have read. The returned File carries the
// modification time just taken, for RacyWindow.
func stillAsListed(dir string, f File) (File, bool) {
	p := filepath.Join(dir, filepath.FromSlash(f.Name))
	fi, err := os.Lstat(p)
	if err != nil {
		return f, false
	}
	now := memlist.FileOf(f.Name, fi.Mode().Type(), memlist.StatOf(p, fi))
	return now, now.Skip == "" && now.FP == f.FP
}

func compact(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// recorder records sightings for one session in one transaction. Records
// are written at the end in key order: bbolt inserts sorted keys far
// faster than random ones.
//
// Counting the session in an entry changes its sighting (sights), not its
// record: a record is written only when the entry first appears or a read
// of its file changes its description (recs). So a session's first turn
// over an unchanged memory — every entry counted — reads and writes
// sightings of a few dozen bytes each and the session's seen bucket, and
// never a record (TestFirstTurnRewritesNoRecord).
type recorder struct {
	tx               *bolt.Tx
	seen             store.SeenMarks
	counted          time.Time // see openSeen
	at               time.Time
	session          string
	agent, agentType string
	sights           map[string]store.Sighting // counts this pass changed
	recs             map[string]store.Entry    // records this pass made or changed (their descriptions)
	marked           map[string]bool           // seen in this session by this pass
	seenPuts         []string
	racy             bool     // a file read in this pass had a racy fingerprint
	found            []string // sub-folder files named by pointers of files read
	parses           []parse  // of the files read, for the catalog
	resubs           bool     // a file read named other sub-folder files than before
	// What the transaction holds (syncPass.full): files read, their
	// bytes, their entries.
	batchFiles, batchBytes, batchEntries int
	// shed is set for SyncStore's transactions, whose random reads of
	// records give back the store's mapped pages as they grow
	// (store.ShedGrown, every shedEvery reads).
	shed  bool
	reads int
	// later holds, across a SyncStore pass's transactions, the counts of
	// entries already recorded (their sighting stored) until writeLater
	// writes them in key order (see Counting in key order): whether the
	// session is added to the stored sighting (bump) or the entry only
	// marked seen (count). Nil in Sync.
	later map[string]bool
}

// shedEvery is how many record reads of a pass go between two looks at
// its mapped pages (store.ShedGrown), and shedAbove how far they may grow
// past what they were after the last shed: a record read maps at most
// 64 KiB around it, so they exceed shedAbove by at most 2 MiB.
const (
	shedEvery = 32
	shedAbove = 2 << 20
)

// touch counts a record read, and sheds the mapped pages once they grew
// past the store's bound (shed).
func (r *recorder) touch() {
	r.reads++
	if r.shed && r.reads%shedEvery == 0 {
		store.ShedGrown(r.tx, shedAbove)
	}
}

// reset starts a transaction of the pass: what the last one held was
// written by its flush and is let go.
func (r *recorder) reset(tx *bolt.Tx, seen store.SeenMarks) {
	r.tx, r.seen = tx, seen
	r.sights = map[string]store.Sighting{}
	r.recs = map[string]store.Entry{}
	r.marked = map[string]bool{}
	r.seenPuts, r.parses = nil, nil
	r.batchFiles, r.batchBytes, r.batchEntries = 0, 0, 0
}

// sighting returns the count of id as this pass left it; ok is false when
// no entry id is recorded.
func (r *recorder) sighting(id string) (store.Sighting, bool, error) {
	if s, ok := r.sights[id]; ok {
		return s, true, nil
	}
	r.touch()
	s, ok, err := store.GetSighting(r.tx, id)
	if ok && r.later[id] {
		s = r.bump(s)
	}
	return s, ok, err
}

// entry returns the record of id, with its count, as this pass left it.
func (r *recorder) entry(id string) (store.Entry, bool, error) {
	rec, ok := r.recs[id]
	if !ok {
		r.touch()
		var err error
		if rec, ok, err = store.GetSeen(r.tx, id); err != nil || !ok {
			return rec, ok, err
		}
	}
	if s, ok := r.sights[id]; ok {
		rec.Sessions, rec.FirstSeen, rec.LastSeen = s.Sessions, s.FirstSeen, s.LastSeen
	} else if r.later[id] {
		s := r.bump(store.Sighting{Sessions: rec.Sessions, FirstSeen: rec.FirstSeen, LastSeen: rec.LastSeen})
		rec.Sessions, rec.FirstSeen, rec.LastSeen = s.Sessions, s.FirstSeen, s.LastSeen
	}
	return rec, true, nil
}

// fresh reports whether id is yet to be counted for the session.
func (r *recorder) fresh(id string) bool {
	if _, ok := r.later[id]; ok {
		return false
	}
	return !r.marked[id] && !r.seen.Has(id)
}

// count adds the session to s, the count of id, unless the session may
// have counted it before its seen bucket was pruned (openSeen): then id is
// only marked seen. It reports whether it counted. The count of an entry
// already recorded (its sighting stored) goes to later in a SyncStore
// pass, to be written in key order (writeLater); that of a new one is
// written with its record, in this transaction.
func (r *recorder) count(id string, s store.Sighting, recorded bool) bool {
	counted := !mayHaveCounted(s.FirstSeen, r.counted)
	if recorded && r.later != nil {
		r.later[id] = counted
		return counted
	}
	r.marked[id] = true
	r.seenPuts = append(r.seenPuts, id)
	if counted {
		r.sights[id] = r.bump(s)
	}
	return counted
}

// bump returns s, an entry's count, with the pass's session added.
func (r *recorder) bump(s store.Sighting) store.Sighting {
	s.Sessions++
	if r.at.Before(s.FirstSeen) {
		s.FirstSeen = r.at
	}
	if !r.at.Before(s.LastSeen) {
		s.LastSeen = r.at
	}
	return s
}

// freshOf returns the ids yet to be counted for the session.
func (r *recorder) freshOf(ids []string) []string {
	var out []string
	for _, id := range ids {
		if r.fresh(id) {
			out = append(out, id)
		}
	}
	return out
}

// readInto is read for Sync: the file's sub-folder links replace those
// its old state named in subs.
func (r *recorder) readInto(dir string, f File, key string, st *store.FileState, had bool, subs *[]string, pr *Progress) error {
	sub, err := r.read(dir, f, key, st, had)
	if err != nil {
		return err
	}
	if !slices.Equal(sub, st.Sub) {
		r.resubs = true
	}
	*subs = append((*subs)[:len(*subs)-len(st.Sub)], sub...)
	r.found = append(r.found, sub...)
	pr.Read++
	return nil
}

// markAll counts the session for every id of an unchanged file. It
// returns false, marking nothing, when the store has no record of one of
// them (the file must then be read).
func (r *recorder) markAll(ids []string) (bool, error) {
	todo := make([]store.Sighting, len(ids))
	for i, id := range ids {
		s, ok, err := r.sighting(id)
		if err != nil {
			return false, err
		}
		if !ok {
			return false, nil
		}
		todo[i] = s
	}
	for i, id := range ids {
		if r.fresh(id) {
			r.count(id, todo[i], true)
		}
	}
	return true, nil
}

// read reads and parses a changed file and records its entries, as Record
// does for the file in an observation. It returns the sub-folder files
// the file's pointers name.
func (r *recorder) read(dir string, f File, key string, st *store.FileState, had bool) ([]string, error) {
	racy := false
	content, fp, err := readFile(filepath.Join(dir, filepath.FromSlash(f.Name)))
	if err != nil {
		// Gone or changed into something else since the listing: the next
		// pass sees it as it is then.
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("read memory file %s: %w", key, err)
	}
	// A file written within the clock's granularity of this read could be
	// written again without changing its fingerprint: read it next time too.
	if !f.Mod.IsZero() && time.Since(f.Mod) < RacyWindow {
		racy = true
		r.racy = true
	}
	r.batchFiles++
	r.batchBytes += len(content)
	mf := automem.ParseMeasured(f.Name, content)
	r.batchEntries += len(mf.Entries)
	if err := r.keepParse(mf, fp, racy || time.Since(fp.Modified()) < RacyWindow); err != nil {
		return nil, err
	}
	cur := make([]Seen, 0, len(mf.Entries))
	var sub []string
	for _, e := range mf.Entries {
		cur = append(cur, SeenOf(e, nil))
		if e.Kind == automem.Pointer && e.RawLink() == e.Link {
			link := e.Link
			if d := pathDir(f.Name); d != "" {
				link = d + "/" + link
			}
			if strings.Contains(link, "/") {
				sub = append(sub, link)
			}
		}
	}
	newer := !had || !r.at.Before(st.At)
	present := make(map[string]bool, len(cur))
	for _, e := range cur {
		present[e.ID] = true
	}
	var vanished []store.Entry
	if newer && had {
		for _, id := range st.IDs {
			if present[id] {
				continue
			}
			if v, ok, _ := r.entry(id); ok {
				vanished = append(vanished, v)
			}
		}
	}
	for i := range cur {
		e := &cur[i]
		if !r.fresh(e.ID) {
			continue
		}
		rec, exists, err := r.entry(e.ID)
		if err != nil {
			return nil, err
		}
		if !exists {
			rec = store.Entry{ID: e.ID, FirstSeen: r.at, LastSeen: r.at, Agent: r.agent, AgentType: r.agentType, FirstSession: r.session}
			if j := bestPredecessor(e, vanished); j >= 0 {
				rec.Prev = vanished[j].ID
				vanished = append(vanished[:j], vanished[j+1:]...)
			}
		}
		was := rec
		if !r.at.Before(rec.LastSeen) || !exists {
			rec.Kind, rec.File, rec.Section = e.Kind, e.File, e.Section
			rec.Preview, rec.Type, rec.Name = e.preview(), e.Type, e.Name
		}
		if r.count(e.ID, store.Sighting{Sessions: rec.Sessions, FirstSeen: rec.FirstSeen, LastSeen: rec.LastSeen}, exists) &&
			(!exists || !sameDescription(&was, &rec)) {
			r.recs[e.ID] = rec
		}
	}
	if newer {
		ids := make([]string, len(cur))
		for i, e := range cur {
			ids[i] = e.ID
		}
		next := store.FileState{At: r.at, IDs: ids, FP: f.FP, Racy: racy, Sub: sub}
		if err := store.PutFileState(r.tx, key, &next); err != nil {
			return nil, err
		}
	}
	return sub, nil
}

// sameDescription reports whether two records of an entry describe it
// alike (what a read of its file may change).
func sameDescription(a, b *store.Entry) bool {
	return a.Kind == b.Kind && a.File == b.File && a.Section == b.Section &&
		a.Preview == b.Preview && a.Type == b.Type && a.Name == b.Name
}

// parse is a file's parse to store in the catalog (flush).
type parse struct {
	path string // the catalog's: automemory.Prefix and the redacted name
	fp   source.Fingerprint
	racy bool
	blob []byte
}

// keepParse keeps the file's parse for the catalog (automemory.Encode,
// stored by flush through store.CatalogTx.PutParse) at the fingerprint it
// was read at, so that a session start and the next catalog.Build decode
// it rather than parse the file. It is not screened here (the patterns'
// first use costs more than the rest of a turn); the session start screens
// it against the file's bytes. A parse that cannot be stored (a link
// holding a secret) is not.
func (r *recorder) keepParse(mf *automem.File, fp source.Fingerprint, racy bool) error {
	b, ok := automemory.Encode(mf, false)
	if !ok {
		return nil
	}
	r.parses = append(r.parses, parse{path: automemory.Prefix + mf.SafeName, fp: fp, racy: racy, blob: b})
	return nil
}

// flush writes the records in key order.
func (r *recorder) flush() error {
	if r.shed {
		// What the writes below map, their commit maps again: the pages
		// the reads mapped are given back first.
		store.ShedGrown(r.tx, 0)
	}
	sort.Strings(r.seenPuts)
	for _, id := range r.seenPuts {
		if err := r.seen.Mark(id); err != nil {
			return err
		}
	}
	ids := make([]string, 0, len(r.sights))
	for id := range r.sights {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if err := store.PutSighting(r.tx, id, r.sights[id]); err != nil {
			return err
		}
	}
	ids = ids[:0]
	for id := range r.recs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		rec := r.recs[id]
		if err := store.PutEntryRecord(r.tx, &rec); err != nil {
			return err
		}
	}
	sort.SliceStable(r.parses, func(i, j int) bool { return r.parses[i].path < r.parses[j].path })
	ct := store.Catalog(r.tx)
	for _, p := range r.parses {
		if err := ct.PutParse(automemory.Name, p.path, p.fp, p.racy, p.blob, r.at); err != nil {
			return err
		}
	}
	return nil
}

func pathDir(name string) string {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		return name[:i]
	}
	return ""
}
