// Package snapshot records which auto-memory entries exist in each Claude
// Code session. It runs from the Stop, SubagentStop and SessionEnd hooks.
//
// A hook firing brings the session's sightings up to date with the memory
// files (Sync, in sync.go): each entry present counts once for the
// session however many turns saw it (package stability explains why that
// matters), so Stop may fire any number of times. The store keeps per
// entry the sessions that saw it, first and last sighting, a redacted
// preview — never the raw text — and the agent whose hook first saw it.
//
// Hot path: Stop fires after every model turn. Turn fingerprints the
// memory files without reading one (an lstat each) — all of them when the
// directory holds fewer than memlist.ChunkEntries entries, else MEMORY.md and the
// next chunk of the session's sweep (sweep.go), so no turn lists a
// directory of 100,000 files. When a whole listing's fingerprint equals
// the one the session's last complete pass recorded, the hook only opens
// the store read-only to compare, and returns. Otherwise only files whose
// fingerprint changed are read and parsed, and a pass that reaches its
// deadline (StopBudget) commits what it did and leaves the rest to the
// next turn: a memory of 100,000 files is recorded over turns, each
// adding a bounded time, never given up on.
//
// An Observation is a whole scan's worth (Observe: every file parsed;
// Record applies it, idempotently), for tests, benchmarks and spool files
// of older builds. A hook spools a Listing instead.
//
// Contention: the writer waits a short time for the store's lock; if
// another process holds it, the listing is written atomically to
// .intermem/spool/ and the next writer ingests it before its own:
// sightings of every file whose recorded state still has the spooled
// fingerprint (ingestion is idempotent, so a crash between ingesting and
// deleting a spool file at worst records an observation twice, which
// changes no count).
package snapshot

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/adrg/strutil"
	"github.com/adrg/strutil/metrics"
	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/atomicfile"
	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/confine"
	"github.com/intermem/intermem/pkg/quiet"
	"github.com/intermem/intermem/pkg/store"
)

// PreviewRunes bounds the stored preview of an entry.
const PreviewRunes = 280

// Observation is what one hook firing saw.
type Observation struct {
	SessionID   string    `json:"session_id"`
	Event       string    `json:"event,omitempty"`
	At          time.Time `json:"at"`
	Fingerprint string    `json:"fp"`
	Ending      bool      `json:"ending,omitempty"`
	Files       []string  `json:"files"`
	Entries     []Seen    `json:"entries"`
	// Agent and AgentType are the payload's agent_id and agent_type.
	Agent     string `json:"agent,omitempty"`
	AgentType string `json:"agent_type,omitempty"`
	// Listing, set instead of Files and Entries, is what a hook spools
	// when the store is busy: the files, named by their redacted names (a
	// spool file never holds a secret), and their fingerprints, no entry.
	// Ingest marks the session's sightings of every file whose recorded
	// state still has that fingerprint (Sync with Pass.Spooled).
	Listing []File `json:"listing,omitempty"`
}

// Seen is one entry in an observation.
type Seen struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"`
	File    string `json:"file"`
	Section string `json:"section,omitempty"`
	Preview string `json:"preview"`
	Type    string `json:"type,omitempty"`
	Name    string `json:"name,omitempty"`

	// text and redact make the preview on demand: most entries of an
	// observation were already recorded for the session, and redacting
	// every one would be most of a Stop hook's work on a large memory.
	text   string
	redact func(string) string
}

// preview returns the entry's redacted preview, computing it once.
func (e *Seen) preview() string {
	if e.Preview == "" && e.text != "" {
		e.Preview = Preview(e.text, e.redact)
	}
	return e.Preview
}

// FillPreviews computes every preview (before an observation is spooled:
// the spool holds previews, never raw text).
func (o *Observation) FillPreviews() {
	for i := range o.Entries {
		o.Entries[i].preview()
	}
}

// Observe scans dir and builds an observation. Every field it records comes
// redacted from automem.Parse; redact, when set, scrubs previews once more.
func Observe(dir, sessionID, event string, at time.Time, redact func(string) string) (Observation, error) {
	obs := Observation{SessionID: sessionID, Event: event, At: at.UTC(), Ending: event == "SessionEnd"}
	l, err := List(dir, nil)
	if err != nil {
		return obs, err
	}
	obs.Fingerprint = l.FP
	d, err := automem.Scan(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return obs, nil
		}
		return obs, err
	}
	for _, f := range d.Files {
		obs.Files = append(obs.Files, f.SafeName) // as entries name it: never a secret
		for _, e := range f.Entries {
			obs.Entries = append(obs.Entries, SeenOf(e, redact))
		}
	}
	return obs, nil
}

