package command

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/journal"
	"github.com/intermem/intermem/pkg/ops"
	"github.com/intermem/intermem/pkg/project"
	"github.com/intermem/intermem/pkg/tidy"
)

const tidyUsage = `Usage: intermem tidy [--project DIR] [--apply] [--json]

Brings MEMORY.md back under the part of it Claude Code loads (the first
200 lines, at most 25,000 characters) without promoting anything. The
largest ## sections move, byte for byte, into topic files beside
MEMORY.md, until it is under 150 lines and 18,750 characters (room to
grow); each moved section leaves one pointer line under "## Topic files":

  - [Section title](section-title.md) — what the section holds

Claude Code does not load topic files, but the model reads one when a
pointer says it is relevant. Every moved entry keeps its bytes and its
identity, so the sessions intermem has counted for it still count. A file
name is never reused: an existing file is never overwritten.

Without --apply nothing at all is written (no file, no store, no lock, no
log): it shows what would move, MEMORY.md before and after, and the topic
files it would create. With --apply the move goes through intermem's
journal: the topic files are written first, then MEMORY.md, and a crash
at any point is completed by intermem-recover or the next intermem
command; .intermem/backups keeps MEMORY.md's bytes as they were.

It also reports counts in memory that no longer hold ("48 plugins" when
plugins/ now holds 52). It checks only a number followed by a word that
names exactly one directory within two levels of the project root, and
calls it stale when it is neither that directory's count of
sub-directories, nor of files, nor both together.
`

// TidyReport is the JSON shape of tidy.
type TidyReport struct {
	DryRun    bool       `json:"dry_run"`
	MemoryDir string     `json:"memory_dir"`
	Cap       TidySize   `json:"cap"`
	Target    TidySize   `json:"target"`
	Before    TidyLoad   `json:"before"`
	After     TidyLoad   `json:"after"`
	Moves     []TidyMove `json:"moves"`
	Files     []string   `json:"topic_files"`
	Note      string     `json:"note,omitempty"`
	Counts    TidyCounts `json:"counts"`
	Op        string     `json:"op,omitempty"`
	Recovered []string   `json:"recovered,omitempty"`
	index     bool       // MEMORY.md exists
}

// TidySize is a number of lines and of characters (UTF-16 code units).
type TidySize struct {
	Lines int `json:"lines"`
	Chars int `json:"chars"`
}

// TidyLoad is MEMORY.md as Claude Code loads it.
type TidyLoad struct {
	Lines       int  `json:"lines"`
	Chars       int  `json:"chars"`
	LoadedLines int  `json:"loaded_lines"`
	OverCap     bool `json:"over_cap"`
}

// TidyMove is one section that moves.
type TidyMove struct {
	Section string   `json:"section"` // redacted
	Line    int      `json:"line"`
	Lines   int      `json:"lines"`
	Chars   int      `json:"chars"`
	Entries []string `json:"entries"`
	File    string   `json:"file"`
	Pointer string   `json:"pointer"`
}

// TidyCounts is what the stale-count check found.
type TidyCounts struct {
	Checked int          `json:"checked"`
	Stale   []tidy.Count `json:"stale"`
}

func tidyLoad(l automem.LoadInfo) TidyLoad {
	return TidyLoad{Lines: l.Lines, Chars: l.Chars, LoadedLines: l.LoadedLines, OverCap: tidy.Over(l)}
}

