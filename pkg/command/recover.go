package command

import (
	"context"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/journal"
	"github.com/intermem/intermem/pkg/logfile"
	"github.com/intermem/intermem/pkg/redact"
	"github.com/intermem/intermem/pkg/store"
)

const recoverUsage = `Usage: intermem-recover [--project DIR] [--json] [--resume] [--discard ID]

Lists operations (promotions, archives, restores, migrations, tidies) that
a crash or a kill interrupted. --resume completes them; every intermem
writer also does this before its own work. --discard ID abandons one
safely: the changes it made to CLAUDE.md/AGENTS.md are undone and the
entries stay in auto-memory (for a tidy: the topic files it wrote are
deleted and MEMORY.md keeps its sections). An operation that has started
pruning memory (or rewriting MEMORY.md) can only be resumed, never
discarded, so nothing is lost.
`

// RecoverReport is the JSON shape of intermem-recover.
type RecoverReport struct {
	Incomplete []OpInfo `json:"incomplete"`
	Resumed    []OpInfo `json:"resumed"`
	Discarded  []OpInfo `json:"discarded"`
}

// OpInfo describes a journal operation.
type OpInfo struct {
	ID      string   `json:"id"`
	Kind    string   `json:"kind"`
	State   string   `json:"state"`
	Summary string   `json:"summary"`
	Created string   `json:"created"`
	Entries []string `json:"entries"`
	Files   []string `json:"files"`
}

func opInfo(root string, op *journal.Op) OpInfo {
	info := OpInfo{ID: op.ID, Kind: op.Kind, State: string(op.State), Summary: op.Summary,
		Created: op.Created.Format(time.RFC3339), Entries: op.Entries, Files: []string{}}
	seen := map[string]bool{}
	for _, s := range op.Steps {
		if f := relTo(root, s.Path); !seen[f] {
			seen[f] = true
			info.Files = append(info.Files, f)
		}
	}
	if info.Entries == nil {
		info.Entries = []string{}
	}
	return info
}

// RecoverMain is the whole of cmd/intermem-recover.
func RecoverMain(ctx context.Context, env *cli.Env, args []string) (code int) {
	env = env.Safe() // every human-readable byte is escaped (see cli.Unsafe)
	defer env.Flush()
	defer func() {
		if r := recover(); r != nil {
			code = cli.Report(env.Stderr, fmt.Errorf("internal error: %v", r))
		}
	}()
	return cli.Report(env.Stderr, runRecover(ctx, env, args))
}