// SeenOf summarises an entry for the store; its preview is made on
// demand.
func SeenOf(e automem.Entry, redact func(string) string) Seen {
	text := e.Text
	if e.Kind == automem.Memory && e.Description != "" {
		text = e.Description + " — " + text
	}
	return Seen{
		ID: e.ID, Kind: string(e.Kind), File: e.File, Section: e.Section,
		Type: e.Type, Name: e.Name, text: text, redact: redact,
	}
}

// Preview returns a redacted, whitespace-folded, bounded version of text.
func Preview(text string, redact func(string) string) string {
	if redact != nil {
		text = redact(text)
	}
	text = strings.Join(strings.Fields(text), " ")
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	if utf8.RuneCountInString(text) > PreviewRunes {
		r := []rune(text)
		text = string(r[:PreviewRunes-1]) + "…"
	}
	return text
}

// lineageMin is the similarity above which a new entry that appeared where
// a similar one vanished is taken as an edit of it.
const lineageMin = 0.5

// Record applies an observation to the store. It is idempotent.
func Record(tx *bolt.Tx, obs Observation) error {
	sess, _, err := store.GetSession(tx, obs.SessionID)
	if err != nil {
		return err
	}
	prior := sess
	if sess.ID == "" {
		sess = store.Session{ID: obs.SessionID, First: obs.At, Last: obs.At}
		if _, err := store.PruneSeen(tx, obs.SessionID); err != nil {
			return err
		}
	}
	if obs.At.Before(sess.First) {
		sess.First = obs.At
	}
	if !obs.At.Before(sess.Last) {
		sess.Last = obs.At
		sess.Fingerprint = obs.Fingerprint
	}
	// A whole observation saw every file as it was then.
	if obs.At.After(sess.Synced) {
		sess.Synced = obs.At
	}
	sess.Observations++
	sess.Ended = sess.Ended || obs.Ending
	if err := store.PutSession(tx, obs.SessionID, &sess); err != nil {
		return err
	}

	seen, counted, err := openSeen(tx, obs.SessionID, prior)
	if err != nil {
		return err
	}

	// Records are written after the loop, in key order: bbolt inserts
	// sorted keys far faster than random ones (a first observation of a
	// very large memory is all inserts).
	puts := map[string]store.Entry{}
	var seenPuts []string
	marked := map[string]bool{} // seen in this session by this observation

	// Group by file for lineage.
	byFile := map[string][]Seen{}
	for _, e := range obs.Entries {
		byFile[e.File] = append(byFile[e.File], e)
	}

	for _, file := range sortedKeys(byFile, obs.Files) {
		if strings.HasPrefix(file, "\x00") {
			// No memory file's name holds a NUL byte: this is a key of
			// the sweeps' records in a spool file, which is hostile
			// input like every file of a project. Its state would be
			// written over the record.
			continue
		}
		cur := byFile[file]
		fstate, _, err := store.GetFileState(tx, file)
		if err != nil {
			return err
		}
		newer := !obs.At.Before(fstate.At)
		present := make(map[string]bool, len(cur))
		for _, e := range cur {
			present[e.ID] = true
		}
		// Entries of the file's previous state that are gone now.
		var vanished []store.Entry
		if newer {
			for _, id := range fstate.IDs {
				if present[id] {
					continue
				}
				if v, ok, _ := store.GetSeen(tx, id); ok {
					vanished = append(vanished, v)
				}
			}
		}
		for i := range cur {
			e := &cur[i]
			if marked[e.ID] || seen.Has(e.ID) {
				// Already recorded for this session: its count and lineage
				// are settled, and later turns of one session add nothing.
				continue
			}
			rec, exists, err := store.GetSeen(tx, e.ID)
			if err != nil {
				return err
			}
			if !exists {
				rec = store.Entry{ID: e.ID, FirstSeen: obs.At, LastSeen: obs.At, Agent: obs.Agent, AgentType: obs.AgentType, FirstSession: obs.SessionID}
				if j := bestPredecessor(e, vanished); j >= 0 {
					rec.Prev = vanished[j].ID
					vanished = append(vanished[:j], vanished[j+1:]...)
				}
			}
			// A non-empty value: bbolt reads a nil value back as absent
			// within the same transaction, which would let one batch of
			// spooled observations count a session several times.
			marked[e.ID] = true
			seenPuts = append(seenPuts, e.ID)
			if mayHaveCounted(rec.FirstSeen, counted) {
				continue
			}
			rec.Sessions++
			if obs.At.Before(rec.FirstSeen) {
				rec.FirstSeen = obs.At
			}
			if !obs.At.Before(rec.LastSeen) || !exists {
				rec.LastSeen = obs.At
				rec.Kind, rec.File, rec.Section = e.Kind, e.File, e.Section
				rec.Preview, rec.Type, rec.Name = e.preview(), e.Type, e.Name
			}
			puts[e.ID] = rec
		}
		if newer {
			ids := make([]string, len(cur))
			for i, e := range cur {
				ids[i] = e.ID
			}
			if err := store.PutFileState(tx, file, &store.FileState{At: obs.At, IDs: ids}); err != nil {
				return err
			}
		}
	}
	sort.Strings(seenPuts)
	for _, id := range seenPuts {
		if err := seen.Mark(id); err != nil {
			return err
		}
	}
	ids := make([]string, 0, len(puts))
	for id := range puts {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		rec := puts[id]
		if err := store.PutSeen(tx, &rec); err != nil {
			return err
		}
	}

	// Files that no longer exist lose their state, if this observation is
	// the newest word on them. A key that starts with a NUL byte is no
	// file's but a sweep's record (a chunk, the removal of gone files'
	// states: store.EachFileState decodes some as file states), as Sync
	// skips them too.
	if obs.Files != nil {
		inObs := map[string]bool{}
		for _, f := range obs.Files {
			inObs[f] = true
		}
		var gone []string
		if err := store.EachFileState(tx, func(k string, fs *store.FileState) error {
			if !strings.HasPrefix(k, "\x00") && !inObs[k] && !obs.At.Before(fs.At) {
				gone = append(gone, k)
			}
			return nil
		}); err != nil {
			return err
		}
		if err := store.DeleteFileStates(tx, gone); err != nil {
			return err
		}
	}
	return nil
}

