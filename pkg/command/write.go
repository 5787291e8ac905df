package command

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/catalog"
	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/continuity"
	"github.com/intermem/intermem/pkg/journal"
	"github.com/intermem/intermem/pkg/match"
	"github.com/intermem/intermem/pkg/ops"
	"github.com/intermem/intermem/pkg/project"
	"github.com/intermem/intermem/pkg/redact"
	"github.com/intermem/intermem/pkg/screen"
	"github.com/intermem/intermem/pkg/source/written"
)

const writeUsage = `Usage: intermem write --type solution|learning|insight|decision|style --title TITLE
                      [--content TEXT | --content-file FILE | (stdin)] [--tag TAG]...
                      [--file PATH]... [--source NAME] [--agent ID] [--session ID]
                      [--scope project|phase|session|user] [--json] [--project DIR]

Stores one memory in the project, for tools and scripts that would
otherwise keep their own: a compound hook, interfluence, a script. The
memory is kept in .intermem/written.jsonl (source "written") and takes
part everywhere the other sources do: search, get, provenance, validate,
SessionStart, and the plan, which offers it (no sessions to wait for) to
promote into CLAUDE.md or AGENTS.md like an auto-memory entry; promoted,
it leaves the written set and lives in that document. sweep decays it like
a promoted fact: archived when what it cites stops holding, restored when
that holds again (intermem archived, intermem restore ID).

Before it is stored, a memory is
  - redacted: a secret (a token, a key, a password) is replaced by
    [REDACTED:<kind>], and the output says so;
  - screened: text that reads like a prompt injection (an instruction to
    ignore earlier ones, hidden characters, a fetch-and-run command) is
    refused, and the output says why; nothing is stored;
  - deduplicated: a memory whose content is already in the catalog, in any
    source, is not stored again; the existing id is returned;
  - journaled: the write is an operation of intermem's journal, so a crash
    leaves the memory stored whole or not at all.

The content is --content, else the file --content-file, else standard
input. --file names a file the memory is about (relative to the project),
checked by validate like a citation. --source names the tool writing (by
default "cli"); --agent and --session record who wrote it, for provenance.

--scope says how long the memory holds (it is redacted and screened the
same way in every scope):
  project  (the default) the project's, long-term, as above;
  phase    the current phase's (intermem head): held while that phase is on
           the agreed timeline; a backtrack below it invalidates or archives
           it like the phase's decisions; kept in intermem's store and read
           through the continuity source;
  session  this session's alone (--session, else CLAUDE_CODE_SESSION_ID):
           searchable until the session ends, then deleted, never long-term;
  user     yours in every project: kept in the per-user store outside every
           project ($XDG_STATE_HOME/intermem/user.db, else
           ~/.local/state/intermem/user.db).
intermem search --scope S finds them.

--json prints {"id","created_at","source","scope","provenance":{"source",
"agent_id","session_id"},"duplicate","redacted"}: source is the catalog
source that holds the memory ("written", or the source of the entry a
duplicate matched; "continuity" for scope phase, "scoped" for session and
user).
`

// WriteInput is one memory to store.
type WriteInput struct {
	Type, Title, Content string
	Tags, Files          []string
	// Source names the tool that writes; AgentID and SessionID who, when
	// known; ToolUseID the model's tool call that wrote it (memory_write).
	Source, AgentID, SessionID, ToolUseID string
	// Scope is project ("" too), phase, session or user (scoped.go).
	Scope string
}

// WriteResult is what storing a memory did.
type WriteResult struct {
	ID        string    `json:"id"`
	CreatedAt time.Time `json:"created_at"`
	// Source is the catalog source holding the memory: written, or the
	// source of the entry a duplicate matched.
	Source string `json:"source"`
	// Scope is the memory's scope; Phase the phase of scope phase.
	Scope      string          `json:"scope"`
	Phase      *int            `json:"phase,omitempty"`
	Provenance WriteProvenance `json:"provenance"`
	// Duplicate says the catalog already held the memory: nothing was
	// stored, and ID is the existing entry's.
	Duplicate bool `json:"duplicate"`
	// Redacted lists the kinds of the secrets replaced before storing.
	Redacted []string `json:"redacted"`
	// Op is the journal operation that stored it.
	Op string `json:"op,omitempty"`
}