func runRecover(ctx context.Context, env *cli.Env, args []string) error {
	var c common
	fset := cli.FlagSet("intermem-recover", recoverUsage, env.Stderr)
	c.register(fset, true)
	resume := fset.Bool("resume", false, "complete every interrupted operation")
	discard := fset.String("discard", "", "abandon the interrupted operation with this `ID`, undoing its changes to the curated documents")
	if _, err := cli.Parse(fset, args); err != nil {
		return err
	}
	if *resume && *discard != "" {
		return cli.Usagef("--resume and --discard cannot be combined")
	}
	p, err := c.resolve(env)
	if err != nil {
		return err
	}
	rep := RecoverReport{Incomplete: []OpInfo{}, Resumed: []OpInfo{}, Discarded: []OpInfo{}}

	if !*resume && *discard == "" {
		// Listing only: read-only, so it works while a hook writes.
		st, err := openRead(p)
		if err != nil {
			return err
		}
		if st != nil {
			defer st.Close()
			err = st.View(func(tx *bolt.Tx) error {
				ops, err := journal.Incomplete(tx)
				for _, op := range ops {
					rep.Incomplete = append(rep.Incomplete, opInfo(p.Root, op))
				}
				return err
			})
			if err != nil {
				return err
			}
		}
		return printRecover(env, c.json, &rep)
	}

	// Resuming or discarding needs the writer lock, but not the automatic
	// recovery openWriter does: discarding must see the operation as the
	// crash left it.
	now, err := env.Now()
	if err != nil {
		return err
	}
	if err := p.EnsureStateDir(); err != nil {
		return stateDirError(p, err)
	}
	unlock, err := journal.Lock(p.StateDir, cliWait)
	if err != nil {
		return cli.WithHint(err, "wait for the other intermem command to finish")
	}
	defer unlock()
	log := logfile.New(p.Path("log"), "intermem-recover", func() time.Time { return now }, redact.String)
	st, err := store.Open(p.Path("intermem.db"), store.Options{Timeout: cliWait, Logf: log.Printf, Now: now})
	if err != nil {
		return storeError(err)
	}
	defer st.Close()
	j := &journal.Journal{Store: st, StateDir: p.StateDir, Apply: applyStep, OnCommit: applyBook, Now: func() time.Time { return now }, Logf: log.Printf}
	var ops []*journal.Op
	if err := st.View(func(tx *bolt.Tx) error {
		var err error
		ops, err = journal.Incomplete(tx)
		return err
	}); err != nil {
		return err
	}
	if *discard != "" {
		var target *journal.Op
		for _, op := range ops {
			if op.ID == *discard {
				target = op
			}
		}
		if target == nil {
			return cli.Errorf("run intermem-recover to list interrupted operations", "no interrupted operation %q", *discard)
		}
		if err := j.Discard(target, undoStep); err != nil {
			if errors.Is(err, journal.ErrNotDiscardable) {
				return cli.WithHint(err, "run intermem-recover --resume to complete it instead")
			}
			return err
		}
		log.Printf("discarded %s operation %s (%s)", target.Kind, target.ID, target.Summary)
		rep.Discarded = append(rep.Discarded, opInfo(p.Root, target))
		// Promotions it recorded at commit time are void.
		if err := st.Update(func(tx *bolt.Tx) error {
			for _, id := range target.Entries {
				var rec store.Promoted
				if ok, _ := store.Get(tx, store.BucketPromoted, id, &rec); ok && rec.Op == target.ID {
					if err := store.Delete(tx, store.BucketPromoted, id); err != nil {
						return err
					}
				}
			}
			return nil
		}); err != nil {
			return err
		}
	} else {
		for _, op := range ops {
			if err := j.Resume(op); err != nil {
				return cli.WithHint(fmt.Errorf("resume %s: %w", op.ID, err),
					"a file changed in a way intermem will not guess about; see .intermem/log, fix the file, and run this again")
			}
			log.Printf("resumed %s operation %s (%s)", op.Kind, op.ID, op.Summary)
			rep.Resumed = append(rep.Resumed, opInfo(p.Root, op))
		}
	}
	_ = st.View(func(tx *bolt.Tx) error {
		left, _ := journal.Incomplete(tx)
		for _, op := range left {
			rep.Incomplete = append(rep.Incomplete, opInfo(p.Root, op))
		}
		return nil
	})
	return printRecover(env, c.json, &rep)
}

func printRecover(env *cli.Env, asJSON bool, rep *RecoverReport) error {
	if asJSON {
		return writeJSON(env.Stdout, rep)
	}
	w := env.Stdout
	for _, op := range rep.Resumed {
		fmt.Fprintf(w, "Resumed and completed %s (%s).\n", op.ID, op.Summary)
	}
	for _, op := range rep.Discarded {
		fmt.Fprintf(w, "Discarded %s (%s): its changes to %v were undone; the entries stay in auto-memory.\n", op.ID, op.Summary, op.Files)
	}
	if len(rep.Incomplete) == 0 {
		if len(rep.Resumed)+len(rep.Discarded) == 0 {
			fmt.Fprintln(w, "No interrupted operations.")
		}
		return nil
	}
	fmt.Fprintf(w, "%d interrupted %s:\n", len(rep.Incomplete), cli.Plural(len(rep.Incomplete), "operation", "operations"))
	for _, op := range rep.Incomplete {
		fmt.Fprintf(w, "  %s  %s, %s, started %s; files: %v\n", op.ID, op.Summary, op.State, op.Created, op.Files)
	}
	fmt.Fprintln(w, "Run intermem-recover --resume to complete them, or --discard ID to abandon one.")
	return nil
}
