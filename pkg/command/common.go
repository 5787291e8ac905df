package command

import (
	"encoding/json"
	"errors"
	"flag"
	"io"
	"time"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/project"
	"github.com/intermem/intermem/pkg/store"
)

// common holds the flags every subcommand shares.
type common struct {
	project string
	json    bool
}

func (c *common) register(fs *flag.FlagSet, withJSON bool) {
	fs.StringVar(&c.project, "project", "", "project `dir`ectory (default: the current directory)")
	if withJSON {
		fs.BoolVar(&c.json, "json", false, "print one JSON object instead of text")
	}
}

// resolve finds the project for --project or the working directory.
func (c *common) resolve(env *cli.Env) (*project.Project, error) {
	dir := c.project
	if dir == "" {
		dir = env.Dir
	}
	p, err := project.Resolve(env, dir)
	if err != nil {
		if errors.Is(err, project.ErrNoDir) {
			return nil, cli.WithHint(err, "pass an existing directory with --project")
		}
		return nil, err
	}
	return p, nil
}

// cliWait is how long a CLI command waits for a busy store: people can
// wait a moment, hooks cannot.
const cliWait = 3 * time.Second

// openRead opens the store read-only; a project with no store yet yields
// (nil, nil) so callers can report an empty history.
func openRead(p *project.Project) (*store.Store, error) {
	s, err := store.Open(p.Path("intermem.db"), store.Options{ReadOnly: true, Timeout: cliWait})
	switch {
	case errors.Is(err, store.ErrNotExist):
		return nil, nil
	case errors.Is(err, store.ErrLocked):
		return nil, cli.WithHint(err, "another intermem command is running; try again in a moment")
	case errors.Is(err, store.ErrCorrupt):
		return nil, cli.WithHint(err, "the next hook or write command moves it aside and rebuilds it")
	case err != nil:
		return nil, err
	}
	return s, nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