func runTidy(ctx context.Context, env *cli.Env, args []string) error {
	var c common
	fset := cli.FlagSet("intermem tidy", tidyUsage, env.Stdout)
	c.register(fset, true)
	apply := fset.Bool("apply", false, "move the sections (without it, nothing is written)")
	if _, err := cli.Parse(fset, args); err != nil {
		return err
	}
	p, err := c.resolve(env)
	if err != nil {
		return err
	}
	rep := &TidyReport{DryRun: !*apply, MemoryDir: p.MemoryDir, Moves: []TidyMove{}, Files: []string{},
		Cap:    TidySize{automem.MaxLoadLines, automem.MaxLoadChars},
		Target: TidySize{tidy.TargetLines, tidy.TargetChars}, Counts: TidyCounts{Stale: []tidy.Count{}}}

	var w *writer
	if *apply {
		// The lock, the spool and recovery first: the plan is made from
		// the memory as it is once every earlier operation is complete.
		if w, err = openWriter(env, p, "intermem tidy"); err != nil {
			return err
		}
		defer w.Close()
		for _, op := range w.Recovered {
			rep.Recovered = append(rep.Recovered, op.Summary)
		}
	}
	d, err := scanMemory(p)
	if err != nil {
		return err
	}
	var pl *tidy.Plan
	if d != nil && d.Index != nil {
		rep.index = true
		if pl, err = tidy.Build(d.Index.Content, takenNames(p.MemoryDir)); err != nil {
			return err
		}
		rep.Before, rep.After, rep.Note = tidyLoad(pl.Before), tidyLoad(pl.After), pl.Why
		for _, m := range pl.Moves {
			rep.Moves = append(rep.Moves, TidyMove{Section: redactText(m.Title), Line: m.Line, Lines: m.Lines, Chars: m.Chars,
				Entries: append([]string{}, m.Entries...), File: m.File, Pointer: m.Pointer})
			rep.Files = append(rep.Files, m.File)
		}
	} else {
		rep.Note = "there is no MEMORY.md in the memory directory: nothing to tidy"
	}
	for _, cnt := range tidy.Counts(d, p.Root) {
		rep.Counts.Checked++
		if cnt.Stale {
			cnt.Text = redactText(cnt.Text)
			rep.Counts.Stale = append(rep.Counts.Stale, cnt)
		}
	}

	if pl != nil && len(pl.Moves) > 0 {
		op, err := tidyOp(p, pl)
		if err != nil {
			return err
		}
		if err := c.confineOp(p, nil, op, "tidy"); err != nil {
			return err
		}
		if *apply {
			op.ID = journal.NewID(w.now)
			if _, _, err := ops.Simulate(p.Places(), op); err != nil {
				return tidyError(p, err)
			}
			if err := w.journal.Run(op); err != nil {
				return cli.WithHint(err, "nothing is lost: run intermem-recover to see the operation, then resume or discard it")
			}
			rep.Op = op.ID
		} else {
			// The dry run carries out the very steps apply would run, in
			// memory, and shows their result.
			content, _, err := ops.Simulate(p.Places(), op)
			if err != nil {
				return tidyError(p, err)
			}
			index, err := p.Places().Resolve(filepath.Join(p.MemoryDir, automem.IndexName), false)
			if err != nil {
				return tidyError(p, err)
			}
			if got := content[index]; !bytes.Equal(got, pl.Index) { // keyed by real path
				return fmt.Errorf("internal error: the tidy steps disagree with the plan")
			}
		}
	}
	if c.json {
		return writeJSON(env.Stdout, rep)
	}
	printTidy(env.Stdout, p, rep)
	return nil
}

// tidyOp builds the journaled operation and judges every file it would
// write (the memory directory is the only place a tidy writes).
func tidyOp(p *project.Project, pl *tidy.Plan) (*journal.Op, error) {
	op, err := ops.Tidy(p.MemoryDir, pl)
	if err != nil {
		return nil, err
	}
	places := p.Places()
	for _, s := range op.Steps {
		if _, err := places.Resolve(s.Path, false); err != nil {
			return nil, cli.WithHint(fmt.Errorf("tidy refuses: %w", err), memoryHint(p))
		}
	}
	return op, nil
}

// takenNames reports the names already in the memory directory, compared
// lower-cased (a case-insensitive disk would confuse two names differing
// in case): every entry counts, files, directories, links and dotfiles.
func takenNames(dir string) func(string) bool {
	taken := map[string]bool{}
	if ents, err := os.ReadDir(dir); err == nil {
		for _, e := range ents {
			taken[strings.ToLower(e.Name())] = true
		}
	}
	return func(lower string) bool { return taken[lower] }
}

// tidyError gives a step that cannot run its hint.
func tidyError(p *project.Project, err error) error {
	return cli.WithHint(fmt.Errorf("tidy: %w", err),
		"MEMORY.md or a topic file changed while tidy was planning; nothing was written: run intermem tidy again")
}

func memoryHint(p *project.Project) string {
	return fmt.Sprintf("Claude Code keeps this project's auto-memory in %s (INTERMEM_MEMORY_DIR chooses another)", p.MemoryDir)
}

