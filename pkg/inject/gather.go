package inject

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/tidwall/gjson"
	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/cite"
	"github.com/intermem/intermem/pkg/journal"
	"github.com/intermem/intermem/pkg/match"
	"github.com/intermem/intermem/pkg/mdoc"
	"github.com/intermem/intermem/pkg/score"
	"github.com/intermem/intermem/pkg/stability"
	"github.com/intermem/intermem/pkg/store"
	"github.com/intermem/intermem/pkg/targets"
)

// Bounds on the work Gather does, whatever the project looks like.
const (
	maxCandidates   = 5000    // memory entries considered for ranking
	maxCitesPerItem = 8       // cited files looked at per entry
	maxStats        = 2000    // distinct cited files stat'ed
	maxLoadedDocs   = 64      // documents read as "already loaded"
	maxLoadedBytes  = 1 << 20 // bytes read of one such document
	maxImportDepth  = 5       // @import hops Claude Code follows
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
}

// Gather reads everything Render needs: auto-memory, the curated
// documents, what Claude Code loads at session start, the git branch, the
// cited files' modification times and (when s is not nil) the store, in
// one read transaction. It never writes.
func Gather(e Env, s *store.Store) (*Inputs, error) {
	in := &Inputs{Now: e.Now, Budget: e.Budget, MemoryDir: e.MemoryDir}
	if e.Threshold <= 0 {
		e.Threshold = stability.DefaultThreshold
	}
	cwd := e.Cwd
	if cwd == "" {
		cwd = e.Root
	}
	if real, err := filepath.EvalSymlinks(cwd); err == nil {
		cwd = real
	}
	wt, branch := gitInfo(cwd)
	if wt == "" {
		wt = e.Root
	}
	in.Branch = branch
	if rel, err := filepath.Rel(wt, cwd); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
		in.CwdRel = filepath.ToSlash(rel)
	}

	dir, err := automem.Scan(e.MemoryDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	ts, err := targets.Load(e.Root)
	if err != nil {
		return nil, err
	}

	// What Claude Code loaded: statements (as exact keys) and markers.
	agentsLoaded, agentsWhy := ts.AgentsLoaded()
	agentsLoaded = agentsLoaded || !ts.Claude.Exists
	ld := loadedDocs(e, cwd, ts, agentsLoaded)
	loadedKeys := make(map[uint64]bool, 256)
	loadedIDs := map[string]bool{}
	for _, d := range ld {
		for _, s := range d.Statements() {
			loadedKeys[match.Key(s.Text)] = true
		}
		for _, m := range d.Marked() {
			loadedIDs[m.ID] = true
		}
	}

	// Everything marked in any curated document is promoted; their
	// statements are what synthesis would skip as already said.
	marked := map[string]bool{}
	markedWhere := map[string]mdoc.Marked{}
	markedDoc := map[string]string{}
	targetKeys := map[uint64]bool{}
	for _, d := range ts.Docs() {
		for _, m := range d.Doc.Marked() {
			marked[m.ID] = true
			if _, ok := markedWhere[m.ID]; !ok {
				markedWhere[m.ID], markedDoc[m.ID] = m, d.Name
			}
		}
	}

	// The index of promoted knowledge.
	in.Docs = docIndex(ts, agentsLoaded)
	for _, d := range ts.Details {
		if !d.Exists {
			continue
		}
		in.Details = append(in.Details, Detail{Name: d.Name, Title: docTitle(d.Doc), Facts: len(d.Doc.Marked())})
	}
	if ts.Agents.Exists && !ts.Same() && !agentsLoadedStrict(ts) {
		if n := len(ts.Agents.Doc.Marked()); n > 0 {
			in.Agents = &AgentsInfo{Facts: n, Why: agentsWhy}
		}
	}

	// MEMORY.md against its cap, and what its loaded part already says.
	pointed := map[string]bool{}
	if dir != nil && dir.Index != nil {
		l := dir.Load
		in.Index = &IndexInfo{
			Path: filepath.Join(e.MemoryDir, automem.IndexName), Lines: l.Lines, Chars: l.Chars,
			LoadedLines: l.LoadedLines, Truncated: l.Truncated,
		}
		for _, en := range dir.Index.Entries {
			if en.StartLine > l.LoadedLines {
				in.Index.Beyond = append(in.Index.Beyond, LedgerEntry{Line: en.StartLine, Text: en.Text})
				continue
			}
			loadedKeys[match.Key(en.Text)] = true
			if en.Link != "" {
				pointed[en.Link] = true
			}
		}
	}

	// The store: sessions and sightings, promotions, the journal.
	rec := map[string]entryRec{}
	promoted := map[string]bool{}
	rejected := map[string]bool{}
	if s != nil {
		err := s.View(func(tx *bolt.Tx) error {
			readPromoted(tx, promoted, func(id, text string, conf float64) {
				m, ok := markedWhere[id]
				if !ok || conf >= score.StaleBelow {
					return
				}
				t := m.Text
				if t == "" {
					t = text
				}
				in.Stale = append(in.Stale, StaleFact{ID: id, Doc: markedDoc[id], Section: m.Section, Text: t, Confidence: conf})
			})
			in.Interrupted = interrupted(tx)
			if b := tx.Bucket(store.BucketDecisions); b != nil {
				_ = b.ForEach(func(k, _ []byte) error { rejected[string(k)] = true; return nil })
			}
			if dir == nil {
				return nil
			}
			eb := tx.Bucket(store.BucketEntries)
			fb := tx.Bucket(store.BucketFacts)
			if fb != nil {
				if k, _ := fb.Cursor().First(); k == nil {
					fb = nil
				}
			}
			if eb == nil && fb == nil {
				return nil
			}
			for _, f := range dir.Files {
				for _, en := range f.Entries {
					if _, ok := rec[en.ID]; ok {
						continue
					}
					r := entryRec{confidence: -1}
					if eb != nil {
						r = readEntry(eb.Get([]byte(en.ID)))
					}
					if fb != nil {
						if v := gjson.GetBytes(fb.Get([]byte(en.ID)), "confidence"); v.Exists() {
							r.confidence = v.Float()
						}
					}
					rec[en.ID] = r
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Slice(in.Stale, func(i, j int) bool {
		a, b := in.Stale[i], in.Stale[j]
		if a.Confidence != b.Confidence {
			return a.Confidence < b.Confidence
		}
		return a.ID < b.ID
	})

	if dir == nil {
		return in, nil
	}

	// Entries ready for synthesis (a cheap approximation of the plan).
	var stableSeen map[string]bool
	if len(rec) > 0 {
		for _, d := range ts.Docs() {
			for _, s := range d.Doc.Statements() {
				targetKeys[match.Key(s.Text)] = true
			}
		}
		stableSeen = map[string]bool{}
		for _, f := range dir.Files {
			for _, en := range f.Entries {
				r := rec[en.ID]
				if en.Kind == automem.Pointer || stableSeen[en.ID] || promoted[en.ID] || marked[en.ID] || rejected[en.ID] {
					continue
				}
				if stability.Of(&store.Entry{Sessions: r.sessions}, e.Threshold) != stability.Stable {
					continue
				}
				if targetKeys[match.Key(en.Text)] {
					continue
				}
				stableSeen[en.ID] = true
				in.Stable++
			}
		}
	}

	// Candidates: topic-file entries that nothing loaded already says.
	st := statCache{root: wt, now: e.Now, m: map[string]Cited{}}
	for _, f := range dir.Files {
		if f.Name == automem.IndexName {
			continue
		}
		for _, en := range f.Entries {
			if len(in.Candidates) >= maxCandidates {
				break
			}
			if en.Kind == automem.Pointer || loadedIDs[en.ID] || loadedKeys[match.Key(en.Text)] {
				continue
			}
			c := Candidate{ID: en.ID, File: en.File, Line: en.StartLine, Kind: string(en.Kind), Text: en.Text, Confidence: -1}
			citeText := en.Text
			if en.Kind == automem.Memory {
				if en.Description != "" && loadedKeys[match.Key(en.Description)] {
					continue
				}
				c.Text, c.Body, c.Type = memoryLine(en), en.Name+"\n"+en.Text, en.Type
				citeText = en.Description + "\n" + en.Text
				c.Pointed = pointed[en.File]
			}
			if r, ok := rec[en.ID]; ok {
				c.Sessions, c.LastSeen, c.Confidence = r.sessions, r.lastSeen, r.confidence
			}
			c.Cites = st.cites(citeText)
			in.Candidates = append(in.Candidates, c)
		}
	}
	return in, nil
}

// agentsLoadedStrict is targets' answer: AGENTS.md is loaded by every
// client (imported, or the same file as CLAUDE.md).
func agentsLoadedStrict(ts *targets.Set) bool {
	ok, _ := ts.AgentsLoaded()
	return ok
}

// memoryLine is what a one-memory file shows: its description, or its
// name and the first line of its body.
func memoryLine(en automem.Entry) string {
	if d := strings.TrimSpace(en.Description); d != "" {
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
	lastSeen   time.Time
	confidence float64 // -1: unknown
}

// readEntry reads the two fields of a store.Entry ranking needs, without
// decoding the whole record (a JSON decode per entry would cost more than
// the rest of the hook at 1,000 entries).
func readEntry(raw []byte) entryRec {
	r := entryRec{confidence: -1}
	if raw == nil {
		return r
	}
	v := gjson.GetManyBytes(raw, "sessions", "last_seen")
	r.sessions = int(v[0].Int())
	if t, err := time.Parse(time.RFC3339Nano, v[1].String()); err == nil {
		r.lastSeen = t
	}
	return r
}

// readPromoted records every promoted id and reports each live (not
// archived) one with a recorded confidence.
func readPromoted(tx *bolt.Tx, ids map[string]bool, each func(id, text string, conf float64)) {
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
		v := gjson.GetManyBytes(raw, "confidence", "archived", "text")
		if v[1].Bool() || !v[0].Exists() {
			return nil
		}
		each(id, v[2].String(), v[0].Float())
		return nil
	})
}

// interrupted lists the summaries of incomplete journal operations in id
// order — journal.Incomplete, reading only the state and summary of each
// record instead of decoding every step of every operation ever run.
func interrupted(tx *bolt.Tx) []string {
	b := tx.Bucket(store.BucketJournal)
	if b == nil {
		return nil
	}
	var out []string
	_ = b.ForEach(func(_, raw []byte) error {
		if raw == nil {
			return nil
		}
		v := gjson.GetManyBytes(raw, "state", "summary", "kind")
		if s := journal.State(v[0].String()); s == journal.Pending || s == journal.Committed {
			sum := v[1].String()
			if sum == "" {
				sum = v[2].String()
			}
			out = append(out, sum)
		}
		return nil
	})
	return out
}

// docIndex lists, for CLAUDE.md and AGENTS.md, the sections holding
// intermem markers and how many each holds, in document order.
func docIndex(ts *targets.Set, agentsLoaded bool) []DocIndex {
	var out []DocIndex
	add := func(d *targets.Doc, loaded bool) {
		if !d.Exists {
			return
		}
		di := DocIndex{Name: d.Name, Loaded: loaded}
		pos := map[string]int{}
		for _, m := range d.Doc.Marked() {
			i, ok := pos[m.Section]
			if !ok {
				i = len(di.Sections)
				pos[m.Section] = i
				di.Sections = append(di.Sections, SectionCount{Title: m.Section})
			}
			di.Sections[i].Facts++
		}
		if len(di.Sections) > 0 {
			out = append(out, di)
		}
	}
	add(ts.Claude, true)
	if !ts.Same() {
		add(ts.Agents, agentsLoaded)
	}
	return out
}

// docTitle is a detail doc's first heading, or its first line of text.
func docTitle(d *mdoc.Doc) string {
	for _, s := range d.Sections {
		if s.Level > 0 && s.Title != "" {
			return s.Title
		}
	}
	for _, s := range d.Statements() {
		first, _, _ := strings.Cut(s.Text, "\n")
		if t := strings.TrimSpace(first); t != "" {
			return t
		}
	}
	return ""
}

// statCache stats cited files once each, within maxStats.
type statCache struct {
	root  string
	now   time.Time
	m     map[string]Cited
	stats int
}

// cites returns the files text cites, stat'ed, in order of appearance.
func (s *statCache) cites(text string) []Cited {
	if !mayCite(text) {
		return nil
	}
	var out []Cited
	for _, c := range cite.Extract(text) {
		if len(out) >= maxCitesPerItem {
			break
		}
		switch c.Kind {
		case cite.File, cite.Dir, cite.Path, cite.Symbol:
		default:
			continue
		}
		p := c.Path
		if c.Outside || p == "" || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") || strings.HasPrefix(p, "..") {
			continue
		}
		if got, ok := s.m[p]; ok {
			out = append(out, got)
			continue
		}
		if s.stats >= maxStats {
			continue
		}
		s.stats++
		got := Cited{Path: p}
		if fi, err := os.Stat(filepath.Join(s.root, filepath.FromSlash(p))); err == nil {
			got.Exists, got.ModTime = true, fi.ModTime().UTC()
		}
		s.m[p] = got
		out = append(out, got)
	}
	return out
}

// mayCite is a cheap pre-check: text without a slash, a backtick or a dot
// cites no file, so cite.Extract need not read it.
func mayCite(text string) bool {
	return strings.ContainsAny(text, "/`.")
}
