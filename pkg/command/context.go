package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/inject"
	"github.com/intermem/intermem/pkg/store"
)

const contextUsage = `Usage: intermem context [--project DIR] [--budget N] [--withheld] [--json]

Prints the context intermem-inject would give Claude Code at the start of
a session in DIR, byte for byte: first where the work stands (the
project in one line — "project" in .intermem/config.json, else README.md's
first paragraph —, the current phase, the resume note of the latest
checkpoint, the latest decisions), then health warnings (MEMORY.md past
its load cap, with the entries it cuts off; entries ready for
/intermem:synthesize; interrupted changes; promoted facts Claude Code
will not load or should not trust), where promoted knowledge lives, and
the memories not already loaded, most relevant first (git branch,
recently changed files, DIR below the project root). Then a footer with
the estimated tokens (UTF-8 bytes / 3, rounded up) against the budget,
and the length in characters.

Everything the context would carry is screened for prompt injection
first (instructions to ignore previous ones, role and prompt boundary
markers, fetch-and-run commands, invisible or bidi characters, …): a
flagged item is withheld, and one line of the context says how many.
--withheld lists them instead: file:line, what it is, and why, escaped.

The budget defaults to INTERMEM_TOKEN_BUDGET, or 1200. Whatever the
budget, the context stays under 9,000 characters. Running it writes
nothing, not even the hook's cache.
`

// ContextReport is the JSON shape of "intermem context --json".
type ContextReport struct {
	Context string `json:"context"`
	Tokens  int    `json:"tokens"`
	Budget  int    `json:"budget"`
	Chars   int    `json:"chars"`
	Items   int    `json:"items"`
	Omitted int    `json:"omitted"`
	// Withheld lists what screening kept out of the context.
	Withheld []inject.Withheld `json:"withheld"`
	// Ready is how many entries the context counts as ready for
	// /intermem:synthesize (plan.Judge, as the hook judges it).
	Ready int `json:"ready"`
}

func runContext(ctx context.Context, env *cli.Env, args []string) error {
	var c common
	fs := cli.FlagSet("intermem context", contextUsage, env.Stdout)
	c.register(fs, true)
	budget := fs.Int("budget", inject.Budget(env), "token budget `N` (tokens are estimated as UTF-8 bytes / 3)")
	withheld := fs.Bool("withheld", false, "list the items screening withholds from the context (file:line, what, why) instead of the context")
	pos, err := cli.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return cli.Usagef("unexpected argument %q", pos[0])
	}
	if *budget <= 0 {
		return cli.Usagef("--budget must be a positive number of tokens, not %d", *budget)
	}
	p, err := c.resolve(env)
	if err != nil {
		return err
	}
	now, err := env.Now()
	if err != nil {
		return err
	}
	s, err := openRead(p)
	if err != nil {
		return err
	}
	defer s.Close()
	cwd := c.project
	if cwd == "" {
		cwd = env.Dir
	}
	if abs, err := filepath.Abs(cwd); err == nil {
		cwd = abs
	}
	// The hook's derived-data cache speeds this up; it is only read here.
	ix := inject.LoadIndex(p.Path(inject.IndexName))
	// What a session starting afresh gets: the bootstrap too.
	ie := inject.EnvFor(env, p, cwd, now, *budget)
	ie.Resume = true
	in, err := inject.Gather(ie, s, ix)
	if err != nil {
		if errors.Is(err, store.ErrCorrupt) {
			return storeError(err)
		}
		return memoryError(p, err)
	}
	in.Redact, in.Screen = ix.Redact, ix.Screen
	res := inject.Render(in)
	if c.json {
		rep := &ContextReport{
			Context: res.Text, Tokens: res.Tokens, Budget: res.Budget,
			Chars: res.Chars, Items: res.Items, Omitted: res.Omitted, Withheld: res.Withheld, Ready: in.Ready,
		}
		if rep.Withheld == nil {
			rep.Withheld = []inject.Withheld{}
		}
		return writeJSON(env.Stdout, rep)
	}
	w := env.Stdout
	if *withheld {
		printWithheld(w, res.Withheld, p.MemoryDir)
		return nil
	}
	if res.Text == "" {
		fmt.Fprintln(w, "(nothing worth injecting: the hook would print nothing)")
	} else {
		fmt.Fprintln(w, res.Text)
	}
	fmt.Fprintf(w, "\n≈%d %s of %d budget, %d %s\n", res.Tokens, cli.Plural(res.Tokens, "token", "tokens"), res.Budget, res.Chars, cli.Plural(res.Chars, "char", "chars"))
	return nil
}

// printWithheld lists what screening withholds, one item a line: where it
// is, what it is, and each reason (with its own line when that differs).
// The text is escaped by the command's writer like all human output.
func printWithheld(w io.Writer, ws []inject.Withheld, memDir string) {
	if len(ws) == 0 {
		fmt.Fprintln(w, "Nothing withheld: screening flagged nothing the SessionStart context would show.")
		return
	}
	n := len(ws)
	fmt.Fprintf(w, "%d %s withheld from the SessionStart context (%s like prompt injection):\n",
		n, cli.Plural(n, "item", "items"), cli.Plural(n, "it looks", "they look"))
	for _, x := range ws {
		where := x.File
		if x.Line > 0 {
			where += fmt.Sprintf(":%d", x.Line)
		}
		var reasons []string
		for _, f := range x.Flags {
			r := f.Kind + ": " + f.Detail
			if f.Line > 0 && f.Line != x.Line {
				r = fmt.Sprintf("line %d: %s", f.Line, r)
			}
			reasons = append(reasons, r)
		}
		fmt.Fprintf(w, "- %s (%s): %s\n", cli.Line(where), cli.Line(x.What), cli.Line(strings.Join(reasons, "; ")))
	}
	fmt.Fprintf(w, "Memory files are in %s/; documents are relative to the project root.\n", cli.Line(memDir))
}