func printTidy(w io.Writer, p *project.Project, r *TidyReport) {
	head := "intermem tidy"
	if r.DryRun {
		head += " (dry run: nothing was written)"
	}
	fmt.Fprintln(w, head)
	for _, s := range r.Recovered {
		fmt.Fprintf(w, "Completed an interrupted operation first: %s.\n", s)
	}
	if !r.index {
		fmt.Fprintf(w, "No MEMORY.md in %s: nothing to tidy.\n", relTo(p.Root, r.MemoryDir))
	} else {
		b := r.Before
		fmt.Fprintf(w, "MEMORY.md: %d %s / %s chars", b.Lines, cli.Plural(b.Lines, "line", "lines"), cli.Thousands(b.Chars))
		if b.OverCap {
			fmt.Fprintf(w, ", over its load cap (200 lines / 25,000 chars): Claude Code loads only lines 1–%d.\n", b.LoadedLines)
		} else {
			fmt.Fprintf(w, ", under its load cap (200 lines / 25,000 chars): nothing needs to move.\n")
		}
	}
	if n := len(r.Moves); n > 0 {
		verb := "Moved"
		if r.DryRun {
			verb = "Would move"
		}
		fmt.Fprintf(w, "%s %d %s into topic files, largest first, to bring MEMORY.md under %d lines / %s chars:\n",
			verb, n, cli.Plural(n, "section", "sections"), r.Target.Lines, cli.Thousands(r.Target.Chars))
		for _, m := range r.Moves {
			fmt.Fprintf(w, "  L%-4d %s (%d %s, %d %s) → %s\n", m.Line, cli.Line(clip(m.Section, 60)), m.Lines, cli.Plural(m.Lines, "line", "lines"),
				len(m.Entries), cli.Plural(len(m.Entries), "entry", "entries"), cli.Line(m.File))
		}
		a := r.After
		fmt.Fprintf(w, "MEMORY.md after: %d %s / %s chars", a.Lines, cli.Plural(a.Lines, "line", "lines"), cli.Thousands(a.Chars))
		if a.OverCap {
			fmt.Fprintf(w, ", still over its load cap (only lines 1–%d load)", a.LoadedLines)
		} else {
			fmt.Fprint(w, ", all of it loaded")
		}
		fmt.Fprintf(w, "; the sections are replaced by %d pointer %s under \"## %s\".\n", n, cli.Plural(n, "line", "lines"), tidy.TopicsTitle)
	}
	if r.Note != "" && r.Before.OverCap {
		fmt.Fprintf(w, "%s.\n", upperFirst(r.Note))
	}
	switch n := r.Counts.Checked; {
	case n == 0:
		fmt.Fprintln(w, "Counts: none to check (a number followed by a word naming exactly one directory of the project).")
	case len(r.Counts.Stale) == 0:
		fmt.Fprintf(w, "Counts: %d checked against the project's directories; all hold.\n", n)
	default:
		s := len(r.Counts.Stale)
		fmt.Fprintf(w, "Counts: %d checked against the project's directories; %d %s:\n", n, s, cli.Plural(s, "no longer holds", "no longer hold"))
		for i, cnt := range r.Counts.Stale {
			if i == 10 {
				fmt.Fprintf(w, "  … and %d more (intermem tidy --json lists them all)\n", s-i)
				break
			}
			fmt.Fprintf(w, "  %s:%d %q: %s/ holds %s\n", cli.Line(cnt.File), cnt.Line, clip(cnt.Text, 60), cli.Line(cnt.Dir), holding(cnt))
		}
	}
	switch {
	case len(r.Moves) > 0 && r.DryRun:
		fmt.Fprintln(w, "Run `intermem tidy --apply` to move them; every entry keeps its bytes and its stability history.")
	case len(r.Moves) > 0:
		fmt.Fprintf(w, "MEMORY.md as it was is in .intermem/backups/%s/.\n", r.Op)
	}
}

// holding says what a counted directory holds.
func holding(c tidy.Count) string {
	d := fmt.Sprintf("%d %s", c.Dirs, cli.Plural(c.Dirs, "directory", "directories"))
	f := fmt.Sprintf("%d %s", c.Files, cli.Plural(c.Files, "file", "files"))
	switch {
	case c.Dirs > 0 && c.Files > 0:
		return d + " and " + f
	case c.Dirs > 0:
		return d
	}
	return f
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
