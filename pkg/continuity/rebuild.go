package continuity

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	bolt "go.etcd.io/bbolt"

	source "github.com/intermem/intermem/pkg/source/continuity"
	"github.com/intermem/intermem/pkg/store"
)

// Rebuilding a lost store. .intermem/continuity.jsonl (Export) holds every
// long-term continuity record on the agreed timeline: the head, the
// phases, the decisions, the saved checkpoints and the memories of scope
// phase. When the store is lost or damaged and made anew, Rebuild brings
// those back from the file. The file is read back as hostile, as the
// continuity source reads it: opened without following a link, a regular
// file only, at most MaxRebuildBytes and MaxRebuildLines; every text is
// redacted, clipped and screened (a flagged record is left out, never
// stored, since the store's records are injected at SessionStart); every
// id is recomputed from the record's content, never taken from the file;
// a line that is not a well-formed record is skipped. What the file never
// held (hook checkpoints, memories of scope session, what a backtrack left
// behind) stays lost.

// Bounds of a rebuild.
const (
	MaxRebuildBytes = 4 << 20
	MaxRebuildLines = 20000
)

// ErrNoExport is returned by ReadExport when there is no file to rebuild
// from (missing, a link, not a regular file, or empty).
var ErrNoExport = errors.New("no .intermem/continuity.jsonl to rebuild from")

// ReadExport reads stateDir's continuity.jsonl for Rebuild, without
// following a link, at most MaxRebuildBytes.
func ReadExport(stateDir string) ([]byte, error) {
	f, err := os.OpenFile(filepath.Join(stateDir, source.FileName), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, ErrNoExport
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, ErrNoExport
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxRebuildBytes))
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, ErrNoExport
	}
	return b, nil
}

// Empty reports whether tx holds no long-term continuity record: no
// head, no phase, no decision, no scoped memory, no checkpoint but the
// hooks' (a Stop hook may record one into a store made anew before any
// command runs). Only such a store is rebuilt: one that holds anything
// long-term is the truth, and the file is derived from it.
func Empty(tx *bolt.Tx) bool {
	if store.HasLongTerm(tx) {
		return false
	}
	cps, err := store.Checkpoints(tx)
	return err == nil && hooksOnly(cps)
}

// hooksOnly reports whether cps are all the hooks' checkpoints.
func hooksOnly(cps []store.Checkpoint) bool {
	for _, c := range cps {
		if c.Kind != store.CheckpointAuto && c.Kind != store.CheckpointFinal {
			return false
		}
	}
	return true
}

// Rebuilt counts what Rebuild brought back and left out.
type Rebuilt struct {
	Phases, Decisions, Checkpoints, Memories int
	Head                                     bool
	// Skipped counts lines left out: not a record, flagged by screening,
	// incomplete, or past MaxRebuildLines.
	Skipped int
}

// Total is how many records came back.
func (r Rebuilt) Total() int { return r.Phases + r.Decisions + r.Checkpoints + r.Memories }

// Rebuild restores the records of data (the export) into tx, which must
// be Empty. See the comment above for how the file is judged.
func Rebuild(tx *bolt.Tx, data []byte) (Rebuilt, error) {
	var res Rebuilt
	var head *source.Record
	cps := map[string]string{} // an id in the file → the id recomputed
	lines := bytes.Split(data, []byte("\n"))
	for i, line := range lines {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if i >= MaxRebuildLines {
			res.Skipped++
			continue
		}
		var r source.Record
		if json.Unmarshal(line, &r) != nil {
			res.Skipped++
			continue
		}
		ok, err := rebuildOne(tx, &r, &res, cps)
		if err != nil {
			return res, err
		}
		if r.Kind == "head" {
			rr := r
			head, ok = &rr, true
		}
		if !ok {
			res.Skipped++
		}
	}
	if head != nil && head.Phase != nil && *head.Phase >= 0 {
		if _, had, err := store.GetPhase(tx, *head.Phase); err != nil {
			return res, err
		} else if had {
			p := *head.Phase
			h := store.Head{Phase: &p}
			h.Checkpoint = cps[head.Checkpoint] // "" when it was none of them
			if err := store.PutHead(tx, h); err != nil {
				return res, err
			}
			res.Head = true
		}
	}
	return res, nil
}

