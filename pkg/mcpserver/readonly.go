package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/cite"
	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/project"
	"github.com/intermem/intermem/pkg/redact"
	"github.com/intermem/intermem/pkg/score"
	"github.com/intermem/intermem/pkg/search"
	"github.com/intermem/intermem/pkg/source"
	"github.com/intermem/intermem/pkg/source/sources"
	"github.com/intermem/intermem/pkg/stability"
	"github.com/intermem/intermem/pkg/store"
	"github.com/intermem/intermem/pkg/validate"
)

// AutoMemory is the source name of Claude Code's auto-memory entries.
const AutoMemory = "auto-memory"

// StoreWait is how long a tool waits for intermem's store when a hook or
// a command holds it. The store is opened read-only for one call and
// closed before the call returns: the server never holds it between
// calls, so it never makes a hook wait for more than one call's read.
const StoreWait = 300 * time.Millisecond

// maxRecentSessions bounds the sessions memory_provenance lists.
const maxRecentSessions = 10

// ReadOnly is the backend over what exists before the catalog: every call
// scans the project's sources (pkg/source: compound, clavain, interfluence)
// and its auto-memory (pkg/automem) afresh, indexes them (pkg/search) and
// joins what intermem's store knows (confidence, sessions, promotion). It
// writes nothing and holds nothing between calls. Text is indexed
// redacted, so a search can never confirm a guessed secret.
//
// It is the stand-in the catalog replaces: the catalog keeps the scan
// incremental and the overlay complete (validation of every source,
// first/last seen beyond auto-memory, agents, tombstones).
type ReadOnly struct {
	env *cli.Env
	p   *project.Project
	reg *source.Registry
}

// NewReadOnly returns the read-only backend for project p.
func NewReadOnly(env *cli.Env, p *project.Project) *ReadOnly {
	return &ReadOnly{env: env, p: p, reg: sources.Registry()}
}

// corpus is one call's view of the project: every entry, and where to
// find each.
type corpus struct {
	entries []source.Entry
	byID    map[string]int
	// files maps an entry id to its absolute file.
	files map[string]string
	notes []string
}

// scan reads every source and the auto-memory directory.
func (r *ReadOnly) scan(ctx context.Context) *corpus {
	c := &corpus{byID: map[string]int{}, files: map[string]string{}}
	for _, s := range r.reg.All() {
		if ctx.Err() != nil {
			break
		}
		if s.Name() == AutoMemory {
			continue // below, with the files it names
		}
		es, _ := source.Scan(source.Env{Root: r.p.Root, MemoryDir: r.p.MemoryDir}, s)
		for _, e := range es {
			c.add(e, filepath.Join(r.p.Root, filepath.FromSlash(e.Path)))
		}
	}
	d, err := automem.Scan(r.p.MemoryDir)
	switch {
	case err == nil:
		for _, e := range memoryEntries(d) {
			c.add(e, filepath.Join(r.p.MemoryDir, filepath.FromSlash(strings.TrimPrefix(e.Path, "memory/"))))
		}
	case errors.Is(err, fs.ErrNotExist):
	default:
		c.notes = append(c.notes, fmt.Sprintf("auto-memory could not be read: %v", err))
	}
	return c
}

func (c *corpus) add(e source.Entry, file string) {
	if _, dup := c.byID[e.ID]; dup {
		return // the same record twice in one log: one observation
	}
	c.byID[e.ID] = len(c.entries)
	c.entries = append(c.entries, e)
	c.files[e.ID] = file
}

func (c *corpus) get(id string) (*source.Entry, bool) {
	i, ok := c.byID[id]
	if !ok {
		return nil, false
	}
	return &c.entries[i], true
}

