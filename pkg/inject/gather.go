package inject

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"
	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/confine"
	"github.com/intermem/intermem/pkg/journal"
	"github.com/intermem/intermem/pkg/ops"
	"github.com/intermem/intermem/pkg/plan"
	"github.com/intermem/intermem/pkg/score"
	"github.com/intermem/intermem/pkg/stability"
	"github.com/intermem/intermem/pkg/store"
	"github.com/intermem/intermem/pkg/targets"
)

// Bounds on the work Gather does, whatever the project looks like.
const (
	maxCandidates   = 5000 // memory entries considered for ranking
	maxCitesPerItem = 8    // cited files looked at per entry
	maxStats        = 2000 // distinct cited files stat'ed
	maxDetails      = 64   // docs/intermem documents listed
	// maxMemFiles bounds the memory files a session start reads: MEMORY.md
	// and the first others by name. A memory directory of 100,000 files
	// still gets its context within the hook's time (and a render cache
	// that re-checks a few thousand files, not 100,000); the files past
	// the bound are counted in a health line, never read or stat'ed.
	maxMemFiles = 2000
	// maxSearched is how many entries readEntries looks up one by one
	// rather than in one pass over the store's entries.
	maxSearched = 4096
)

// Env is what Gather needs from the process: where things are and the
// clock.
type Env struct {
	Root      string // project root (git main worktree)
	MemoryDir string
	Cwd       string // session cwd; "" means Root
	ConfigDir string // Claude Code's config dir (~/.claude)
	Home      string // for "~/" imports
	Now       time.Time
	Budget    int
	Threshold int // sessions that make an entry stable
	// Key and Places verify interrupted journal operations (package
	// journal): only an operation this user's intermem recorded for this
	// project, every step inside its places, is described; without a key
	// every operation is refused.
	Key    []byte
	Places confine.Places
	// Deps, when set, records every filesystem fact Gather relies on
	// (for the render cache).
	Deps *Deps
	// Sources are the "sources" of .intermem/config.json: a source mapped
	// to false is switched off, and nothing of it is named.
	Sources map[string]bool
	// mem, when set, are the memory files already listed and derived
	// (with Deps) by the hook before it took the store's lock.
	mem *memSet
}

// Gather reads everything Render needs: auto-memory, the curated
// documents, what Claude Code loads at session start, the git branch, the
// cited files' modification times and (when s is not nil) the store, in
// one read transaction. Derived data comes from ix when its files are
// unchanged (ix may be nil); Gather writes nothing.
func Gather(e Env, s *store.Store, ix *Index) (*Inputs, error) {
	return gather(e, func() (*store.Store, func(), error) { return s, func() {}, nil }, ix)
}

// GatherOpen is Gather opening the store itself (open; a nil store means
// there is none yet) only for its read transaction, and closing it right
// after: a session start holds the store's lock as briefly as it can,
// since other sessions' Stop hooks wait on it to write. An error from open
// is returned as is.
func GatherOpen(e Env, open func() (*store.Store, error), ix *Index) (*Inputs, error) {
	return gather(e, func() (*store.Store, func(), error) {
		s, err := open()
		if err != nil || s == nil {
			return nil, func() {}, err
		}
		return s, func() { s.Close() }, nil
	}, ix)
}

