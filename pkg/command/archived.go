package command

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/intermem/intermem/pkg/archive"
	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/journal"
	"github.com/intermem/intermem/pkg/ops"
	"github.com/intermem/intermem/pkg/project"
	"github.com/intermem/intermem/pkg/redact"
	"github.com/intermem/intermem/pkg/source/written"
	"github.com/intermem/intermem/pkg/store"
	"github.com/intermem/intermem/pkg/targets"

	bolt "go.etcd.io/bbolt"
)

const archivedUsage = `Usage: intermem archived [--project DIR] [--json]

Lists the promoted facts intermem archived because they stopped holding,
with when, why and where each was, and the written memories a sweep
archived (out of the written set, their records kept in
.intermem/written.jsonl). Restore one with "intermem restore ID".
`

// ArchivedReport is the JSON shape of archived.
type ArchivedReport struct {
	File     string           `json:"file"`
	Archived []archive.Record `json:"archived"`
	// Refused maps the id of each record restore refuses (its from: line
	// names no document a fact goes back to) to why.
	Refused map[string]string `json:"refused"`
	// Written are the written memories a sweep archived.
	Written []ArchivedWritten `json:"written"`
}

// ArchivedWritten is a written memory a sweep archived.
type ArchivedWritten struct {
	ID    string    `json:"id"`
	At    time.Time `json:"at"`
	Type  string    `json:"type"`
	Title string    `json:"title"`
}

// archivedWritten returns the written memories a sweep archived, from the
// log (redacted titles), and their records.
func archivedWritten(p *project.Project) ([]ArchivedWritten, []*written.Record, error) {
	log, err := written.ReadLog(p.StateDir)
	if err != nil {
		return nil, nil, cli.WithHint(err, "remove it or make it a regular file; written memories are read from it")
	}
	out, recs := []ArchivedWritten{}, []*written.Record{}
	for _, l := range written.Out(log) {
		if l.Retire.Reason == written.Archived {
			out = append(out, ArchivedWritten{ID: l.Record.ID, At: l.Retire.At, Type: l.Record.Type, Title: redact.String(l.Record.Title)})
			recs = append(recs, l.Record)
		}
	}
	return out, recs, nil
}

func runArchived(ctx context.Context, env *cli.Env, args []string) error {
	c, p, err := flagsOnly(env, "intermem archived", archivedUsage, args)
	if err != nil {
		return err
	}
	ts, err := loadTargets(p)
	if err != nil {
		return err
	}
	rep := ArchivedReport{File: targets.DetailDir + "/" + targets.ArchiveName, Archived: []archive.Record{}, Refused: map[string]string{}}
	if ts.Archive.Exists {
		rep.Archived = append(rep.Archived, archive.Parse(ts.Archive.Content)...)
	}
	for _, r := range rep.Archived {
		if err := r.CheckOrigin(); err != nil {
			rep.Refused[r.ID] = err.Error()
		}
	}
	if rep.Written, _, err = archivedWritten(p); err != nil {
		return err
	}
	if c.json {
		return writeJSON(env.Stdout, &rep)
	}
	w := env.Stdout
	if len(rep.Archived) == 0 && len(rep.Written) == 0 {
		fmt.Fprintln(w, "No archived facts.")
		return nil
	}
	if len(rep.Written) > 0 {
		fmt.Fprintf(w, "%d archived written %s (kept in %s):\n", len(rep.Written), cli.Plural(len(rep.Written), "memory", "memories"), written.LogPath)
		for _, r := range rep.Written {
			fmt.Fprintf(w, "  %s  %s  %s %q\n", r.ID, r.At.Format("2006-01-02"), r.Type, clip(r.Title, 70))
		}
		if len(rep.Archived) == 0 {
			fmt.Fprintln(w, "Restore one with: intermem restore ID")
			return nil
		}
	}
	fmt.Fprintf(w, "%d archived %s in %s:\n", len(rep.Archived), cli.Plural(len(rep.Archived), "fact", "facts"), cli.Line(rep.File))
	for _, r := range rep.Archived {
		from := r.From
		if r.Section != "" {
			from += " § " + r.Section
		}
		if _, bad := rep.Refused[r.ID]; bad {
			fmt.Fprintf(w, "  %s  %s  from %q: restore refuses it, that is no document intermem restores into\n", r.ID, r.At.Format("2006-01-02"), r.From)
			continue
		}
		fmt.Fprintf(w, "  %s  %s  from %s\n      %s\n      reason: %s\n", r.ID, r.At.Format("2006-01-02"), cli.Line(from), cli.Line(clip(firstLine(r.Block), 80)), cli.Line(r.Reason))
	}
	fmt.Fprintln(w, "Restore one with: intermem restore ID")
	return nil
}

const restoreUsage = `Usage: intermem restore ID [--project DIR] [--json] [--dry-run] [--allow-outside]

Puts an archived fact back into the document and section it was archived
from, or an archived written memory back into the written set (its record
appended to .intermem/written.jsonl again); journaled, like every change
intermem makes. An id prefix is enough when it is unambiguous.
`