// memoryEntries turns auto-memory entries (pointers aside: an index line
// is not knowledge) into source entries. Their ids stay automem's, which
// are the store's keys.
func memoryEntries(d *automem.Dir) []source.Entry {
	var out []source.Entry
	for _, m := range d.Entries() {
		if m.Kind == automem.Pointer {
			continue
		}
		e := source.Entry{ID: m.ID, Source: AutoMemory, Kind: source.Fact, Path: "memory/" + m.File,
			Line: m.StartLine, EndLine: m.EndLine, Text: m.Text, Promotable: true}
		if m.Kind == automem.Memory {
			e.Kind = source.Memory
			e.Title = firstOf(m.Name, m.Description, strings.TrimSuffix(m.File, ".md"))
			if m.Description != "" {
				e.Text = m.Description + "\n\n" + m.Text
			}
			source.SetField(&e, "type", m.Type)
		} else {
			e.Title = source.OneLine(strings.TrimLeft(m.Text, "#*_ "), 120)
			source.SetField(&e, "section", m.Section)
		}
		for _, ct := range cite.Extract(m.Text) {
			e.Citations = append(e.Citations, ct.Text)
		}
		out = append(out, e)
	}
	return out
}

func firstOf(ss ...string) string {
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			return s
		}
	}
	return ""
}

// names returns every source name, auto-memory included, sorted.
func (r *ReadOnly) names() []string {
	return r.reg.Names()
}

// storeView is one call's read of intermem's store.
type storeView struct {
	facts    map[string]store.Fact
	checks   map[string]store.Check
	entries  map[string]store.Entry
	promoted map[string]store.Promoted
	sessions map[string][]SessionSeen
}

// errNoStore marks a project without a store yet: nothing is known, and
// that is not a failure.
var errNoStore = errors.New("no store yet")