func gather(e Env, open func() (*store.Store, func(), error), ix *Index) (*Inputs, error) {
	if ix == nil {
		ix = NewIndex()
	}
	in := &Inputs{Now: e.Now, Budget: e.Budget, MemoryDir: e.MemoryDir}
	if e.Threshold <= 0 {
		e.Threshold = stability.DefaultThreshold
	}
	cwd := e.Cwd
	if cwd == "" {
		cwd = e.Root
	}
	if real, err := e.Deps.EvalSymlinks(cwd); err == nil {
		cwd = real
	}
	wt, branch := gitInfo(e.Deps, cwd)
	if wt == "" {
		wt = e.Root
	}
	in.Branch = branch
	if rel, err := filepath.Rel(wt, cwd); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
		in.CwdRel = filepath.ToSlash(rel)
	}

	ms := e.mem
	if ms == nil {
		var err error
		if ms, err = memFiles(e.Deps, e.MemoryDir, ix); err != nil {
			return nil, err
		}
	}
	mem := ms.files
	in.MemFilesUnread = len(ms.beyond)
	orphans := orphanPointers(mem, ms.beyond)
	isPointer := func(en *memEntry) bool { return en.Kind == string(automem.Pointer) && !orphans[en.ID] }
	ds := discover(e, cwd, ix)

	// What Claude Code loaded: statements (as exact keys) and markers.
	loadedKeys := make(map[uint64]bool, 512)
	loadedIDs := map[string]bool{}
	for _, f := range ds.set.Files {
		for _, k := range f.Doc.Keys {
			loadedKeys[k] = true
		}
		for _, m := range f.Doc.Marks {
			loadedIDs[m.ID] = true
		}
	}

	// Everything marked in a curated document is promoted.
	marked := map[string]bool{}
	where := map[string]mark{}
	whereDoc := map[string]string{}
	for _, td := range ds.targets() {
		for _, m := range td.d.Marks {
			marked[m.ID] = true
			if _, ok := where[m.ID]; !ok {
				where[m.ID], whereDoc[m.ID] = m, td.name
			}
		}
	}

	// The index of promoted knowledge, less what Claude Code loaded: a
	// loaded document's sections, and the detail documents a loaded
	// document's topic index already lists, are in the context already.
	indexed := map[string]bool{}
	for _, f := range ds.set.Files {
		for _, p := range f.Doc.Indexed {
			indexed[p] = true
		}
	}
	if ds.agents != nil && !ds.same {
		if !ds.agentsLoaded {
			if di := docIndex(targets.Agents, ds.agents, false); di != nil {
				in.Docs = append(in.Docs, *di)
			}
		}
		// Promoted facts AGENTS.md holds, or indexes in the detail
		// documents (the tiered layout).
		facts := len(ds.agents.Marks)
		if ds.agents.TopicIdx {
			for _, dt := range ds.details {
				facts += len(dt.d.Marks)
			}
		}
		if !ds.agentsStrict && facts > 0 {
			why := "CLAUDE.md does not import it"
			if ds.claude == nil {
				why = "without a CLAUDE.md only Claude Code 2.1.332 and later load it"
			}
			in.Agents = &AgentsInfo{Facts: facts, Why: why}
		}
	}
	for _, dt := range ds.details {
		if indexed[dt.name] {
			continue
		}
		in.Details = append(in.Details, Detail{Name: dt.name, Title: dt.d.Title, Facts: len(dt.d.Marks)})
	}

	// MEMORY.md against its cap, and what its loaded part already says.
	pointed := map[string]bool{}
	for _, f := range mem {
		if f.Name != automem.IndexName {
			continue
		}
		l := f.Load
		in.Index = &IndexInfo{
			Path: filepath.Join(e.MemoryDir, automem.IndexName), Lines: l.Lines, Chars: l.Chars,
			LoadedLines: l.LoadedLines, Truncated: l.Truncated,
		}
		for _, en := range f.Entries {
			if en.Line > l.LoadedLines {
				in.Index.Beyond = append(in.Index.Beyond, LedgerEntry{Line: en.Line, Text: en.Text, Flags: en.Flags})
				continue
			}
			loadedKeys[en.Key] = true
			if en.Link != "" {
				pointed[en.Link] = true
			}
		}
	}

	// The store: sessions and sightings, promotions, the journal.
	n := 0
	for _, f := range mem {
		n += len(f.Entries)
	}
	rec := &records{idx: make(map[string]int32, n), recs: make([]entryRec, 0, n)}
	promoted := map[string]bool{}
	rejected := map[string]bool{}
	sourceOn := func(name string) bool { on, set := e.Sources[name]; return on || !set }
	s, release, err := open()
	if err != nil {
		return nil, err
	}
	if s != nil {
		err := s.View(func(tx *bolt.Tx) error {
			in.LastSweep = store.LastSweep(tx)
			readPromoted(tx, promoted, func(id, text string, conf float64, at time.Time) {
				if !at.IsZero() && (in.FirstPromoted.IsZero() || at.Before(in.FirstPromoted)) {
					in.FirstPromoted = at
				}
				m, ok := where[id]
				if !ok || conf < 0 || conf >= score.StaleBelow {
					return
				}
				t := m.Text
				if t == "" {
					t = text
				}
				in.Stale = append(in.Stale, StaleFact{ID: id, Doc: whereDoc[id], Section: m.Section, Text: t, Confidence: conf})
			})
			in.Interrupted, in.Refused = interrupted(tx, e.Key, e.Places)
			if b := tx.Bucket(store.BucketDecisions); b != nil {
				_ = b.ForEach(func(k, _ []byte) error { rejected[string(k)] = true; return nil })
			}
			readEntries(tx, mem, rec)
			in.Related, in.Corrections = readRelated(store.Catalog(tx), sourceOn)
			return nil
		})
		release()
		if err != nil {
			return nil, err
		}
	}
	haveStore := s != nil
	sort.Slice(in.Stale, func(i, j int) bool {
		a, b := in.Stale[i], in.Stale[j]
		if a.Confidence != b.Confidence {
			return a.Confidence < b.Confidence
		}
		return a.ID < b.ID
	})

	// Entries ready for synthesis: what a plan would number, decided by
	// the plan's own Judge over the cached Subjects. Citations are the
	// one input judged differently: by the verdict a plan or validate
	// recorded, or, for an entry none has judged yet, by whether its
	// cited project paths exist (see citedStale).
	st := statCache{root: wt, m: map[string]Cited{}, deps: e.Deps}
	if haveStore && len(rec.recs) > 0 {
		w := plan.World{Threshold: e.Threshold, Promoted: promoted, Rejected: rejected, Marked: marked,
			Loaded: map[uint64]string{}, Curated: map[uint64]bool{}}
		for _, td := range ds.targets() {
			for _, k := range td.d.Keys {
				w.Curated[k] = true
			}
		}
		for _, f := range ds.set.Files {
			if f.Strict && !f.Below(e.Root) {
				for _, k := range f.Doc.Keys {
					w.Loaded[k] = ""
				}
			}
		}
		// A one-memory file an index line holding a secret points to
		// holds it too (pruning removes the line), as automem marks it.
		secretLinks := map[string]bool{}
		for _, f := range mem {
			for i := range f.Entries {
				if en := &f.Entries[i]; en.Secret && en.Kind == string(automem.Pointer) {
					secretLinks[en.Link] = true
				}
			}
		}
		for _, f := range mem {
			for i := range f.Entries {
				en := &f.Entries[i]
				r := rec.get(en.ID)
				if r == nil || r.counted {
					continue
				}
				r.counted = true
				kind := automem.Kind(en.Kind)
				if kind == automem.Pointer && !isPointer(en) {
					kind = automem.Fact // a pointer to no file is the memory itself
				}
				subj := plan.Subject{ID: en.ID, Kind: kind, Sessions: r.sessions, Secret: en.Secret || (kind == automem.Memory && secretLinks[f.Name]),
					Key: en.BKey, DescKey: en.DescKey, HasDesc: en.hasDesc, Withhold: en.Withhold}
				d, decided := w.Before(&subj)
				if !decided {
					d = w.After(&subj, citedScore(r.confidence, en.Cites, &st))
				}
				if d.Verdict.Ready() {
					in.Ready++
				}
			}
		}
	}

	// Candidates: topic-file entries that nothing loaded already says.
	in.Candidates = make([]Candidate, 0, min(n, maxCandidates))
	for _, f := range mem {
		if f.Name == automem.IndexName {
			continue
		}
		for i := range f.Entries {
			en := &f.Entries[i]
			if len(in.Candidates) >= maxCandidates {
				break
			}
			if isPointer(en) || loadedIDs[en.ID] || loadedKeys[en.Key] || (en.hasDesc && loadedKeys[en.DescKey]) {
				continue
			}
			c := Candidate{ID: en.ID, File: f.Safe, Line: en.Line, Kind: en.Kind, Text: en.Text, Confidence: -1, Flags: en.Flags}
			if orphans[en.ID] {
				c.Kind = string(automem.Fact)
			}
			if en.Kind == string(automem.Memory) {
				c.Text, c.Body, c.Type = memoryLine(en), en.Name+"\n"+en.Text, en.Type
				c.Content = en.Text
				c.Pointed = pointed[f.Safe] // links are redacted like names
			}
			if r := rec.get(en.ID); r != nil {
				c.Sessions, c.Confidence = r.sessions, r.confidence
				c.LastSeen, _ = time.Parse(time.RFC3339Nano, r.lastSeen)
			}
			c.Cites = st.cites(en.Cites)
			// A memory whose citations are broken is shown last, marked:
			// judged as readiness judges it (the recorded verdict, else
			// the cited paths on disk).
			c.Stale = citedScore(c.Confidence, en.Cites, &st).Score.Stale
			in.Candidates = append(in.Candidates, c)
		}
	}
	// Other sources' entries, after the memories: the bound on stats goes
	// to memory first.
	in.Corrections = statRelated(in.Related, in.Corrections, &st)
	return in, nil
}

