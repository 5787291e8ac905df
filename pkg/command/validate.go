package command

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/catalog"
	"github.com/intermem/intermem/pkg/cite"
	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/project"
	"github.com/intermem/intermem/pkg/source"
	"github.com/intermem/intermem/pkg/source/automemory"
	"github.com/intermem/intermem/pkg/stability"
	"github.com/intermem/intermem/pkg/store"
	"github.com/intermem/intermem/pkg/targets"
	"github.com/intermem/intermem/pkg/validate"
)

const validateUsage = `Usage: intermem validate [--project DIR] [--json] [--source NAME]... [--promoted|--memory]
                         [--verbose] [--cite-root DIR]

Checks every file, directory, glob and symbol that entries cite, scores each
entry's confidence, and reports:

  stale      a citation is broken (the file is gone): do not trust the entry
  ok         its citations check out (a moved file is reported with the fix)
  unchecked  it cites nothing that can be checked here (preferences, URLs,
             paths outside the project) — not a defect

A cited path the project has never had (templates/invoice.html where there
is no templates/, now or in git history) is listed as "not in this
project": not stale, but unverified, and its entry's confidence is lower.
When the memories are about another repository, --cite-root DIR resolves
cited paths against DIR instead.

Every source that cites code is validated: promoted facts (marked entries
in CLAUDE.md, AGENTS.md and docs/intermem/), auto-memory, and the documents
other tools keep (compound solution docs under docs/solutions/, clavain
learnings and their Evidence: lines, statements of instruction files).
--source NAME (repeatable) validates only those sources; --promoted and
--memory are short for --source promoted and --source auto-memory. Only
promoted facts are ever archived (by intermem sweep) because of what
validation finds; the other sources' files are reported, never edited.

Each check is kept in the store as an audit trail, with the project's
commit and a hash of every cited file (computed as git does), so the next
run says which entries' cited code changed since they were validated,
though the files still exist: re-read those. Promoted facts whose
citations hold have their decay clock refreshed.

Exit status: 0 when no entry is stale, 1 when some are (the report is
printed either way, and with --json too), 2 for a usage error. Scripts and
CI can run "intermem validate --promoted" as a check.
`

// citeFlags choose what citations are resolved against: the project, or,
// for memories kept in one repository about another, --cite-root.
type citeFlags struct {
	root string
}

func (f *citeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.root, "cite-root", "", "resolve cited paths against `DIR` instead of the project (memories kept in one repository about another)")
}

// checker returns a Checker for the chosen root, and that root when it is
// not the project's ("" otherwise).
func (f *citeFlags) checker(env *cli.Env, p *project.Project) (*cite.Checker, string, error) {
	if f.root == "" {
		return cite.NewChecker(p.Root), "", nil
	}
	dir := f.root
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(env.Dir, dir)
	}
	dir = filepath.Clean(dir)
	fi, err := os.Stat(dir)
	why := "not a directory"
	if err != nil {
		why = err.Error()
		var pe *fs.PathError
		if errors.As(err, &pe) {
			why = pe.Err.Error()
		}
	}
	if err != nil || !fi.IsDir() {
		return nil, "", cli.Errorf("pass the directory of the code the memories are about", "--cite-root %s: %s", f.root, why)
	}
	if dir == p.Root {
		return cite.NewChecker(p.Root), "", nil
	}
	return cite.NewChecker(dir), dir, nil
}

