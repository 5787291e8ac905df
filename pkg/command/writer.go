package command

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/archive"
	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/journal"
	"github.com/intermem/intermem/pkg/logfile"
	"github.com/intermem/intermem/pkg/project"
	"github.com/intermem/intermem/pkg/promote"
	"github.com/intermem/intermem/pkg/redact"
	"github.com/intermem/intermem/pkg/snapshot"
	"github.com/intermem/intermem/pkg/store"
	"github.com/intermem/intermem/pkg/tidy"
	"github.com/intermem/intermem/pkg/tier"
)

// writer is an open read-write session on a project: the writer lock, the
// store, the log, and a journal that has already recovered any operation a
// crash interrupted. Every command that changes files or the store starts
// with one.
type writer struct {
	p       *project.Project
	store   *store.Store
	log     *logfile.Log
	journal *journal.Journal
	now     time.Time
	unlock  func()
	// Recovered lists operations completed on opening.
	Recovered []*journal.Op
}

func openWriter(env *cli.Env, p *project.Project, prog string) (*writer, error) {
	now, err := env.Now()
	if err != nil {
		return nil, cli.WithHint(err, "set INTERMEM_NOW to an RFC 3339 time such as 2026-11-25T09:00:00Z, or unset it")
	}
	if err := p.EnsureStateDir(); err != nil {
		return nil, stateDirError(p, err)
	}
	unlock, err := journal.Lock(p.StateDir, cliWait)
	if err != nil {
		if errors.Is(err, journal.ErrBusy) {
			return nil, cli.WithHint(err, "wait for the other intermem command to finish, then run this again")
		}
		return nil, err
	}
	w := &writer{p: p, now: now, unlock: unlock}
	w.log = logfile.New(p.Path("log"), prog, func() time.Time { return now }, redact.String)
	w.store, err = store.Open(p.Path("intermem.db"), store.Options{Timeout: cliWait, Logf: w.log.Printf, Now: now})
	if err != nil {
		unlock()
		return nil, storeError(err)
	}
	if _, err := snapshot.Ingest(w.store, p.StateDir, w.log.Printf); err != nil {
		w.log.Printf("%v", err)
	}
	w.journal = &journal.Journal{
		Store: w.store, StateDir: p.StateDir, Apply: applyStep, OnCommit: applyBook,
		Now: func() time.Time { return now }, Logf: w.log.Printf,
	}
	w.Recovered, err = w.journal.Recover()
	if err != nil {
		w.Close()
		return nil, cli.WithHint(fmt.Errorf("recovering an interrupted operation: %w", err),
			"run intermem-recover to see it; intermem-recover --discard ID abandons it safely")
	}
	return w, nil
}

func (w *writer) Close() {
	if w.store != nil {
		w.store.Close()
	}
	if w.unlock != nil {
		w.unlock()
	}
}

func (w *writer) update(fn func(tx *bolt.Tx) error) error { return w.store.Update(fn) }

// applyStep dispatches journal steps to the package that owns the action:
// tier (detail documents, index), archive, tidy (topic files, MEMORY.md's
// pointers) or promote (inserts, removals, pruning).
func applyStep(s *journal.Step, cur []byte, exists bool, read journal.Reader) ([]byte, bool, error) {
	if next, keep, ok, err := tier.Apply(s, cur, exists, read); ok {
		return next, keep, err
	}
	if next, keep, ok, err := archive.Apply(s, cur, exists); ok {
		return next, keep, err
	}
	if next, keep, ok, err := tidy.Apply(s, cur, exists, read); ok {
		return next, keep, err
	}
	return promote.Apply(s, cur, exists, read)
}

func undoStep(s *journal.Step, cur []byte, exists bool, read journal.Reader) ([]byte, bool, error) {
	switch s.Action {
	case tier.ActSetIndex:
		// Re-render from the documents as they are after the undo of the
		// inserts that preceded it.
		next, keep, _, err := tier.Apply(s, cur, exists, read)
		if s.Before == "" && len(bytes.TrimSpace(next)) == 0 {
			keep = false // the operation created AGENTS.md for the index alone
		}
		return next, keep, err
	case tier.ActEnsureDetail:
		// A detail document this operation created goes if it is empty.
		next, keep, _, err := tier.Apply(&journal.Step{Action: tier.ActDropEmptyDetail}, cur, exists, read)
		if s.Before != "" {
			keep = exists
			next = cur
		}
		return next, keep, err
	}
	if next, keep, ok := tidy.Undo(s, cur, exists); ok {
		return next, keep, nil
	}
	return promote.Undo(s, cur, exists, read)
}