// sortedKeys returns the files of an observation in a stable order: files
// listed by the scan first (in scan order), then any others.
func sortedKeys(m map[string][]Seen, files []string) []string {
	out := make([]string, 0, len(m))
	done := map[string]bool{}
	for _, f := range files {
		if !done[f] {
			out = append(out, f)
			done[f] = true
		}
	}
	var rest []string
	for f := range m {
		if !done[f] {
			rest = append(rest, f)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

var dice = &metrics.SorensenDice{CaseSensitive: false, NgramSize: 2}

func bestPredecessor(e *Seen, vanished []store.Entry) int {
	best, bestScore := -1, lineageMin
	for i, v := range vanished {
		if v.Section != e.Section || v.Kind != e.Kind {
			continue
		}
		if e.Kind == string(automem.Memory) && v.File == e.File {
			return i // the same memory file rewritten
		}
		if s := strutil.Similarity(v.Preview, e.preview(), dice); s >= bestScore {
			best, bestScore = i, s
		}
	}
	return best
}

// SpoolDir is where observations wait when the store is busy.
func SpoolDir(stateDir string) string { return quiet.SpoolDir(stateDir) }

// MaxSpoolFile bounds what ingest reads of one spool file: an observation
// of a very large memory is a few megabytes; anything far beyond is not
// one intermem wrote.
const MaxSpoolFile = 64 << 20

// realDir creates dir if needed and requires it to be a real directory of
// this user's, never a link: spool files are read, moved and deleted
// there, and a link would take all three elsewhere.
func realDir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if err := confine.Owned(dir, st); err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	return nil
}

// Spool writes obs atomically into the spool directory.
func Spool(stateDir string, obs Observation) error {
	dir := SpoolDir(stateDir)
	if err := realDir(dir); err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	obs.FillPreviews()
	b, err := json.Marshal(&obs)
	if err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	name := fmt.Sprintf("%020d-%d.json", obs.At.UnixNano(), os.Getpid())
	if err := atomicfile.WriteState(stateDir, filepath.Join(dir, name), b, atomicfile.Options{}); err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	return nil
}

// Pending reports whether spooled observations are waiting.
func Pending(stateDir string) bool { return quiet.Pending(stateDir) }

// Ingest records every spooled observation (oldest first) and removes the
// spool files once their transaction has committed. Unreadable spool files
// are moved to spool/bad/ rather than retried forever. It returns the
// number ingested.
//
// The spool is hostile input like everything in a project: the directory
// must be real (realDir), only regular files are read, each opened without
// following a link and without blocking on a FIFO, and what is moved or
// deleted is always the directory entry itself, never a link's target.
func Ingest(s *store.Store, stateDir, memDir string, logf func(string, ...any)) (int, error) {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	dir := SpoolDir(stateDir)
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err := realDir(dir); err != nil {
		return 0, fmt.Errorf("ingest: %w", err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("ingest: %w", err)
	}
	var names []string
	var obs []Observation
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		o, err := readSpooled(p, e)
		if err != nil {
			logf("spool: set aside unreadable %s: %v", e.Name(), err)
			setAside(dir, e.Name(), logf)
			continue
		}
		names = append(names, p)
		obs = append(obs, o)
	}
	if len(obs) == 0 {
		return 0, nil
	}
	err = s.Update(func(tx *bolt.Tx) error {
		for _, o := range obs {
			if o.Listing != nil {
				l, missing := spooledListing(tx, memDir, o.Listing)
				if missing > 0 {
					logf("spool: %d %s listed by a busy %s hook not found in the memory directory now", missing, cli.Plural(missing, "file", "files"), o.Event)
				}
				p := Pass{Session: o.SessionID, Event: o.Event, At: o.At, Agent: o.Agent, AgentType: o.AgentType, Spooled: true, Logf: logf}
				if _, err := Sync(tx, l, p); err != nil {
					return err
				}
				continue
			}
			if err := Record(tx, o); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("ingest: %w", err)
	}
	for _, p := range names {
		_ = os.Remove(p)
	}
	return len(obs), nil
}

// readSpooled reads one spool file: a regular file of this user's, opened
// with O_NOFOLLOW|O_NONBLOCK, at most MaxSpoolFile bytes, one observation.
func readSpooled(path string, e fs.DirEntry) (Observation, error) {
	var o Observation
	if !e.Type().IsRegular() {
		return o, fmt.Errorf("not a regular file (%v)", e.Type())
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return o, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return o, err
	}
	if err := confine.Owned(path, st); err != nil {
		return o, err
	}
	if !st.Mode().IsRegular() {
		return o, fmt.Errorf("not a regular file (%v)", st.Mode().Type())
	}
	if st.Size() > MaxSpoolFile {
		return o, fmt.Errorf("%d bytes, more than %d", st.Size(), MaxSpoolFile)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxSpoolFile+1))
	if err != nil {
		return o, err
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return o, err
	}
	if o.SessionID == "" {
		return o, errors.New("no session id")
	}
	return o, nil
}

// setAside moves a spool entry (the entry itself: a link moves as a link)
// into spool/bad/, which must be a real directory; otherwise the entry
// stays where it is.
func setAside(dir, name string, logf func(string, ...any)) {
	bad := filepath.Join(dir, "bad")
	if err := realDir(bad); err != nil {
		logf("spool: cannot set aside %s: %v", name, err)
		return
	}
	_ = os.Rename(filepath.Join(dir, name), filepath.Join(bad, name))
}

// openSeen returns the seen bucket of session, whose record was prior
// before this pass (ID empty when the session begins), creating it, and
// the time up to which the session may have counted entries it no longer
// has marks for: zero, unless the session was known and its bucket is
// gone — pruned by store.PruneSeen while the session was idle, and now
// resumed (claude --resume). Such a session saw, while it was active,
// every entry that existed then, and counted it once; counting it again
// would add a session that never was and make the entry look more stable
// than it is. What it cannot have seen — an entry first seen after its
// last activity — it counts as any session does.
func openSeen(tx *bolt.Tx, session string, prior store.Session) (store.SeenMarks, time.Time, error) {
	seen, existed, err := store.OpenSeenMarks(tx, session)
	if err != nil {
		return seen, time.Time{}, err
	}
	var counted time.Time
	if prior.ID != "" && prior.Observations > 0 && !existed {
		counted = prior.Last
	}
	return seen, counted, nil
}

// mayHaveCounted reports whether a resumed session whose seen bucket was
// pruned (openSeen: counted is its last activity before) may have counted
// an entry first seen at first already: it was first seen by then.
func mayHaveCounted(first, counted time.Time) bool {
	return !counted.IsZero() && !first.IsZero() && !first.After(counted)
}
