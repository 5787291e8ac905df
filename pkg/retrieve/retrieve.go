// Package retrieve is what intermem's read tools do, in one place: the
// commands `intermem search`, `get`, `provenance` and `sources`, and
// intermem-mcp's memory_search, memory_get, memory_validate and
// memory_provenance, call these functions over the same catalog, so the
// same query gives the same hits, and the same id the same entry, in both.
//
// # Reading, never writing
//
// Read opens the project's store read-only for one look (waiting at most
// Options.Wait for a writer), builds the catalog inside that one read
// transaction and hands it to the caller; the catalog brings itself up to
// date with the files in memory (store.CatalogTx), so what is shown is the
// files as they are, and nothing is written: not the store, not the state
// directory. A project without a store yet is read from its files alone. A
// store that a hook or a command holds past the wait is, for a search or an
// entry, a note ("confidence and history are not shown") over the files
// alone; for provenance, which is the store's history, an error (ErrBusy).
//
// # What is returned
//
// Text as the catalog keeps it: redacted, with the screening flags beside
// it. The caller escapes what reaches a terminal (cli.SafeWriter) and
// withholds flagged entries from what reaches a model (mcpserver's view).
package retrieve

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/catalog"
	"github.com/intermem/intermem/pkg/cite"
	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/config"
	"github.com/intermem/intermem/pkg/project"
	"github.com/intermem/intermem/pkg/redact"
	"github.com/intermem/intermem/pkg/search"
	"github.com/intermem/intermem/pkg/source"
	"github.com/intermem/intermem/pkg/source/automemory"
	sourcecont "github.com/intermem/intermem/pkg/source/continuity"
	"github.com/intermem/intermem/pkg/source/promoted"
	"github.com/intermem/intermem/pkg/source/written"
	"github.com/intermem/intermem/pkg/store"
	"github.com/intermem/intermem/pkg/validate"
)

// ErrBusy is returned when the store is held by another process past the
// wait and what was asked needs it.
var ErrBusy = errors.New("intermem's store is busy: another intermem process holds it")

// ErrNotFound is returned for an id no source (and no promotion record)
// knows.
var ErrNotFound = errors.New("no entry has this id")

// ErrNotInSource is returned by GetFrom for an id that sources hold, but
// not the one named; the error names those that do.
var ErrNotInSource = errors.New("the source named does not hold this id")

// notInSource is ErrNotInSource for one id: the source named and those
// that hold the id.
type notInSource struct {
	id, src string
	held    []string
}

func (e *notInSource) Error() string {
	return fmt.Sprintf("%s is not in source %s: it is in %s", e.id, e.src, strings.Join(e.held, ", "))
}

func (e *notInSource) Is(target error) bool { return target == ErrNotInSource }

// ErrSourceOff is returned for the id of an entry the store knows only
// from a source now switched off in .intermem/config.json: not served,
// and not "no entry" either (the error names the source).
var ErrSourceOff = errors.New("its source is switched off in .intermem/config.json")

// ErrNoTerms is returned for a query with no word to search by (empty, or
// common words alone).
var ErrNoTerms = errors.New("the query has no words to search by (common words alone match nothing)")

// ErrConfig wraps an unusable .intermem/config.json or a source it names
// that does not exist.
var ErrConfig = errors.New("unusable .intermem/config.json")

// configError is err wrapped as ErrConfig: its message is err's alone
// when err already says the file is unusable (config.ErrInvalid: "unusable
// configuration: PATH: …"), where ErrConfig's words before it would say it
// twice.
type configError struct{ err error }

func (e configError) Error() string {
	if errors.Is(e.err, config.ErrInvalid) {
		return e.err.Error()
	}
	return ErrConfig.Error() + ": " + e.err.Error()
}

func (e configError) Unwrap() []error { return []error{ErrConfig, e.err} }

// Options are how Read opens the store.
type Options struct {
	// Wait is how long to wait for a store another process holds.
	Wait time.Duration
	// NeedStore makes a busy store an error (ErrBusy) instead of a note.
	NeedStore bool
}

