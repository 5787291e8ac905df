package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/intermem/intermem/pkg/catalog"
	"github.com/intermem/intermem/pkg/cite"
	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/project"
	"github.com/intermem/intermem/pkg/retrieve"
	"github.com/intermem/intermem/pkg/source/sources"
	"github.com/intermem/intermem/pkg/stability"
	"github.com/intermem/intermem/pkg/validate"
)

// StoreWait is how long a tool waits for intermem's store when a hook or
// a command holds it. The store is opened read-only for one call and
// closed before the call returns: the server never holds it between
// calls, so it never makes a hook wait for more than one call's read.
const StoreWait = 300 * time.Millisecond

// Catalog is the backend over intermem's catalog: every call reads the
// project through package retrieve — the functions `intermem search`,
// `get` and `provenance` call — so a query gives the same hits here as on
// the command line. Each call opens the store read-only (waiting at most
// StoreWait), brings the catalog up to date with the files in memory,
// answers, and closes the store: nothing is written and nothing is held
// between calls. Text is as the catalog keeps it, redacted; the server
// screens and escapes it (view.go).
//
// Write is in write.go: the write API plugs in there.
type Catalog struct {
	env *cli.Env
	p   *project.Project
}

// NewCatalog returns the catalog backend for project p.
func NewCatalog(env *cli.Env, p *project.Project) *Catalog {
	return &Catalog{env: env, p: p}
}

// read runs fn over one read of the catalog. A busy store is ErrBusy when
// needStore, else a note in the result and the files alone.
func (b *Catalog) read(needStore bool, fn func(v *retrieve.View) error) error {
	err := retrieve.Read(b.env, b.p, retrieve.Options{Wait: StoreWait, NeedStore: needStore}, fn)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, retrieve.ErrBusy):
		return also{err, ErrBusy}
	case errors.Is(err, retrieve.ErrNotFound):
		return fmt.Errorf("%w: %s", ErrNotFound, strings.TrimPrefix(err.Error(), retrieve.ErrNotFound.Error()+": "))
	}
	return err
}

// checkSource judges a source filter before the catalog is read: a name
// no source has is ErrUnknownSource, listing the sources. "scoped", the
// source results name session and user memories by, is one.
func checkSource(name string) error {
	if name == "" || name == retrieve.ScopedSource {
		return nil
	}
	names := sources.Registry().Names()
	if !contains(names, name) {
		return fmt.Errorf("%w %q: the sources are %s, %s", ErrUnknownSource, name, strings.Join(names, ", "), retrieve.ScopedSource)
	}
	return nil
}

// Search ranks the catalog's entries by relevance to the query
// (retrieve.View.Search, as `intermem search` does).
func (b *Catalog) Search(ctx context.Context, req SearchRequest) (*SearchResult, error) {
	if err := checkSource(req.Source); err != nil {
		return nil, err
	}
	res := &SearchResult{}
	q := retrieve.ScopedQuery{Query: retrieve.Query{Text: req.Query, Since: req.Since, Until: req.Until, Limit: req.Limit, Now: req.Now},
		Session: b.env.Get("CLAUDE_CODE_SESSION_ID"), AllProjects: req.AllProjects}
	if req.Source != "" {
		q.Sources = []string{req.Source}
	}
	if req.Scope != "" {
		q.Scopes = []string{req.Scope}
	}
	found, err := retrieve.SearchScoped(b.env, b.p, retrieve.Options{Wait: StoreWait}, q)
	switch {
	case errors.Is(err, retrieve.ErrNoTerms):
		res.Notes = append(res.Notes, err.Error())
		return res, nil
	case errors.Is(err, catalog.ErrSwitchedOff):
		return nil, also{err, ErrSwitchedOff}
	case errors.Is(err, retrieve.ErrBusy):
		return nil, also{err, ErrBusy}
	case err != nil:
		return nil, err
	}
	res.Notes = append(append(res.Notes, found.Notes...), found.Warnings...)
	for _, r := range found.Results {
		project := ""
		if r.Project != b.p.Root {
			project = r.Project
		}
		res.Hits = append(res.Hits, Hit{ID: r.ID, Source: r.Source, Kind: r.Kind, Path: r.Path, Line: r.Line,
			Title: r.Title, Summary: r.Summary, Text: r.Text, Date: r.Date, Confidence: r.Confidence,
			Status: r.Status, Score: r.Score, Scope: r.Scope, Project: project})
	}
	return res, nil
}

