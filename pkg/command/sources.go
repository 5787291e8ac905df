package command

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/intermem/intermem/pkg/catalog"
	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/retrieve"
	"github.com/intermem/intermem/pkg/source/automemory"
	"github.com/intermem/intermem/pkg/source/promoted"
	"github.com/intermem/intermem/pkg/source/written"
)

const sourcesUsage = `Usage: intermem sources [--project DIR] [--json]

Lists every memory source intermem reads: whether it is on
(.intermem/config.json switches a source off: {"sources":
{"interfluence": false}}), where it looks and the files it found there,
how many entries it holds, when its files were last found changed, and
what in them it could not make sense of. Nothing is written: the files are
read as they are now, so a change no hook or writing command has stored
yet shows as changed now.

--json prints {"sources":[{"name","on","base","patterns","files","entries",
"last_changed","problems":[{"path","line","message"}]}]}; patterns and
files are relative to base (the project root when base is empty).
`

// SourceJSON is one source as sources --json prints it.
type SourceJSON struct {
	Name     string   `json:"name"`
	On       bool     `json:"on"`
	Base     string   `json:"base"`
	Patterns []string `json:"patterns"`
	// Files are relative to Base.
	Files   []string `json:"files"`
	Entries int      `json:"entries"`
	// LastChanged is when a build last found the source's files changed
	// (catalog.SourceInfo.Scanned): not when they were last looked at,
	// which every command and hook does.
	LastChanged time.Time     `json:"last_changed,omitzero"`
	Problems    []ProblemJSON `json:"problems"`
}

// ProblemJSON is one problem a source met.
type ProblemJSON struct {
	Path    string `json:"path"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
}

func runSources(ctx context.Context, env *cli.Env, args []string) error {
	var c common
	fset := cli.FlagSet("intermem sources", sourcesUsage, env.Stdout)
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
			sj := SourceJSON{Name: s.Name, On: s.On, Base: s.Base, Patterns: s.Patterns, Files: []string{},
				Entries: s.Entries, LastChanged: s.Scanned, Problems: []ProblemJSON{}}
			for _, f := range s.Files {
				// Auto-memory's entry paths name its files "memory/<name>";
				// under its base, the memory directory, they are "<name>".
				if s.Name == automemory.Name {
					f = strings.TrimPrefix(f, automemory.Prefix)
				}
				sj.Files = append(sj.Files, f)
			}
			for _, pr := range s.Problems {
				sj.Problems = append(sj.Problems, ProblemJSON{Path: pr.Path, Line: pr.Line, Message: pr.Message})
			}
			if s.Name == promoted.Name && s.On {
				sj.Problems = append(sj.Problems, foreignMarkers(v.Catalog)...)
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
				if !s.LastChanged.IsZero() {
					fmt.Fprintf(w, ", changed at %s", stamp(s.LastChanged))
				}
			}
			fmt.Fprintln(w)
			where := strings.Join(s.Patterns, ", ")
			if s.Base != "" {
				where += " under " + s.Base
			}
			fmt.Fprintf(w, "  looks at %s\n", cli.Line(where))
			if s.On {
				for i, f := range s.Files {
					if i == 8 {
						fmt.Fprintf(w, "  … and %d more files (--json lists all)\n", len(s.Files)-i)
						break
					}
					fmt.Fprintf(w, "  - %s\n", cli.Line(f))
				}
				for _, pr := range s.Problems {
					loc := pr.Path
					if pr.Line > 0 {
						loc = fmt.Sprintf("%s:%d", pr.Path, pr.Line)
					}
					fmt.Fprintf(w, "  problem: %s: %s\n", cli.Line(loc), cli.Line(pr.Message))
				}
			}
		}
		return nil
	})
}

// foreignMarkers reports the promoted facts whose marker carries the id of
// an entry of a source intermem never promotes from (a solution document,
// a learning, an instruction file's statement): typed or copied by hand,
// such a marker makes two entries one id, so search names the one and get
// shows the other. Only auto-memory and written memories are promoted,
// and a promoted fact shares its id with the memory it came from.
func foreignMarkers(cat *catalog.Catalog) []ProblemJSON {
	var out []ProblemJSON
	for _, e := range cat.Entries(promoted.Name) {
		if !e.Gone.IsZero() {
			continue
		}
		for _, o := range cat.GetAll(e.ID) {
			switch o.Source {
			case promoted.Name, automemory.Name, written.Name:
				continue
			}
			if !o.Gone.IsZero() {
				continue
			}
			out = append(out, ProblemJSON{Path: e.Path, Line: e.Line,
				Message: fmt.Sprintf("marker intermem:%s carries the id of a %s entry (%s:%d), which intermem never promotes: one id names two entries (give the marker the fact's own id, or remove it)", e.ID, o.Source, o.Path, o.Line)})
			break
		}
	}
	return out
}