// View is one read of a project: its catalog, bound to one read
// transaction, and what the read could not take into account.
type View struct {
	Project *project.Project
	Catalog *catalog.Catalog
	// Env is where the sources were found.
	Env source.Env
	// Stored reports whether the store was read (false: no store yet, or
	// busy).
	Stored bool
	// Notes say what the view could not take into account, one sentence
	// each.
	Notes []string
	// Warnings name the sources that could not be read at all (the
	// memory directory replaced by a file, a directory that cannot be
	// opened), whose entries are therefore missing: the problem validate,
	// plan and status stop at, said by every read so that none of them
	// passes it off as "nothing matches".
	Warnings []string
	tx       *store.CatalogTx
	btx      *bolt.Tx // the store's read transaction; nil without a store
	busy     bool
	// cliEnv finds the per-user store (Get of a memory of scope user).
	cliEnv *cli.Env
	wait   time.Duration
}

// Read builds the catalog of p read-only and calls fn with it; the view
// is valid only during fn. See the package comment.
func Read(env *cli.Env, p *project.Project, opt Options, fn func(v *View) error) error {
	if err := p.CheckState(); err != nil {
		return err
	}
	now, err := env.Now()
	if err != nil {
		return err
	}
	cfg, err := catalog.ProjectConfig(env, p, now)
	if err != nil {
		return configError{err}
	}
	v := &View{Project: p, Env: cfg.Env, cliEnv: env, wait: opt.Wait}
	build := func(tx *bolt.Tx) error {
		v.tx, v.btx = store.Catalog(tx), tx
		c, err := catalog.Build(v.tx, cfg)
		if errors.Is(err, catalog.ErrUnknownSource) {
			return configError{err}
		}
		if err != nil {
			return err
		}
		v.Catalog = c
		v.Warnings = Unread(c)
		return fn(v)
	}
	st, err := store.Open(p.Path("intermem.db"), store.Options{ReadOnly: true, Timeout: opt.Wait})
	switch {
	case err == nil:
		defer st.Close()
		v.Stored = true
		return st.View(build)
	case errors.Is(err, store.ErrNotExist):
		return build(nil)
	case errors.Is(err, store.ErrLocked):
		if opt.NeedStore {
			return fmt.Errorf("%s: %w", p.Path("intermem.db"), ErrBusy)
		}
		v.busy = true
		v.Notes = append(v.Notes, "intermem's store is busy (another intermem process holds it): confidence and history are not shown")
		return build(nil)
	}
	return err
}

// Unread says, one sentence a problem, which switched-on sources of c could
// not be read at all (source.Problem.Unread).
func Unread(c *catalog.Catalog) []string {
	var out []string
	probs := c.Problems()
	for _, name := range c.Names() {
		for _, pr := range probs[name] {
			if pr.Unread {
				pr.Message = strings.TrimPrefix(pr.Message, "cannot be read: ")
				out = append(out, fmt.Sprintf("%s cannot be read (%s), so its entries are left out", name, pr))
			}
		}
	}
	return out
}

// File is the absolute path of the file an entry of the view lives in:
// auto-memory's under the memory directory, an instruction file named
// "~/…" under the home directory, an absolute name as it is, anything
// else under the project root.
func (v *View) File(e *source.Entry) string {
	p := e.Path
	switch {
	case e.Source == automemory.Name && strings.HasPrefix(p, automemory.Prefix):
		return filepath.Join(v.Env.MemoryDir, filepath.FromSlash(strings.TrimPrefix(p, automemory.Prefix)))
	case strings.HasPrefix(p, "~/") && v.Env.Home != "":
		return filepath.Join(v.Env.Home, filepath.FromSlash(p[2:]))
	case filepath.IsAbs(p):
		return p
	}
	return filepath.Join(v.Env.Root, filepath.FromSlash(p))
}

// Query is a search: catalog.Query without Now (the caller's clock is
// passed to Search).
type Query = catalog.Query

