package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/project"
)

// Version is the intermem version, set at build time with -ldflags (as
// clienv.Version is).
var Version = "0.1.0"

// maxFrame bounds one inbound JSON-RPC message. The largest legitimate
// call is a memory_write of 64 KiB.
const maxFrame = 1 << 20

const usage = `Usage: intermem-mcp [--project DIR]

intermem-mcp is intermem's MCP server: Claude Code starts it for each
session (the plugin manifest declares it) and talks JSON-RPC to it over
stdin and stdout. It gives the model tools to search, read, re-validate
and trace the project's memories:

  memory_search      ranked entries for a query, within a token budget
  memory_get         one whole entry, with its confidence and promotion
  memory_validate    its citations checked now, with suggested fixes
  memory_provenance  where it came from and what intermem did with it
  memory_write       store a memory (as intermem write does)

The project is DIR, else $CLAUDE_PROJECT_DIR, else the working directory,
resolved to its git root as every intermem command does. In the home
directory or at /, the server offers no tools.
`

// Main runs the server until the client closes its stdin, and returns
// the exit status. --help and --version answer without reading stdin.
func Main(ctx context.Context, env *cli.Env, args []string) (code int) {
	defer cli.Recover(env.Stderr, &code)
	fset := cli.FlagSet("intermem-mcp", usage, env.Stdout)
	dir := fset.String("project", "", "the project `dir`ectory (default: $CLAUDE_PROJECT_DIR, else the working directory)")
	version := fset.Bool("version", false, "print the version and exit")
	rest, err := cli.Parse(fset, args)
	if err != nil { // --help too: the usage is printed, and the status is 0
		return cli.Report(env.Stderr, err)
	}
	if *version {
		fmt.Fprintf(env.Stdout, "intermem-mcp %s\n", Version)
		return 0
	}
	if len(rest) > 0 {
		return cli.Report(env.Stderr, cli.Usagef("unexpected argument %q", rest[0]))
	}
	if _, err := env.Now(); err != nil {
		return cli.Report(env.Stderr, err)
	}
	b := backendFor(env, *dir)
	s := NewServer(b, Options{
		Version: Version,
		Now:     env.Now,
		Logf:    func(format string, a ...any) { fmt.Fprintf(env.Stderr, format+"\n", a...) },
	})
	pipe := newStdio(readCloser(env.Stdin), writeCloser(env.Stdout))
	if err := s.Run(ctx, &mcp.IOTransport{Reader: pipe.reader(), Writer: pipe.writer(), MaxLineLength: maxFrame + 1}); err != nil && ctx.Err() == nil && !isEOF(err) {
		return cli.Report(env.Stderr, fmt.Errorf("mcp: %w", err))
	}
	return 0
}

// backendFor resolves the project: --project, else CLAUDE_PROJECT_DIR
// (which Claude Code sets to the session's directory for every stdio MCP
// server), else the working directory (Claude Code starts the server in
// the session's directory). No project (home, /, a directory that is
// gone) gives no backend, silently: Claude Code logs anything an MCP
// server writes to stderr as an error, and a session in the home
// directory is not one.
func backendFor(env *cli.Env, dir string) Backend {
	if dir == "" {
		dir = env.Get("CLAUDE_PROJECT_DIR")
	}
	if dir == "" {
		dir = env.Dir
	}
	p, err := project.Resolve(env, dir)
	if err != nil {
		return nil
	}
	return NewCatalog(env, p)
}

func isEOF(err error) bool { return errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) }

type nopCloser struct{ io.Reader }

func (nopCloser) Close() error { return nil }

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

func readCloser(r io.Reader) io.ReadCloser {
	if rc, ok := r.(io.ReadCloser); ok {
		return rc
	}
	return nopCloser{r}
}

func writeCloser(w io.Writer) io.WriteCloser {
	if wc, ok := w.(io.WriteCloser); ok {
		return wc
	}
	return nopWriteCloser{w}
}