// citedScore is the citation evidence the hook has for an entry: the
// confidence a plan or validate last recorded (plan.Recorded), or, when
// none has judged the entry yet, its cited project paths on disk: a
// missing path under a top-level directory that exists is broken, as
// package cite judges it when git history has nothing to add (the hook
// never runs git, so a renamed file counts as broken until a plan sees
// the rename).
func citedScore(recorded float64, cites []string, st *statCache) plan.Evidence {
	if recorded >= 0 || len(cites) == 0 {
		return plan.Recorded(recorded)
	}
	for _, p := range cites {
		if !strings.Contains(p, "/") {
			continue
		}
		if c, ok := st.one(p); !ok || c.Exists {
			continue
		}
		first, _, _ := strings.Cut(p, "/")
		if top, ok := st.one(first); ok && top.Exists {
			return plan.Recorded(score.Base - score.BrokenEach)
		}
	}
	return plan.Recorded(-1)
}

// memSet is the memory files a session start reads, and the names of
// those past maxMemFiles, which it does not.
type memSet struct {
	files  []*memFile
	beyond []string
}

// memFiles lists the memory files the way automem.Scan does (top-level
// *.md regular files or symlinks to them, no dot files, at most
// automem.MaxFileBytes, sorted by name) and returns the derived records of
// MEMORY.md and the first others by name, up to maxMemFiles; the names of
// the rest are listed apart, unread.
func memFiles(deps *Deps, dir string, ix *Index) (*memSet, error) {
	des, err := deps.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return &memSet{}, nil
		}
		return nil, err
	}
	out := &memSet{}
	taken := 0
	for _, de := range des {
		name := de.Name()
		if !strings.HasSuffix(name, ".md") || strings.HasPrefix(name, ".") {
			continue
		}
		if name != automem.IndexName {
			if taken >= maxMemFiles-1 {
				if t := de.Type(); t.IsRegular() || t&fs.ModeSymlink != 0 {
					out.beyond = append(out.beyond, name)
				}
				continue
			}
			taken++
		}
		path := filepath.Join(dir, name)
		var fi fs.FileInfo
		if de.Type().IsRegular() {
			fi, err = deps.Info(path, de)
		} else if de.Type()&fs.ModeSymlink != 0 {
			fi, err = deps.Stat(path)
		} else {
			continue
		}
		if err != nil || !fi.Mode().IsRegular() || fi.Size() > automem.MaxFileBytes {
			continue
		}
		f, err := ix.memFile(name, fi.Size(), fi.ModTime().UnixNano(), func() ([]byte, error) {
			return readLimited(path, automem.MaxFileBytes)
		})
		if err != nil {
			continue
		}
		if f.Safe != f.Name && deps != nil {
			deps.secret = true
		}
		out.files = append(out.files, f)
	}
	return out, nil
}

