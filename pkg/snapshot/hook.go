package snapshot

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/config"
	"github.com/intermem/intermem/pkg/continuity"
	"github.com/intermem/intermem/pkg/hookio"
	"github.com/intermem/intermem/pkg/project"
	"github.com/intermem/intermem/pkg/quiet"
	"github.com/intermem/intermem/pkg/redact"
	"github.com/intermem/intermem/pkg/source"
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

// Main is the whole of cmd/intermem-snapshot. With auto-memory switched
// off, memoryOff runs in Hook's place (off.go).
func Main(env *cli.Env, args []string) int {
	return hookio.Run(env, args, HookOptions, memorySwitch(keepQuiet(continuity.WithCheckpoint(Hook)), continuity.WithCheckpoint(memoryOff)))
}

// keepQuiet runs body (the turn, then its checkpoint), then brings the
// quiet copy up to date for the session when the store was written since
// the copy was (refreshQuiet): a checkpoint turn writes the store after
// its quiet check, and a turn that found a change writes it too, so that
// otherwise the next turn would find the copy bound to the store as it
// was and take the full hook as well. Meta mode writes nothing.
func keepQuiet(body hookio.Body) hookio.Body {
	return func(ctx context.Context, h *hookio.Hook) ([]byte, error) {
		out, err := body(ctx, h)
		if err == nil && ctx.Err() == nil && !continuity.Meta(h.Env, h.Project.StateDir) {
			refreshQuiet(h.Project.StateDir, h.Project.MemoryDir, h.Project.Path("intermem.db"), h.Input.SessionID)
		}
		return out, err
	}
}

// refreshQuiet writes session's record in the quiet copy anew, read from
// the store at its binding, unless the copy already holds it for that
// binding.
func refreshQuiet(stateDir, memDir, dbPath, session string) {
	stat, txid := quiet.StoreStat(dbPath)
	if stat == "" {
		return
	}
	if _, ok := quiet.Read(filepath.Join(stateDir, quiet.Name), stat, session); ok {
		return
	}
	if sess, subs, known, read := lastPass(dbPath, session); known && read == txid {
		saveQuiet(stateDir, memDir, stat, session, sess, subs)
	}
}

// StopBudget bounds what one Stop, SubagentStop or SessionEnd spends
// bringing files up to date after the memory changed (Sync, after the
// listing): no file is started past it (but a few, see minWork), and files
// not reached are read on the next turn. The hook's deadline is far beyond
// it; this is what keeps a turn's added time small on a huge memory.
const StopBudget = 800 * time.Millisecond