// ReadRebuilt rebuilds data (an export, ReadExport) in a scratch store
// outside every project, made for this one read and removed after it, and
// calls fn in a read transaction of it: how a listing over a store without
// continuity records, or a session start (which opens the project's store
// read-only), sees what Rebuild would bring back, writing nothing in the
// project. The scratch store is never synced: nothing needs it to outlive
// the read. An error of the rebuild itself names the file; fn's is
// returned as it is.
func ReadRebuilt(data []byte, fn func(tx *bolt.Tx) error) (Rebuilt, error) {
	var res Rebuilt
	fail := func(err error) (Rebuilt, error) {
		return res, fmt.Errorf("rebuild from %s: %w", source.Path, err)
	}
	dir, err := os.MkdirTemp("", "intermem-rebuild-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(dir)
	ts, err := store.Open(filepath.Join(dir, "intermem.db"), store.Options{NoSync: true})
	if err != nil {
		return fail(err)
	}
	defer ts.Close()
	if err := ts.Update(func(tx *bolt.Tx) error {
		var err error
		res, err = Rebuild(tx, data)
		return err
	}); err != nil {
		return fail(err)
	}
	return res, ts.View(fn)
}

// rebuildOne stores one record; ok is false for one left out.
func rebuildOne(tx *bolt.Tx, r *source.Record, res *Rebuilt, cps map[string]string) (bool, error) {
	phase, okPhase := cleanPhase(r.Phase)
	if !okPhase {
		return false, nil
	}
	switch r.Kind {
	case "phase":
		if r.N == nil || *r.N < 0 || r.Started.IsZero() {
			return false, nil
		}
		name, fl := Clean(r.Name, MaxName)
		if len(fl) > 0 {
			return false, nil
		}
		p := store.Phase{N: *r.N, Name: name, Started: r.Started.UTC(), Status: store.StatusValid}
		if !r.Closed.IsZero() {
			summary, fl := Clean(r.Summary, MaxText)
			if len(fl) > 0 || summary == "" {
				return false, nil
			}
			p.Closed, p.Summary = r.Closed.UTC(), summary
			for _, a := range capped(r.Artifacts) {
				if s, fl := Clean(a, MaxName*4); s != "" && len(fl) == 0 {
					p.Artifacts = append(p.Artifacts, s)
				}
			}
			for _, is := range capped(r.Issues) {
				if s, fl := Clean(is, MaxText); s != "" && len(fl) == 0 {
					p.Issues = append(p.Issues, s)
				}
			}
		}
		if _, had, err := store.GetPhase(tx, p.N); err != nil || had {
			return false, err
		}
		res.Phases++
		return true, store.PutPhase(tx, &p)
	case "decision":
		text, fl1 := Clean(r.Text, MaxText)
		why, fl2 := Clean(r.Why, MaxText)
		if text == "" || why == "" || len(fl1)+len(fl2) > 0 {
			return false, nil
		}
		d := store.PhaseDecision{ID: DecisionID(text, why, phase), Text: text, Why: why, Phase: phase,
			Time: r.Time.UTC(), Status: store.StatusValid}
		res.Decisions++
		return true, store.PutDecided(tx, &d)
	case "checkpoint":
		summary, fl := Clean(r.Summary, MaxText)
		if summary == "" || len(fl) > 0 || r.Time.IsZero() {
			return false, nil
		}
		sum := sha256.Sum256([]byte(summary))
		c := store.Checkpoint{ID: "cp-" + r.Time.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(sum[:4]),
			Kind: store.CheckpointManual, Time: r.Time.UTC(), Summary: summary, Phase: phase,
			Scope: store.ScopeProject, Status: store.StatusValid}
		c.Branch, c.Commit = checkpointGit(r.Branch, r.Commit)
		if r.ID != "" {
			cps[r.ID] = c.ID
		}
		res.Checkpoints++
		return true, store.PutCheckpoint(tx, &c)
	case "memory":
		if r.Scope != store.ScopePhase || phase == nil {
			return false, nil
		}
		title, fl1 := Clean(firstLineOf(r.Title), 200)
		text, fl2 := Clean(r.Text, MaxText)
		typ, fl3 := Clean(firstLineOf(r.Type), 40)
		if title == "" || text == "" || len(fl1)+len(fl2)+len(fl3) > 0 {
			return false, nil
		}
		m := store.ScopedMemory{Type: typ, Title: title, Content: text, Source: "rebuilt", Scope: store.ScopePhase,
			Phase: phase, Created: r.Time.UTC(), Status: store.StatusValid}
		for _, t := range capped(r.Tags) {
			if s, fl := Clean(firstLineOf(t), 100); s != "" && len(fl) == 0 {
				m.Tags = append(m.Tags, s)
			}
		}
		for _, f := range capped(r.Files) {
			if s, fl := Clean(firstLineOf(f), 300); s != "" && len(fl) == 0 {
				m.Files = append(m.Files, s)
			}
		}
		m.ID = source.MemoryID(m.Scope, m.Phase, "", m.Type, m.Title, m.Content)
		res.Memories++
		return true, store.PutMemory(tx, &m)
	case "head":
		return true, nil
	}
	return false, nil
}

// cleanPhase copies a record's phase; ok is false for a negative one.
func cleanPhase(ph *int) (*int, bool) {
	if ph == nil {
		return nil, true
	}
	if *ph < 0 {
		return nil, false
	}
	p := *ph
	return &p, true
}

func capped(in []string) []string {
	if len(in) > source.MaxListed {
		return in[:source.MaxListed]
	}
	return in
}

func firstLineOf(s string) string {
	line, _, _ := bytes.Cut([]byte(s), []byte("\n"))
	return string(line)
}