// orphanPointers returns the ids of the pointers whose file is not in the
// memory directory but whose text says something: the hook is the only copy
// of that memory, so it counts as a fact (automem.Dir.resolve is the same
// rule for every other command). A pointer into a sub-folder is taken to
// name a file: the hook reads only the top level. Files past
// maxMemFiles (beyond, unread) exist all the same.
func orphanPointers(mem []*memFile, beyond []string) map[string]bool {
	have := make(map[string]bool, 2*len(mem)+len(beyond))
	for _, name := range beyond {
		have[strings.ToLower(name)] = true
	}
	for _, f := range mem {
		have[strings.ToLower(f.Safe)] = true // links are redacted like names
		for _, en := range f.Entries {
			if en.Kind == string(automem.Memory) && en.Name != "" {
				have[strings.ToLower(en.Name)+".md"] = true
			}
		}
	}
	var out map[string]bool
	for _, f := range mem {
		for _, en := range f.Entries {
			if en.Kind != string(automem.Pointer) || !en.hook || strings.Contains(en.Link, "/") || have[strings.ToLower(en.Link)] {
				continue
			}
			if out == nil {
				out = make(map[string]bool)
			}
			out[en.ID] = true
		}
	}
	return out
}

// readLimited reads a regular file of at most limit bytes.
func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > limit {
		return nil, errors.New("not a regular file of acceptable size")
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, errors.New("file grew past the limit")
	}
	return b, nil
}

