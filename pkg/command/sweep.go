package command

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/catalog"
	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/journal"
	"github.com/intermem/intermem/pkg/ops"
	"github.com/intermem/intermem/pkg/plan"
	"github.com/intermem/intermem/pkg/score"
	"github.com/intermem/intermem/pkg/source/automemory"
	"github.com/intermem/intermem/pkg/source/written"
	"github.com/intermem/intermem/pkg/stability"
	"github.com/intermem/intermem/pkg/store"
	"github.com/intermem/intermem/pkg/sweep"
)

const sweepUsage = `Usage: intermem sweep [--project DIR] [--json] [--dry-run] [--allow-outside] [--cite-root DIR]

Keeps promoted facts true: re-validates what each cites, refreshes facts
that auto-memory recorded again or whose citations hold, lets the others
lose confidence over time (uncited facts only after a 90-day review
period, INTERMEM_REVIEW_DAYS), archives a fact found stale by two sweeps at
least 24 hours apart into docs/intermem/.archived.md, and restores archived
facts that auto-memory holds again if they would pass validation now (one
still citing a deleted file is held: it stays archived). --dry-run reports
the same decisions and writes nothing. --cite-root DIR resolves cited paths
against DIR instead of the project, as validate does.
`

// SweepReport is the JSON shape of sweep.
type SweepReport struct {
	DryRun  bool           `json:"dry_run"`
	Checked int            `json:"checked"`
	Stale   int            `json:"stale"`
	Changes []sweep.Change `json:"changes"`
	// Archived and Restored count what was (or, dry, would be) moved.
	Archived int      `json:"archived"`
	Restored int      `json:"restored"`
	Ops      []string `json:"ops"`
	// Written counts the written memories checked (among Checked), and
	// WrittenArchived those archived (among Archived).
	Written         int `json:"written"`
	WrittenArchived int `json:"written_archived"`
}

