package snapshot

import (
	"context"
	"errors"
	"fmt"

	"github.com/intermem/intermem/pkg/config"
	"github.com/intermem/intermem/pkg/hookio"
	"github.com/intermem/intermem/pkg/store"
)

// Auto-memory switched off
//
// With "sources": {"auto-memory": false} in .intermem/config.json the
// memory is not catalogued, searched or served (package catalog), and the
// Stop, SubagentStop and SessionEnd hooks leave it alone: memoryOff runs
// in Hook's place, so no turn lists, reads or parses a memory file,
// records a sighting or a session, ingests the spool or writes the quiet
// copy (the hook front decides the same without handing over, package
// hookfront). What still happens: the turn counted and the session's
// checkpoints (package continuity wraps either body; nothing of it reads
// the store's sessions), and at SessionEnd the other sources brought up to
// date in the catalog and a new base of the search index (endSession, over
// no memory file). What was recorded while it was on stays in the store,
// unserved: the catalog gives no entry of a switched-off source, and
// status counts none of its sessions. Switched back on, the next turn is
// an ordinary one: the session's record is as its last pass left it, so
// the files changed meanwhile differ from it and are read, and the quiet
// copy, bound to config.json's stat as well as the store's
// (quiet.StoreStat), is not used by that turn. An unusable config.json
// switches nothing off (config.MemoryOff), as at a session start, and
// every turn that reads it says so in the log, first (the hook front
// hands such a turn over: it cannot log what the full hook would).

// memorySwitch runs on unless the project's config.json switches
// auto-memory off, and off then. An unusable config.json is one log
// line, and on runs.
func memorySwitch(on, off hookio.Body) hookio.Body {
	return func(ctx context.Context, h *hookio.Hook) ([]byte, error) {
		c, err := config.Read(h.Project.StateDir)
		if err != nil {
			logUnusable(h, err)
			return on(ctx, h)
		}
		if !c.On(config.AutoMemory) {
			return off(ctx, h)
		}
		return on(ctx, h)
	}
}

// logUnusable logs config.json's problem err: what it is, and that it is
// ignored.
func logUnusable(h *hookio.Hook, err error) {
	h.Logf("%s: %v; it is ignored, no source switched off, until it is fixed or removed (intermem sources says what is wrong)", h.Input.Event, err)
}

// memoryOff is Hook with auto-memory switched off: a session end's work
// for the other sources, nothing else. A busy store leaves it to the next
// session end or command, as a busy store does with auto-memory on.
func memoryOff(ctx context.Context, h *hookio.Hook) ([]byte, error) {
	if h.Input.Event != "SessionEnd" || ctx.Err() != nil {
		return nil, nil
	}
	p := h.Project
	if err := p.EnsureStateDir(); err != nil {
		return nil, err
	}
	s, err := store.Open(p.Path("intermem.db"), store.Options{Timeout: writeWait, Logf: h.Logf, Now: h.Now, Yield: true})
	if errors.Is(err, store.ErrLocked) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store unavailable, catalog not refreshed: %w", err)
	}
	defer s.Close()
	return nil, endSession(ctx, h, s, &Listing{Dir: p.MemoryDir})
}