// memoryLine is what a one-memory file shows: its description, or its
// name and the first line of its body.
func memoryLine(en *memEntry) string {
	if d := strings.TrimSpace(en.Desc); d != "" {
		return d
	}
	first, _, _ := strings.Cut(strings.TrimSpace(en.Text), "\n")
	if en.Name != "" {
		return en.Name + ": " + first
	}
	return first
}

type entryRec struct {
	sessions   int
	lastSeen   string  // RFC 3339, parsed only for candidates
	confidence float64 // -1: unknown
	counted    bool    // in Inputs.Ready already
}

// records holds an entryRec for every current entry id.
type records struct {
	idx  map[string]int32
	recs []entryRec
}

func (r *records) get(id string) *entryRec {
	if i, ok := r.idx[id]; ok {
		return &r.recs[i]
	}
	return nil
}

// readEntries reads, for every current entry, the fields of its
// store.Entry that ranking needs (and a confidence from the facts bucket
// when one is recorded), without decoding whole records: a JSON decode per
// entry would cost more than the rest of the hook at 1,000 entries.
func readEntries(tx *bolt.Tx, mem []*memFile, rec *records) {
	eb := tx.Bucket(store.BucketEntries)
	fb := tx.Bucket(store.BucketFacts)
	if fb != nil {
		if k, _ := fb.Cursor().First(); k == nil {
			fb = nil
		}
	}
	if eb == nil && fb == nil {
		return
	}
	for _, f := range mem {
		for _, en := range f.Entries {
			if _, ok := rec.idx[en.ID]; !ok {
				rec.idx[en.ID] = int32(len(rec.recs))
				rec.recs = append(rec.recs, entryRec{confidence: -1})
			}
		}
	}
	// One pass over the bucket in key order costs less than a B+tree
	// search per entry, while the entries read are most of the bucket;
	// records of entries no longer in memory are skipped by the map
	// lookup. For a few thousand entries of a far larger store (a memory
	// directory past maxMemFiles), a search each touches far fewer pages.
	if eb != nil && len(rec.idx) <= maxSearched {
		for id, i := range rec.idx {
			if v := eb.Get([]byte(id)); v != nil {
				r := &rec.recs[i]
				r.sessions, r.lastSeen = entryFields(v)
			}
		}
	} else if eb != nil {
		c := eb.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			i, ok := rec.idx[string(k)]
			if !ok || v == nil {
				continue
			}
			r := &rec.recs[i]
			r.sessions, r.lastSeen = entryFields(v)
		}
	}
	if fb != nil {
		for id, i := range rec.idx {
			if v := gjson.GetBytes(fb.Get([]byte(id)), "confidence"); v.Exists() {
				rec.recs[i].confidence = v.Float()
			}
		}
	}
}

// entryFields reads "sessions" and "last_seen" from an encoding/json
// store.Entry (compact, known field names); anything unexpected falls back
// to gjson.
func entryFields(raw []byte) (int, string) {
	// Both keys follow the long preview, near the end of the record.
	tail := raw[max(0, len(raw)-320):]
	sessions, ok1 := rawInt(tail, `"sessions":`)
	last, ok2 := rawString(tail, `"last_seen":"`)
	if !ok1 || !ok2 {
		sessions, ok1 = rawInt(raw, `"sessions":`)
		last, ok2 = rawString(raw, `"last_seen":"`)
	}
	if !ok1 || !ok2 {
		v := gjson.GetManyBytes(raw, "sessions", "last_seen")
		sessions, last = int(v[0].Int()), v[1].String()
	}
	return sessions, last
}