func runValidate(ctx context.Context, env *cli.Env, args []string) error {
	var c common
	fset := cli.FlagSet("intermem validate", validateUsage, env.Stdout)
	c.register(fset, true)
	var only multiFlag
	fset.Var(&only, "source", "validate only the source `NAME` (repeatable: promoted, auto-memory, compound, clavain, …)")
	onlyPromoted := fset.Bool("promoted", false, "validate only promoted facts (--source promoted)")
	onlyMemory := fset.Bool("memory", false, "validate only auto-memory entries (--source auto-memory)")
	verbose := fset.Bool("verbose", false, "also list healthy and unchecked entries")
	var cf citeFlags
	cf.register(fset)
	if _, err := cli.Parse(fset, args); err != nil {
		return err
	}
	if *onlyPromoted && *onlyMemory {
		return cli.Usagef("--promoted and --memory are exclusive (omit both to validate everything)")
	}
	if *onlyPromoted {
		only = append(only, promotedSource)
	}
	if *onlyMemory {
		only = append(only, automemory.Name)
	}
	p, err := c.resolve(env)
	if err != nil {
		return err
	}
	checker, citeRoot, err := cf.checker(env, p)
	if err != nil {
		return err
	}
	w, err := openWriter(env, p, "intermem validate")
	if err != nil {
		return err
	}
	defer w.Close()

	ts, err := loadTargets(p)
	if err != nil {
		return err
	}
	// The catalog is brought up to date and the entries read in one
	// transaction; citations are checked outside any (they read the tree
	// and git history: hooks must not wait on that).
	var items []validate.Item
	if err := w.update(func(tx *bolt.Tx) error {
		return buildCatalog(env, p, tx, w.now, func(cat *catalog.Catalog) error {
			items, err = validateItems(cat, ts, only, stability.Threshold(env.Get))
			var me memoryReadError
			if errors.As(err, &me) {
				return memoryError(p, me.err)
			}
			return err
		})
	}); err != nil {
		return err
	}
	root := p.Root
	if citeRoot != "" {
		root = citeRoot
	}
	rep := validate.Run(checker, root, items, stability.Threshold(env.Get))
	rep.CiteRoot, rep.Commit = citeRoot, project.Head(root)
	if err := w.update(func(tx *bolt.Tx) error { return recordChecks(tx, rep, w.now) }); err != nil {
		return fmt.Errorf("record checks: %w", err)
	}
	if c.json {
		if err := writeJSON(env.Stdout, rep); err != nil {
			return err
		}
	} else {
		printValidate(env.Stdout, rep, *verbose)
	}
	if rep.Stale > 0 {
		return &cli.Error{Err: fmt.Errorf("%d stale %s found", rep.Stale, cli.Plural(rep.Stale, "entry", "entries")), Code: 1,
			Hint: "fix or remove them (listed above); intermem sweep archives promoted facts that stay stale"}
	}
	return nil
}

// promotedSource names intermem's promoted facts: a catalog source once
// one is registered under the name, else read from the markers of the
// curated documents.
const promotedSource = "promoted"

// validateItems lists what validate checks, of the sources named in only
// (every source that is on when none): promoted facts, auto-memory entries
// but pointers (with the sessions that saw them), and every entry of the
// other sources by the citations it lists — one listing none is recorded
// as citing nothing checkable (observations, which claim nothing, are
// left out).
func validateItems(cat *catalog.Catalog, ts *targets.Set, only []string, threshold int) ([]validate.Item, error) {
	registered := map[string]bool{}
	for _, n := range cat.Names() {
		registered[n] = true
	}
	var named []string
	for _, n := range only {
		if n != promotedSource || registered[n] {
			named = append(named, n)
		}
	}
	if err := sourceFilter(cat, named); err != nil {
		return nil, err
	}
	want := func(n string) bool {
		if len(only) == 0 {
			return n == promotedSource && !registered[n] || cat.On(n)
		}
		return slices.Contains(only, n)
	}
	var items []validate.Item
	if want(promotedSource) && !registered[promotedSource] {
		for _, d := range ts.Docs() {
			for _, m := range d.Doc.Marked() {
				if !m.Heading { // a marked heading carries no claim of its own
					items = append(items, validate.Item{ID: m.ID, Source: promotedSource, Text: m.Text, File: d.Name, Line: m.Line, Promoted: true,
						Sessions: cat.Overlay(m.ID).Sessions})
				}
			}
		}
	}
	for _, n := range cat.Names() {
		if !want(n) {
			continue
		}
		if n == automemory.Name {
			mem, err := cat.Memory(threshold)
			if err != nil {
				return nil, memoryReadError{err}
			}
			// Each distinct entry once, as sources, status and the plan
			// count them: identical lines are one fact, the first copy
			// standing for it.
			seen := make(map[string]bool, len(mem.Items))
			for _, it := range mem.Items {
				if it.Kind != automem.Pointer && !seen[it.ID] {
					seen[it.ID] = true
					items = append(items, validate.Item{ID: it.ID, Source: n, Text: it.Text, File: automemory.Prefix + it.File, Line: it.StartLine, Sessions: it.Sessions()})
				}
			}
			continue
		}
		for _, e := range cat.Entries(n) {
			if n == promotedSource {
				items = append(items, validate.Item{ID: e.ID, Source: n, Text: e.Text, File: e.Path, Line: e.Line, Promoted: true,
					Sessions: cat.Overlay(e.ID).Sessions})
				continue
			}
			if e.Kind == source.Observation {
				continue
			}
			// An entry citing nothing is validated all the same, as citing
			// nothing checkable: left out, it said "not validated yet"
			// everywhere, forever.
			title := e.Title
			if title == "" {
				title = firstLine(e.Text)
			}
			items = append(items, validate.Item{ID: e.ID, Source: n, Text: title, Cites: validate.CitesOf(e.Citations), Listed: true, File: e.Path, Line: e.Line})
		}
	}
	return items, nil
}

