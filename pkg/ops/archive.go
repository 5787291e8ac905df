package ops

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/intermem/intermem/pkg/archive"
	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/journal"
	"github.com/intermem/intermem/pkg/sweep"
	"github.com/intermem/intermem/pkg/targets"
	"github.com/intermem/intermem/pkg/tier"
)

// Step actions of the archive (docs/intermem/.archived.md, package
// archive).
const (
	// ActArchiveAdd adds a record: ID, Section, Block; Extra is
	// "from\x00reason\x00RFC 3339 time".
	ActArchiveAdd = "archive-add"
	// ActArchiveRemove removes the record ID.
	ActArchiveRemove = "archive-remove"
)

// Archive builds the operation that moves facts out of the documents into
// the archive: each is first added to the archive, then removed from its
// document, so at any crash point it exists somewhere; emptied detail
// documents go and the index is refreshed. A discard keeps what phase 1
// did (the facts stay archived, restorable).
func Archive(ts *targets.Set, tasks []sweep.ArchiveTask, now time.Time) *journal.Op {
	op := &journal.Op{Kind: KindArchive}
	archivePath := archiveFile(ts)
	var adds, removes, drops []journal.Step
	detail := false
	for _, t := range tasks {
		block := tier.RawBlock(t.Doc.Content, t.Marked)
		adds = append(adds, archiveAdd(archivePath, archive.Record{
			ID: t.Marked.ID, At: now, From: t.Doc.Name, Section: t.Marked.Section, Reason: t.Reason, Block: block,
		}))
		removes = append(removes, journal.Step{Phase: 1, Path: t.Doc.Path, Action: ActRemoveMarked, ID: t.Marked.ID})
		if isDetail(t.Doc.Name) {
			detail = true
			drops = append(drops, journal.Step{Phase: 1, Path: t.Doc.Path, Action: ActDropEmptyDetail})
		}
		op.Entries = append(op.Entries, t.Marked.ID)
	}
	op.Steps = append(append(adds, removes...), drops...)
	if detail {
		op.Steps = append(op.Steps, indexStep(ts, detailPaths(ts)))
	}
	op.Summary = fmt.Sprintf("archive %d %s", len(tasks), cli.Plural(len(tasks), "fact", "facts"))
	return op
}

// Restore builds the operation that puts archived facts back where they
// were: each is inserted into its document (a detail document created
// when gone), then removed from the archive. Every record's origin must
// have passed archive.Record.CheckOrigin.
func Restore(ts *targets.Set, recs []archive.Record) *journal.Op {
	op := &journal.Op{Kind: KindRestore}
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
			inserts = append(inserts, journal.Step{Phase: 1, Path: path, Action: ActEnsureDetail, Section: r.Section})
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
		inserts = append(inserts, journal.Step{Phase: 1, Path: path, Action: ActInsert, ID: r.ID, Section: r.Section, Block: r.Block})
		removes = append(removes, journal.Step{Phase: 1, Path: archivePath, Action: ActArchiveRemove, ID: r.ID})
		op.Entries = append(op.Entries, r.ID)
	}
	op.Steps = append(inserts, removes...)
	if detail {
		op.Steps = append(op.Steps, indexStep(ts, paths))
	}
	op.Summary = fmt.Sprintf("restore %d %s", len(recs), cli.Plural(len(recs), "fact", "facts"))
	return op
}

// archiveAdd encodes a record into an archive-add step.
func archiveAdd(path string, r archive.Record) journal.Step {
	return journal.Step{Phase: 1, Path: path, Action: ActArchiveAdd, ID: r.ID, Section: r.Section, Block: r.Block,
		Extra: r.From + "\x00" + r.Reason + "\x00" + r.At.UTC().Format(time.RFC3339)}
}

func applyArchiveAdd(s *journal.Step, cur []byte, exists bool, read journal.Reader) ([]byte, bool, error) {
	parts := strings.SplitN(s.Extra, "\x00", 3)
	for len(parts) < 3 {
		parts = append(parts, "")
	}
	at, _ := time.Parse(time.RFC3339, parts[2])
	r := archive.Record{ID: s.ID, Section: s.Section, Block: s.Block, From: parts[0], Reason: parts[1], At: at}
	return archive.Add(cur, r), true, nil
}

func applyArchiveRemove(s *journal.Step, cur []byte, exists bool, read journal.Reader) ([]byte, bool, error) {
	if !exists {
		return nil, false, nil
	}
	return archive.Remove(cur, s.ID), true, nil
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