// WriteProvenance is who wrote a memory.
type WriteProvenance struct {
	Source    string `json:"source"`
	AgentID   string `json:"agent_id"`
	SessionID string `json:"session_id"`
	ToolUseID string `json:"tool_use_id,omitempty"`
}

// ErrInjection is returned for a memory that screening flags as a possible
// prompt injection: it is never stored.
var ErrInjection = errors.New("refused: the memory reads like a prompt injection")

// DefaultWriteSource is the writer's name when a command-line write names
// none.
const DefaultWriteSource = "cli"

func runWrite(ctx context.Context, env *cli.Env, args []string) error {
	var c common
	fset := cli.FlagSet("intermem write", writeUsage, env.Stdout)
	c.register(fset, true)
	var tags, files multiFlag
	typ := fset.String("type", "", "`solution|learning|insight|decision|style`: the kind of memory")
	title := fset.String("title", "", "a one-line `title`")
	content := fset.String("content", "", "the memory's `text`")
	contentFile := fset.String("content-file", "", "read the text from `FILE`")
	fset.Var(&tags, "tag", "a `tag` (repeatable)")
	fset.Var(&files, "file", "a `path` the memory is about, relative to the project (repeatable)")
	src := fset.String("source", DefaultWriteSource, "the `name` of the tool writing")
	agent := fset.String("agent", "", "the `id` of the agent writing")
	session := fset.String("session", "", "the `id` of the session writing")
	scope := fset.String("scope", "project", "`project|phase|session|user`: how long it holds")
	rest, err := cli.Parse(fset, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return cli.Usagef("unexpected argument %q: the content goes in --content, --content-file or standard input", rest[0])
	}
	set := map[string]bool{}
	fset.Visit(func(f *flag.Flag) { set[f.Name] = true })
	in := WriteInput{Type: *typ, Title: *title, Tags: tags, Files: files, Source: *src, AgentID: *agent, SessionID: *session, Scope: *scope}
	switch {
	case set["content"] && set["content-file"]:
		return cli.Usagef("give the content once: --content or --content-file")
	case set["content"]:
		in.Content = *content
	case set["content-file"]:
		if in.Content, err = readContent(*contentFile); err != nil {
			return err
		}
	default:
		if in.Content, err = readLimited(env.Stdin, "standard input"); err != nil {
			return err
		}
	}
	if err := checkWriteInput(&in); err != nil {
		return err
	}
	p, err := c.resolve(env)
	if err != nil {
		return err
	}
	res, err := Write(env, p, in, "intermem write")
	if err != nil {
		return err
	}
	if c.json {
		return writeJSON(env.Stdout, res)
	}
	printWrite(env.Stdout, res)
	return nil
}

func printWrite(w io.Writer, r *WriteResult) {
	if len(r.Redacted) > 0 {
		fmt.Fprintf(w, "redacted %d %s before storing (%s)\n", len(r.Redacted), cli.Plural(len(r.Redacted), "secret", "secrets"), strings.Join(dedupSorted(r.Redacted), ", "))
	}
	if r.Duplicate {
		fmt.Fprintf(w, "already stored: %s (source %s, since %s); nothing written\n", r.ID, r.Source, r.CreatedAt.UTC().Format(time.RFC3339))
		return
	}
	if r.Scope != "" && r.Scope != "project" {
		fmt.Fprintf(w, "stored %s (scope %s, written by %s)\n", r.ID, scopeWords(r.Scope, r.Phase), r.Provenance.Source)
		return
	}
	fmt.Fprintf(w, "stored %s (source %s, written by %s)\n", r.ID, r.Source, r.Provenance.Source)
}