// recordChecks keeps what validation found: each result in the audit
// trail (bounded per entry), the overlay of every entry (confidence,
// status, the commit and the cited files' blob hashes; the report's entries
// get what the previous validation recorded and which cited files changed
// since), the latest confidence of memory entries (what SessionStart
// ranks by), and promoted facts' confidence and decay clock.
func recordChecks(tx *bolt.Tx, rep *validate.Report, now time.Time) error {
	for i := range rep.Entries {
		e := &rep.Entries[i]
		var valid, broken, moved int
		for _, c := range e.Citations {
			switch c.Status {
			case "valid":
				valid++
			case "broken":
				broken++
			case "moved":
				moved++
			}
		}
		rec := store.Check{ID: e.ID, At: now, Where: e.Where, Confidence: e.Confidence, Status: e.Status,
			Valid: valid, Broken: broken, Moved: moved, Reasons: e.Reasons}
		o, err := putValidation(tx, &rec, rep.Commit, e.Blobs, e.Promoted, e.Source == automemory.Name)
		if err != nil {
			return err
		}
		if !o.Validated.IsZero() {
			e.LastValidated, e.LastCommit = o.Validated, o.Commit
			e.Changed = changedBlobs(o.Blobs, e.Blobs)
			if len(e.Changed) > 0 {
				rep.Changed++
			}
		}
		if !e.Promoted {
			continue
		}
		p, ok := store.GetPromoted(tx, e.ID)
		if !ok {
			// A marked entry intermem has no record of (the store was
			// rebuilt, or the marker was copied by hand): adopt it, so
			// decay and injection know about it.
			p = store.Promoted{ID: e.ID, Target: e.File, At: now, Text: e.Text, LastEvidence: now, Cited: valid+broken+moved > 0}
		}
		p.Confidence = e.Confidence
		if e.Status == validate.OK && broken == 0 && valid > 0 {
			p.LastEvidence = now
		}
		if err := store.PutPromoted(tx, &p); err != nil {
			return err
		}
	}
	return nil
}

// putValidation records one entry's validation whole, as every writer
// that checks citations does (validate, a plan): the check in the audit
// trail (every one of a promoted fact, only changes of other entries), the
// overlay's confidence, status, date, commit and cited files' blobs
// together — a plan that refreshed the date alone left provenance saying
// "validated" on one day and "changed since" against another's hashes —
// and, with fact, the latest confidence the SessionStart hook reads
// (store.Fact). It returns the overlay as it was before.
func putValidation(tx *bolt.Tx, rec *store.Check, commit string, blobs map[string]string, promoted, fact bool) (store.Overlay, error) {
	if err := store.RecordCheck(tx, rec, promoted); err != nil {
		return store.Overlay{}, err
	}
	cat := store.Catalog(tx)
	o, _ := cat.Overlay(rec.ID)
	was := o
	o.Confidence, o.Validated, o.Status, o.Commit, o.Blobs = rec.Confidence, rec.At, rec.Status, commit, blobs
	if err := cat.PutOverlay(rec.ID, &o); err != nil {
		return store.Overlay{}, err
	}
	if fact {
		if err := store.PutFact(tx, rec.ID, &store.Fact{Confidence: rec.Confidence, At: rec.At}); err != nil {
			return store.Overlay{}, err
		}
	}
	return was, nil
}

// changedBlobs lists the files cited at the last validation (was) whose
// blob differs now (now; a file no longer validly cited has none).
func changedBlobs(was, now map[string]string) []catalog.Drift {
	var out []catalog.Drift
	for p, h := range was {
		if now[p] != h {
			out = append(out, catalog.Drift{Path: p, Was: h, Now: now[p]})
		}
	}
	slices.SortFunc(out, func(a, b catalog.Drift) int { return strings.Compare(a.Path, b.Path) })
	return out
}