// readStore opens the store read-only for one look at ids, reads what it
// knows of them and closes it. With sessions, it also lists the sessions
// that saw each id.
func (r *ReadOnly) readStore(ids []string, sessions bool) (*storeView, error) {
	if err := r.p.CheckState(); err != nil {
		return nil, fmt.Errorf("intermem's state directory %s is unusable: %w", r.p.StateDir, err)
	}
	st, err := store.Open(r.p.Path("intermem.db"), store.Options{ReadOnly: true, Timeout: StoreWait})
	switch {
	case errors.Is(err, store.ErrNotExist):
		return nil, errNoStore
	case errors.Is(err, store.ErrLocked):
		return nil, fmt.Errorf("intermem's store %s is %w: another intermem process holds it", r.p.Path("intermem.db"), ErrBusy)
	case err != nil:
		return nil, fmt.Errorf("intermem's store %s: %w", r.p.Path("intermem.db"), err)
	}
	defer st.Close()
	v := &storeView{facts: map[string]store.Fact{}, checks: map[string]store.Check{}, entries: map[string]store.Entry{},
		promoted: map[string]store.Promoted{}, sessions: map[string][]SessionSeen{}}
	err = st.View(func(tx *bolt.Tx) error {
		for _, id := range ids {
			var f store.Fact
			if ok, err := store.Get(tx, store.BucketFacts, id, &f); err != nil {
				return err
			} else if ok {
				v.facts[id] = f
			}
			if c, ok := latestCheck(tx, id); ok {
				v.checks[id] = c
			}
			var e store.Entry
			if ok, err := store.Get(tx, store.BucketEntries, id, &e); err != nil {
				return err
			} else if ok {
				v.entries[id] = e
			}
			var p store.Promoted
			if ok, err := store.Get(tx, store.BucketPromoted, id, &p); err != nil {
				return err
			} else if ok {
				v.promoted[id] = p
			}
		}
		if sessions {
			return v.readSessions(tx, ids)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("intermem's store %s: %w", r.p.Path("intermem.db"), err)
	}
	return v, nil
}

// latestCheck is the latest validation of id in the audit trail, whose
// keys are "<id>/<RFC 3339 time>": the status that `intermem validate`
// gave it (the facts bucket keeps only the confidence).
func latestCheck(tx *bolt.Tx, id string) (store.Check, bool) {
	var c store.Check
	b := tx.Bucket(store.BucketChecks)
	if b == nil {
		return c, false
	}
	prefix := []byte(id + "/")
	var last []byte
	cur := b.Cursor()
	for k, v := cur.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = cur.Next() {
		last = v
	}
	if last == nil || json.Unmarshal(last, &c) != nil {
		return store.Check{}, false
	}
	return c, true
}

// readSessions lists, for each id, the sessions whose observations held
// it, newest first, at most maxRecentSessions.
func (v *storeView) readSessions(tx *bolt.Tx, ids []string) error {
	seen := tx.Bucket(store.BucketSeen)
	if seen == nil {
		return nil
	}
	return seen.ForEachBucket(func(sid []byte) error {
		b := seen.Bucket(sid)
		for _, id := range ids {
			if b.Get([]byte(id)) == nil {
				continue
			}
			var s store.Session
			if _, err := store.Get(tx, store.BucketSessions, string(sid), &s); err != nil {
				return err
			}
			v.sessions[id] = append(v.sessions[id], SessionSeen{ID: string(sid), First: s.First, Last: s.Last})
		}
		return nil
	})
}

// overlay is what the store knows of entry e, or the neutral overlay.
func (v *storeView) overlay(e *source.Entry) Overlay {
	o := Overlay{Confidence: score.Base, Status: StatusUnvalidated}
	if v == nil {
		return o
	}
	if f, ok := v.facts[e.ID]; ok {
		o.Confidence, o.Known, o.Validated = f.Confidence, true, f.At
		o.Status = StatusOK
		if f.Confidence < score.StaleBelow {
			o.Status = StatusStale
		}
		if c, ok := v.checks[e.ID]; ok && c.Status != "" {
			o.Status = c.Status
		}
	}
	if p, ok := v.promoted[e.ID]; ok {
		o.Promoted = promotion(p)
		if p.Confidence > 0 && !o.Known {
			o.Confidence, o.Known = p.Confidence, true
			o.Status = StatusOK
			if p.Confidence < score.StaleBelow {
				o.Status = StatusStale
			}
		}
		if p.Archived {
			o.Status = StatusArchived
		}
	}
	return o
}

func promotion(p store.Promoted) *Promotion {
	return &Promotion{Target: p.Target, Section: p.Section, At: p.At, Op: p.Op, Origin: p.Origin,
		Archived: p.Archived, ArchivedAt: p.ArchivedAt, Reason: p.Reason}
}

// Search ranks every entry by relevance to the query (pkg/search), with
// the store's confidence where it has one.
func (r *ReadOnly) Search(ctx context.Context, req SearchRequest) (*SearchResult, error) {
	if req.Source != "" && !contains(r.names(), req.Source) {
		return nil, fmt.Errorf("%w %q: the sources are %s", ErrUnknownSource, req.Source, strings.Join(r.names(), ", "))
	}
	c := r.scan(ctx)
	res := &SearchResult{Notes: c.notes}
	if len(search.QueryTerms(req.Query)) == 0 {
		res.Notes = append(res.Notes, "the query has no words to search by (common words alone match nothing)")
		return res, nil
	}
	var mem []string
	for _, e := range c.entries {
		if e.Source == AutoMemory {
			mem = append(mem, e.ID)
		}
	}
	v, err := r.readStore(mem, false)
	if err != nil && !errors.Is(err, errNoStore) {
		res.Notes = append(res.Notes, fmt.Sprintf("confidence from intermem's store is not shown: %v", err))
		v = nil
	}
	docs := make([]search.Doc, len(c.entries))
	overlays := make([]Overlay, len(c.entries))
	for i := range c.entries {
		e := &c.entries[i]
		d := search.FromEntry(e)
		d.Title, d.Text = redact.String(d.Title), redact.String(d.Text)
		d.Tags, d.Symptoms = redactAll(d.Tags), redactAll(d.Symptoms)
		overlays[i] = v.overlay(e)
		d.Confidence, d.Stale = overlays[i].Confidence, overlays[i].Status == StatusStale
		docs[i] = d
	}
	var srcs []string
	if req.Source != "" {
		srcs = []string{req.Source}
	}
	for _, h := range search.Build(docs).Search(req.Query, search.Options{Sources: srcs, Since: req.Since, Until: req.Until, Limit: req.Limit, Now: req.Now}) {
		e := &c.entries[h.Doc]
		res.Hits = append(res.Hits, Hit{ID: e.ID, Source: e.Source, Kind: string(e.Kind), Path: e.Path, Line: e.Line,
			Title: e.Title, Summary: summary(e), Text: e.Text, Date: e.Date(), Confidence: h.Confidence,
			Status: overlays[h.Doc].Status, Score: h.Score})
	}
	return res, nil
}

func redactAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = redact.String(s)
	}
	return out
}