func dedupSorted(s []string) []string {
	out := slices.Clone(s)
	sort.Strings(out)
	return slices.Compact(out)
}

// readContent reads the content file named on the command line.
func readContent(name string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", cli.WithHint(fmt.Errorf("content file: %w", err), "name a readable file with --content-file")
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && !fi.Mode().IsRegular() {
		return "", cli.WithHint(fmt.Errorf("content file %s is not a regular file", name), "name a regular file with --content-file, or pipe the text on standard input")
	}
	return readLimited(f, name)
}

func readLimited(r io.Reader, what string) (string, error) {
	if r == nil {
		return "", nil
	}
	b, err := io.ReadAll(io.LimitReader(r, written.MaxContent+1))
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", what, err)
	}
	if len(b) > written.MaxContent {
		return "", cli.Errorf("split the memory, or keep the long text in a document and write a memory that points to it",
			"the content is over %d KiB", written.MaxContent>>10)
	}
	return string(b), nil
}

// checkWriteInput trims in and checks it against the log's rules, as a
// usage error naming what to fix.
func checkWriteInput(in *WriteInput) error {
	in.Type = strings.ToLower(strings.TrimSpace(in.Type))
	in.Title = strings.TrimSpace(in.Title)
	in.Content = strings.TrimSpace(strings.ReplaceAll(in.Content, "\r\n", "\n"))
	in.Source = strings.TrimSpace(in.Source)
	if in.Source == "" {
		in.Source = DefaultWriteSource
	}
	in.AgentID, in.SessionID = strings.TrimSpace(in.AgentID), strings.TrimSpace(in.SessionID)
	if in.Scope = strings.ToLower(strings.TrimSpace(in.Scope)); in.Scope == "" {
		in.Scope = "project"
	}
	if !continuity.ValidScope(in.Scope) {
		return cli.Usagef("--scope %q: the scopes are %s", in.Scope, strings.Join(continuity.Scopes, ", "))
	}
	in.Tags, in.Files = trimList(in.Tags), trimList(in.Files)
	for i, f := range in.Files {
		in.Files[i] = filepath.ToSlash(f)
	}
	r := written.Record{Type: in.Type, Title: in.Title, Content: in.Content, Tags: in.Tags, Files: in.Files,
		Source: in.Source, AgentID: in.AgentID, SessionID: in.SessionID}
	if err := written.Check(&r); err != nil {
		return &cli.Error{Err: err, Hint: "run intermem write --help for the rules of a memory", Code: 2}
	}
	return nil
}

