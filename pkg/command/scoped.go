package command

import (
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/continuity"
	"github.com/intermem/intermem/pkg/project"
	"github.com/intermem/intermem/pkg/retrieve"
	sourcecont "github.com/intermem/intermem/pkg/source/continuity"
	"github.com/intermem/intermem/pkg/store"
)

// writeScoped stores a memory of scope phase or session in the project's
// store, or of scope user in the per-user store (package continuity,
// scoped.go). in is checked, redacted and screened already (Write).
func writeScoped(env *cli.Env, p *project.Project, in WriteInput, secrets []string, prog string) (*WriteResult, error) {
	if in.Scope == store.ScopeSession && in.SessionID == "" {
		in.SessionID = env.Get("CLAUDE_CODE_SESSION_ID")
	}
	m := store.ScopedMemory{Type: in.Type, Title: in.Title, Content: in.Content, Tags: in.Tags, Files: in.Files,
		Source: in.Source, AgentID: in.AgentID, SessionID: in.SessionID, ToolUseID: in.ToolUseID, Scope: in.Scope}
	var created bool
	var err error
	if in.Scope == store.ScopeUser {
		m, created, err = writeUser(env, p, m)
	} else {
		var w *writer
		if w, err = openWriter(env, p, prog); err != nil {
			return nil, err
		}
		defer w.Close()
		err = updateContinuity(env, w, func(tx *bolt.Tx) error {
			var err error
			m, created, err = continuity.AddMemory(tx, m, w.now)
			return err
		})
	}
	switch {
	case errors.Is(err, continuity.ErrNoHeadPhase):
		return nil, cli.WithHint(err, "start one with intermem phase start N, or write it with --scope project")
	case errors.Is(err, continuity.ErrNoSession):
		return nil, &cli.Error{Err: err, Code: 2, Hint: "say which with --session ID (inside Claude Code, CLAUDE_CODE_SESSION_ID names it)"}
	case err != nil:
		return nil, err
	}
	if secrets == nil {
		secrets = []string{}
	}
	res := &WriteResult{ID: m.ID, CreatedAt: m.Created, Source: retrieve.ScopedSource, Scope: m.Scope, Phase: m.Phase,
		Duplicate: !created, Redacted: secrets, Provenance: WriteProvenance{Source: m.Source, AgentID: m.AgentID, SessionID: m.SessionID, ToolUseID: m.ToolUseID}}
	if m.Scope == store.ScopePhase {
		res.Source = sourcecont.Name
	}
	return res, nil
}

// writeUser stores m in the per-user store and registers the project.
func writeUser(env *cli.Env, p *project.Project, m store.ScopedMemory) (store.ScopedMemory, bool, error) {
	now, err := env.Now()
	if err != nil {
		return m, false, cli.WithHint(err, "set INTERMEM_NOW to an RFC 3339 time such as 2026-11-25T09:00:00Z, or unset it")
	}
	us, err := continuity.OpenUser(env, true, cliWait)
	if err != nil {
		return m, false, cli.WithHint(err, "memories of scope project, phase and session work without it; check $XDG_STATE_HOME/intermem (else ~/.local/state/intermem)")
	}
	defer us.Close()
	var created bool
	err = us.Update(func(tx *bolt.Tx) error {
		var err error
		if m, created, err = continuity.AddMemory(tx, m, now); err != nil {
			return err
		}
		return continuity.Register(tx, p.Root, now)
	})
	return m, created, err
}

// scopeWords names a scope for people: "phase (phase 2)", "user".
func scopeWords(scope string, phase *int) string {
	if scope == store.ScopePhase && phase != nil {
		return fmt.Sprintf("phase, of phase %d", *phase)
	}
	switch scope {
	case store.ScopeSession:
		return "session: kept until the session ends"
	case store.ScopeUser:
		return "user: every project of yours"
	}
	return scope
}
