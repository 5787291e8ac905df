package inject

import (
	"path/filepath"
	"sort"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/confine"
	"github.com/intermem/intermem/pkg/journal"
	"github.com/intermem/intermem/pkg/ops"
	"github.com/intermem/intermem/pkg/plan"
	"github.com/intermem/intermem/pkg/score"
	"github.com/intermem/intermem/pkg/source/automemory"
	"github.com/intermem/intermem/pkg/source/docrecord"
	"github.com/intermem/intermem/pkg/source/written"
	"github.com/intermem/intermem/pkg/stability"
	"github.com/intermem/intermem/pkg/store"
	"github.com/intermem/intermem/pkg/targets"
)

// Bounds on the work Gather does, whatever the project looks like.
const (
	maxCandidates   = 5000          // memory entries considered for ranking
	maxCitesPerItem = plan.MaxCites // cited files looked at per entry
	maxStats        = 2000          // distinct cited files stat'ed
	maxDetails      = 64            // docs/intermem documents listed
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
	// Resume is set for a session that starts afresh (startup, clear;
	// and intermem context): it gets the bootstrap (Inputs.Boot). Session
	// is its id, whose own checkpoints its resume note passes over.
	Resume  bool
	Session string
	// Identity is "project" of .intermem/config.json: the bootstrap's
	// first line ("" falls back to README.md's first paragraph).
	Identity string
	// Config is why .intermem/config.json cannot be used (config.Read's
	// error; nil when it can, or there is none): it is then ignored,
	// nothing switched off, and the context says so.
	Config error
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
	return gather(e, closing(open), ix)
}

// gatherer holds one Gather's state between its steps. Each step reads
// one kind of input into in (and the maps the later steps need); the
// order matters only where a step says what it needs.
type gatherer struct {
	e   Env
	ix  *Index
	in  *Inputs
	cwd string // the session's cwd, symlinks resolved
	wt  string // the work tree holding it
	st  statCache

	// memory: the memory files read, and the pointers that are facts.
	mem     []*memFile
	orphans map[string]bool
	// docs are the catalog's stored records of documents, taken with the
	// memory files' parses.
	docs docRecords
	// documents: what Claude Code loaded (statement keys, marker ids),
	// and where each promoted id is marked in a curated document.
	ds         *docSet
	loadedKeys map[uint64]bool
	loadedIDs  map[string]bool
	marked     map[string]bool
	where      map[string]docrecord.Mark
	whereDoc   map[string]string
	pointed    map[string]bool // memory files a loaded MEMORY.md line points to
	// store: what the hooks and plans recorded.
	haveStore bool
	rec       *records
	promoted  map[string]bool
	rejected  map[string]bool
	// written: the memories in the written set, as stored in the catalog.
	written []writtenSubject
}

func gather(e Env, open func() (*store.Store, func(), error), ix *Index) (*Inputs, error) {
	g := newGatherer(e, ix)
	if err := g.memory(open); err != nil {
		return nil, err
	}
	g.documents()
	g.memoryIndex()
	if e.Resume {
		g.in.Boot = &Boot{Identity: readIdentity(e.Deps, e.Root, e.Identity)}
	}
	if err := g.readStore(open); err != nil {
		return nil, err
	}
	if b := g.in.Boot; b != nil && !b.stored {
		g.in.Boot = exportBoot(e.Deps, e.Root, g.in.Branch, e.Session, b)
	}
	g.ready()
	g.candidates()
	// Other sources' entries, after the memories: the bound on stats goes
	// to memory first.
	statRelated(g.in, &g.st)
	return g.in, nil
}

