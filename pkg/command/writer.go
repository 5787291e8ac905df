package command

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/catalog"
	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/config"
	"github.com/intermem/intermem/pkg/journal"
	"github.com/intermem/intermem/pkg/logfile"
	"github.com/intermem/intermem/pkg/ops"
	"github.com/intermem/intermem/pkg/project"
	"github.com/intermem/intermem/pkg/redact"
	"github.com/intermem/intermem/pkg/snapshot"
	"github.com/intermem/intermem/pkg/store"
	"github.com/intermem/intermem/pkg/userstate"
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
	// Observations a hook spooled (it met the store busy) name memory
	// files to read: with auto-memory switched off they stay spooled,
	// unread, for the first writer after it is switched back on, as the
	// hooks leave them (package snapshot's off.go).
	if !config.MemoryOff(p.StateDir) {
		if _, err := snapshot.Ingest(w.store, p.StateDir, p.MemoryDir, w.log.Printf); err != nil {
			w.log.Printf("%v", err)
		}
	}
	w.journal, err = newJournal(env, p, w.store, now, w.log.Printf, true)
	if err != nil {
		w.Close()
		return nil, err
	}
	rec, err := w.journal.Recover()
	if rec != nil {
		w.Recovered = rec.Resumed
		warnProblems(env, rec.Problems)
	}
	if err != nil {
		w.Close()
		return nil, cli.WithHint(fmt.Errorf("recovering an interrupted operation: %w", err),
			"run intermem-recover to see it; intermem-recover --discard ID abandons it safely")
	}
	return w, nil
}

// newJournal builds the project's journal on st. With create, the
// per-user key is made on first use (a writer about to record an
// operation); without it (dry runs, listings: they write nothing) it is
// only read, and with no key yet every recorded operation is refused, as
// none can have been made by this user.
func newJournal(env *cli.Env, p *project.Project, st *store.Store, now time.Time, logf func(string, ...any), create bool) (*journal.Journal, error) {
	key, err := userstate.Key(env, create)
	switch {
	case errors.Is(err, userstate.ErrNoKey):
	case errors.Is(err, userstate.ErrNoHome):
		return nil, cli.WithHint(err, "intermem keeps a per-user key outside every project; run it with HOME set")
	case errors.Is(err, userstate.ErrBadKey):
		dir, _ := userstate.Dir(env)
		return nil, cli.WithHint(err, fmt.Sprintf("move %s aside: intermem makes a new one, and operations interrupted before then are refused (intermem-recover lists them)", filepath.Join(dir, userstate.KeyName)))
	case err != nil:
		return nil, err
	}
	return &journal.Journal{
		Store: st, StateDir: p.StateDir, Places: p.Places(), Key: key,
		Kinds: ops.Kinds,
		Now:   func() time.Time { return now }, Logf: logf,
	}, nil
}

// warnProblems says once, on stderr, that recovery left journal records
// alone. The writer goes on with its own work: a planted or damaged record
// must not block the user.
func warnProblems(env *cli.Env, ps []journal.Problem) {
	var refused, damaged int
	for _, pr := range ps {
		if errors.Is(pr.Err, journal.ErrDamaged) {
			damaged++
		} else {
			refused++
		}
	}
	var parts []string
	if refused > 0 {
		parts = append(parts, fmt.Sprintf("%d interrupted %s that intermem refuses to replay", refused, cli.Plural(refused, "operation", "operations")))
	}
	if damaged > 0 {
		parts = append(parts, fmt.Sprintf("%d %s that no longer %s", damaged, cli.Plural(damaged, "record", "records"), cli.Plural(damaged, "decodes", "decode")))
	}
	if len(parts) == 0 {
		return
	}
	fmt.Fprintf(env.Stderr, "intermem: warning: the journal holds %s; nothing was written for %s. Run intermem-recover to see why.\n",
		strings.Join(parts, " and "), cli.Plural(len(ps), "it", "them"))
}

func (w *writer) Close() {
	if w.store != nil {
		w.store.Close()
	}
	if w.unlock != nil {
		w.unlock()
	}
}

// journalOrNil is the writer's journal, or nil for no writer (a dry run).
// run runs op through the journal; a failure says that nothing is lost
// (intermem-recover resumes the operation).
func (w *writer) run(op *journal.Op) error {
	if err := w.journal.Run(op); err != nil {
		return cli.WithHint(err, "nothing is lost: run intermem-recover to see and resume the operation")
	}
	return nil
}

func (w *writer) journalOrNil() *journal.Journal {
	if w == nil {
		return nil
	}
	return w.journal
}

func (w *writer) update(fn func(tx *bolt.Tx) error) error {
	return w.store.Update(func(tx *bolt.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		// What fn wrote (overlays, promotions) may have made the stored
		// search index stale: store it again, so readers decode it.
		return catalog.SettleStore(store.Catalog(tx))
	})
}
