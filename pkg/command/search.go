package command

import (
	"context"
	"fmt"
	"strings"

	"github.com/intermem/intermem/pkg/catalog"
	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/retrieve"
	"github.com/intermem/intermem/pkg/source"
)

func init() {
	register("search", "search every memory source, best first: intermem search QUERY [--source S]…", runSearch)
}

const searchUsage = `Usage: intermem search QUERY... [--source S]... [--since DATE] [--until DATE]
                       [--limit N] [--project DIR] [--json]

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

--json prints {"results":[{"id","source","kind","path","line","title",
"text","score","confidence","status","date","flags"}]}. Nothing is
written: the catalog is brought up to date with the files in memory.
`

func runSearch(ctx context.Context, env *cli.Env, args []string) error {
	var c common
	fset := cli.FlagSet("intermem search", searchUsage, env.Stderr)
	c.register(fset, true)
	var srcs sourceList
	var since, until dateFlag
	fset.Var(&srcs, "source", "keep only entries of source `S` (repeatable)")
	fset.Var(&since, "since", "keep entries dated on or after `DATE` (YYYY-MM-DD)")
	fset.Var(&until, "until", "keep entries dated on or before `DATE` (YYYY-MM-DD)")
	limit := fset.Int("limit", 10, "show at most `N` results")
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
	query := strings.Join(terms, " ")
	return readView(env, p, false, func(v *retrieve.View) error {
		res, err := v.Search(retrieve.Query{Text: query, Sources: srcs, Since: since.t, Until: until.t, Limit: *limit, Now: now})
		if err != nil {
			return err
		}
		if c.json {
			if res == nil {
				res = []retrieve.Result{}
			}
			return writeJSON(env.Stdout, struct {
				Results []retrieve.Result `json:"results"`
			}{res})
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
		for _, r := range res {
			fmt.Fprintf(w, "\n  %s  [%s] %s\n", r.ID, r.Source, source.OneLine(r.Title, 90))
			fmt.Fprintf(w, "      %s:%d · score %.2f · confidence %.2f · %s\n", r.Path, r.Line, r.Score, r.Confidence, statusWords(r.Status))
			if len(r.Flags) > 0 {
				fmt.Fprintf(w, "      flagged by screening (%s): never put into a session\n", strings.Join(r.Flags, "; "))
			}
			if s := source.OneLine(r.Summary, 110); s != "" && s != source.OneLine(r.Title, 110) {
				fmt.Fprintf(w, "      %s\n", s)
			}
		}
		if len(res) == *limit {
			fmt.Fprintf(w, "\n(at most %d shown: --limit N shows more; intermem get ID shows one whole)\n", *limit)
		}
		return nil
	})
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
	}
	return "not validated yet"
}