// Result is one search result, in the shape `intermem search --json`
// prints.
type Result struct {
	ID         string    `json:"id"`
	Source     string    `json:"source"`
	Kind       string    `json:"kind"`
	Path       string    `json:"path"`
	Line       int       `json:"line"`
	Title      string    `json:"title"`
	Text       string    `json:"text"`
	Score      float64   `json:"score"`
	Confidence float64   `json:"confidence"`
	Status     string    `json:"status"`
	Date       time.Time `json:"date,omitzero"`
	// Flags are what screening found in the entry: an entry with flags may
	// be a prompt injection and is never put into a model's context.
	Flags []string `json:"flags,omitempty"`
	// Scope is the memory's scope: project, phase, session or user.
	Scope string `json:"scope"`
	// Project is the root of the project the hit comes from ("" for
	// scope user, which belongs to none).
	Project string `json:"project,omitempty"`
	// Summary is the short text shown under the title (a solution's
	// problem, else the text after the title).
	Summary string `json:"-"`
	// cites is the text whose citations validation checks (CheckText),
	// for NotInProject.
	cites string
}

// NotInProject is NotInProject of the result's entry, c its project's
// checker.
func (r *Result) NotInProject(c *cite.Checker) bool {
	return r.Status == catalog.StatusUnchecked && citesNotInProject(c, r.cites)
}

// Search ranks the catalog's live entries by relevance to q (see
// catalog.Search: relevance, then confidence and recency; stale entries
// marked by Status). A filter naming an unknown or switched-off source
// is an error wrapping catalog.ErrUnknownSource or catalog.ErrSwitchedOff.
func (v *View) Search(q Query) ([]Result, error) {
	rk, err := v.rank(q)
	if err != nil {
		return nil, err
	}
	out := make([]Result, 0, rk.Len())
	for i := range rk.Len() {
		if r, ok := v.result(rk, i); ok {
			out = append(out, r)
		}
	}
	return out, nil
}

// rank is Search's candidates, read on demand (result).
func (v *View) rank(q Query) (*catalog.Ranked, error) {
	// Results name the memories of scope session and user by
	// ScopedSource, which a filter may name (SearchScoped).
	if err := v.Catalog.CheckSources(q.Sources, ScopedSource); err != nil {
		return nil, err
	}
	if len(search.QueryTerms(q.Text)) == 0 {
		return nil, ErrNoTerms
	}
	return v.Catalog.Rank(q)
}

// result reads the candidate at rank i of rk as a Result; false when the
// store no longer holds its entry.
func (v *View) result(rk *catalog.Ranked, i int) (Result, bool) {
	h, ok := rk.Hit(i)
	if !ok {
		return Result{}, false
	}
	v.known(&h.Overlay, &h.Entry.Entry)
	return Result{ID: h.ID, Source: h.Source, Kind: string(h.Kind), Path: h.Path, Line: h.Line,
		Title: h.Title, Text: h.Text, Score: round(h.Score), Confidence: round(h.Overlay.Confidence),
		Status: h.Overlay.Status, Date: dateOf(&h.Entry), Flags: h.Flags, Summary: Summary(&h.Entry.Entry),
		Scope: ScopeOf(&h.Entry.Entry), Project: v.Project.Root, cites: CheckText(&h.Entry.Entry)}, true
}

// CheckText is the text whose citations validate an entry, as `intermem
// validate` reads it: auto-memory's and intermem's own promoted facts as
// written; any other source's entry by the citations its source found,
// through validate.CitesOf ("" when it found none: its text is not read
// for citations).
func CheckText(e *source.Entry) string {
	if e.Source == automemory.Name || e.Source == promoted.Name {
		return e.Text
	}
	return validate.CitesOf(e.Citations)
}

// NotInProject reports whether entry e, which validation left unchecked
// (catalog.StatusUnchecked: nothing it cites could be checked), cites a
// path this project has never had, checked with c (a checker of its
// project) as validation checks it: what `intermem validate` lists as "not
// in this project (unverified)", which a read command says too rather
// than "nothing checkable cited". The check is made when asked (a git log
// at most, once per checker, when a cited path is missing): the read
// commands ask it of the entries they show whose status is unchecked.
func NotInProject(c *cite.Checker, e *source.Entry) bool {
	return citesNotInProject(c, CheckText(e))
}