func runRestore(ctx context.Context, env *cli.Env, args []string) error {
	var c common
	fset := cli.FlagSet("intermem restore", restoreUsage, env.Stdout)
	c.register(fset, true)
	dry := fset.Bool("dry-run", false, "show what would change, write nothing")
	c.registerAllowOutside(fset)
	pos, err := cli.Parse(fset, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return cli.Usagef("give the id of one archived fact (intermem archived lists them)")
	}
	p, err := c.resolve(env)
	if err != nil {
		return err
	}
	ts, err := loadTargets(p)
	if err != nil {
		return err
	}
	var match []archive.Record
	if ts.Archive.Exists {
		for _, r := range archive.Parse(ts.Archive.Content) {
			if strings.HasPrefix(r.ID, pos[0]) {
				match = append(match, r)
			}
		}
	}
	_, wrecs, err := archivedWritten(p)
	if err != nil {
		return err
	}
	var wmatch []*written.Record
	for _, r := range wrecs {
		if strings.HasPrefix(r.ID, pos[0]) {
			wmatch = append(wmatch, r)
		}
	}
	switch {
	case len(match)+len(wmatch) == 0:
		return cli.Errorf("run intermem archived to list archived facts", "no archived fact with id %q", pos[0])
	case len(match)+len(wmatch) > 1:
		return cli.Errorf("give more of the id", "%q matches %d archived facts", pos[0], len(match)+len(wmatch))
	case len(wmatch) == 1:
		return restoreWritten(env, &c, p, wmatch[0], *dry)
	}
	rec := match[0]
	if err := rec.CheckOrigin(); err != nil {
		return cli.WithHint(err, "the archive is a committed file and this record was altered: correct its from: line to the document it came from, or delete the record")
	}
	op := ops.Restore(ts, []archive.Record{rec})
	if err := prepareRestore(&c, p, ts, op); err != nil {
		return err
	}
	out := struct {
		DryRun   bool   `json:"dry_run"`
		ID       string `json:"id"`
		File     string `json:"file"`
		Section  string `json:"section"`
		Restored bool   `json:"restored"`
	}{DryRun: *dry, ID: rec.ID, File: rec.From, Section: rec.Section}
	if !*dry {
		w, err := openWriter(env, p, "intermem restore")
		if err != nil {
			return err
		}
		defer w.Close()
		op.ID = journal.NewID(w.now)
		var pr store.Promoted
		if err := w.store.View(func(tx *bolt.Tx) error {
			var ok bool
			if pr, ok = store.GetPromoted(tx, rec.ID); !ok {
				pr = store.Promoted{ID: rec.ID, Target: rec.From, Section: rec.Section, At: w.now, Text: rec.Block}
			}
			return nil
		}); err != nil {
			return err
		}
		pr.Archived, pr.StaleSweeps, pr.Reason, pr.LastEvidence = false, 0, "", w.now
		if err := (ops.Book{Promoted: []store.Promoted{pr}}).Attach(op); err != nil {
			return err
		}
		if err := w.run(op); err != nil {
			return err
		}
		out.Restored = true
	}
	if c.json {
		return writeJSON(env.Stdout, &out)
	}
	verb := "Restored"
	if *dry {
		verb = "Would restore"
	}
	fmt.Fprintf(env.Stdout, "%s %s into %s § %s: %s\n", verb, rec.ID, cli.Line(rec.From), cli.Line(rec.Section), cli.Line(clip(firstLine(rec.Block), 70)))
	return nil
}

// prepareRestore confines a restore to intermem's places and simulates
// it before anything is written (for --dry-run, instead). ts is nil for a
// written memory's restore, which writes no document.
func prepareRestore(c *common, p *project.Project, ts *targets.Set, op *journal.Op) error {
	if err := c.confineOp(p, ts, op, "restore"); err != nil {
		return err
	}
	if _, _, err := ops.Simulate(p.Places(), op); err != nil {
		return fmt.Errorf("preparing the restore: %w", err)
	}
	return nil
}

// restoreWritten puts the archived written memory r back into the written
// set: its record appended to the log again, journaled; its decay clock
// starts again now (its overlay).
func restoreWritten(env *cli.Env, c *common, p *project.Project, r *written.Record, dry bool) error {
	op, err := ops.RestoreWritten(filepath.Join(p.StateDir, written.FileName), []*written.Record{r})
	if err != nil {
		return err
	}
	if err := prepareRestore(c, p, nil, op); err != nil {
		return err
	}
	out := struct {
		DryRun   bool   `json:"dry_run"`
		ID       string `json:"id"`
		File     string `json:"file"`
		Restored bool   `json:"restored"`
	}{DryRun: dry, ID: r.ID, File: written.LogPath}
	if !dry {
		w, err := openWriter(env, p, "intermem restore")
		if err != nil {
			return err
		}
		defer w.Close()
		op.ID = journal.NewID(w.now)
		if err := w.run(op); err != nil {
			return err
		}
		if err := w.update(func(tx *bolt.Tx) error {
			ct := store.Catalog(tx)
			o, _ := ct.Overlay(r.ID)
			o.LastEvidence, o.StaleSweeps, o.LastStale = w.now, 0, time.Time{}
			return ct.PutOverlay(r.ID, &o)
		}); err != nil {
			return err
		}
		out.Restored = true
	}
	if c.json {
		return writeJSON(env.Stdout, &out)
	}
	verb := "Restored"
	if dry {
		verb = "Would restore"
	}
	fmt.Fprintf(env.Stdout, "%s %s into the written set (%s): %s %q\n", verb, r.ID, written.LogPath, r.Type, clip(redact.String(r.Title), 70))
	return nil
}