// summary is the short text of a hit: a solution's problem, or the text
// after the title.
func summary(e *source.Entry) string {
	for _, name := range []string{"Problem", "Problem Statement", "Summary", "Symptoms"} {
		if s, ok := e.Section(name); ok && strings.TrimSpace(s.Text) != "" {
			return s.Text
		}
	}
	text := strings.TrimSpace(e.Text)
	first, rest, _ := strings.Cut(text, "\n")
	if t := strings.TrimSpace(strings.TrimLeft(first, "#*_-+> ")); t != "" && strings.HasPrefix(e.Title, source.OneLine(t, 60)) {
		if rest = strings.TrimSpace(rest); rest != "" {
			return rest
		}
	}
	return text
}

// Get returns the whole entry with its overlay. An id that only the store
// knows (a fact intermem promoted, whose memory entry was pruned) is
// returned from its promotion record.
func (r *ReadOnly) Get(ctx context.Context, req GetRequest) (*Entry, error) {
	c := r.scan(ctx)
	v, serr := r.readStore([]string{req.ID}, false)
	e, ok := c.get(req.ID)
	if !ok {
		p, ok := v.promotedOnly(req.ID)
		if !ok {
			return nil, notFound(req.ID, serr)
		}
		return p, nil
	}
	out := &Entry{ID: e.ID, Source: e.Source, Kind: string(e.Kind), Path: e.Path, File: c.files[e.ID],
		Line: e.Line, EndLine: e.EndLine, Title: e.Title, Text: e.Text, Tags: e.Tags, Symptoms: e.Symptoms,
		Citations: e.Citations, Fields: e.Fields, Created: e.Created, Updated: e.Updated, Confirmed: e.Confirmed,
		Overlay: v.overlay(e)}
	for _, s := range e.Sections {
		out.Sections = append(out.Sections, Section{Name: s.Name, Line: s.Line})
	}
	return out, nil
}

// promotedOnly is the entry of a promoted fact the scan no longer finds.
func (v *storeView) promotedOnly(id string) (*Entry, bool) {
	if v == nil {
		return nil, false
	}
	p, ok := v.promoted[id]
	if !ok {
		return nil, false
	}
	e := &Entry{ID: id, Source: "promoted", Kind: firstOf(p.Kind, string(source.Fact)), Path: p.Target,
		Title: source.OneLine(p.Text, 120), Text: p.Text, Overlay: v.overlay(&source.Entry{ID: id})}
	return e, true
}

// notFound is the error for an id neither the scan nor the store knows.
// When the store could not be read, that is said: the id may be one only
// the store knows (a promoted fact), so "no memory has this id" could be
// wrong.
func notFound(id string, storeErr error) error {
	if storeErr != nil && !errors.Is(storeErr, errNoStore) {
		return fmt.Errorf("%s is in none of the project's memory files, and %w", id, storeErr)
	}
	return fmt.Errorf("%w: %s", ErrNotFound, id)
}

// Validate checks the entry's citations now with pkg/cite, scored as
// `intermem validate` scores them.
func (r *ReadOnly) Validate(ctx context.Context, req ValidateRequest) (*Validation, error) {
	c := r.scan(ctx)
	var text string
	sessions := 0
	v, verr := r.readStore([]string{req.ID}, false)
	if verr == nil {
		sessions = v.entries[req.ID].Sessions
	}
	if e, ok := c.get(req.ID); ok {
		text = checkText(e)
	} else if p, ok := v.promotedOnly(req.ID); ok {
		text = p.Text
	} else {
		return nil, notFound(req.ID, verr)
	}
	sc, cs := validate.Check(cite.NewChecker(r.p.Root), text, sessions, stability.Threshold(r.env.Get))
	out := &Validation{ID: req.ID, Confidence: sc.Confidence, Reasons: sc.Reasons, Status: StatusUnchecked}
	switch {
	case sc.Stale:
		out.Status = StatusStale
	case sc.Valid+sc.Broken+sc.Moved > 0:
		out.Status = StatusOK
	}
	for _, ct := range cs {
		out.Citations = append(out.Citations, CitationCheck{Text: ct.Text, Kind: ct.Kind, Status: ct.Status,
			Detail: ct.Detail, MovedTo: ct.MovedTo, Fix: fixFor(ct), NotInProject: ct.NotInProject})
	}
	return out, nil
}