func citesNotInProject(c *cite.Checker, text string) bool {
	if c == nil || strings.TrimSpace(text) == "" {
		return false
	}
	_, cs := validate.Check(c, text, 0, 0)
	for _, ct := range cs {
		if ct.NotInProject {
			return true
		}
	}
	return false
}

// dateOf is the date a search filters an entry by: its own, else when the
// catalog first saw it.
func dateOf(e *catalog.Entry) time.Time {
	if d := e.Date(); !d.IsZero() {
		return d
	}
	return e.FirstSeen
}

func round(f float64) float64 { return float64(int64(f*1000+0.5)) / 1000 }

// Summary is the short text of an entry shown with its title: a
// solution's problem, or the text after the title.
func Summary(e *source.Entry) string {
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

// Record is one whole entry with what intermem knows of it.
type Record struct {
	catalog.Entry
	Overlay catalog.Overlay
	// File is the absolute path of the entry's file.
	File string
	// Also are the other sources holding the same id (a memory and the
	// fact promoted from it).
	Also []Place
	// FromRecord is set when no source holds the id and the entry is
	// rebuilt from intermem's promotion record (an archived fact).
	FromRecord bool
	// Written is who wrote it, for a memory written through intermem (of
	// any scope, or the fact one was promoted to); nil otherwise.
	Written *Writer
}

// Writer is who wrote a memory written through intermem (intermem write,
// memory_write) and where it is kept, as its record says: nothing is
// inferred, and what was not recorded is empty.
type Writer struct {
	// Scope is project, phase, session or user; Phase the phase of a
	// memory of scope phase.
	Scope string `json:"scope"`
	Phase *int   `json:"phase,omitempty"`
	// By names the tool that wrote it: "cli" (intermem write), "mcp"
	// (memory_write), or the source the writer gave.
	By string `json:"writer,omitempty"`
	// Session, Agent and ToolUse are the Claude Code session, the
	// subagent and the model's tool call that wrote it.
	Session string `json:"session_id,omitempty"`
	Agent   string `json:"agent_id,omitempty"`
	ToolUse string `json:"tool_use_id,omitempty"`
	// At is when it was written.
	At time.Time `json:"written_at,omitzero"`
	// Store is where it is kept: .intermem/written.jsonl (scope
	// project), the project's store (phase, session), the per-user store
	// (user, outside every project).
	Store string `json:"store"`
}

// Unrecorded names what was not recorded of who wrote it.
func (w *Writer) Unrecorded() []string {
	var out []string
	if w.By == "" {
		out = append(out, "the writer")
	}
	if w.Session == "" {
		out = append(out, "the session")
	}
	if w.Agent == "" {
		out = append(out, "the agent")
	}
	return out
}

// writerOf is who wrote e (all: every entry with its id), when it is or
// was a memory written through intermem: the written log's record (also
// for the fact such a memory was promoted to, whose written record is a
// tombstone), or, for a memory of scope phase, the project store's record.
func (v *View) writerOf(e *catalog.Entry, all []catalog.Entry) *Writer {
	if e.Source == sourcecont.Name && e.Fields["type"] == "memory" {
		return v.phaseWriter(e)
	}
	if e.Source == written.Name {
		return writtenWriter(&e.Entry)
	}
	for i := range all {
		if o := &all[i]; o.Source == written.Name {
			w := writtenWriter(&o.Entry)
			if !o.Gone.IsZero() {
				w.Store += " (its record, taken out of the written set)"
			}
			return w
		}
	}
	return nil
}

func writtenWriter(e *source.Entry) *Writer {
	f := e.Fields
	return &Writer{Scope: store.ScopeProject, By: f["source"], Session: f["session_id"], Agent: f["agent_id"],
		ToolUse: f["tool_use_id"], At: e.Created, Store: e.Path}
}

// phaseWriter is who wrote the memory of scope phase e: its record in the
// project's store (the continuity export keeps no writer), read back as
// hostile; the export's alone when the store has none.
func (v *View) phaseWriter(e *catalog.Entry) *Writer {
	w := &Writer{Scope: store.ScopePhase, At: e.Created, Store: sourcecont.Path}
	if n, err := strconv.Atoi(e.Fields["phase"]); err == nil {
		w.Phase = &n
	}
	if v.btx == nil {
		return w
	}
	ms, err := store.Memories(v.btx)
	if err != nil {
		return w
	}
	for i := range ms {
		if m := &ms[i]; m.ID == e.ID && m.Scope == store.ScopePhase {
			return scopedWriter(m, storePath)
		}
	}
	return w
}

// storePath is the project's store as results name it.
const storePath = ".intermem/intermem.db"

// scopedWriter is who wrote the stored memory m, kept at path, read back
// as hostile: each name redacted and on one line.
func scopedWriter(m *store.ScopedMemory, path string) *Writer {
	clean := func(s string) string { return source.OneLine(redact.String(s), 256) }
	return &Writer{Scope: m.Scope, Phase: m.Phase, By: clean(m.Source), Session: clean(m.SessionID), Agent: clean(m.AgentID),
		ToolUse: clean(m.ToolUseID), At: m.Created, Store: path}
}

// Place is where another source holds an entry.
type Place struct {
	Source string `json:"source"`
	Path   string `json:"path"`
	Line   int    `json:"line"`
	Gone   bool   `json:"gone,omitempty"`
}

// offSource names the switched-off source the store holds id from, ""
// when none does. An auto-memory entry the hooks recorded (its record and
// sighting, store.GetSeen) is auto-memory's even when no catalog build
// took it in before the source was switched off — the hooks record every
// turn, the catalog is built by commands and session ends —, so that get
// says the same of it as of an entry that was catalogued.
func (v *View) offSource(id string) string {
	if v.tx == nil {
		return ""
	}
	for _, e := range v.tx.EntriesOf(id) {
		if !v.Catalog.On(e.Source) {
			return e.Source
		}
	}
	if v.btx != nil && !v.Catalog.On(automemory.Name) {
		if _, seen, err := store.GetSeen(v.btx, id); seen || err != nil {
			return automemory.Name
		}
	}
	return ""
}

// Get returns the entry id: a live entry of a switched-on source first,
// else its tombstone, else what intermem's promotion record keeps of it.
// An id more than one source holds (a fact and the memory it was promoted
// from, a marker typed by hand) is the first of them in source-name order
// that holds it live; Record.Also names the others, and GetFrom reads
// each.
func (v *View) Get(id string) (*Record, error) { return v.GetFrom(id, "") }

// GetFrom is Get of the entry that source src holds under id, live or its
// tombstone, or, for src "", Get's choice. src may be ScopedSource, or
// "promoted" for an archived fact's promotion record, when Get would find
// the entry there. A source that does not hold id is ErrNotInSource,
// naming those that do; an unknown one is catalog.ErrUnknownSource.
func (v *View) GetFrom(id, src string) (*Record, error) {
	id = strings.ToLower(strings.TrimSpace(id))
	all := v.Catalog.GetAll(id)
	var (
		e  catalog.Entry
		ok bool
	)
	if src == "" {
		e, ok = v.Catalog.Get(id)
	} else {
		if err := v.Catalog.CheckSources([]string{src}, ScopedSource); err != nil {
			return nil, err
		}
		for _, o := range all {
			if o.Source == src {
				e, ok = o, true
				break
			}
		}
		if !ok {
			r, err := v.GetFrom(id, "")
			if err != nil || r.Source == src {
				return r, err
			}
			held := []string{r.Source}
			for _, a := range r.Also {
				held = append(held, a.Source)
			}
			sort.Strings(held)
			return nil, &notInSource{id: id, src: src, held: held}
		}
	}
	if !ok {
		p, ok := v.tx.Promoted(id)
		if !ok && v.busy {
			// Only the store may know it (an archived fact): not
			// found cannot be told.
			return nil, fmt.Errorf("%s is in none of the project's sources, and %w", id, ErrBusy)
		}
		if !ok {
			// A memory of scope session or user is in no catalog.
			if r, found := v.scopedRecord(id); found {
				return r, nil
			}
			if off := v.offSource(id); off != "" {
				return nil, fmt.Errorf("%s is an entry of source %q, and %w", id, off, ErrSourceOff)
			}
			return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
		}
		r := &Record{Overlay: v.Catalog.Overlay(id), FromRecord: true}
		r.ID, r.Source, r.Kind, r.Path = id, "promoted", source.Kind(firstOf(p.Kind, string(source.Fact))), p.Target
		r.Title, r.Text = source.OneLine(p.Text, 120), p.Text
		r.Gone = p.ArchivedAt
		r.File = v.File(&r.Entry.Entry)
		return r, nil
	}
	r := &Record{Entry: e, Overlay: v.Catalog.Overlay(id)}
	v.known(&r.Overlay, &e.Entry)
	r.File = v.File(&e.Entry)
	for _, o := range all {
		if o.Source != e.Source {
			r.Also = append(r.Also, Place{Source: o.Source, Path: o.Path, Line: o.Line, Gone: !o.Gone.IsZero()})
		}
	}
	r.Written = v.writerOf(&e, all)
	return r, nil
}

func firstOf(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// MaxRecentSessions bounds the sessions Provenance lists.
const MaxRecentSessions = 10

// Provenance is where an entry came from and what happened to it: the
// Record (whose FirstSeen is when a scan first found the entry, Changed
// when its text last changed, Gone its tombstone, and whose Overlay holds
// the sessions, the agent, the operations and the last validation), and
// what only provenance reads.
type Provenance struct {
	*Record
	// RecentSessions are the latest sessions that saw it, newest first.
	RecentSessions []store.SessionSeen
	// Fields are the source's own provenance values (provenance,
	// synthesized_from, …).
	Fields map[string]string
	// Notes say what is not known and why.
	Notes []string
}

// provenanceFields are the source fields that tell where an entry came
// from.
var provenanceFields = []string{"provenance", "synthesized_from", "synthesized_into", "reviewer", "author", "agent", "context", "file"}

// Provenance returns where the entry id came from and what happened to it.
func (v *View) Provenance(id string) (*Provenance, error) {
	r, err := v.Get(id)
	if err != nil {
		return nil, err
	}
	out := &Provenance{Record: r}
	for _, k := range provenanceFields {
		if f, ok := r.Fields[k]; ok {
			if out.Fields == nil {
				out.Fields = map[string]string{}
			}
			out.Fields[k] = f
		}
	}
	ss := v.tx.SessionsOf(r.ID)
	sort.Slice(ss, func(i, j int) bool { return ss[i].Last.After(ss[j].Last) })
	if len(ss) > MaxRecentSessions {
		ss = ss[:MaxRecentSessions]
	}
	out.RecentSessions = ss
	if !v.Stored {
		out.Notes = append(out.Notes, "intermem has no store for this project yet: nothing has been recorded about the entry")
	}
	out.Notes = append(out.Notes, whoNotes(r, v.Stored)...)
	return out, nil
}

// whoNotes say what is not known of who wrote r, and why, for its kind of
// entry: a written memory names its writer, session and agent as its
// record keeps them; auto-memory (and a fact promoted from it) has the
// sessions and the subagent the hooks saw; any other source's entry has
// neither. stored says the project has a store (without one, nothing has
// been recorded of any entry, and another note says so).
func whoNotes(r *Record, stored bool) []string {
	switch {
	case r.Written != nil:
		if miss := r.Written.Unrecorded(); len(miss) > 0 {
			return []string{"not recorded when it was written: " + strings.Join(miss, ", ") +
				" (intermem write records --session and --agent when given; memory_write records Claude Code's session and the tool call, and no agent: Claude Code does not say which agent called it)"}
		}
	case r.Source == automemory.Name || r.Overlay.Sessions > 0:
		var out []string
		if r.Overlay.Sessions == 0 && stored {
			out = append(out, "no session is recorded as having seen it yet: the Stop hook records the sessions that see auto-memory, and this read found it in the files")
		}
		if r.Overlay.Agent == "" {
			out = append(out, "no subagent is recorded as having written it (the main agent did, or it is not known)")
		}
		return out
	default:
		return []string{fmt.Sprintf("intermem records the sessions that see an entry, and the subagent that wrote it, for auto-memory and the facts promoted from it; this %s entry's first found is when a scan first found it", r.Source)}
	}
	return nil
}
