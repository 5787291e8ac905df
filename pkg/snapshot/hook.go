package snapshot

import (
	"context"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/continuity"
	"github.com/intermem/intermem/pkg/hookio"
	"github.com/intermem/intermem/pkg/redact"
	"github.com/intermem/intermem/pkg/store"
)

// Lock waits: short, because a hook must never hold up a session; a busy
// store costs a spool file, not latency.
const (
	readWait  = 50 * time.Millisecond
	writeWait = 300 * time.Millisecond
)

// HookOptions are the hookio options for intermem-snapshot.
var HookOptions = hookio.Options{
	Name:    "intermem-snapshot",
	Timeout: 4 * time.Second,
	Redact:  redact.String,
	// Stop and SessionEnd output is never delivered: MayPrint is empty.
	Usage: `Usage: intermem-snapshot < payload.json

The Stop and SessionEnd hook. Claude Code runs it after every turn and at
the end of a session with the hook payload (one JSON object) on stdin; it
records which auto-memory entries exist in that session, so an entry
counts as stable after enough distinct sessions. It prints nothing and
always exits 0. Failures go to the project's .intermem/log.

To see what it has recorded, run: intermem status
`,
}

// Main is the whole of cmd/intermem-snapshot.
func Main(env *cli.Env, args []string) int {
	return hookio.Run(env, args, HookOptions, continuity.WithCheckpoint(Hook))
}

// Hook records the current memory entries for the payload's session.
func Hook(ctx context.Context, h *hookio.Hook) ([]byte, error) {
	p := h.Project
	ending := h.Input.Event == "SessionEnd"
	fp, err := Fingerprint(p.MemoryDir)
	if err != nil {
		return nil, err
	}
	if unchanged(p.Path("intermem.db"), h.Input.SessionID, fp, ending) && !Pending(p.StateDir) {
		return nil, nil
	}
	if err := p.EnsureStateDir(); err != nil {
		return nil, err
	}
	// automem.Parse redacted every field already: previews need no second pass.
	obs, err := Observe(p.MemoryDir, h.Input.SessionID, h.Input.Event, h.Now, nil)
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	s, err := store.Open(p.Path("intermem.db"), store.Options{Timeout: writeWait, Logf: h.Logf, Now: h.Now})
	if err != nil {
		obs.FillPreviews()
		if errors.Is(err, store.ErrLocked) {
			if serr := Spool(p.StateDir, obs); serr != nil {
				return nil, fmt.Errorf("store busy and spool failed: %w", serr)
			}
			return nil, nil
		}
		// Anything else (permissions, a newer schema): keep the
		// observation rather than lose it, and say why in the log.
		if serr := Spool(p.StateDir, obs); serr != nil {
			return nil, fmt.Errorf("%v; spool failed: %w", err, serr)
		}
		return nil, fmt.Errorf("store unavailable, observation spooled: %w", err)
	}
	defer s.Close()
	if _, err := Ingest(s, p.StateDir, h.Logf); err != nil {
		h.Logf("%v", err)
	}
	return nil, s.Update(func(tx *bolt.Tx) error { return Record(tx, obs) })
}

// unchanged reports whether the session's last observation had this
// fingerprint (and, for SessionEnd, was already closed), using a read-only
// open. Any problem means "changed": the writer path will sort it out.
func unchanged(dbPath, sessionID, fp string, ending bool) bool {
	s, err := store.Open(dbPath, store.Options{ReadOnly: true, Timeout: readWait})
	if err != nil {
		return false
	}
	defer s.Close()
	var sess store.Session
	var ok bool
	_ = s.View(func(tx *bolt.Tx) error {
		ok, _ = store.Get(tx, store.BucketSessions, sessionID, &sess)
		return nil
	})
	return ok && sess.Fingerprint == fp && (!ending || sess.Ended)
}
