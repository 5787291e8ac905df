package command

import (
	"context"
	"fmt"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/journal"
	"github.com/intermem/intermem/pkg/ops"
	"github.com/intermem/intermem/pkg/targets"
	"github.com/intermem/intermem/pkg/tier"
)

const tierUsage = `Usage: intermem tier migrate|flatten [--project DIR] [--json] [--dry-run] [--allow-outside]

migrate moves every promoted fact of AGENTS.md (marked with an intermem
marker) into docs/intermem/<topic>.md, one file per section, and leaves in
AGENTS.md a managed index with one line per topic: Claude Code loads only
the index every session, and reads a topic's file when it needs it.
flatten is the reverse: the facts go back inline and the index goes.
Both are journaled like every change intermem makes.
`

// TierReport is the JSON shape of tier.
type TierReport struct {
	DryRun  bool        `json:"dry_run"`
	Action  string      `json:"action"`
	Moved   []tier.Move `json:"moved"`
	Op      string      `json:"op,omitempty"`
	Before  int         `json:"always_loaded_bytes_before"`
	After   int         `json:"always_loaded_bytes_after"`
	Summary string      `json:"summary"`
}

func runTier(ctx context.Context, env *cli.Env, args []string) error {
	var c common
	fset := cli.FlagSet("intermem tier", tierUsage, env.Stdout)
	c.register(fset, true)
	dry := fset.Bool("dry-run", false, "show what would move, write nothing")
	c.registerAllowOutside(fset)
	pos, err := cli.Parse(fset, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || (pos[0] != "migrate" && pos[0] != "flatten") {
		return cli.Usagef("say migrate or flatten")
	}
	p, err := c.resolve(env)
	if err != nil {
		return err
	}
	var w *writer
	if !*dry {
		if w, err = openWriter(env, p, "intermem tier"); err != nil {
			return err
		}
		defer w.Close()
	}
	ts, err := loadTargets(p)
	if err != nil {
		return err
	}
	cfg := tier.Load(env.Get, p.StateDir)
	var op *journal.Op
	var moves []tier.Move
	if pos[0] == "migrate" {
		op, moves = ops.Migrate(ts, cfg)
	} else {
		op, moves = ops.Flatten(ts)
	}
	if err := c.confineOp(p, ts, op, "tier "+pos[0]); err != nil {
		return err
	}
	rep := TierReport{DryRun: *dry, Action: pos[0], Moved: moves, Before: alwaysLoaded(ts)}
	if rep.Moved == nil {
		rep.Moved = []tier.Move{}
	}
	rep.After = rep.Before
	if len(op.Steps) > 0 {
		contents, exists, err := ops.Simulate(p.Places(), op)
		if err != nil {
			return fmt.Errorf("preparing the %s: %w", pos[0], err)
		}
		if after, err := targets.LoadWith(p.Root, contents, exists); err == nil {
			rep.After = alwaysLoaded(after)
		}
		if !*dry {
			op.ID = journal.NewID(w.now)
			if err := w.run(op); err != nil {
				return err
			}
			rep.Op = op.ID
		}
		rep.Summary = op.Summary
	}
	if c.json {
		return writeJSON(env.Stdout, &rep)
	}
	out := env.Stdout
	if len(moves) == 0 && len(op.Steps) == 0 {
		fmt.Fprintf(out, "Nothing to %s.\n", pos[0])
		return nil
	}
	verb := "Moved"
	if *dry {
		verb = "Would move"
	}
	fmt.Fprintf(out, "%s %d promoted %s:\n", verb, len(moves), cli.Plural(len(moves), "fact", "facts"))
	for _, m := range moves {
		fmt.Fprintf(out, "  %s:%d → %s  %s\n", cli.Line(m.From), m.Line, cli.Line(m.To), cli.Line(clip(firstLine(m.Text), 60)))
	}
	change := ""
	switch {
	case rep.Before > 0 && rep.After <= rep.Before:
		change = fmt.Sprintf(" (%d%% less)", (rep.Before-rep.After)*100/rep.Before)
	case rep.Before > 0:
		change = fmt.Sprintf(" (%d%% more)", (rep.After-rep.Before)*100/rep.Before)
	}
	fmt.Fprintf(out, "Always-loaded intermem text: %s → %s bytes%s.\n", cli.Thousands(rep.Before), cli.Thousands(rep.After), change)
	return nil
}

// alwaysLoaded is the number of bytes of intermem-managed text that
// Claude Code loads every session: the promoted entries (and marked
// headings) of CLAUDE.md, and of AGENTS.md when Claude Code loads it (an
// import, a symlink, or no CLAUDE.md), plus the managed index.
func alwaysLoaded(ts *targets.Set) int {
	n := 0
	docs := []*targets.Doc{ts.Claude}
	if ok, _ := ts.AgentsLoaded(); ok || !ts.Claude.Exists {
		if !ts.Same() {
			docs = append(docs, ts.Agents)
		}
	}
	for _, d := range docs {
		if !d.Exists {
			continue
		}
		for _, m := range d.Doc.Marked() {
			n += m.End - m.Start
		}
		n += tier.IndexBytes(d.Content)
	}
	return n
}