// newGatherer starts a Gather: where the session is (its cwd below the
// work tree, the branch).
func newGatherer(e Env, ix *Index) *gatherer {
	if ix == nil {
		ix = NewIndex()
	}
	if e.Threshold <= 0 {
		e.Threshold = stability.DefaultThreshold
	}
	g := &gatherer{e: e, ix: ix, in: &Inputs{Now: e.Now, Budget: e.Budget, MemoryDir: e.MemoryDir, ConfigUnusable: e.Config != nil},
		loadedKeys: make(map[uint64]bool, 512), loadedIDs: map[string]bool{}, marked: map[string]bool{},
		where: map[string]docrecord.Mark{}, whereDoc: map[string]string{}, pointed: map[string]bool{},
		promoted: map[string]bool{}, rejected: map[string]bool{}}
	g.cwd = e.Cwd
	if g.cwd == "" {
		g.cwd = e.Root
	}
	if real, err := e.Deps.EvalSymlinks(g.cwd); err == nil {
		g.cwd = real
	}
	wt, branch := gitInfo(e.Deps, g.cwd)
	if wt == "" {
		wt = e.Root
	}
	g.wt, g.in.Branch = wt, branch
	if rel, err := filepath.Rel(wt, g.cwd); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
		g.in.CwdRel = filepath.ToSlash(rel)
	}
	g.st = statCache{root: wt, m: map[string]Cited{}, deps: e.Deps}
	return g
}

// memory reads the memory files (those the hook read before Gather, when
// it did; else through the catalog's stored parses in the store open
// returns), with the stored records of documents, and finds the pointers
// that are facts.
func (g *gatherer) memory(open func() (*store.Store, func(), error)) error {
	ms := g.e.mem
	if ms == nil {
		var err error
		if ms, err = memFiles(g.e.Deps, g.e.MemoryDir, open, g.ix, nil); err != nil {
			return err
		}
	}
	g.mem, g.docs = ms.files, ms.docs
	g.in.MemFilesUnread = ms.beyond
	if !g.sourceOn(automemory.Name) {
		// Switched off in .intermem/config.json: auto-memory is not
		// catalogued, searched or served, so a session start neither shows
		// nor counts its entries (status and plan say it is off). The
		// stored records of documents stay: they are not memory.
		g.mem, g.in.MemFilesUnread = nil, 0
	}
	g.orphans = orphanPointers(g.mem, ms.names)
	return nil
}

// isPointer reports whether en is an index line pointing to a memory
// file (a pointer to no file is the memory itself).
func (g *gatherer) isPointer(en *memEntry) bool {
	return en.Kind == string(automem.Pointer) && !g.orphans[en.ID]
}

// documents reads the curated documents and what Claude Code loads: the
// statements and markers already in context, where each promoted id is
// marked, and the index of promoted knowledge less what is loaded.
func (g *gatherer) documents() {
	g.ds = discover(g.e, g.cwd, newDocReader(g.docs, g.e.Root, g.e.Home, g.ix))
	for _, f := range g.ds.set.Files {
		for _, k := range f.Doc.Keys {
			g.loadedKeys[k] = true
		}
		for _, m := range f.Doc.Marks {
			g.loadedIDs[m.ID] = true
		}
	}
	// Everything marked in a curated document is promoted.
	for _, td := range g.ds.targets() {
		for _, m := range td.d.Marks {
			g.marked[m.ID] = true
			if _, ok := g.where[m.ID]; !ok {
				g.where[m.ID], g.whereDoc[m.ID] = m, td.name
			}
		}
	}
	g.agentsIndex()
	g.details()
}

// agentsIndex lists AGENTS.md's sections when Claude Code does not load
// it, and says when it holds promoted facts not every client loads.
func (g *gatherer) agentsIndex() {
	ds := g.ds
	if ds.agents == nil || ds.same {
		return
	}
	if !ds.agentsLoaded {
		if di := docIndex(targets.Agents, ds.agents, false); di != nil {
			g.in.Docs = append(g.in.Docs, *di)
		}
	}
	// Promoted facts AGENTS.md holds, or indexes in the detail documents
	// (the tiered layout).
	facts := len(ds.agents.Marks)
	if ds.agents.TopicIdx {
		for _, dt := range ds.details {
			facts += len(dt.d.Marks)
		}
	}
	if ds.agentsStrict || facts == 0 {
		return
	}
	why := "CLAUDE.md does not import it"
	if ds.claude == nil {
		why = "without a CLAUDE.md only Claude Code 2.1.332 and later load it"
	}
	g.in.Agents = &AgentsInfo{Facts: facts, Why: why}
}

// details lists the detail documents no loaded document's topic index
// already names.
func (g *gatherer) details() {
	indexed := map[string]bool{}
	for _, f := range g.ds.set.Files {
		for _, p := range f.Doc.Indexed {
			indexed[p] = true
		}
	}
	for _, dt := range g.ds.details {
		if !indexed[dt.name] {
			g.in.Details = append(g.in.Details, Detail{Name: dt.name, Title: dt.d.Title, Facts: len(dt.d.Marks)})
		}
	}
}

