package retrieve

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/continuity"
	"github.com/intermem/intermem/pkg/project"
	"github.com/intermem/intermem/pkg/redact"
	"github.com/intermem/intermem/pkg/screen"
	"github.com/intermem/intermem/pkg/search"
	"github.com/intermem/intermem/pkg/source"
	sourcecont "github.com/intermem/intermem/pkg/source/continuity"
	"github.com/intermem/intermem/pkg/store"
	"github.com/intermem/intermem/pkg/userstate"
)

// Searching by scope. Every memory has a scope (package continuity,
// scoped.go): project (the catalog's sources), phase (in the catalog
// through the continuity source, which holds only those of the agreed
// timeline), session (the project's store, never in the catalog) and user
// (the per-user store, outside every project). Scoped searches the
// catalog as View.Search does and the session's and the user's memories
// (and the decisions of scope user) in an index of their own; when both
// (or, with AllProjects, several projects) have hits, the candidates are
// scored again in one index over all of them (rerankUnion), since BM25
// scores of separate indexes are not on one scale.
//
// AllProjects adds every project of the per-user store's registry, each
// read exactly as Read reads the current one (a directory that is still
// that project's root, a state directory of real entries, the store
// opened read-only): a registered project that is gone or unreadable is
// skipped and named in a note, never an error. A hit of the same id seen
// twice (the user's own instruction files are in every project) is kept
// once, from the first project read, the current one first.

// ScopedSource is the source name of the memories of scope session and
// user in results: they are in no catalog source.
const ScopedSource = "scoped"

// ScopedQuery is a search by scope.
type ScopedQuery struct {
	Query
	// Scopes keeps only these scopes; empty keeps every one.
	Scopes []string
	// Session is the session whose memories of scope session are
	// searched; "" searches those of every session still kept.
	Session string
	// AllProjects adds the registered projects (see above).
	AllProjects bool
}

// Scoped is what a scoped search found.
type Scoped struct {
	Results []Result
	// Notes say what could not be searched, one sentence each.
	Notes []string
	// Warnings are the project's View.Warnings: its sources that could
	// not be read at all.
	Warnings []string
}

// ErrScope is returned for a scope that is not one of continuity.Scopes.
var ErrScope = errors.New("unknown scope")

// ScopeOf is the scope of a catalog entry: phase for a memory of scope
// phase from the continuity source, else project.
func ScopeOf(e *source.Entry) string {
	if e.Source == sourcecont.Name && e.Fields["scope"] == store.ScopePhase {
		return store.ScopePhase
	}
	return store.ScopeProject
}

// SearchScoped runs q over project p (and, with AllProjects, the
// registered projects) and the per-user store. A per-user store that is
// missing, busy or damaged leaves the project's scopes searched alone,
// with a note.
func SearchScoped(env *cli.Env, p *project.Project, opt Options, q ScopedQuery) (*Scoped, error) {
	for _, s := range q.Scopes {
		if !continuity.ValidScope(s) {
			return nil, fmt.Errorf("%w %q: the scopes are %s", ErrScope, s, strings.Join(continuity.Scopes, ", "))
		}
	}
	want := func(s string) bool {
		if len(q.Scopes) == 0 {
			return true
		}
		for _, x := range q.Scopes {
			if x == s {
				return true
			}
		}
		return false
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 10
	}
	out := &Scoped{}
	var hits []Result
	// The memories in no catalog: this project's of scope session, the
	// user's. A --source filter names catalog sources, so it leaves them
	// out unless it names ScopedSource. They are read (extras) before the
	// project's hits, inside its read when the catalog is searched: their
	// hits decide how many of its candidates are read.
	var (
		extraHits []Result
		registry  []store.UserProject
	)
	sourceOK := len(q.Sources) == 0
	var catalogSources []string // q.Sources but ScopedSource, which no catalog has
	for _, s := range q.Sources {
		if s == ScopedSource {
			sourceOK = true
		} else {
			catalogSources = append(catalogSources, s)
		}
	}
	extras := func(busy bool) {
		var extra []scopedDoc
		if want(store.ScopeSession) && sourceOK && busy {
			// The project's store was busy: do not wait for it twice.
			out.Notes = append(out.Notes, "memories of scope session not searched: the store is busy")
		} else if want(store.ScopeSession) && sourceOK {
			ds, err := sessionDocs(p, opt.Wait, q.Session)
			if err != nil {
				out.Notes = append(out.Notes, fmt.Sprintf("memories of scope session not searched: %v", err))
			}
			extra = append(extra, ds...)
		}
		if (want(store.ScopeUser) && sourceOK) || q.AllProjects {
			ds, reg, err := userDocs(env, opt.Wait, want(store.ScopeUser) && sourceOK)
			switch {
			case errors.Is(err, store.ErrNotExist):
			case err != nil:
				out.Notes = append(out.Notes, fmt.Sprintf("%v: memories of scope user not searched, this project's searched alone", err))
			}
			extra, registry = append(extra, ds...), reg
		}
		extraHits = rankDocs(extra, q.Query, limit)
	}
	// A --source filter naming ScopedSource alone keeps the catalog out.
	catalogScopes := (want(store.ScopeProject) || want(store.ScopePhase)) &&
		(len(q.Sources) == 0 || len(catalogSources) > 0)
	searchProject := func(pp *project.Project) error {
		return Read(env, pp, opt, func(v *View) error {
			out.Notes = append(out.Notes, v.Notes...)
			if pp == p {
				out.Warnings = append(out.Warnings, v.Warnings...)
			}
			cq := q.Query
			cq.Sources = catalogSources
			cq.Limit = limit * 3 // the scope filter drops some
			rk, err := v.rank(cq)
			if err != nil {
				return err
			}
			if pp == p {
				extras(v.busy)
			}
			// Alone, the project's hits are shown in their order, the
			// first limit distinct ids of the wanted scopes: no more are
			// read. Hits from other indexes are scored again with every
			// candidate (rerankUnion), so then all are read.
			all := len(extraHits) > 0 || q.AllProjects
			ids := map[string]bool{}
			for i := 0; i < rk.Len() && (all || len(ids) < limit); i++ {
				if r, ok := v.result(rk, i); ok && want(r.Scope) {
					hits = append(hits, r)
					ids[r.ID] = true
				}
			}
			return nil
		})
	}
	if catalogScopes {
		// View.Search judges the query after the configuration.
		if err := searchProject(p); err != nil {
			return nil, err
		}
	} else if len(search.QueryTerms(q.Text)) == 0 {
		return nil, ErrNoTerms
	} else {
		extras(false)
	}
	rerank := len(extraHits) > 0 && len(hits) > 0
	hits = append(hits, extraHits...)
	if q.AllProjects && catalogScopes {
		before := len(hits)
		for _, up := range registry {
			if up.Root == p.Root {
				continue
			}
			op, err := otherProject(env, up.Root)
			if err == nil {
				err = searchProject(op)
			}
			if err != nil {
				out.Notes = append(out.Notes, fmt.Sprintf("skipped %s: %v", up.Root, err))
			}
		}
		rerank = rerank || len(hits) > before
	}
	if rerank {
		hits = rerankUnion(hits, q.Query)
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Score > hits[j].Score })
	seen := map[string]bool{}
	for _, h := range hits {
		if seen[h.ID] {
			continue
		}
		seen[h.ID] = true
		out.Results = append(out.Results, h)
		if len(out.Results) == limit {
			break
		}
	}
	return out, nil
}