func trimList(in []string) []string {
	var out []string
	for _, s := range in {
		if s = strings.TrimSpace(s); s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// Write stores the memory in in (already checked by checkWriteInput, or
// checked here) in project p, for `intermem write` and the MCP tool
// memory_write alike: redact, screen, open the project for writing (the
// lock, the spool, recovery), deduplicate against the catalog, and run the
// journaled write operation. prog names the caller in the log.
func Write(env *cli.Env, p *project.Project, in WriteInput, prog string) (*WriteResult, error) {
	if err := checkWriteInput(&in); err != nil {
		return nil, err
	}
	var secrets []string
	red := func(s string) string {
		for _, f := range redact.Find(s) {
			secrets = append(secrets, f.Kind)
		}
		return redact.String(s)
	}
	in.Title, in.Content = red(in.Title), red(in.Content)
	for i := range in.Tags {
		in.Tags[i] = red(in.Tags[i])
	}
	for i := range in.Files {
		in.Files[i] = red(in.Files[i])
	}
	in.Source, in.AgentID, in.SessionID = red(in.Source), red(in.AgentID), red(in.SessionID)
	if err := screenWrite(&in); err != nil {
		return nil, err
	}
	if in.Scope != "project" {
		return writeScoped(env, p, in, secrets, prog)
	}

	w, err := openWriter(env, p, prog)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	now := w.now.UTC().Truncate(time.Second)
	rec := written.Record{Type: in.Type, Title: in.Title, Content: in.Content, Tags: in.Tags, Files: in.Files,
		Source: in.Source, AgentID: in.AgentID, SessionID: in.SessionID, ToolUseID: in.ToolUseID, CreatedAt: now}
	line, err := written.Encode(&rec)
	if err != nil { // redaction made it invalid (a title over the limit)
		return nil, &cli.Error{Err: err, Hint: "shorten it; a secret was replaced by a longer [REDACTED:<kind>] marker", Code: 2}
	}
	res := &WriteResult{ID: rec.ID, CreatedAt: now, Source: written.Name, Scope: "project", Redacted: secrets,
		Provenance: WriteProvenance{Source: rec.Source, AgentID: rec.AgentID, SessionID: rec.SessionID, ToolUseID: rec.ToolUseID}}
	if res.Redacted == nil {
		res.Redacted = []string{}
	}
	if err := w.update(func(tx *bolt.Tx) error {
		dup, ok, err := duplicateOf(env, p, tx, &rec, w.now)
		if ok {
			res.ID, res.Source, res.Duplicate = dup.ID, dup.Source, true
			if t := firstTime(dup.Created, dup.FirstSeen); !t.IsZero() {
				res.CreatedAt = t.UTC()
			}
		}
		return err
	}); err != nil {
		return nil, err
	}
	if res.Duplicate {
		return res, nil
	}
	op, err := ops.Write(filepath.Join(p.StateDir, written.FileName), line)
	if err != nil {
		return nil, err
	}
	var c common
	if err := c.confineOp(p, nil, op, "write"); err != nil {
		return nil, err
	}
	op.ID = journal.NewID(w.now)
	if _, _, err := ops.Simulate(p.Places(), op); err != nil {
		return nil, fmt.Errorf("write: %w", err)
	}
	if err := w.journal.Run(op); err != nil {
		return nil, cli.WithHint(err, "nothing is lost: run intermem-recover to see the operation, then resume or discard it")
	}
	res.Op = op.ID
	registerRoot(env, p.Root, w.now, w.log.Printf)
	return res, nil
}

func firstTime(ts ...time.Time) time.Time {
	for _, t := range ts {
		if !t.IsZero() {
			return t
		}
	}
	return time.Time{}
}

// screenWrite refuses a memory whose text screening flags, naming the
// flags (their kinds and the passages, escaped by the caller's writer).
func screenWrite(in *WriteInput) error {
	var found []string
	check := func(what, s string) {
		for _, f := range screen.Check(s) {
			found = append(found, fmt.Sprintf("%s in the %s (%q)", f.Kind, what, f.Detail))
		}
	}
	check("title", in.Title)
	check("content", in.Content)
	for _, t := range in.Tags {
		check("tags", t)
	}
	for _, f := range in.Files {
		check("files", f)
	}
	if len(found) == 0 {
		return nil
	}
	return cli.WithHint(fmt.Errorf("%w: %s; nothing was stored", ErrInjection, strings.Join(found, "; ")),
		"write the memory as a plain statement about the project: intermem stores nothing that could steer a session")
}

// duplicateOf brings the catalog up to date in tx and returns a live entry
// that already holds the memory: the written memory with its id, else an
// entry of any source whose text is the content, or the title and content,
// once normalized (match.Key).
func duplicateOf(env *cli.Env, p *project.Project, tx *bolt.Tx, rec *written.Record, now time.Time) (dup catalog.Entry, found bool, err error) {
	err = buildCatalog(env, p, tx, now, func(c *catalog.Catalog) error {
		for _, e := range c.GetAll(rec.ID) {
			if e.Source == written.Name && e.Gone.IsZero() {
				dup, found = e, true
				return nil
			}
		}
		key, both := match.Key(rec.Content), match.Key(rec.Title+"\n"+rec.Content)
		for _, e := range c.Entries() {
			if k := match.Key(e.Text); k == key || k == both {
				dup, found = e, true
				return nil
			}
		}
		return nil
	})
	return dup, found, err
}