// memoryIndex measures MEMORY.md against its load cap: the entries past
// it go to the ledger, those before it are in context already (with the
// files their pointers name).
func (g *gatherer) memoryIndex() {
	for _, f := range g.mem {
		if f.Name != automem.IndexName {
			continue
		}
		l := f.Load
		g.in.Index = &IndexInfo{
			Path: filepath.Join(g.e.MemoryDir, automem.IndexName), Lines: l.Lines, Chars: l.Chars,
			LoadedLines: l.LoadedLines, Truncated: l.Truncated,
		}
		for _, en := range f.Entries {
			if en.Line > l.LoadedLines {
				g.in.Index.Beyond = append(g.in.Index.Beyond, LedgerEntry{Line: en.Line, Text: en.Text, Flags: en.Flags})
				continue
			}
			g.loadedKeys[en.Key] = true
			if en.Link != "" {
				g.pointed[en.Link] = true
			}
		}
	}
}

// readStore reads the store in one read transaction: the last sweep,
// promotions (and the stale ones still marked), interrupted operations,
// rejections, each memory entry's sightings and confidence, and the
// other sources' entries. The store is released right after.
func (g *gatherer) readStore(open func() (*store.Store, func(), error)) error {
	n := 0
	for _, f := range g.mem {
		n += len(f.Entries)
	}
	g.rec = &records{idx: make(map[string]int32, n), recs: make([]entryRec, 0, n)}
	s, release, err := open()
	if err != nil {
		return err
	}
	if s == nil {
		return nil
	}
	g.haveStore = true
	err = s.View(func(tx *bolt.Tx) error {
		in := g.in
		in.LastSweep = store.LastSweep(tx)
		if err := g.readPromoted(tx); err != nil {
			return err
		}
		in.Interrupted, in.Refused = interrupted(tx, g.e.Key, g.e.Places)
		var err error
		if g.rejected, err = store.Rejected(tx); err != nil {
			return err
		}
		if in.Boot != nil {
			b, err := readBoot(tx, in.Branch, g.e.Session)
			if err != nil {
				return err
			}
			b.Identity = in.Boot.Identity
			in.Boot = b
		}
		readEntries(tx, g.mem, g.rec)
		in.Related, in.Corrections = readRelated(tx, g.sourceOn)
		if g.sourceOn(written.Name) {
			g.written = readWritten(store.Catalog(tx))
		}
		return nil
	})
	release()
	sort.Slice(g.in.Stale, func(i, j int) bool {
		a, b := g.in.Stale[i], g.in.Stale[j]
		if a.Confidence != b.Confidence {
			return a.Confidence < b.Confidence
		}
		return a.ID < b.ID
	})
	return err
}

// sourceOn reports whether .intermem/config.json leaves a source on.
func (g *gatherer) sourceOn(name string) bool {
	on, set := g.e.Sources[name]
	return on || !set
}

// readPromoted records every promoted id, when the first was promoted,
// and the live (not archived) facts still marked in a curated document
// whose recorded confidence fell below score.StaleBelow.
func (g *gatherer) readPromoted(tx *bolt.Tx) error {
	in := g.in
	return store.EachPromoted(tx, func(p *store.Promoted) error {
		g.promoted[p.ID] = true
		if p.Archived {
			return nil
		}
		if !p.At.IsZero() && (in.FirstPromoted.IsZero() || p.At.Before(in.FirstPromoted)) {
			in.FirstPromoted = p.At
		}
		m, ok := g.where[p.ID]
		if !ok || p.Confidence < 0 || p.Confidence >= score.StaleBelow {
			return nil
		}
		t := m.Text
		if t == "" {
			t = p.Text
		}
		in.Stale = append(in.Stale, StaleFact{ID: p.ID, Doc: g.whereDoc[p.ID], Section: m.Section, Text: t, Confidence: p.Confidence})
		return nil
	})
}