// otherProject resolves a registered root with the checks a command makes
// of its own project.
func otherProject(env *cli.Env, root string) (*project.Project, error) {
	if !filepath.IsAbs(root) {
		return nil, fmt.Errorf("not an absolute path")
	}
	op, err := project.Resolve(env, root)
	if err != nil {
		return nil, err
	}
	if op.Root != root {
		return nil, fmt.Errorf("no longer a project root (now inside %s)", op.Root)
	}
	return op, nil
}

// scopedDoc is a memory of scope session or user as a search result.
type scopedDoc struct {
	Result
	tags   []string
	writer *Writer
}

// memoryDoc turns a stored memory into a result, read back as hostile:
// redacted again, screened, clipped.
func memoryDoc(m *store.ScopedMemory, path, root string) scopedDoc {
	text := clipText(redact.String(m.Content))
	title := source.OneLine(redact.String(m.Title), 120)
	r := Result{ID: m.ID, Source: ScopedSource, Kind: string(source.Fact), Path: path, Title: title, Text: text,
		Confidence: 0.5, Status: "unvalidated", Date: m.Created, Scope: m.Scope, Project: root, Summary: text}
	for _, f := range screen.Check(title + "\n" + text) {
		r.Flags = append(r.Flags, f.Kind+": "+f.Detail)
	}
	var tags []string
	for _, t := range m.Tags {
		tags = append(tags, source.OneLine(redact.String(t), 60))
	}
	return scopedDoc{Result: r, tags: tags, writer: scopedWriter(m, path)}
}

func clipText(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > sourcecont.MaxText {
		cut := sourcecont.MaxText
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut]
	}
	return s
}

