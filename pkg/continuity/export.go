package continuity

import (
	"bytes"
	"encoding/json"
	"path/filepath"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/atomicfile"
	source "github.com/intermem/intermem/pkg/source/continuity"
	"github.com/intermem/intermem/pkg/store"
)

// Export renders the long-term records on the agreed timeline as the
// lines of .intermem/continuity.jsonl (package source/continuity reads
// them into the catalog): the head, every valid phase, every valid
// decision, every valid checkpoint saved to project memory (manual, scope
// project), every valid memory of scope phase. Hook checkpoints, phase
// marks, memories of scope session and what a backtrack left behind are
// not exported.
func Export(tx *bolt.Tx) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	h, err := store.GetHead(tx)
	if err != nil {
		return nil, err
	}
	if err := enc.Encode(source.Record{Kind: "head", Phase: h.Phase, Checkpoint: h.Checkpoint}); err != nil {
		return nil, err
	}
	phases, err := store.Phases(tx)
	if err != nil {
		return nil, err
	}
	for _, p := range phases {
		if p.Status != store.StatusValid {
			continue
		}
		n := p.N
		if err := enc.Encode(source.Record{Kind: "phase", N: &n, Name: p.Name, Summary: p.Summary, Artifacts: p.Artifacts,
			Issues: p.Issues, Decisions: p.Decisions, Started: p.Started, Closed: p.Closed}); err != nil {
			return nil, err
		}
	}
	ds, err := Decisions(tx, Filter{})
	if err != nil {
		return nil, err
	}
	for _, d := range ds {
		if err := enc.Encode(source.Record{Kind: "decision", ID: d.ID, Text: d.Text, Why: d.Why, Phase: d.Phase, Time: d.Time}); err != nil {
			return nil, err
		}
	}
	cps, err := ListCheckpoints(tx, Filter{})
	if err != nil {
		return nil, err
	}
	for _, c := range cps {
		if c.Kind != store.CheckpointManual || c.Scope != store.ScopeProject {
			continue
		}
		if err := enc.Encode(source.Record{Kind: "checkpoint", ID: c.ID, Summary: c.Summary, Phase: c.Phase, Time: c.Time,
			Branch: c.Branch, Commit: c.Commit}); err != nil {
			return nil, err
		}
	}
	ms, err := ScopedMemories(tx, store.ScopePhase, Filter{})
	if err != nil {
		return nil, err
	}
	for _, m := range ms {
		if err := enc.Encode(source.Record{Kind: "memory", Scope: m.Scope, Phase: m.Phase, Type: m.Type, Title: m.Title,
			Text: m.Content, Tags: m.Tags, Files: m.Files, Time: m.Created}); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

// WriteExport replaces .intermem/continuity.jsonl in stateDir with b.
func WriteExport(stateDir string, b []byte) error {
	return atomicfile.WriteState(stateDir, filepath.Join(stateDir, source.FileName), b, atomicfile.Options{Perm: 0o600})
}
