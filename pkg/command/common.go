package command

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/confine"
	"github.com/intermem/intermem/pkg/journal"
	"github.com/intermem/intermem/pkg/project"
	"github.com/intermem/intermem/pkg/store"
	"github.com/intermem/intermem/pkg/targets"
)

// common holds the flags every subcommand shares.
type common struct {
	project      string
	json         bool
	allowOutside bool
}

func (c *common) register(fs *flag.FlagSet, withJSON bool) {
	fs.StringVar(&c.project, "project", "", "project `dir`ectory (default: the current directory)")
	if withJSON {
		fs.BoolVar(&c.json, "json", false, "print one JSON object instead of text")
	}
}

// flagsOnly parses the flags of a command that takes --project and
// --json alone (words after them are ignored, as these commands always
// have) and resolves its project.
func flagsOnly(env *cli.Env, name, usage string, args []string) (*common, *project.Project, error) {
	c := &common{}
	fs := cli.FlagSet(name, usage, env.Stdout)
	c.register(fs, true)
	if _, err := cli.Parse(fs, args); err != nil {
		return nil, nil, err
	}
	p, err := c.resolve(env)
	if err != nil {
		return nil, nil, err
	}
	return c, p, nil
}

// parseNone parses args with fs for a command that takes flags alone
// (a word after them is a usage error) and resolves the project.
func (c *common) parseNone(env *cli.Env, fs *flag.FlagSet, args []string) (*project.Project, error) {
	pos, err := cli.Parse(fs, args)
	if err != nil {
		return nil, err
	}
	if len(pos) > 0 {
		return nil, cli.Usagef("unexpected %q", pos[0])
	}
	return c.resolve(env)
}

// registerAllowOutside adds --allow-outside, for the commands that write
// documents.
func (c *common) registerAllowOutside(fs *flag.FlagSet) {
	fs.BoolVar(&c.allowOutside, "allow-outside", false, "write through a CLAUDE.md, AGENTS.md or docs/intermem link whose real path is outside this project")
}