// sessionDocs reads the project's memories of scope session (of session,
// or every one when ""), the store opened read-only.
func sessionDocs(p *project.Project, wait time.Duration, session string) ([]scopedDoc, error) {
	st, err := store.Open(p.Path("intermem.db"), store.Options{ReadOnly: true, Timeout: wait})
	if errors.Is(err, store.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer st.Close()
	var out []scopedDoc
	err = st.View(func(tx *bolt.Tx) error {
		ms, err := continuity.ScopedMemories(tx, store.ScopeSession, continuity.Filter{})
		for i := range ms {
			if session == "" || ms[i].SessionID == session {
				out = append(out, memoryDoc(&ms[i], storePath, p.Root))
			}
		}
		return err
	})
	return out, err
}

// userDocs reads the per-user store: its memories and decisions (when
// docs) and the registry of projects.
func userDocs(env *cli.Env, wait time.Duration, docs bool) ([]scopedDoc, []store.UserProject, error) {
	us, err := continuity.OpenUser(env, false, wait)
	if err != nil {
		return nil, nil, err
	}
	defer us.Close()
	path := userPath(env)
	var out []scopedDoc
	var reg []store.UserProject
	err = us.View(func(tx *bolt.Tx) error {
		var err error
		if reg, err = continuity.Projects(tx); err != nil {
			return err
		}
		if !docs {
			return nil
		}
		ms, err := continuity.ScopedMemories(tx, store.ScopeUser, continuity.Filter{})
		if err != nil {
			return err
		}
		for i := range ms {
			out = append(out, memoryDoc(&ms[i], path, ""))
		}
		ds, err := continuity.Decisions(tx, continuity.Filter{})
		for _, d := range ds {
			m := store.ScopedMemory{ID: d.ID, Title: d.Text, Content: d.Text + "\nWhy: " + d.Why, Created: d.Time,
				Scope: store.ScopeUser, Tags: []string{"decision"}, Source: "intermem decide", SessionID: d.Session}
			doc := memoryDoc(&m, path, "")
			doc.Kind = "decision"
			out = append(out, doc)
		}
		return err
	})
	return out, reg, err
}

// rerankUnion scores hits that come from several indexes (this project's
// catalog, another project's, the session's and the user's memories) again
// in one index over all of them, so that one BM25 scale orders them: the
// scores of separate indexes are not comparable (a memory alone in its
// index gets a tiny IDF for every term). A hit the union does not match
// (found by a tag the result does not carry) keeps its place after them.
func rerankUnion(hits []Result, q Query) []Result {
	docs := make([]search.Doc, len(hits))
	for i, h := range hits {
		docs[i] = search.Doc{ID: fmt.Sprint(i), Source: h.Source, Title: h.Title, Text: h.Text, Date: h.Date,
			Confidence: h.Confidence, Stale: h.Status == "stale"}
	}
	found := search.Build(docs).Search(q.Text, search.Options{Limit: len(hits), Now: q.Now})
	out := make([]Result, 0, len(hits))
	used := make([]bool, len(hits))
	low := 0.0
	for _, f := range found {
		r := hits[f.Doc]
		r.Score = round(f.Score)
		used[f.Doc] = true
		out = append(out, r)
		if low == 0 || r.Score < low {
			low = r.Score
		}
	}
	for i, h := range hits {
		if !used[i] {
			h.Score = round(low / 2) // after every matched hit, in their order
			out = append(out, h)
		}
	}
	return out
}

// rankDocs ranks docs by relevance to q in an index of their own.
func rankDocs(docs []scopedDoc, q Query, limit int) []Result {
	if len(docs) == 0 {
		return nil
	}
	sd := make([]search.Doc, len(docs))
	for i, d := range docs {
		sd[i] = search.Doc{ID: d.ID, Source: d.Source, Title: d.Title, Text: d.Text, Tags: d.tags, Date: d.Date, Confidence: 0.5}
	}
	hits := search.Build(sd).Search(q.Text, search.Options{Since: q.Since, Until: q.Until, Limit: limit, Now: q.Now})
	out := make([]Result, 0, len(hits))
	for _, h := range hits {
		r := docs[h.Doc].Result
		r.Score = round(h.Score)
		out = append(out, r)
	}
	return out
}

// scopedRecord finds the memory of scope session or user (or the decision
// of scope user) with id: the project's store read-only while the view's
// transaction holds it (both shared), then the per-user store. Nothing
// found, or a store that cannot be read, is false: Get says not found.
func (v *View) scopedRecord(id string) (*Record, bool) {
	var docs []scopedDoc
	if !v.busy {
		ds, _ := sessionDocs(v.Project, v.wait, "")
		docs = append(docs, ds...)
	}
	if v.cliEnv != nil {
		ds, _, _ := userDocs(v.cliEnv, v.wait, true)
		docs = append(docs, ds...)
	}
	for _, d := range docs {
		if d.ID != id {
			continue
		}
		r := &Record{}
		r.ID, r.Source, r.Kind, r.Path = d.ID, d.Source, source.Kind(d.Kind), d.Path
		r.Title, r.Text, r.Tags = d.Title, d.Text, d.tags
		r.Created = d.Date
		r.Fields = map[string]string{"scope": d.Scope}
		r.Flags = d.Flags
		r.File = v.File(&r.Entry.Entry)
		r.Overlay.Status = d.Status
		r.Overlay.Confidence = d.Confidence
		r.Written = d.writer
		return r, true
	}
	return nil, false
}

// userPath names the per-user store as results show it: under "~/" when
// it is in the home directory.
func userPath(env *cli.Env) string {
	dir, err := userstate.Dir(env)
	if err != nil {
		return continuity.UserStoreName
	}
	path := filepath.Join(dir, continuity.UserStoreName)
	if home := env.Get("HOME"); home != "" && filepath.IsAbs(home) {
		if rel, err := filepath.Rel(home, path); err == nil && !strings.HasPrefix(rel, "..") {
			return "~/" + filepath.ToSlash(rel)
		}
	}
	return path
}
