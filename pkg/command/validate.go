package command

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/cite"
	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/project"
	"github.com/intermem/intermem/pkg/stability"
	"github.com/intermem/intermem/pkg/store"
	"github.com/intermem/intermem/pkg/validate"
)

func init() {
	register("validate", "check what promoted facts and memories cite against the code; show stale ones and fixes", runValidate)
}

const validateUsage = `Usage: intermem validate [--project DIR] [--json] [--promoted|--memory] [--verbose]
                         [--cite-root DIR]

Checks every file, directory, glob and symbol that promoted facts (marked
entries in CLAUDE.md, AGENTS.md and docs/intermem/) and auto-memory entries
cite, scores each entry's confidence, and reports:

  stale      a citation is broken (the file is gone): do not trust the entry
  ok         its citations check out (a moved file is reported with the fix)
  unchecked  it cites nothing that can be checked here (preferences, URLs,
             paths outside the project) — not a defect

A cited path the project has never had (templates/invoice.html where there
is no templates/, now or in git history) is listed as "not in this
project": not stale, but unverified, and its entry's confidence is lower.
When the memories are about another repository, --cite-root DIR resolves
cited paths against DIR instead.

Each check is kept in the store as an audit trail. Promoted facts whose
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
	fs.StringVar(&f.root, "cite-root", "", "resolve cited paths against `dir` instead of the project (memories kept in one repository about another)")
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
	fset := cli.FlagSet("intermem validate", validateUsage, env.Stderr)
	c.register(fset, true)
	onlyPromoted := fset.Bool("promoted", false, "validate only promoted facts")
	onlyMemory := fset.Bool("memory", false, "validate only auto-memory entries")
	verbose := fset.Bool("verbose", false, "also list healthy and unchecked entries")
	var cf citeFlags
	cf.register(fset)
	if _, err := cli.Parse(fset, args); err != nil {
		return err
	}
	if *onlyPromoted && *onlyMemory {
		return cli.Usagef("--promoted and --memory are exclusive (omit both to validate everything)")
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
	mem, err := scanMemory(p)
	if err != nil {
		return err
	}
	sessions := map[string]int{}
	_ = w.store.View(func(tx *bolt.Tx) error {
		return store.Each(tx, store.BucketEntries, func(id string, e *store.Entry) error {
			sessions[id] = e.Sessions
			return nil
		})
	})
	opts := validate.Options{
		Promoted: !*onlyMemory, Memory: !*onlyPromoted, Threshold: stability.Threshold(env.Get),
		Sessions: func(id string) int { return sessions[id] },
	}
	rep := validate.Run(checker, ts, mem, opts)
	rep.CiteRoot = citeRoot
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

// recordChecks appends each result to the audit trail (bounded per entry)
// and updates promoted facts: their confidence, and their decay clock when
// their citations hold.
func recordChecks(tx *bolt.Tx, rep *validate.Report, now time.Time) error {
	checks, err := tx.CreateBucketIfNotExists(store.BucketChecks)
	if err != nil {
		return err
	}
	for _, e := range rep.Entries {
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
		// Every check of a promoted fact is kept; for auto-memory entries,
		// only changes (a large memory would otherwise grow the store by
		// one record per entry per run).
		if e.Promoted || changedSinceLast(checks, &rec) {
			if err := store.Put(tx, store.BucketChecks, e.ID+"/"+now.Format(time.RFC3339Nano), &rec); err != nil {
				return err
			}
			if err := trimChecks(checks, e.ID); err != nil {
				return err
			}
		}
		if !e.Promoted {
			// The latest confidence of a memory entry, for SessionStart's
			// ranking (package inject reads it without the audit trail).
			if err := store.Put(tx, store.BucketFacts, e.ID, &store.Fact{Confidence: e.Confidence, At: now}); err != nil {
				return err
			}
			continue
		}
		var p store.Promoted
		ok, err := store.Get(tx, store.BucketPromoted, e.ID, &p)
		if err != nil {
			return err
		}
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
		if err := store.Put(tx, store.BucketPromoted, e.ID, &p); err != nil {
			return err
		}
	}
	return nil
}

// changedSinceLast reports whether rec says something different from the
// entry's latest recorded check (or there is none).
func changedSinceLast(b *bolt.Bucket, rec *store.Check) bool {
	c := b.Cursor()
	// Keys are "<id>/<time>"; "0" sorts right after "/".
	k, v := c.Seek([]byte(rec.ID + "0"))
	if k == nil {
		k, v = c.Last()
	} else {
		k, v = c.Prev()
	}
	if k == nil || !strings.HasPrefix(string(k), rec.ID+"/") {
		return true
	}
	var last store.Check
	if json.Unmarshal(v, &last) != nil {
		return true
	}
	return last.Status != rec.Status || last.Confidence != rec.Confidence || last.Where != rec.Where
}

func trimChecks(b *bolt.Bucket, id string) error {
	prefix := []byte(id + "/")
	var keys [][]byte
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && strings.HasPrefix(string(k), string(prefix)); k, _ = c.Next() {
		keys = append(keys, append([]byte{}, k...))
	}
	for len(keys) > store.MaxChecksPerEntry {
		if err := b.Delete(keys[0]); err != nil {
			return err
		}
		keys = keys[1:]
	}
	return nil
}

func printValidate(w io.Writer, r *validate.Report, verbose bool) {
	fmt.Fprintf(w, "intermem validate: %d %s checked: %d ok · %d stale · %d unchecked\n",
		r.Checked, cli.Plural(r.Checked, "entry", "entries"), r.OK, r.Stale, r.Unchecked)
	if r.CiteRoot != "" {
		fmt.Fprintf(w, "Cited paths resolved against %s (--cite-root).\n", r.CiteRoot)
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
			if e.Promoted {
				kind = "promoted "
			}
			fmt.Fprintf(w, "  %s%s  %q  (confidence %.2f)\n", kind, e.Where, clip(firstLine(e.Text), 70), e.Confidence)
			if !showCitations {
				continue
			}
			for _, c := range e.Citations {
				switch c.Status {
				case "broken":
					fmt.Fprintf(w, "      ✗ %s: %s\n", c.Text, c.Detail)
				case "moved":
					fmt.Fprintf(w, "      → %s: %s\n        fix: %s\n", c.Text, c.Detail, c.Fix)
				default:
					if c.NotInProject {
						fmt.Fprintf(w, "      ? %s: %s\n", c.Text, c.Detail)
					}
				}
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
	if verbose {
		section("Healthy", func(e *validate.Entry) bool { return e.Status == validate.OK }, false)
		section("Unchecked: nothing checkable", func(e *validate.Entry) bool { return e.Status == validate.Unchecked }, false)
	}
	if r.Stale == 0 {
		fmt.Fprintln(w, "\nNo stale entries.")
	} else {
		fmt.Fprintln(w, "\nFix or remove stale entries: edit the text to cite what exists now, or delete the line (for a promoted fact, from the document that holds it).")
	}
}