// Hook brings the payload's session's sightings up to date with the
// memory files.
func Hook(ctx context.Context, h *hookio.Hook) ([]byte, error) {
	start := time.Now()
	p := h.Project
	ending := h.Input.Event == "SessionEnd"
	dbPath := p.Path("intermem.db")
	// Nothing changed since the session's last complete pass: told from
	// the copy of what the store holds of it while the store is unchanged
	// (quiet.go), else from the store.
	//
	// A session's end goes on to the catalog all the same (below): a
	// session resumed and ended again has its end recorded and its memory
	// unchanged, but the other sources may have changed meanwhile, or a
	// refresh cut short by its budget left work for "the next session end".
	early := quiet.Check(p.StateDir, dbPath, p.MemoryDir, h.Input.SessionID, ending)
	if early.Quiet && !ending {
		return nil, nil
	}
	sess, subs, known, read := lastPass(dbPath, h.Input.SessionID)
	l := early.Listing
	if l == nil || sess.Sweep != nil || !slices.Equal(subs, early.Copy.Subs) {
		// Not the listing the copy's check took (a whole directory's
		// listing is taken again only when what it depends on differs).
		var err error
		if l, err = Turn(p.MemoryDir, subs, sess.Sweep); err != nil {
			return nil, err
		}
	}
	nothing := known && quiet.Nothing(l, sess.Fingerprint, sess.Ended, ending, p.StateDir)
	if nothing {
		if early.Stat != "" && read == early.Txid {
			saveQuiet(p.StateDir, p.MemoryDir, early.Stat, h.Input.SessionID, sess, subs)
		}
		if !ending {
			return nil, nil
		}
	}
	if err := p.EnsureStateDir(); err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	s, err := store.Open(dbPath, store.Options{Timeout: writeWait, Logf: h.Logf, Now: h.Now, Yield: true})
	if err != nil {
		// Busy or unusable: keep what can be kept without the store, the
		// listing. The next writer marks the session's sightings of every
		// file still as it was then.
		obs := Observation{SessionID: h.Input.SessionID, Event: h.Input.Event, At: h.Now.UTC(), Fingerprint: l.FP,
			Ending: ending, Agent: h.Input.AgentID, AgentType: h.Input.AgentType, Listing: Spoolable(l)}
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
	if !nothing {
		if err := syncMemory(ctx, h, s, l, start); err != nil {
			return nil, err
		}
	}
	if ending && ctx.Err() == nil {
		if err := endSession(ctx, h, s, l); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// syncMemory brings the session's sightings up to date with listing l:
// the spool ingested first, then the memory files synced.
func syncMemory(ctx context.Context, h *hookio.Hook, s *store.Store, l *Listing, start time.Time) error {
	p := h.Project
	if _, err := Ingest(s, p.StateDir, p.MemoryDir, h.Logf); err != nil {
		h.Logf("%v", err)
	}
	pass := Pass{Session: h.Input.SessionID, Event: h.Input.Event, At: h.Now, Agent: h.Input.AgentID, AgentType: h.Input.AgentType,
		Deadline: time.Now().Add(passBudget(ctx)), Logf: h.Logf}
	// In transactions of a bounded batch each: a pass over every memory
	// file changed (a first install, a pull, a directory replaced) holds
	// no more than a batch's parses at a time.
	pr, err := SyncStore(s, l, pass, HookBatch)
	if err != nil {
		return err
	}
	if pr.Stopped {
		h.Logf("%s: %s of %s memory files up to date after %v; the rest on the next turns",
			h.Input.Event, cli.Thousands(pr.Done), cli.Thousands(pr.Files), time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// endSession is a session end's work after the memory pass, for the next
// session start to read: the memory files' parses of another version
// stored again (rerecord.go), the other sources brought up to date in the
// catalog, and a new base of the search index when a delta could not
// bring it up to date — each as far as CatalogBudget (and the hook's
// deadline, for the base) allows, the rest at the next session end.
func endSession(ctx context.Context, h *hookio.Hook, s *store.Store, l *Listing) error {
	p := h.Project
	deadline := time.Now().Add(CatalogBudget)
	if n, all, err := Rerecord(s, l, h.Now, deadline, h.Logf); err != nil {
		h.Logf("SessionEnd: re-recording memory files: %v", err)
	} else if !all {
		h.Logf("SessionEnd: %s memory %s re-recorded (stored parses of another version or damaged); the rest at the next session end",
			cli.Thousands(n), cli.Plural(n, "file", "files"))
	}
	cfg, err := config.Read(p.StateDir)
	if err != nil {
		// Unusable: memorySwitch logged it. The catalog is not refreshed
		// under switches no command accepts (each refuses to run until
		// the file is fixed); the next session end after that does it.
		return nil
	}
	env := source.Env{Root: p.Root, MemoryDir: p.MemoryDir, Home: h.Env.Get("HOME"), ConfigDir: project.ConfigDir(h.Env)}
	if _, err := RefreshCatalog(s, Refresh{Env: env, Switches: cfg.Sources, Now: h.Now,
		Deadline: deadline, Logf: h.Logf}); err != nil {
		return err
	}
	if _, err := SettleBase(ctx, s); err != nil {
		h.Logf("SessionEnd: search index: %v", err)
	}
	return nil
}

// passBudget is StopBudget, or less when the hook's own deadline is near
// (a slow listing of a huge memory on a loaded machine): half of what is
// left, so that what the pass did is committed before the hook gives up.
func passBudget(ctx context.Context) time.Duration {
	b := StopBudget
	if dl, ok := ctx.Deadline(); ok {
		b = min(b, time.Until(dl)/2)
	}
	return b
}

// lastPass reads the session's record and the sub-folder files pointers
// named, with a read-only open that waits briefly, and the id of the
// transaction it read them in (the store's last committed one). known is
// false when either cannot be read: the writer path sorts it out.
func lastPass(dbPath, sessionID string) (sess store.Session, subs []string, known bool, txid uint64) {
	s, err := store.Open(dbPath, store.Options{ReadOnly: true, Timeout: readWait, Yield: true})
	if err != nil {
		return sess, nil, false, 0
	}
	defer s.Close()
	_ = s.View(func(tx *bolt.Tx) error {
		sess, known, _ = store.GetSession(tx, sessionID)
		subs = Subs(tx)
		txid = uint64(tx.ID())
		return nil
	})
	return sess, subs, known, txid
}
