package mcpserver

import (
	"context"
	"errors"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/command"
	"github.com/intermem/intermem/pkg/continuity"
	"github.com/intermem/intermem/pkg/journal"
	"github.com/intermem/intermem/pkg/redact"
	sourcecont "github.com/intermem/intermem/pkg/source/continuity"
	"github.com/intermem/intermem/pkg/source/written"
	"github.com/intermem/intermem/pkg/store"
)

// ErrMeta refuses memory_write in meta mode: a meta session (debugging
// intermem, a quick question) is not the project's work, so the model
// writes nothing for it, as the hooks record nothing. The read tools go on
// serving; a person who wants to keep something runs `intermem write`.
var ErrMeta = errors.New("this session is in meta mode (INTERMEM_MODE=meta, or \"mode\": \"meta\" in .intermem/config.json): intermem records nothing for it, so memory_write is off; the read tools still work")

// DefaultWriteSource names the writer of a memory_write call that names
// none: the model, through this server.
const DefaultWriteSource = "mcp"

// Write stores a memory through command.Write, the code `intermem write`
// runs: redacted, screened (an injection is refused), deduplicated
// against the catalog, journaled, and kept in the `written` source, where
// the read tools find it. It takes intermem's writer lock and store for
// this call only, waiting for a hook or a command that holds them as the
// command line does, and releases both before it returns. The session is
// Claude Code's CLAUDE_CODE_SESSION_ID when the server was started with it.
func (b *Catalog) Write(_ context.Context, req WriteRequest) (*WriteResult, error) {
	if continuity.Meta(b.env, b.p.StateDir) {
		return nil, ErrMeta
	}
	if req.Type == "checkpoint" {
		return b.checkpoint(req)
	}
	in := command.WriteInput{Type: req.Type, Title: req.Title, Content: req.Content, Tags: req.Tags, Files: req.Files,
		Source: req.Source, SessionID: b.env.Get("CLAUDE_CODE_SESSION_ID"), Scope: req.Scope, ToolUseID: req.ToolUseID}
	if in.Source == "" {
		in.Source = DefaultWriteSource
	}
	var ce *cli.Error
	r, err := command.Write(b.env, b.p, in, "intermem-mcp")
	switch {
	case errors.Is(err, journal.ErrBusy), errors.Is(err, store.ErrLocked):
		return nil, also{err, ErrBusy}
	case errors.As(err, &ce) && errors.Is(err, written.ErrInvalid):
		return nil, ce.Err // the command line's hint names --help
	case err != nil:
		return nil, err
	}
	return &WriteResult{ID: r.ID, CreatedAt: r.CreatedAt, Source: r.Source, Duplicate: r.Duplicate, Redacted: r.Redacted,
		Writer: r.Provenance.Source, AgentID: r.Provenance.AgentID, SessionID: r.Provenance.SessionID, Scope: r.Scope, ToolUseID: r.Provenance.ToolUseID}, nil
}

// checkpoint saves memory_write(type=checkpoint) through
// command.SaveCheckpoint, the code `intermem checkpoint` runs: the title
// and content are its summary, of scope project (the user chose "save";
// the tool's description says so), in the current phase.
func (b *Catalog) checkpoint(req WriteRequest) (*WriteResult, error) {
	summary := req.Title + ": " + req.Content
	var kinds []string
	for _, f := range redact.Find(summary) {
		kinds = append(kinds, f.Kind)
	}
	session := b.env.Get("CLAUDE_CODE_SESSION_ID")
	cp, err := command.SaveCheckpoint(b.env, b.p, continuity.Manual{Summary: summary, Session: session, Scope: store.ScopeProject}, "intermem-mcp")
	switch {
	case errors.Is(err, journal.ErrBusy), errors.Is(err, store.ErrLocked):
		return nil, also{err, ErrBusy}
	case err != nil:
		return nil, err
	}
	writer := req.Source
	if writer == "" {
		writer = DefaultWriteSource
	}
	return &WriteResult{ID: cp.ID, CreatedAt: cp.Time, Source: sourcecont.Name, Redacted: kinds, Writer: writer, SessionID: session}, nil
}