func runSweep(ctx context.Context, env *cli.Env, args []string) error {
	var c common
	fset := cli.FlagSet("intermem sweep", sweepUsage, env.Stdout)
	c.register(fset, true)
	dry := fset.Bool("dry-run", false, "report decisions, write nothing")
	c.registerAllowOutside(fset)
	var cf citeFlags
	cf.register(fset)
	if _, err := cli.Parse(fset, args); err != nil {
		return err
	}
	p, err := c.resolve(env)
	if err != nil {
		return err
	}
	checker, _, err := cf.checker(env, p)
	if err != nil {
		return err
	}
	now, err := env.Now()
	if err != nil {
		return err
	}
	var st *store.Store
	var w *writer
	if *dry {
		if st, err = openRead(p); err != nil {
			return err
		}
		if st != nil {
			defer st.Close()
		}
	} else {
		if w, err = openWriter(env, p, "intermem sweep"); err != nil {
			return err
		}
		defer w.Close()
		st, now = w.store, w.now
	}

	ts, err := loadTargets(p)
	if err != nil {
		return err
	}
	// What evidence a promoted fact has: the sessions that saw it in
	// auto-memory (the store), and auto-memory now (the catalog, read
	// without writing: a dry run writes nothing).
	recs := map[string]*store.Promoted{}
	seen := map[string]time.Time{}
	// The memories in the written set decay like promoted facts; those a
	// sweep archived come back when what they cite holds again.
	var live []sweep.Written
	wrote := false
	load := func(tx *bolt.Tx) error {
		if tx != nil {
			if err := store.EachPromoted(tx, func(r *store.Promoted) error {
				recs[r.ID] = r
				return nil
			}); err != nil {
				return err
			}
			if err := store.EachSeen(tx, func(e *store.Entry) error {
				if e.Sessions > 0 {
					seen[e.ID] = e.LastSeen
				}
				return nil
			}); err != nil {
				return err
			}
		}
		return buildCatalog(env, p, tx, now, func(cat *catalog.Catalog) error {
			for _, e := range cat.Entries(automemory.Name) {
				seen[e.ID] = now
			}
			wrote = cat.On(written.Name)
			for _, e := range cat.Entries(written.Name) {
				live = append(live, sweptWritten(tx, e))
			}
			return nil
		})
	}
	if st != nil {
		err = st.View(load)
	} else {
		err = load(nil)
	}
	if err != nil {
		return err
	}

	res := sweep.Evaluate(ts, recs, seen, checker, sweep.Options{
		Now: now, Review: score.Review(env.Get), Threshold: stability.Threshold(env.Get),
	})
	var out []written.Left
	if wrote {
		log, err := written.ReadLog(p.StateDir)
		if err != nil {
			return cli.WithHint(err, "remove it or make it a regular file; written memories are read from it")
		}
		out = written.Out(log)
	}
	wres := sweep.EvaluateWritten(live, out, func(r *written.Record) string { return plan.WrittenCites(r.Content, r.Files) }, checker,
		sweep.Options{Now: now, Review: score.Review(env.Get), Threshold: stability.Threshold(env.Get)})
	rep := SweepReport{DryRun: *dry, Checked: res.Checked + wres.Checked, Stale: res.Stale + wres.Stale,
		Changes: append(res.Changes, wres.Changes...), Archived: res.Archived + wres.Archived, Restored: res.Restored + wres.Restored, Ops: []string{},
		Written: wres.Checked, WrittenArchived: wres.Archived}
	sweep.Sort(rep.Changes)

	var run []*journal.Op
	logPath := filepath.Join(p.StateDir, written.FileName)
	if len(wres.Archive) > 0 {
		op, err := ops.ArchiveWritten(logPath, wres.Archive, now)
		if err != nil {
			return err
		}
		if err := c.confineOp(p, ts, op, "sweep"); err != nil {
			return err
		}
		run = append(run, op)
	}
	if len(wres.Restore) > 0 {
		op, err := ops.RestoreWritten(logPath, wres.Restore)
		if err != nil {
			return err
		}
		if err := c.confineOp(p, ts, op, "sweep"); err != nil {
			return err
		}
		run = append(run, op)
	}
	if len(res.Archive) > 0 {
		op := ops.Archive(ts, res.Archive, now)
		if err := c.confineOp(p, ts, op, "sweep"); err != nil {
			return err
		}
		if err := bookFor(res, op).Attach(op); err != nil {
			return err
		}
		run = append(run, op)
	}
	if len(res.Restore) > 0 {
		op := ops.Restore(ts, res.Restore)
		if err := c.confineOp(p, ts, op, "sweep"); err != nil {
			return err
		}
		if err := bookFor(res, op).Attach(op); err != nil {
			return err
		}
		run = append(run, op)
	}
	if *dry {
		for _, op := range run {
			if _, _, err := ops.Simulate(p.Places(), op); err != nil {
				return fmt.Errorf("preparing %s: %w", op.Summary, err)
			}
			rep.Ops = append(rep.Ops, op.Summary)
		}
	} else {
		for _, op := range run {
			op.ID = journal.NewID(now)
			if _, _, err := ops.Simulate(p.Places(), op); err != nil {
				return fmt.Errorf("preparing %s: %w", op.Summary, err)
			}
			if err := w.run(op); err != nil {
				return err
			}
			rep.Ops = append(rep.Ops, op.Summary)
		}
		if err := w.update(func(tx *bolt.Tx) error {
			for id, r := range res.Records {
				if r.ID == "" {
					r.ID = id
				}
				if err := store.PutPromoted(tx, r); err != nil {
					return err
				}
			}
			// The written memories' decay state, kept in their overlays.
			ct := store.Catalog(tx)
			for id, o := range wres.Overlays {
				cur, _ := ct.Overlay(id)
				cur.Confidence, cur.Validated, cur.Status = o.Confidence, o.Validated, o.Status
				cur.LastEvidence, cur.StaleSweeps, cur.LastStale = o.LastEvidence, o.StaleSweeps, o.LastStale
				if err := ct.PutOverlay(id, &cur); err != nil {
					return err
				}
			}
			// SessionStart suggests a sweep when this gets old.
			return store.SetLastSweep(tx, now)
		}); err != nil {
			return err
		}
	}
	if c.json {
		return writeJSON(env.Stdout, &rep)
	}
	printSweep(env.Stdout, &rep)
	return nil
}