// resolve finds the project for --project or the working directory, and
// checks its state directory: every command refuses a project whose
// .intermem holds anything but real files and directories of the user's
// (a planted link), before reading or writing there.
func (c *common) resolve(env *cli.Env) (*project.Project, error) {
	dir := c.project
	if dir == "" {
		dir = env.Dir
	}
	p, err := project.Resolve(env, dir)
	if err != nil {
		switch {
		case errors.Is(err, project.ErrNoDir):
			return nil, cli.WithHint(err, "pass an existing directory with --project")
		case errors.Is(err, project.ErrNoProject):
			return nil, cli.WithHint(err, "run intermem inside a project (a git repository, or a directory of its own), or pass --project DIR")
		}
		return nil, err
	}
	if err := p.CheckState(); err != nil {
		return nil, stateDirError(p, err)
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
	if errors.Is(err, store.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, storeError(err)
	}
	return s, nil
}

// withStoreHint is err, reported by a command's Main, with storeError's
// hint when it is a store failure that carries no hint yet: a store found
// damaged inside a transaction (status, plan, validate reading it) is
// told the same way as one that cannot be opened.
func withStoreHint(err error) error {
	var ce *cli.Error
	if err == nil || errors.As(err, &ce) && ce.Hint != "" {
		return err
	}
	if errors.Is(err, store.ErrCorrupt) || errors.Is(err, store.ErrLocked) || errors.Is(err, store.ErrNewerSchema) {
		return storeError(err)
	}
	return err
}

// storeError gives a store failure the hint a person needs.
func storeError(err error) error {
	switch {
	case errors.Is(err, store.ErrLocked):
		return cli.WithHint(err, "another intermem command or a hook is using it; try again in a moment")
	case errors.Is(err, store.ErrCorrupt):
		return cli.WithHint(err, "run intermem-recover --resume: it keeps the damaged file as .intermem/intermem.db.corrupt-… and rebuilds the store, its journal carried over (a hook or write command that meets the damage does the same; .intermem/log says when)")
	case errors.Is(err, store.ErrNewerSchema):
		return cli.WithHint(err, "a newer intermem wrote this project's store: upgrade intermem (git pull, then scripts/install.sh)")
	case errors.Is(err, fs.ErrPermission):
		return cli.WithHint(err, "check the ownership and mode of the project's .intermem directory")
	}
	return cli.WithHint(err, "see the project's .intermem/log")
}

// writeJSON is the --json output of every command: exact JSON, with the
// characters a terminal would act on as \u escapes (cli.WriteJSON).
func writeJSON(w io.Writer, v any) error {
	return cli.WriteJSON(w, v)
}

// loadTargets reads the curated documents, with a hint when one is
// unusable (a directory, a FIFO, a symlink loop…).
func loadTargets(p *project.Project) (*targets.Set, error) {
	ts, err := targets.Load(p.Root)
	if err != nil {
		return nil, cli.WithHint(err, "CLAUDE.md, AGENTS.md and docs/intermem/*.md must be regular files (or symlinks to them); fix or move the one named, then run this again")
	}
	return ts, nil
}

// scanMemory scans the auto-memory directory; a missing directory is an
// empty memory (nil, nil), anything else unusable gets a hint.
func scanMemory(p *project.Project) (*automem.Dir, error) {
	d, err := automem.Scan(p.MemoryDir)
	switch {
	case err == nil:
		return d, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	}
	return nil, memoryError(p, err)
}

// memoryError gives an unusable memory directory its hint.
func memoryError(p *project.Project, err error) error {
	return cli.WithHint(fmt.Errorf("read auto-memory: %w", err),
		fmt.Sprintf("Claude Code keeps this project's auto-memory in %s, which must be a readable directory (INTERMEM_MEMORY_DIR chooses another)", p.MemoryDir))
}

// stateDirError gives a failure to create or use .intermem its hint: for
// an entry that is a link or not the user's, what to remove.
func stateDirError(p *project.Project, err error) error {
	var se *confine.StateError
	if errors.As(err, &se) {
		return cli.WithHint(err, se.Hint(p.Root))
	}
	return cli.WithHint(err, fmt.Sprintf("intermem keeps its state in %s, which must be a directory it can create and write; move whatever is there away", p.StateDir))
}

// confineOp checks every file op would write against intermem's places
// (package confine) before anything runs or is simulated, and records the
// user's --allow-outside on the op, where the journal honours it at every
// replay. A document whose name leads out of the project is refused with
// the sentence plan and status print about it ("CLAUDE.md is a dangling
// link to /home/u/.profile, outside this project"), and verb ("apply")
// says who refuses. Step paths may name a document by its name or by its
// real path; both are judged by the name. ts is nil for an operation that
// writes memory files only.
func (c *common) confineOp(p *project.Project, ts *targets.Set, op *journal.Op, verb string) error {
	places := p.Places()
	docs := map[string]*targets.Doc{}
	if ts != nil { // nil: an operation on memory files alone
		for _, d := range append([]*targets.Doc{ts.Claude, ts.Agents, ts.Archive}, ts.Details...) {
			docs[d.Path] = d
			if _, taken := docs[d.Real]; !taken {
				docs[d.Real] = d
			}
		}
	}
	for _, s := range op.Steps {
		path := s.Path
		d := docs[path]
		if d != nil {
			path = d.Path
		}
		_, err := places.Resolve(path, c.allowOutside)
		if err == nil {
			continue
		}
		if d != nil && d.Outside != nil {
			err = refusal{fmt.Sprintf("%s: %s refuses to write there", d.Problem(), verb), confine.ErrOutside}
		} else {
			err = fmt.Errorf("%s refuses: %w", verb, err)
		}
		if errors.Is(err, confine.ErrOutside) {
			name := relTo(p.Root, path)
			if _, aerr := places.Resolve(path, true); aerr == nil {
				return cli.WithHint(err, fmt.Sprintf("pass --allow-outside to write through the link anyway, or make %s a file of this project", name))
			}
			return cli.WithHint(err, fmt.Sprintf("make %s a file of this project, or a link to one outside .intermem and .git", name))
		}
		return stateDirError(p, err)
	}
	op.AllowOutside = c.allowOutside
	return nil
}

// refusal is an error that says everything in its own sentence and still
// matches its sentinel with errors.Is.
type refusal struct {
	msg string
	err error
}

func (r refusal) Error() string { return r.msg }
func (r refusal) Unwrap() error { return r.err }