func printValidate(w io.Writer, r *validate.Report, verbose bool) {
	fmt.Fprintf(w, "intermem validate: %d %s checked: %d ok · %d stale · %d unchecked\n",
		r.Checked, cli.Plural(r.Checked, "entry", "entries"), r.OK, r.Stale, r.Unchecked)
	if r.CiteRoot != "" {
		fmt.Fprintf(w, "Cited paths resolved against %s (--cite-root).\n", cli.Line(r.CiteRoot))
	}
	section := func(title string, keep func(e *validate.Entry) bool, showCitations bool) {
		var n int
		for i := range r.Entries {
			if keep(&r.Entries[i]) {
				n++
			}
		}
		if n == 0 {
			return
		}
		fmt.Fprintf(w, "\n%s (%d):\n", title, n)
		for i := range r.Entries {
			e := &r.Entries[i]
			if !keep(e) {
				continue
			}
			kind := ""
			switch {
			case e.Promoted:
				kind = "promoted "
			case e.Source != automemory.Name:
				kind = e.Source + " "
			}
			fmt.Fprintf(w, "  %s%s  %q  (confidence %.2f)\n", kind, cli.Line(e.Where), clip(firstLine(e.Text), 70), e.Confidence)
			if !showCitations {
				continue
			}
			for _, c := range e.Citations {
				switch c.Status {
				case "broken":
					fmt.Fprintf(w, "      ✗ %s: %s\n", cli.Line(c.Text), cli.Line(c.Detail))
				case "moved":
					fmt.Fprintf(w, "      → %s: %s\n        fix: %s\n", cli.Line(c.Text), cli.Line(c.Detail), cli.Line(c.Fix))
				default:
					if c.NotInProject {
						fmt.Fprintf(w, "      ? %s: %s\n", cli.Line(c.Text), cli.Line(c.Detail))
					}
				}
			}
			for _, d := range e.Changed {
				now := "now " + short(d.Now)
				if d.Now == "" {
					now = "no longer readable"
				}
				fmt.Fprintf(w, "      ~ %s: changed since validated %s%s (blob %s, %s)\n", cli.Line(d.Path), e.LastValidated.UTC().Format("2006-01-02 15:04 UTC"), atCommit(e.LastCommit), short(d.Was), now)
			}
		}
	}
	section("Stale: a citation is broken, do not trust these", func(e *validate.Entry) bool { return e.Status == validate.Stale }, true)
	section("Need an edit: a cited file moved", func(e *validate.Entry) bool {
		if e.Status == validate.Stale {
			return false
		}
		for _, c := range e.Citations {
			if c.Status == "moved" {
				return true
			}
		}
		return false
	}, true)
	section("Not in this project: they cite paths this project has never had (not stale; unverified)", func(e *validate.Entry) bool {
		if e.Status == validate.Stale {
			return false
		}
		for _, c := range e.Citations {
			if c.NotInProject {
				return true
			}
		}
		return false
	}, true)
	section("Cited code changed since they were last validated: re-read these", func(e *validate.Entry) bool {
		return e.Status != validate.Stale && len(e.Changed) > 0
	}, true)
	if verbose {
		section("Healthy", func(e *validate.Entry) bool { return e.Status == validate.OK }, false)
		section("Unchecked: nothing checkable", func(e *validate.Entry) bool { return e.Status == validate.Unchecked }, false)
	}
	reported := map[string]bool{}
	for _, e := range r.Entries {
		if e.Status == validate.Stale && !e.Promoted && e.Source != automemory.Name {
			reported[e.Source] = true
		}
	}
	if len(reported) > 0 {
		names := slices.Sorted(maps.Keys(reported))
		fmt.Fprintf(w, "\nEntries of %s are reported only: intermem never archives or edits those files.\n", strings.Join(names, ", "))
	}
	if r.Stale == 0 {
		fmt.Fprintln(w, "\nNo stale entries.")
	} else {
		fmt.Fprintln(w, "\nFix or remove stale entries: edit the text to cite what exists now, or delete the line (for a promoted fact, from the document that holds it).")
	}
}

// short abbreviates a git object name as git does by default.
func short(h string) string {
	if len(h) > 7 {
		return h[:7]
	}
	return h
}

// atCommit says which commit a validation ran at, when known.
func atCommit(h string) string {
	if h == "" {
		return ""
	}
	return " at commit " + short(h)
}

// memoryReadError marks validateItems' failure to read the memory
// directory, which the command gives memoryError's hint.
type memoryReadError struct{ err error }

func (e memoryReadError) Error() string { return e.err.Error() }
func (e memoryReadError) Unwrap() error { return e.err }
