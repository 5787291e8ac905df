package command

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/retrieve"
)

const sourcesUsage = `Usage: intermem sources [--project DIR] [--json]

Lists every memory source intermem reads (package catalog): whether it is
on (.intermem/config.json switches a source off: {"sources":
{"interfluence": false}}), where it looks and the files it found, how many
entries it holds, when a scan last found its files changed, and what in
them it could not make sense of. Nothing is written.
`

// SourceJSON is one source as sources --json prints it.
type SourceJSON struct {
	Name     string        `json:"name"`
	On       bool          `json:"on"`
	Base     string        `json:"base"`
	Patterns []string      `json:"patterns"`
	Files    []string      `json:"files"`
	Entries  int           `json:"entries"`
	LastScan time.Time     `json:"last_scan,omitzero"`
	Problems []ProblemJSON `json:"problems"`
}

// ProblemJSON is one problem a source met.
type ProblemJSON struct {
	Path    string `json:"path"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
}

func runSources(ctx context.Context, env *cli.Env, args []string) error {
	var c common
	fset := cli.FlagSet("intermem sources", sourcesUsage, env.Stderr)
	c.register(fset, true)
	rest, err := cli.Parse(fset, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return cli.Usagef("sources takes no arguments")
	}
	p, err := c.resolve(env)
	if err != nil {
		return err
	}
	return readView(env, p, false, func(v *retrieve.View) error {
		var out []SourceJSON
		for _, s := range v.Catalog.Sources() {
			sj := SourceJSON{Name: s.Name, On: s.On, Base: s.Base, Patterns: s.Patterns, Files: s.Files,
				Entries: s.Entries, LastScan: s.Scanned, Problems: []ProblemJSON{}}
			if sj.Files == nil {
				sj.Files = []string{}
			}
			for _, pr := range s.Problems {
				sj.Problems = append(sj.Problems, ProblemJSON{Path: pr.Path, Line: pr.Line, Message: pr.Message})
			}
			out = append(out, sj)
		}
		if c.json {
			return writeJSON(env.Stdout, struct {
				Sources []SourceJSON `json:"sources"`
			}{out})
		}
		w := env.Stdout
		for _, s := range out {
			state := "on"
			if !s.On {
				state = "off (.intermem/config.json)"
			}
			fmt.Fprintf(w, "%s: %s", s.Name, state)
			if s.On {
				fmt.Fprintf(w, ", %s %s in %d %s", cli.Thousands(s.Entries), cli.Plural(s.Entries, "entry", "entries"), len(s.Files), cli.Plural(len(s.Files), "file", "files"))
				if !s.LastScan.IsZero() {
					fmt.Fprintf(w, ", changed at %s", stamp(s.LastScan))
				}
			}
			fmt.Fprintln(w)
			where := strings.Join(s.Patterns, ", ")
			if s.Base != "" {
				where += " under " + s.Base
			}
			fmt.Fprintf(w, "  looks at %s\n", where)
			if s.On {
				for i, f := range s.Files {
					if i == 8 {
						fmt.Fprintf(w, "  … and %d more files (--json lists all)\n", len(s.Files)-i)
						break
					}
					fmt.Fprintf(w, "  - %s\n", f)
				}
				for _, pr := range s.Problems {
					loc := pr.Path
					if pr.Line > 0 {
						loc = fmt.Sprintf("%s:%d", pr.Path, pr.Line)
					}
					fmt.Fprintf(w, "  problem: %s: %s\n", loc, pr.Message)
				}
			}
		}
		return nil
	})
}