// rawInt and rawString find a key: a key with its closing quote and
// colon cannot occur inside a JSON string (a quote there is escaped), so
// its one occurrence is the field.
func rawInt(raw []byte, key string) (int, bool) {
	i := bytes.Index(raw, []byte(key))
	if i < 0 {
		return 0, false
	}
	j := i + len(key)
	k := j
	for k < len(raw) && raw[k] >= '0' && raw[k] <= '9' {
		k++
	}
	n, err := strconv.Atoi(string(raw[j:k]))
	return n, err == nil
}

func rawString(raw []byte, key string) (string, bool) {
	i := bytes.Index(raw, []byte(key))
	if i < 0 {
		return "", false
	}
	j := i + len(key)
	k := bytes.IndexByte(raw[j:], '"')
	if k < 0 || bytes.IndexByte(raw[j:j+k], '\\') >= 0 {
		return "", false
	}
	return string(raw[j : j+k]), true
}

// readPromoted records every promoted id and reports each live (not
// archived) one with its confidence (negative when none is recorded)
// and when it was promoted.
func readPromoted(tx *bolt.Tx, ids map[string]bool, each func(id, text string, conf float64, at time.Time)) {
	b := tx.Bucket(store.BucketPromoted)
	if b == nil {
		return
	}
	_ = b.ForEach(func(k, raw []byte) error {
		if raw == nil {
			return nil
		}
		id := string(k)
		ids[id] = true
		v := gjson.GetManyBytes(raw, "confidence", "archived", "text", "at")
		if v[1].Bool() {
			return nil
		}
		conf := -1.0
		if v[0].Exists() {
			conf = v[0].Float()
		}
		at, _ := time.Parse(time.RFC3339Nano, v[3].String())
		each(id, v[2].String(), conf, at)
		return nil
	})
}

// interrupted lists the summaries of the incomplete journal operations
// recovery would replay (journal.Scan: the MAC verifies under this user's
// key, every step is in a place now), oldest first, and counts those it
// refuses. A refused operation's record is anyone's text — planted with a
// copied project, say — so nothing of it is described.
func interrupted(tx *bolt.Tx, key []byte, places confine.Places) (sums []string, refused int) {
	j := &journal.Journal{Key: key, Places: places, Kinds: ops.Kinds}
	sc, err := j.Scan(tx)
	if err != nil {
		return nil, 0
	}
	for _, op := range sc.Ops {
		sum := op.Summary
		if sum == "" {
			sum = op.Kind
		}
		sums = append(sums, sum)
	}
	return sums, len(sc.Problems)
}

// docIndex lists a document's sections holding intermem markers and how
// many each holds, in document order; nil when it holds none.
func docIndex(name string, d *docData, loaded bool) *DocIndex {
	di := &DocIndex{Name: name, Loaded: loaded}
	pos := map[string]int{}
	for _, m := range d.Marks {
		i, ok := pos[m.Section]
		if !ok {
			i = len(di.Sections)
			pos[m.Section] = i
			di.Sections = append(di.Sections, SectionCount{Title: m.Section})
		}
		di.Sections[i].Facts++
	}
	if len(di.Sections) == 0 {
		return nil
	}
	return di
}

// statCache stats cited files once each, within maxStats.
type statCache struct {
	root  string
	m     map[string]Cited
	stats int
	deps  *Deps
}

// cites stats the cited paths, relative to the work tree.
func (s *statCache) cites(paths []string) []Cited {
	if len(paths) == 0 {
		return nil
	}
	out := make([]Cited, 0, len(paths))
	for _, p := range paths {
		if got, ok := s.one(p); ok {
			out = append(out, got)
		}
	}
	return out
}

// one stats one cited path; ok is false past maxStats.
func (s *statCache) one(p string) (Cited, bool) {
	if got, ok := s.m[p]; ok {
		return got, true
	}
	if s.stats >= maxStats {
		return Cited{}, false
	}
	s.stats++
	got := Cited{Path: p}
	if fi, err := s.deps.Stat(filepath.Join(s.root, filepath.FromSlash(p))); err == nil {
		got.Exists, got.ModTime = true, fi.ModTime().UTC()
	}
	s.m[p] = got
	return got, true
}
