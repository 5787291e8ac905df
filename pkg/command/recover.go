package command

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/clienv"
	"github.com/intermem/intermem/pkg/journal"
	"github.com/intermem/intermem/pkg/logfile"
	"github.com/intermem/intermem/pkg/project"
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

It also lists the journal records intermem refuses to replay: operations
this user's intermem did not record for this project (a store copied in
with the project), unsigned ones (left by an intermem from before
operations were signed, or planted), operations with a step outside
intermem's places, and records that no longer decode. They are never
replayed and never touch a file; --discard ID drops one, touching no file
either.
`

// RecoverReport is the JSON shape of intermem-recover.
type RecoverReport struct {
	Incomplete []OpInfo `json:"incomplete"`
	// Refused are records recovery leaves alone (see ProblemInfo).
	Refused   []ProblemInfo `json:"refused"`
	Resumed   []OpInfo      `json:"resumed"`
	Discarded []OpInfo      `json:"discarded"`
	// Dropped are refused records --discard deleted.
	Dropped []ProblemInfo `json:"dropped"`
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

// ProblemInfo describes a journal record recovery refuses. Reason is
// "not-ours" (its MAC does not verify: not recorded by this user's
// intermem for this store and project), "unsigned" (it has no MAC: an
// intermem from before operations were signed recorded it, or it was
// planted), "outside" (a step writes outside intermem's places) or
// "damaged" (the record no longer decodes); Why says it in words and Path
// names the offending file. Kind, State, Summary and Files (the files its
// steps name) come from the record itself and are not to be trusted.
type ProblemInfo struct {
	ID      string   `json:"id"`
	Reason  string   `json:"reason"`
	Why     string   `json:"why"`
	Path    string   `json:"path,omitempty"`
	Kind    string   `json:"kind,omitempty"`
	State   string   `json:"state,omitempty"`
	Summary string   `json:"summary,omitempty"`
	Files   []string `json:"files,omitempty"`
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

func problemInfo(root string, pr journal.Problem) ProblemInfo {
	info := ProblemInfo{ID: pr.ID, Why: pr.Why()}
	switch {
	case errors.Is(pr.Err, journal.ErrDamaged):
		info.Reason = "damaged"
		info.Why = pr.Err.Error()
	case errors.Is(pr.Err, journal.ErrStepOutside):
		info.Reason = "outside"
	case errors.Is(pr.Err, journal.ErrUnsigned):
		info.Reason = "unsigned"
	default:
		info.Reason = "not-ours"
	}
	if pr.Path != "" {
		info.Path = relTo(root, pr.Path)
	}
	if pr.Op != nil {
		info.Kind, info.State, info.Summary = pr.Op.Kind, string(pr.Op.State), pr.Op.Summary
		info.Files = opInfo(root, pr.Op).Files
	}
	return info
}

// RecoverMain is the whole of cmd/intermem-recover.
func RecoverMain(ctx context.Context, env *cli.Env, args []string) (code int) {
	env = env.Safe() // every human-readable byte is escaped (see cli.Unsafe)
	defer env.Flush()
	defer cli.Recover(env.Stderr, &code)
	if len(args) == 1 && (args[0] == "--version" || args[0] == "-version" || args[0] == "version") {
		fmt.Fprintf(env.Stdout, "intermem-recover %s\n", clienv.Version)
		return 0
	}
	return cli.Report(env.Stderr, withStoreHint(runRecover(ctx, env, args)))
}

func runRecover(ctx context.Context, env *cli.Env, args []string) error {
	var c common
	fset := cli.FlagSet("intermem-recover", recoverUsage, env.Stdout)
	c.register(fset, true)
	resume := fset.Bool("resume", false, "complete every interrupted operation")
	discard := fset.String("discard", "", "abandon the interrupted operation with this `ID`, undoing its changes to the curated documents; or drop the refused journal record with this ID, touching no file")
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
	rep := RecoverReport{Incomplete: []OpInfo{}, Refused: []ProblemInfo{}, Resumed: []OpInfo{}, Discarded: []OpInfo{}, Dropped: []ProblemInfo{}}
	now, err := env.Now()
	if err != nil {
		return err
	}
	list := func(j *journal.Journal) error {
		return j.Store.View(func(tx *bolt.Tx) error {
			sc, err := j.Scan(tx)
			if err != nil {
				return err
			}
			for _, op := range sc.Ops {
				rep.Incomplete = append(rep.Incomplete, opInfo(p.Root, op))
			}
			for _, pr := range sc.Problems {
				rep.Refused = append(rep.Refused, problemInfo(p.Root, pr))
			}
			return nil
		})
	}

	if !*resume && *discard == "" {
		// Listing only: read-only, so it works while a hook writes.
		st, err := openRead(p)
		if err != nil {
			return err
		}
		if st != nil {
			defer st.Close()
			j, err := newJournal(env, p, st, now, nil, false)
			if err != nil {
				return err
			}
			if err := list(j); err != nil {
				return err
			}
		}
		return printRecover(env, c.json, &rep)
	}

	// Resuming or discarding needs the writer lock, but not the automatic
	// recovery openWriter does: discarding must see the operation as the
	// crash left it.
	if err := p.EnsureStateDir(); err != nil {
		return stateDirError(p, err)
	}
	unlock, err := journal.Lock(p.StateDir, cliWait)
	if err != nil {
		return cli.WithHint(err, "wait for the other intermem command to finish")
	}
	defer unlock()
	log := logfile.New(p.Path("log"), "intermem-recover", func() time.Time { return now }, redact.String)
	st, err := openChecked(p, store.Options{Timeout: cliWait, Logf: log.Printf, Now: now}, env)
	if err != nil {
		return storeError(err)
	}
	defer st.Close()
	j, err := newJournal(env, p, st, now, log.Printf, true)
	if err != nil {
		return err
	}
	var sc *journal.Scan
	if err := st.View(func(tx *bolt.Tx) error {
		var err error
		sc, err = j.Scan(tx)
		return err
	}); err != nil {
		return err
	}
	if *discard != "" {
		var target *journal.Op
		for _, op := range sc.Ops {
			if op.ID == *discard {
				target = op
			}
		}
		if target == nil {
			// A refused or damaged record is dropped, touching no file.
			pr, err := j.Drop(*discard)
			if errors.Is(err, journal.ErrNotAProblem) {
				return cli.Errorf("run intermem-recover to list interrupted operations", "no interrupted operation %q", *discard)
			}
			if err != nil {
				return err
			}
			log.Printf("dropped refused journal record %s (%s)", pr.ID, pr.Why())
			rep.Dropped = append(rep.Dropped, problemInfo(p.Root, pr))
		} else {
			if err := j.Discard(target); err != nil {
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
					if rec, ok := store.GetPromoted(tx, id); ok && rec.Op == target.ID {
						if err := store.DeletePromoted(tx, id); err != nil {
							return err
						}
					}
				}
				return nil
			}); err != nil {
				return err
			}
		}
	} else {
		for _, op := range sc.Ops {
			if err := j.Resume(op); err != nil {
				return cli.WithHint(fmt.Errorf("resume %s: %w", op.ID, err),
					"a file changed in a way intermem will not guess about; see .intermem/log, fix the file, and run this again")
			}
			log.Printf("resumed %s operation %s (%s)", op.Kind, op.ID, op.Summary)
			rep.Resumed = append(rep.Resumed, opInfo(p.Root, op))
		}
	}
	if err := list(j); err != nil {
		return err
	}
	return printRecover(env, c.json, &rep)
}

func printRecover(env *cli.Env, asJSON bool, rep *RecoverReport) error {
	if asJSON {
		return writeJSON(env.Stdout, rep)
	}
	w := env.Stdout
	for _, op := range rep.Resumed {
		fmt.Fprintf(w, "Resumed and completed %s (%s).\n", op.ID, cli.Line(op.Summary))
	}
	for _, op := range rep.Discarded {
		fmt.Fprintf(w, "Discarded %s (%s): its changes to %s were undone; the entries stay in auto-memory.\n", op.ID, cli.Line(op.Summary), cli.Line(fmt.Sprint(op.Files)))
	}
	for _, pr := range rep.Dropped {
		fmt.Fprintf(w, "Dropped journal record %s (%s); no file was touched.\n", pr.ID, cli.Line(pr.Why))
	}
	if len(rep.Incomplete) == 0 && len(rep.Refused) == 0 {
		if len(rep.Resumed)+len(rep.Discarded)+len(rep.Dropped) == 0 {
			fmt.Fprintln(w, "No interrupted operations.")
		}
		return nil
	}
	if len(rep.Incomplete) > 0 {
		fmt.Fprintf(w, "%d interrupted %s:\n", len(rep.Incomplete), cli.Plural(len(rep.Incomplete), "operation", "operations"))
		for _, op := range rep.Incomplete {
			fmt.Fprintf(w, "  %s  %s, %s, started %s; files: %s\n", op.ID, cli.Line(op.Summary), op.State, op.Created, cli.Line(fmt.Sprint(op.Files)))
		}
		fmt.Fprintln(w, "Run intermem-recover --resume to complete them, or --discard ID to abandon one.")
	}
	if len(rep.Refused) > 0 {
		fmt.Fprintf(w, "%d journal %s intermem will not replay:\n", len(rep.Refused), cli.Plural(len(rep.Refused), "record", "records"))
		for _, pr := range rep.Refused {
			fmt.Fprintf(w, "  %s  %s\n", clip(pr.ID, 40), refusalText(pr))
		}
		fmt.Fprintln(w, "They were never replayed. Run intermem-recover --discard ID to drop one; no file is touched.")
		for _, pr := range rep.Refused {
			if pr.Reason == "unsigned" {
				fmt.Fprintln(w, "An unsigned operation was recorded by an intermem from before operations were signed, or planted:")
				fmt.Fprintln(w, "nothing shows which, so it is never replayed. Check what it claims and the files it names; if it")
				fmt.Fprintln(w, "is yours, finish or undo its change there by hand, then drop it with --discard ID.")
				break
			}
		}
	}
	return nil
}

// refusalText says why a record is refused, and what it claims to be. The
// record is not intermem's: its text is clipped here, and escaped like all
// output by the command's writer (cli.SafeWriter).
func refusalText(pr ProblemInfo) string {
	var b strings.Builder
	switch pr.Reason {
	case "damaged":
		b.WriteString("damaged: " + pr.Why)
	default:
		b.WriteString("refused: " + pr.Why)
		if pr.Path != "" {
			if pr.Reason == "outside" {
				b.WriteString(": " + clip(pr.Path, 120))
			} else {
				b.WriteString("; it would write " + clip(pr.Path, 120))
			}
		}
	}
	if pr.Kind != "" || pr.Summary != "" {
		fmt.Fprintf(&b, " (claims: %s %q)", clip(pr.Kind, 20), clip(pr.Summary, 60))
	}
	if pr.Reason == "unsigned" && pr.Path == "" && len(pr.Files) > 0 {
		var files []string
		for _, f := range pr.Files[:min(len(pr.Files), 4)] {
			files = append(files, clip(f, 160))
		}
		fmt.Fprintf(&b, "; files: %s", cli.Line(strings.Join(files, ", ")))
		if len(pr.Files) > 4 {
			fmt.Fprintf(&b, " and %d more", len(pr.Files)-4)
		}
	}
	return b.String()
}

// openChecked opens the store to write after checking all of it (bbolt's
// consistency check): a store damaged where no transaction has looked yet
// (status failing with "store is damaged") is kept aside and rebuilt here,
// its journal carried over (store.Check, damage.go), and the rebuilt store
// is the one returned, so --resume and --discard then see the operations
// that were in flight. It says the store was rebuilt only when Close did
// rebuild it (store.Rebuilt); a rebuild that failed is the error.
func openChecked(p *project.Project, o store.Options, env *cli.Env) (*store.Store, error) {
	st, err := store.Open(p.Path("intermem.db"), o)
	if err != nil {
		return nil, err
	}
	cerr := st.Check()
	if cerr == nil {
		return st, nil
	}
	st.Close() // keeps the damaged file aside and rebuilds the store
	aside, rerr := st.Rebuilt()
	switch {
	case rerr != nil:
		return nil, fmt.Errorf("%w; %w (see .intermem/log)", cerr, rerr)
	case aside != "":
		fmt.Fprintf(env.Stderr, "intermem-recover: the store was damaged (%v); it is kept as .intermem/%s and was rebuilt, what of its journal could be read carried over (see .intermem/log)\n", cerr, cli.Line(aside))
	default:
		fmt.Fprintf(env.Stderr, "intermem-recover: the store was damaged (%v); another intermem process had already rebuilt it\n", cerr)
	}
	return store.Open(p.Path("intermem.db"), o)
}