// checkText is the text whose citations validate an entry. Auto-memory
// is checked as written, like `intermem validate` does; a source entry by
// the citations its source found (an Evidence line's "path:lines,
// Symbol()" is split there), each in backticks so that cite.Extract reads
// it as one reference.
func checkText(e *source.Entry) string {
	if e.Source == AutoMemory || len(e.Citations) == 0 {
		return e.Text
	}
	var b strings.Builder
	for _, c := range e.Citations {
		b.WriteString("`" + strings.ReplaceAll(c, "`", "") + "`\n")
	}
	return b.String()
}

// fixFor suggests what to do about a citation that does not hold.
func fixFor(c validate.Citation) string {
	switch {
	case c.Fix != "":
		return c.Fix
	case c.Status == string(cite.Broken):
		return "remove or correct the citation of " + c.Text + ", or drop the memory if it no longer holds"
	case c.NotInProject:
		return c.Text + " is not in this project: check it names a file here"
	}
	return ""
}

// Provenance reports where the entry lives and what the store recorded:
// first and last seen, sessions, the promotion and the archive.
func (r *ReadOnly) Provenance(ctx context.Context, req ProvenanceRequest) (*Provenance, error) {
	c := r.scan(ctx)
	v, err := r.readStore([]string{req.ID}, true)
	if errors.Is(err, ErrBusy) {
		return nil, err
	}
	var notes []string
	if err != nil && !errors.Is(err, errNoStore) {
		notes = append(notes, fmt.Sprintf("intermem's history is not shown: %v", err))
		v = nil
	}
	out := &Provenance{ID: req.ID, Notes: notes}
	e, ok := c.get(req.ID)
	if ok {
		out.Source, out.Kind, out.Path, out.File = e.Source, string(e.Kind), e.Path, c.files[e.ID]
		out.Line, out.EndLine = e.Line, e.EndLine
		out.Created, out.Updated, out.Confirmed = e.Created, e.Updated, e.Confirmed
		for _, k := range []string{"provenance", "synthesized_from", "synthesized_into", "reviewer", "author", "agent", "context"} {
			if f, ok := e.Fields[k]; ok {
				if out.Fields == nil {
					out.Fields = map[string]string{}
				}
				out.Fields[k] = f
			}
		}
	} else if p, ok := v.promotedOnly(req.ID); ok {
		out.Source, out.Kind, out.Path = p.Source, p.Kind, p.Path
	} else {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, req.ID)
	}
	if v != nil {
		if se, ok := v.entries[req.ID]; ok {
			out.FirstSeen, out.LastSeen, out.Sessions, out.Replaced = se.FirstSeen, se.LastSeen, se.Sessions, se.Prev
		}
		ss := v.sessions[req.ID]
		sort.Slice(ss, func(i, j int) bool { return ss[i].Last.After(ss[j].Last) })
		if len(ss) > maxRecentSessions {
			ss = ss[:maxRecentSessions]
		}
		out.RecentSessions = ss
		if p, ok := v.promoted[req.ID]; ok {
			out.Promotion = promotion(p)
		}
	}
	if out.Source != AutoMemory && out.Source != "promoted" {
		out.Notes = append(out.Notes, "intermem does not observe this source per session yet: first/last seen and sessions are not recorded")
	}
	out.Notes = append(out.Notes, "the agent that wrote a memory is not recorded yet")
	return out, nil
}

// Write is not offered by this backend: the write API (journaled,
// deduplicated, screened before it is stored) comes with the catalog.
func (r *ReadOnly) Write(context.Context, WriteRequest) (*WriteResult, error) {
	return nil, fmt.Errorf("memory_write is %w: intermem stores memories only through its hooks and commands so far", ErrNotAvailable)
}