// bookFor is the bookkeeping of an archive or restore operation of a
// sweep: the updated records of the facts it moves, committed with it.
func bookFor(res *sweep.Result, op *journal.Op) ops.Book {
	var b ops.Book
	for _, id := range op.Entries {
		if r, ok := res.Records[id]; ok {
			b.Promoted = append(b.Promoted, *r)
		}
	}
	return b
}

func printSweep(w io.Writer, r *SweepReport) {
	head := "intermem sweep"
	if r.DryRun {
		head += " (dry run: nothing was written)"
	}
	facts := r.Checked - r.Written
	if r.Written > 0 {
		fmt.Fprintf(w, "%s: %d promoted %s and %d written %s checked\n", head, facts, cli.Plural(facts, "fact", "facts"),
			r.Written, cli.Plural(r.Written, "memory", "memories"))
	} else {
		fmt.Fprintf(w, "%s: %d promoted %s checked\n", head, facts, cli.Plural(facts, "fact", "facts"))
	}
	counts := map[string]int{}
	for _, ch := range r.Changes {
		counts[ch.Action]++
		switch ch.Action {
		case sweep.Refused:
			fmt.Fprintf(w, "  %-9s %s\n", ch.Action, ch.Reason)
			continue
		case sweep.Archived, sweep.Restored, sweep.Held, sweep.Stale, sweep.Decaying:
			verb := ch.Action
			if r.DryRun && (verb == sweep.Archived || verb == sweep.Restored) {
				verb = "would be " + verb
			}
			fmt.Fprintf(w, "  %-9s %s  %q (confidence %.2f)", verb, cli.Line(ch.Where), clip(ch.Text, 60), ch.Confidence)
			if ch.Reason != "" {
				fmt.Fprintf(w, ": %s", ch.Reason)
			}
			switch ch.Action {
			case sweep.Stale:
				fmt.Fprint(w, "; archived if still stale at a sweep 24 h or more from now")
			case sweep.Held:
				fmt.Fprint(w, "; stays archived")
			}
			fmt.Fprintln(w)
		}
	}
	var quiet []string
	for _, a := range []string{sweep.Refreshed, sweep.Healthy, sweep.Adopted} {
		if counts[a] > 0 {
			quiet = append(quiet, fmt.Sprintf("%d %s", counts[a], a))
		}
	}
	if len(quiet) > 0 {
		fmt.Fprintf(w, "  %s\n", joinStrings(quiet))
	}
	if r.Archived > r.WrittenArchived && !r.DryRun {
		fmt.Fprintln(w, "Archived facts are in docs/intermem/.archived.md; intermem archived lists them, intermem restore ID puts one back.")
	}
	if r.WrittenArchived > 0 && !r.DryRun {
		fmt.Fprintf(w, "Archived written memories keep their records in %s; intermem archived lists them, intermem restore ID puts one back.\n", written.LogPath)
	}
}

func joinStrings(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ", "
		}
		out += x
	}
	return out
}

// sweptWritten is the written memory e as a sweep judges it, with the
// decay state its overlay keeps (tx nil: none yet).
func sweptWritten(tx *bolt.Tx, e catalog.Entry) sweep.Written {
	wi := plan.WrittenItem(e.Entry)
	w := sweep.Written{ID: e.ID, Where: fmt.Sprintf("%s:%d", e.Path, e.Line), Text: e.Title,
		Cites: plan.WrittenCites(e.Text, wi.Files), Created: e.Created}
	if tx != nil {
		if o, ok := store.Catalog(tx).Overlay(e.ID); ok {
			w.State = o
		}
	}
	return w
}
