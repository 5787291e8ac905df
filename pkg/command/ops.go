package command

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/intermem/intermem/pkg/archive"
	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/journal"
	"github.com/intermem/intermem/pkg/promote"
	"github.com/intermem/intermem/pkg/sweep"
	"github.com/intermem/intermem/pkg/targets"
	"github.com/intermem/intermem/pkg/tier"
)

// archiveOp moves facts out of the documents into the archive: each is
// first added to the archive, then removed from its document, so at any
// crash point it exists somewhere; emptied detail documents go and the
// index is refreshed.
func archiveOp(ts *targets.Set, tasks []sweep.ArchiveTask, now time.Time) *journal.Op {
	op := &journal.Op{Kind: "archive"}
	archivePath := archiveFile(ts)
	var adds, removes, drops []journal.Step
	detail := false
	for _, t := range tasks {
		block := tier.RawBlock(t.Doc.Content, t.Marked)
		adds = append(adds, archive.StepRecord(archivePath, archive.Record{
			ID: t.Marked.ID, At: now, From: t.Doc.Name, Section: t.Marked.Section, Reason: t.Reason, Block: block,
		}))
		removes = append(removes, journal.Step{Phase: 1, Path: t.Doc.Path, Action: promote.ActRemoveMarked, ID: t.Marked.ID})
		if isDetail(t.Doc.Name) {
			detail = true
			drops = append(drops, journal.Step{Phase: 1, Path: t.Doc.Path, Action: tier.ActDropEmptyDetail})
		}
		op.Entries = append(op.Entries, t.Marked.ID)
	}
	op.Steps = append(append(adds, removes...), drops...)
	if detail {
		op.Steps = append(op.Steps, tier.IndexStep(ts, detailPaths(ts)))
	}
	op.Summary = fmt.Sprintf("archive %d %s", len(tasks), cli.Plural(len(tasks), "fact", "facts"))
	return op
}

// restoreOp puts archived facts back where they were.
func restoreOp(ts *targets.Set, recs []archive.Record) *journal.Op {
	op := &journal.Op{Kind: "restore"}
	archivePath := archiveFile(ts)
	var inserts, removes []journal.Step
	detail := false
	paths := detailPaths(ts)
	for _, r := range recs {
		path := filepath.Join(ts.Root, filepath.FromSlash(r.From))
		switch r.From {
		case targets.Agents, targets.Claude:
			path = ts.Target(r.From).Path
		}
		if isDetail(r.From) {
			detail = true
			inserts = append(inserts, journal.Step{Phase: 1, Path: path, Action: tier.ActEnsureDetail, Section: r.Section})
			found := false
			for _, p := range paths {
				if p == path {
					found = true
				}
			}
			if !found {
				paths = append(paths, path)
			}
		}
		inserts = append(inserts, journal.Step{Phase: 1, Path: path, Action: promote.ActInsert, ID: r.ID, Section: r.Section, Block: r.Block})
		removes = append(removes, journal.Step{Phase: 1, Path: archivePath, Action: archive.ActRemove, ID: r.ID})
		op.Entries = append(op.Entries, r.ID)
	}
	op.Steps = append(inserts, removes...)
	if detail {
		op.Steps = append(op.Steps, tier.IndexStep(ts, paths))
	}
	op.Summary = fmt.Sprintf("restore %d %s", len(recs), cli.Plural(len(recs), "fact", "facts"))
	return op
}

func archiveFile(ts *targets.Set) string {
	return filepath.Join(ts.Root, filepath.FromSlash(targets.DetailDir), targets.ArchiveName)
}

func isDetail(name string) bool {
	return strings.HasPrefix(name, targets.DetailDir+"/")
}

func detailPaths(ts *targets.Set) []string {
	var out []string
	for _, d := range ts.Details {
		out = append(out, d.Path)
	}
	return out
}
