// Package command implements the intermem command-line tool: a dispatcher
// and one file per subcommand. Subcommands parse their own flags (which may
// come before or after positional arguments), do their work through the
// domain packages, and print readable text, or one JSON object with
// --json. Errors are printed as "intermem: error: …" with a hint, and exit
// non-zero.
package command

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/clienv"
)

type subcommand struct {
	name    string
	summary string
	run     func(ctx context.Context, env *cli.Env, args []string) error
}

// subcommands are intermem's commands in name order: a table the compiler
// lays out, not one filled by init functions, which every process of every
// binary that links this package ran at its start.
var subcommands = []subcommand{
	{"archived", "list the facts archived in docs/intermem/.archived.md", runArchived},
	{"checkpoint", "record where the work stands (a summary, for the next session and long-term memory)", runCheckpoint},
	{"checkpoints", "list checkpoints: saved summaries, phase marks, the hooks' every-N-turns ones", runCheckpoints},
	{"context", "what the SessionStart hook would inject for this project, and its estimated tokens", runContext},
	{"decide", "record a decision and why it was taken", runDecide},
	{"decisions", "list the decisions taken, by phase", runDecisions},
	{"export", "write the memories out as Markdown files or one JSON document: intermem export --out DIR", runExport},
	{"get", "one whole entry of any source, with what intermem knows of it: intermem get ID", runGet},
	{"head", "the phase the work stands at, and the checkpoints of every phase", runHead},
	{"import", "bring in the state of the original Python intermem: its promoted facts and stability history", runImport},
	{"phase", "start, close (the closeout) or restore a phase of the work; backtracks invalidate later phases", runPhase},
	{"provenance", "where an entry came from and what intermem did with it: intermem provenance ID", runProvenance},
	{"restore", "put an archived fact back where it was: intermem restore ID", runRestore},
	{"search", "search every memory source, best first: intermem search QUERY [--source S]…", runSearch},
	{"sources", "every memory source intermem reads: where, how many entries, problems", runSources},
	{"status", "where things are, sessions seen, entries by stability, MEMORY.md against its load cap", runStatus},
	{"sweep", "re-validate promoted facts, apply decay, archive what stopped holding, restore what came back", runSweep},
	{"tidy", "move the largest sections of an over-cap MEMORY.md into topic files (dry run unless --apply); report stale counts", runTidy},
	{"tier", "move promoted facts into docs/intermem/ behind a thin index (migrate), or back inline (flatten)", runTier},
	{"topics", "sections of promoted knowledge and of memory, with counts and average confidence", runTopics},
	{"validate", "check what every source's entries cite (promoted facts, memories, solutions, learnings) against the code; show stale ones", runValidate},
	{"write", "store a memory for other tools and scripts: intermem write --type T --title T", runWrite},
}

// lookup is the command called name.
func lookup(name string) (subcommand, bool) {
	for _, sc := range subcommands {
		if sc.name == name {
			return sc, true
		}
	}
	return subcommand{}, false
}

const usage = `intermem keeps Claude Code's auto-memory small, true and curated.

Usage:
  intermem <command> [flags] [args]

Commands:
%s
Every command takes --project DIR (default: the current directory) and
most take --json. Run "intermem <command> --help" for details.

Companion binaries, in the same directory:
  intermem-synthesize  plan and apply the promotion of stable memory into
                       CLAUDE.md/AGENTS.md (what /intermem:synthesize runs)
  intermem-recover     list, resume or discard operations a crash interrupted
  intermem-inject      the SessionStart hook (reads a hook payload on stdin)
  intermem-snapshot    the Stop and SessionEnd hook (reads a hook payload on stdin)
  intermem-mcp         the MCP server Claude Code starts for each session
Each answers --help and --version.
`

func printUsage(w io.Writer) {
	width := 0
	for _, sc := range subcommands {
		width = max(width, len(sc.name))
	}
	var b strings.Builder
	for _, sc := range subcommands {
		fmt.Fprintf(&b, "  %-*s  %s\n", width, sc.name, sc.summary)
	}
	fmt.Fprintf(w, usage, b.String())
}

// Main runs the intermem tool and returns its exit status.
func Main(ctx context.Context, env *cli.Env, args []string) (code int) {
	var err error
	env = env.Safe() // every human-readable byte is escaped (see cli.Unsafe)
	defer env.Flush()
	defer cli.Recover(env.Stderr, &code)
	if len(args) == 0 {
		printUsage(env.Stderr)
		return 2
	}
	name := args[0]
	switch name {
	case "-h", "--help", "help":
		if len(args) > 1 { // intermem help search: the command's own help
			if sc, ok := lookup(args[1]); ok {
				return cli.Report(env.Stderr, sc.run(ctx, env, []string{"--help"}))
			}
		}
		printUsage(env.Stdout)
		return 0
	case "--version", "version":
		fmt.Fprintf(env.Stdout, "intermem %s\n", clienv.Version)
		return 0
	}
	sc, ok := lookup(name)
	if !ok {
		return cli.Report(env.Stderr, &cli.Error{
			Err:  fmt.Errorf("unknown command %q", name),
			Hint: "run \"intermem help\" for the list of commands",
			Code: 2,
		})
	}
	err = sc.run(ctx, env, args[1:])
	return cli.Report(env.Stderr, withStoreHint(err))
}
