package command

import (
	"context"
	"fmt"
	"strings"

	"github.com/intermem/intermem/pkg/catalog"
	"github.com/intermem/intermem/pkg/cite"
	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/continuity"
	"github.com/intermem/intermem/pkg/retrieve"
	"github.com/intermem/intermem/pkg/source"
	"github.com/intermem/intermem/pkg/store"
)

const searchUsage = `Usage: intermem search QUERY... [--source S]... [--since DATE] [--until DATE]
                       [--scope project|phase|session|user]... [--all-projects]
                       [--session ID] [--limit N] [--project DIR] [--json]

Searches every memory source intermem reads (intermem sources lists them:
auto-memory, the facts intermem promoted, the instruction files Claude Code
loads, compound solutions, clavain learnings, interfluence corrections) and
prints the best matches first: by relevance (BM25 over title, tags,
symptoms and text, with stemming), then confidence and recency. An entry
whose citations no longer hold is marked stale; one that screening flagged
as a possible prompt injection is marked flagged. intermem-mcp's
memory_search gives the same hits for the same query.

--source keeps one source (repeat it, or separate names with commas).
--since and --until keep entries dated within those days (YYYY-MM-DD),
by the entry's own date, else the day intermem first found it.

Every memory has a scope, and every hit says it: project (the sources
above), phase (written with intermem write --scope phase: held while its
phase is on the agreed timeline), session (kept for one session, gone when
it ends; --session ID searches only that session's, by default Claude
Code's CLAUDE_CODE_SESSION_ID when set) and user (yours in every project,
in the per-user store: $XDG_STATE_HOME/intermem/user.db, else
~/.local/state/intermem/user.db). --scope keeps the scopes named (repeat
it, or separate them with commas); by default all four are searched.
Memories of scope session and user are of source "scoped", no source of
the catalog: --source scoped keeps them.

--all-projects searches, besides this project and the user scope, every
project you have used intermem in (the per-user store's registry), each
read only from its own files and state; a hit from another project names
it. A registered project that is gone or unreadable is skipped with a
note. Without the per-user store this project is searched alone.

--json prints {"results":[{"id","source","kind","path","line","title",
"text","score","confidence","status","date","flags","scope","project"}],
"notes":[…]}. Nothing is written: the catalog is brought up to date with
the files in memory.
`