// ready counts the entries ready for synthesis: what a plan would number,
// decided by the plan's own Judge over the cached Subjects. Citations are
// the one input judged differently: by the verdict a plan or validate
// recorded, or, for an entry none has judged yet, by whether its cited
// project paths exist (see citedScore).
func (g *gatherer) ready() {
	if !g.haveStore || len(g.rec.recs)+len(g.written) == 0 {
		return
	}
	w := g.world()
	// A one-memory file an index line holding a secret points to holds
	// it too (pruning removes the line), as automem marks it.
	secretLinks := map[string]bool{}
	for _, f := range g.mem {
		for i := range f.Entries {
			if en := &f.Entries[i]; en.Secret && en.Kind == string(automem.Pointer) {
				secretLinks[en.Link] = true
			}
		}
	}
	for _, f := range g.mem {
		for i := range f.Entries {
			en := &f.Entries[i]
			r := g.rec.get(en.ID)
			if r == nil || r.counted {
				continue
			}
			r.counted = true
			if g.judge(&w, en, r, secretLinks[f.Name]).Verdict.Ready() {
				g.in.Ready++
			}
		}
	}
	// The written memories, as the plan judges them after auto-memory: an
	// id auto-memory holds too was counted there.
	for i := range g.written {
		ws := &g.written[i]
		if r := g.rec.get(ws.subj.ID); r != nil && r.counted {
			continue
		}
		d, decided := w.Before(&ws.subj)
		if !decided {
			d = w.After(&ws.subj, citedScore(ws.confidence, ws.cites, &g.st))
		}
		if d.Verdict.Ready() {
			g.in.Ready++
		}
	}
}

// world is what plan.World.Judge needs beside the entry: the threshold,
// promotions and rejections, the marked ids, the statements of the curated
// documents and of what every client loads above the project.
func (g *gatherer) world() plan.World {
	w := plan.World{Threshold: g.e.Threshold, Promoted: g.promoted, Rejected: g.rejected, Marked: g.marked,
		Loaded: map[uint64]string{}, Curated: map[uint64]bool{}}
	for _, td := range g.ds.targets() {
		for _, k := range td.d.Keys {
			w.Curated[k] = true
		}
	}
	for _, f := range g.ds.set.Files {
		if f.Strict && !f.Below(g.e.Root) {
			for _, k := range f.Doc.Keys {
				w.Loaded[k] = ""
			}
		}
	}
	return w
}

// judge is plan.World.Judge of one memory entry (secretLink: an index
// line holding a secret points to its file).
func (g *gatherer) judge(w *plan.World, en *memEntry, r *entryRec, secretLink bool) plan.Decision {
	kind := automem.Kind(en.Kind)
	if kind == automem.Pointer && !g.isPointer(en) {
		kind = automem.Fact // a pointer to no file is the memory itself
	}
	subj := plan.Subject{ID: en.ID, Kind: kind, Sessions: r.sessions, Secret: en.Secret || (kind == automem.Memory && secretLink),
		Key: en.BKey, DescKey: en.DescKey, HasDesc: en.hasDesc, Withhold: en.Withhold}
	d, decided := w.Before(&subj)
	if !decided {
		d = w.After(&subj, citedScore(r.confidence, en.Cites, &g.st))
	}
	return d
}

// candidates are the topic-file entries nothing loaded already says, with
// their history, cited files and staleness.
func (g *gatherer) candidates() {
	n := 0
	for _, f := range g.mem {
		n += len(f.Entries)
	}
	g.in.Candidates = make([]Candidate, 0, min(n, maxCandidates))
	for _, f := range g.mem {
		if f.Name == automem.IndexName {
			continue
		}
		for i := range f.Entries {
			if len(g.in.Candidates) >= maxCandidates {
				return
			}
			if en := &f.Entries[i]; g.shows(en) {
				g.in.Candidates = append(g.in.Candidates, g.candidate(f, en))
			}
		}
	}
}

// shows reports whether a topic-file entry may be shown: not a pointer,
// and nothing loaded says it already.
func (g *gatherer) shows(en *memEntry) bool {
	return !g.isPointer(en) && !g.loadedIDs[en.ID] && !g.loadedKeys[en.Key] && !(en.hasDesc && g.loadedKeys[en.DescKey])
}

