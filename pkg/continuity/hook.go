package continuity

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tidwall/gjson"
	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/atomicfile"
	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/config"
	"github.com/intermem/intermem/pkg/hookio"
	"github.com/intermem/intermem/pkg/project"
	"github.com/intermem/intermem/pkg/settings"
	source "github.com/intermem/intermem/pkg/source/continuity"
	"github.com/intermem/intermem/pkg/store"
	"github.com/intermem/intermem/pkg/turns"
)

// IntervalVar names the variable holding the checkpoint interval in turns.
const IntervalVar = settings.IntervalVar

// DefaultInterval is the checkpoint interval when IntervalVar is unset.
const DefaultInterval = settings.DefaultInterval

// ModeVar names the variable that selects meta mode ("meta").
const ModeVar = settings.ModeVar

// TurnsName is the turn-count state file in .intermem (package turns).
const TurnsName = turns.Name

// maxHookCheckpoints bounds the hook checkpoints (auto and final) kept:
// older ones are removed when a new one is recorded.
const maxHookCheckpoints = 200

// storeWait bounds the wait for a busy store: a checkpoint is skipped
// (and tried again at the next turn), never waited for.
const storeWait = 300 * time.Millisecond

// Interval reads IntervalVar (settings.Interval).
func Interval(env *cli.Env) int { return settings.Interval(env.Get) }

// Meta reports whether the session is in meta mode: INTERMEM_MODE=meta,
// or "mode": "meta" in .intermem/config.json (the variable wins when set).
func Meta(env *cli.Env, stateDir string) bool {
	return settings.Meta(env.Get, func() string { return config.Mode(stateDir) })
}

// WithCheckpoint wraps the Stop/SessionEnd hook body: in meta mode
// nothing runs at all; otherwise body runs, then the checkpoint turn
// (Checkpoint), whose failure is one log line.
func WithCheckpoint(body hookio.Body) hookio.Body {
	return func(ctx context.Context, h *hookio.Hook) ([]byte, error) {
		if Meta(h.Env, h.Project.StateDir) {
			return nil, nil
		}
		out, err := body(ctx, h)
		if cerr := Checkpoint(ctx, h); cerr != nil {
			h.Logf("checkpoint: %v", cerr)
		}
		return out, err
	}
}

// Checkpoint counts a Stop as a turn of the session and records a
// checkpoint every Interval turns; at SessionEnd it records the final one
// (for a session that had a turn). A Stop that follows a blocking Stop
// hook (stop_hook_active) continues the same turn and is not counted.
func Checkpoint(ctx context.Context, h *hookio.Hook) error {
	ev := h.Input.Event
	if ev != "Stop" && ev != "SessionEnd" {
		return nil
	}
	interval := Interval(h.Env)
	if interval == 0 {
		if ev == "SessionEnd" {
			return endSession(h)
		}
		return nil
	}
	if ev == "Stop" && h.Input.Bool("stop_hook_active") {
		return nil
	}
	p := h.Project
	// hookio checked the state directory before the body (CheckState):
	// it is made here only when this is the project's first turn.
	if fi, err := os.Lstat(p.StateDir); err != nil || !fi.IsDir() {
		if err := p.EnsureStateDir(); err != nil {
			return err
		}
	}
	path := p.Path(TurnsName)
	tally, _, usable := turns.Read(path)
	t := tally[h.Input.SessionID]
	kind := ""
	switch ev {
	case "Stop":
		var due bool
		if t, due = turns.Stop(t, interval); due {
			kind = store.CheckpointAuto
		}
	case "SessionEnd":
		if t.Turns > 0 && !t.Ended {
			kind = store.CheckpointFinal
		}
	}
	t.Seen = h.Now.Unix()
	if ev == "SessionEnd" && kind == "" {
		// No final checkpoint (no turn, or a second SessionEnd): the
		// session's memories of scope session still go.
		if err := endSession(h); err != nil {
			h.Logf("session end: %v", err)
		}
	}
	if kind != "" {
		if err := record(ctx, h, kind, t.Turns); err != nil {
			// The count stands, Last does not move: the next turn retries.
			_ = writeTurn(p.StateDir, path, tally, usable, h.Input.SessionID, t)
			return err
		}
		t.Last = t.Turns
		if kind == store.CheckpointFinal {
			t.Ended = true
		}
	}
	return writeTurn(p.StateDir, path, tally, usable, h.Input.SessionID, t)
}