func runSearch(ctx context.Context, env *cli.Env, args []string) error {
	var c common
	fset := cli.FlagSet("intermem search", searchUsage, env.Stdout)
	c.register(fset, true)
	var srcs sourceList
	var since, until dateFlag
	fset.Var(&srcs, "source", "keep only entries of source `S` (repeatable)")
	fset.Var(&since, "since", "keep entries dated on or after `DATE` (YYYY-MM-DD)")
	fset.Var(&until, "until", "keep entries dated on or before `DATE` (YYYY-MM-DD)")
	limit := fset.Int("limit", 10, "show at most `N` results")
	var scopes sourceList
	fset.Var(&scopes, "scope", "keep only memories of scope `S`: project, phase, session or user (repeatable)")
	allProjects := fset.Bool("all-projects", false, "search every project in the per-user registry too")
	session := fset.String("session", "", "search the memories of scope session of session `ID` only")
	terms, err := cli.Parse(fset, args)
	if err != nil {
		return err
	}
	if len(terms) == 0 {
		return cli.Usagef("give a query: intermem search WORDS")
	}
	if *limit < 1 {
		return cli.Usagef("--limit must be at least 1")
	}
	if !since.t.IsZero() && !until.t.IsZero() && until.t.Before(since.t) {
		return cli.Usagef("--until %s is before --since %s", day(until.t), day(since.t))
	}
	now, err := env.Now()
	if err != nil {
		return err
	}
	p, err := c.resolve(env)
	if err != nil {
		return err
	}
	for _, s := range scopes {
		if !continuity.ValidScope(s) {
			return cli.Usagef("--scope %q: the scopes are %s", s, strings.Join(continuity.Scopes, ", "))
		}
	}
	if *session == "" {
		*session = env.Get("CLAUDE_CODE_SESSION_ID")
	}
	query := strings.Join(terms, " ")
	{
		sq := retrieve.ScopedQuery{Query: retrieve.Query{Text: query, Sources: srcs, Since: since.t, Until: until.t, Limit: *limit, Now: now},
			Scopes: scopes, Session: *session, AllProjects: *allProjects}
		found, err := retrieve.SearchScoped(env, p, retrieve.Options{Wait: cliWait}, sq)
		if err != nil {
			return retrieveError(p, err)
		}
		res := found.Results
		for _, n := range found.Notes {
			fmt.Fprintf(env.Stderr, "intermem: note: %s\n", n)
		}
		for _, w := range found.Warnings {
			fmt.Fprintf(env.Stderr, "intermem: warning: %s\n", w)
		}
		if c.json {
			if res == nil {
				res = []retrieve.Result{}
			}
			return writeJSON(env.Stdout, struct {
				Results []retrieve.Result `json:"results"`
				Notes   []string          `json:"notes,omitempty"`
				// Warnings name the sources that could not be read.
				Warnings []string `json:"warnings,omitempty"`
			}{res, found.Notes, found.Warnings})
		}
		w := env.Stdout
		if len(res) == 0 {
			fmt.Fprintf(w, "Nothing matches %q", query)
			if len(srcs) > 0 {
				fmt.Fprintf(w, " in %s", strings.Join(srcs, ", "))
			}
			fmt.Fprintln(w, ".")
			return nil
		}
		fmt.Fprintf(w, "%d %s for %q:\n", len(res), cli.Plural(len(res), "result", "results"), query)
		var checker *cite.Checker // made for the first unchecked result
		for _, r := range res {
			fmt.Fprintf(w, "\n  %s  [%s] %s\n", r.ID, r.Source, cli.Line(source.OneLine(r.Title, 90)))
			where := fmt.Sprintf("%s:%d", r.Path, r.Line)
			if r.Source == retrieve.ScopedSource {
				where = "scope " + r.Scope
			} else if r.Scope != store.ScopeProject {
				where += " · scope " + r.Scope
			}
			if r.Project != "" && r.Project != p.Root {
				where += " · in " + r.Project
			}
			status := statusWords(r.Status)
			if r.Status == catalog.StatusUnchecked && r.Project == p.Root {
				if checker == nil {
					checker = cite.NewChecker(p.Root)
				}
				if r.NotInProject(checker) {
					status = notInProjectWords
				}
			}
			fmt.Fprintf(w, "      %s · score %.2f · confidence %.2f · %s\n", cli.Line(where), r.Score, r.Confidence, status)
			if len(r.Flags) > 0 {
				fmt.Fprintf(w, "      flagged by screening (%s): never put into a session\n", strings.Join(r.Flags, "; "))
			}
			if s := source.OneLine(r.Summary, 110); s != "" && s != source.OneLine(r.Title, 110) {
				fmt.Fprintf(w, "      %s\n", cli.Line(s))
			}
		}
		if len(res) == *limit {
			fmt.Fprintf(w, "\n(at most %d shown: --limit N shows more; intermem get ID shows one whole)\n", *limit)
		}
		return nil
	}
}

// notInProjectWords are statusWords of an unchecked entry that cites a
// path the project has never had (retrieve.NotInProject): what intermem
// validate says of it, where "nothing checkable cited" would say it cites
// nothing.
const notInProjectWords = "cites a path not in this project (unverified)"

// entryStatusWords is statusWords of entry e of status in the project at
// root, with an unchecked entry that cites a path the project has never
// had told apart (notInProjectWords), as validate tells it: what get and
// provenance say of one entry.
func entryStatusWords(root, status string, e *source.Entry) string {
	if status == catalog.StatusUnchecked && retrieve.NotInProject(cite.NewChecker(root), e) {
		return notInProjectWords
	}
	return statusWords(status)
}

// statusWords says what an entry's status means, for people.
func statusWords(status string) string {
	switch status {
	case catalog.StatusStale:
		return "STALE: a citation no longer holds"
	case catalog.StatusArchived:
		return "archived"
	case catalog.StatusOK:
		return "citations hold"
	case catalog.StatusUnchecked:
		return "nothing checkable cited"
	case retrieve.StatusMissing:
		return "cites a missing file (not validated yet)"
	case retrieve.StatusObservation:
		return "an edit observation: not a claim, nothing to validate"
	}
	return "not validated yet"
}