// Get returns the whole entry with its overlay (retrieve.View.GetFrom, as
// `intermem get` does): the one req.Source holds, when it names one.
func (b *Catalog) Get(ctx context.Context, req GetRequest) (*Entry, error) {
	if err := checkSource(req.Source); err != nil {
		return nil, err
	}
	var out *Entry
	err := b.read(false, func(v *retrieve.View) error {
		r, err := v.GetFrom(req.ID, req.Source)
		if err != nil {
			return err
		}
		out = entryOf(r)
		out.Notes = append(append(out.Notes, v.Notes...), v.Warnings...)
		return nil
	})
	switch {
	case errors.Is(err, catalog.ErrSwitchedOff):
		return nil, also{err, ErrSwitchedOff}
	case errors.Is(err, retrieve.ErrNotInSource):
		return nil, also{err, ErrNotInSource}
	}
	return out, err
}

func entryOf(r *retrieve.Record) *Entry {
	e := &Entry{ID: r.ID, Source: r.Source, Kind: string(r.Kind), Path: r.Path, File: r.File,
		Line: r.Line, EndLine: r.EndLine, Title: r.Title, Text: r.Text, Tags: r.Tags, Symptoms: r.Symptoms,
		Citations: r.Citations, Fields: r.Fields, Created: r.Created, Updated: r.Updated, Confirmed: r.Confirmed,
		Overlay: overlayOf(&r.Overlay), Written: writerOf(r.Written)}
	for _, s := range r.Sections {
		e.Sections = append(e.Sections, Section{Name: s.Name, Line: s.Line})
	}
	for _, a := range r.Also {
		e.Also = append(e.Also, Place{Source: a.Source, Path: a.Path, Line: a.Line, Gone: a.Gone})
	}
	return e
}

func writerOf(w *retrieve.Writer) *Writer {
	if w == nil {
		return nil
	}
	return &Writer{Scope: w.Scope, Phase: w.Phase, By: w.By, Session: w.Session, Agent: w.Agent, ToolUse: w.ToolUse,
		At: w.At, Store: w.Store}
}

func overlayOf(o *catalog.Overlay) Overlay {
	return Overlay{Confidence: o.Confidence, Known: o.Known, Status: o.Status, Validated: o.Validated, Promoted: promotionOf(o)}
}

func promotionOf(o *catalog.Overlay) *Promotion {
	p := o.Promoted
	if p == nil {
		return nil
	}
	op := p.Op
	if op == "" {
		op = o.PromotedBy
	}
	return &Promotion{Target: p.Target, Section: p.Section, At: p.At, Op: op, Origin: p.Origin,
		Archived: p.Archived, ArchivedAt: p.ArchivedAt, Reason: p.Reason}
}

// Validate checks the entry's citations now with pkg/cite, scored as
// `intermem validate` scores them.
func (b *Catalog) Validate(ctx context.Context, req ValidateRequest) (*Validation, error) {
	var (
		text     string
		sessions int
	)
	err := b.read(false, func(v *retrieve.View) error {
		r, err := v.Get(req.ID)
		if err != nil {
			return err
		}
		text, sessions = retrieve.CheckText(&r.Entry.Entry), r.Overlay.Sessions
		return nil
	})
	if err != nil {
		return nil, err
	}
	sc, cs := validate.Check(cite.NewChecker(b.p.Root), text, sessions, stability.Threshold(b.env.Get))
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

// Provenance reports where the entry came from and what intermem recorded
// of it (retrieve.View.Provenance, as `intermem provenance` does). It is
// the store's history, so a busy store is ErrBusy.
func (b *Catalog) Provenance(ctx context.Context, req ProvenanceRequest) (*Provenance, error) {
	var out *Provenance
	err := b.read(true, func(v *retrieve.View) error {
		pv, err := v.Provenance(req.ID)
		if err != nil {
			return err
		}
		r, o := pv.Record, &pv.Record.Overlay
		out = &Provenance{ID: r.ID, Source: r.Source, Kind: string(r.Kind), Path: r.Path, File: r.File,
			Line: r.Line, EndLine: r.EndLine, Created: r.Created, Updated: r.Updated, Confirmed: r.Confirmed,
			FirstSeen: o.FirstSeen, LastSeen: o.LastSeen, Sessions: o.Sessions, Agent: o.Agent, AgentType: o.AgentType,
			Replaced: o.Replaced, Fields: pv.Fields, Promotion: promotionOf(o), ArchivedBy: o.ArchivedBy,
			Cataloged: r.FirstSeen, Gone: r.Gone, Validated: o.Validated, Commit: o.Commit, Written: writerOf(r.Written),
			Notes: append(append([]string{}, pv.Notes...), v.Warnings...)}
		for _, d := range o.Changed(v.Project.Root) {
			out.ChangedSince = append(out.ChangedSince, d.Path)
		}
		for _, s := range pv.RecentSessions {
			out.RecentSessions = append(out.RecentSessions, SessionSeen{ID: s.ID, First: s.First, Last: s.Last})
		}
		return nil
	})
	return out, err
}

// also is an error that reads as err and matches sentinel too.
type also struct{ err, sentinel error }

func (a also) Error() string   { return a.err.Error() }
func (a also) Unwrap() []error { return []error{a.err, a.sentinel} }
