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
	"sort"
	"strings"

	"github.com/intermem/intermem/pkg/cli"
)

type subcommand struct {
	name    string
	summary string
	run     func(ctx context.Context, env *cli.Env, args []string) error
}

var subcommands = map[string]subcommand{}

func register(name, summary string, run func(ctx context.Context, env *cli.Env, args []string) error) {
	subcommands[name] = subcommand{name: name, summary: summary, run: run}
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
	names := make([]string, 0, len(subcommands))
	for n := range subcommands {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "  %-10s %s\n", n, subcommands[n].summary)
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
		printUsage(env.Stdout)
		return 0
	case "--version", "version":
		fmt.Fprintf(env.Stdout, "intermem %s\n", cli.Version)
		return 0
	}
	sc, ok := subcommands[name]
	if !ok {
		return cli.Report(env.Stderr, &cli.Error{
			Err:  fmt.Errorf("unknown command %q", name),
			Hint: "run \"intermem help\" for the list of commands",
			Code: 2,
		})
	}
	err = sc.run(ctx, env, args[1:])
	return cli.Report(env.Stderr, err)
}