// writeTurn records session's turn t in the tally at path: one appended
// line, or, when the file was unusable or has grown past turns.CompactBytes,
// the whole tally rewritten compacted. A cache: a crash may lose the last
// count, which only shifts the next checkpoint by a turn.
func writeTurn(stateDir, path string, tally map[string]turns.Turn, usable bool, session string, t turns.Turn) error {
	if usable {
		return turns.Append(path, session, t)
	}
	tally[session] = t
	return atomicfile.WriteState(stateDir, path, turns.Encode(tally), atomicfile.Options{NoSync: true})
}

// record takes a hook checkpoint of the session at turn n.
func record(ctx context.Context, h *hookio.Hook, kind string, n int) error {
	p := h.Project
	cwd := h.Input.Cwd
	if cwd == "" || !filepath.IsAbs(cwd) {
		cwd = p.Root
	}
	branch, commit := Git(cwd)
	tr := readTranscript(h.Env, gjson.GetBytes(h.Input.Raw, "transcript_path").String())
	msg := gjson.GetBytes(h.Input.Raw, "last_assistant_message").String()
	if msg == "" {
		msg = tr.last
	}
	msg, flags := Clean(strings.Join(strings.Fields(msg), " "), MaxMessage)
	var files []string
	for _, f := range tr.files {
		if rel, err := filepath.Rel(p.Root, f); err == nil && !strings.HasPrefix(rel, "..") {
			f = filepath.ToSlash(rel)
		}
		if c, fl := Clean(f, 300); c != "" && len(fl) == 0 {
			files = append(files, c)
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	c := store.Checkpoint{
		ID: NewCheckpointID(h.Now), Kind: kind, Session: h.Input.SessionID, Time: h.Now.UTC(), Turn: n,
		Branch: branch, Commit: commit, Files: files, Message: msg, Scope: store.ScopeSession,
		Status: store.StatusValid, Flagged: len(flags) > 0,
	}
	s, err := store.Open(p.Path("intermem.db"), store.Options{Timeout: storeWait, Logf: h.Logf, Now: h.Now, Yield: true})
	if err != nil {
		if errors.Is(err, store.ErrLocked) {
			return fmt.Errorf("store busy: the %s checkpoint at turn %d is skipped", kind, n)
		}
		return err
	}
	defer s.Close()
	return s.Update(func(tx *bolt.Tx) error {
		// The checkpoints are decoded once, for Empty and for pruning
		// (nothing else of the store is read but the head).
		cps, err := store.Checkpoints(tx)
		if err != nil {
			return err
		}
		if !store.HasLongTerm(tx) && hooksOnly(cps) {
			// A store made anew: the long-term records come back from
			// the export first (bounded: MaxRebuildBytes).
			if data, err := ReadExport(p.StateDir); err == nil {
				res, err := Rebuild(tx, data)
				if err != nil {
					return err
				}
				h.Logf("continuity: the store held none: %d records rebuilt from %s (%d lines left out)", res.Total(), source.FileName, res.Skipped)
				if res.Checkpoints > 0 {
					if cps, err = store.Checkpoints(tx); err != nil {
						return err
					}
				}
			}
		}
		hd, err := store.GetHead(tx)
		if err != nil {
			return err
		}
		c.Phase = hd.Phase
		if err := store.PutCheckpoint(tx, &c); err != nil {
			return err
		}
		if kind == store.CheckpointFinal {
			// The session is over: what it kept for itself alone goes.
			if _, err := ForgetSession(tx, h.Input.SessionID); err != nil {
				return err
			}
		}
		return pruneHook(tx, append(cps, c))
	})
}

// endSession deletes the memories of scope session of the session that
// ended, when the project has a store holding any: the final checkpoint's
// transaction does it otherwise (record).
func endSession(h *hookio.Hook) error {
	path := h.Project.Path("intermem.db")
	if !exists(path) || h.Input.SessionID == "" {
		return nil
	}
	s, err := store.Open(path, store.Options{Timeout: storeWait, Logf: h.Logf, Now: h.Now, Yield: true})
	if err != nil {
		return fmt.Errorf("the session's memories of scope session are kept: %w", err)
	}
	defer s.Close()
	has := false
	if err := s.View(func(tx *bolt.Tx) error {
		ms, err := ScopedMemories(tx, store.ScopeSession, Filter{All: true})
		for _, m := range ms {
			has = has || m.SessionID == h.Input.SessionID
		}
		return err
	}); err != nil || !has {
		return err
	}
	return s.Update(func(tx *bolt.Tx) error {
		_, err := ForgetSession(tx, h.Input.SessionID)
		return err
	})
}

// pruneHook removes the oldest hook checkpoints beyond maxHookCheckpoints
// among all, the checkpoints tx holds.
func pruneHook(tx *bolt.Tx, all []store.Checkpoint) error {
	var hook []store.Checkpoint
	for _, c := range all {
		if c.Kind == store.CheckpointAuto || c.Kind == store.CheckpointFinal {
			hook = append(hook, c)
		}
	}
	if len(hook) <= maxHookCheckpoints {
		return nil
	}
	sortCheckpoints(hook)
	for _, c := range hook[:len(hook)-maxHookCheckpoints] {
		if err := store.DeleteCheckpoint(tx, c.ID); err != nil {
			return err
		}
	}
	return nil
}

// transcriptTail bounds what is read of a transcript: its last 4 MiB.
const transcriptTail = 4 << 20

// maxFiles bounds the files a checkpoint lists.
const maxFiles = 20

type transcript struct {
	files []string // files edited, most recent last, without repeats
	last  string   // the last assistant text
}

// editField is the input field that names the file an edit tool changed,
// and whether tool is one (a switch, not a map: a package-level map is built
// at every process's start).
func editField(tool string) (string, bool) {
	switch tool {
	case "Edit", "Write", "MultiEdit":
		return "file_path", true
	case "NotebookEdit":
		return "notebook_path", true
	}
	return "", false
}

// readTranscript reads the tail of the session's transcript: the files its
// edit tools changed and the last assistant text. The path comes from the
// payload, so it is read only when it names a regular .jsonl file under
// Claude Code's projects directory.
func readTranscript(env *cli.Env, path string) transcript {
	var t transcript
	base := filepath.Join(project.ConfigDir(env), "projects") + string(filepath.Separator)
	if path == "" || !filepath.IsAbs(path) || filepath.Clean(path) != path ||
		!strings.HasPrefix(path, base) || !strings.HasSuffix(path, ".jsonl") {
		return t
	}
	f := openRegular(path)
	if f == nil {
		return t
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return t
	}
	off := st.Size() - transcriptTail
	if off < 0 {
		off = 0
	}
	b := make([]byte, st.Size()-off)
	n, _ := f.ReadAt(b, off)
	b = b[:n]
	if off > 0 { // drop the partial first line
		if i := strings.IndexByte(string(b), '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	seen := map[string]bool{}
	for len(b) > 0 {
		line := b
		if i := indexNL(b); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if !gjson.ValidBytes(line) || gjson.GetBytes(line, "type").String() != "assistant" {
			continue
		}
		gjson.GetBytes(line, "message.content").ForEach(func(_, item gjson.Result) bool {
			switch item.Get("type").String() {
			case "text":
				if s := item.Get("text").String(); strings.TrimSpace(s) != "" {
					t.last = s
				}
			case "tool_use":
				if field, ok := editField(item.Get("name").String()); ok {
					if p := item.Get("input." + field).String(); p != "" && !seen[p] {
						seen[p] = true
						t.files = append(t.files, p)
					}
				}
			}
			return true
		})
	}
	if len(t.files) > maxFiles {
		t.files = t.files[len(t.files)-maxFiles:]
	}
	return t
}

func indexNL(b []byte) int {
	for i, c := range b {
		if c == '\n' {
			return i
		}
	}
	return -1
}

// exists reports whether path names a regular file (lstat: a link is not
// followed).
func exists(path string) bool {
	st, err := os.Lstat(path)
	return err == nil && st.Mode().IsRegular()
}