func (g *gatherer) candidate(f *memFile, en *memEntry) Candidate {
	c := Candidate{ID: en.ID, File: f.Safe, Line: en.Line, Kind: en.Kind, Text: en.Text, Confidence: -1, Flags: en.Flags}
	if g.orphans[en.ID] {
		c.Kind = string(automem.Fact)
	}
	if en.Kind == string(automem.Memory) {
		c.Text, c.Body, c.Type = memoryLine(en), en.Name+"\n"+en.Text, en.Type
		c.Content = en.Text
		c.Pointed = g.pointed[f.Safe] // links are redacted like names
	}
	if r := g.rec.get(en.ID); r != nil {
		c.Sessions, c.Confidence, c.LastSeen = r.sessions, r.confidence, r.lastSeen.LastSeen()
	}
	c.Cites = g.st.cites(en.Cites)
	// A memory whose citations are broken is shown last, marked: judged
	// as readiness judges it (the recorded verdict, else the cited paths
	// on disk).
	c.Stale = citedScore(c.Confidence, en.Cites, &g.st).Score.Stale
	return c
}

// citedScore is the citation evidence the hook has for an entry: the
// confidence a plan or validate last recorded, else its cited project
// paths on disk (plan.Known, the rule every read-only view judges by; the
// hook never runs git, so a renamed file counts as broken until a plan or
// validate sees the rename).
func citedScore(recorded float64, cites []string, st *statCache) plan.Evidence {
	if recorded >= 0 || len(cites) == 0 {
		return plan.Recorded(recorded)
	}
	return plan.Known(recorded, cites, st.exists)
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
	lastSeen   store.Glance // its time parsed only for candidates
	confidence float64      // -1: unknown
	counted    bool         // in Inputs.Ready already
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

// readEntries reads, for every current entry, what ranking needs of its
// record (store.Glance) and its validated confidence when one is recorded.
func readEntries(tx *bolt.Tx, mem []*memFile, rec *records) {
	gl := store.NewGlancer(tx)
	if gl.Empty() {
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
	set := func(i int32, g store.Glance) {
		r := &rec.recs[i]
		r.sessions, r.lastSeen = g.Sessions, g
	}
	// A search per entry touches far fewer pages than a pass over the
	// bucket for a few thousand entries of a far larger store (a memory
	// directory past maxMemFiles); past that, one pass in key order costs
	// less, records of entries no longer in memory skipped by the lookup.
	ids := make([]string, 0, len(rec.idx))
	for id := range rec.idx {
		ids = append(ids, id)
	}
	sort.Strings(ids) // searches in key order share their pages
	if len(rec.idx) <= maxSearched {
		gl.Lookup(ids, func(id string, g store.Glance) { set(rec.idx[id], g) })
	} else {
		gl.Each(func(id string, g store.Glance) {
			if i, ok := rec.idx[id]; ok {
				set(i, g)
			}
		})
	}
	for _, id := range ids {
		if c, ok := gl.Confidence(id); ok {
			rec.recs[rec.idx[id]].confidence = c
		}
	}
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

// exists is plan.Exists over the cache: known is false past maxStats.
func (s *statCache) exists(p string) (exists, known bool) {
	c, ok := s.one(p)
	return c.Exists, ok
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

// writtenSubject is a written memory as readiness judges it: its Subject
// (plan.WrittenSubject), the confidence a plan or validate recorded (-1:
// none) and the paths it cites.
type writtenSubject struct {
	subj       plan.Subject
	confidence float64
	cites      []string
}

// readWritten reads the written memories from the catalog as stored
// (every writer and SessionEnd keep it current; the hook never parses the
// log), at most maxRelatedRead of them.
func readWritten(ct *store.CatalogTx) []writtenSubject {
	var out []writtenSubject
	_ = ct.Files(written.Name, func(f *store.CatalogFile) error {
		for _, id := range f.IDs {
			if len(out) >= maxRelatedRead {
				return nil
			}
			e, ok := ct.Entry(id, written.Name)
			if !ok || !e.Gone.IsZero() {
				continue
			}
			ws := writtenSubject{subj: plan.WrittenSubject(e.Entry), confidence: -1, cites: e.Citations}
			if fact, ok := ct.Fact(id); ok {
				ws.confidence = fact.Confidence
			}
			out = append(out, ws)
		}
		return nil
	})
	return out
}
