package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/catalog"
	"github.com/intermem/intermem/pkg/cite"
	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/clienv"
	"github.com/intermem/intermem/pkg/journal"
	"github.com/intermem/intermem/pkg/loaded"
	"github.com/intermem/intermem/pkg/ops"
	"github.com/intermem/intermem/pkg/plan"
	"github.com/intermem/intermem/pkg/project"
	"github.com/intermem/intermem/pkg/promote"
	"github.com/intermem/intermem/pkg/source/automemory"
	"github.com/intermem/intermem/pkg/source/written"
	"github.com/intermem/intermem/pkg/stability"
	"github.com/intermem/intermem/pkg/store"
	"github.com/intermem/intermem/pkg/tier"
	"github.com/intermem/intermem/pkg/validate"
)

const synthesizeUsage = `Usage:
  intermem-synthesize plan  [--project DIR] [--json] [--max N] [--no-validate | --cite-root DIR]
  intermem-synthesize apply --approve SPEC [--reject SPEC] [--edit N=TEXT]...
                            [--target N=AGENTS.md|CLAUDE.md]... [--promote-redacted N,…]
                            [--import-agents] [--allow-outside] [--dry-run] [--json] [--project DIR]

plan lists the stable auto-memory entries worth promoting, numbered and
grouped by the document they would go to, with what intermem noticed about
each. apply promotes the approved numbers and prunes them from auto-memory,
through a crash-safe journal. SPEC is like 1,3,5-8 or all. Entries that
hold a secret are listed apart, as kept private: never pruned, promoted
(redacted) only when named with --promote-redacted.

/intermem:synthesize runs both for you inside Claude Code.
`

// SynthesizeMain is the whole of cmd/intermem-synthesize.
func SynthesizeMain(ctx context.Context, env *cli.Env, args []string) (code int) {
	env = env.Safe() // every human-readable byte is escaped (see cli.Unsafe)
	defer env.Flush()
	defer cli.Recover(env.Stderr, &code)
	if len(args) == 0 {
		fmt.Fprint(env.Stderr, synthesizeUsage)
		return 2
	}
	var err error
	switch args[0] {
	case "plan":
		err = runPlan(ctx, env, args[1:])
	case "apply":
		err = runApply(ctx, env, args[1:])
	case "-h", "-help", "--help", "help":
		fmt.Fprint(env.Stdout, synthesizeUsage)
		return 0
	case "-version", "--version", "version":
		fmt.Fprintf(env.Stdout, "intermem-synthesize %s\n", clienv.Version)
		return 0
	default:
		err = &cli.Error{Err: fmt.Errorf("unknown subcommand %q", args[0]), Hint: "use plan or apply", Code: 2}
	}
	return cli.Report(env.Stderr, withStoreHint(err))
}

const planUsage = `Usage: intermem-synthesize plan [--project DIR] [--json] [--max N]
                               [--no-validate | --cite-root DIR]

Lists the auto-memory entries that have stayed unchanged across enough
sessions to be trusted, minus what the curated documents already say, with
stale ones blocked. Saves the plan for intermem-synthesize apply.

Citations are checked against the project (--cite-root DIR: against DIR,
for memories kept in one repository about another). --no-validate skips
the checks, which is faster on huge trees; the plan says so, and apply
checks the entries approved from such a plan and refuses stale ones.
`

func runPlan(ctx context.Context, env *cli.Env, args []string) error {
	var c common
	fset := cli.FlagSet("intermem-synthesize plan", planUsage, env.Stdout)
	c.register(fset, true)
	max := fset.Int("max", plan.DefaultMax, "show at most `N` candidates, the best-established first (0: no cap)")
	noValidate := fset.Bool("no-validate", false, "skip citation checks (faster on huge trees); apply then checks the approved entries")
	var cf citeFlags
	cf.register(fset)
	if _, err := cli.Parse(fset, args); err != nil {
		return err
	}
	if *max < 0 {
		return cli.Usagef("--max must be 0 or more")
	}
	if *noValidate && cf.root != "" {
		return cli.Usagef("--no-validate and --cite-root are exclusive (--cite-root says where to check citations)")
	}
	p, err := c.resolve(env)
	if err != nil {
		return err
	}
	var checker *cite.Checker
	var citeRoot string
	if !*noValidate {
		if checker, citeRoot, err = cf.checker(env, p); err != nil {
			return err
		}
	}
	w, err := openWriter(env, p, "intermem-synthesize")
	if err != nil {
		return err
	}
	defer w.Close()

	pl, err := buildPlan(env, w, *max, checker, citeRoot)
	if err != nil {
		return err
	}
	if err := w.update(func(tx *bolt.Tx) error {
		if err := recordScores(tx, pl); err != nil {
			return err
		}
		return store.PutPlan(tx, pl)
	}); err != nil {
		return fmt.Errorf("save plan: %w", err)
	}
	if c.json {
		return writeJSON(env.Stdout, pl)
	}
	printPlan(env.Stdout, pl, w.Recovered)
	return nil
}

// buildPlan builds the plan; a nil checker skips citation checks.
func buildPlan(env *cli.Env, w *writer, max int, checker *cite.Checker, citeRoot string) (*plan.Plan, error) {
	var in plan.Inputs
	var homes map[string]string
	memOff := false
	err := w.update(func(tx *bolt.Tx) error {
		return buildCatalog(env, w.p, tx, w.now, func(cat *catalog.Catalog) error {
			memOff = !cat.On(automemory.Name)
			var err error
			if in, err = planInputs(env, w.p, cat, tx, w.now, max); err != nil {
				return err
			}
			homes, err = promotedHomes(tx)
			return err
		})
	})
	in.Checker, in.CiteRoot = checker, citeRoot
	if err != nil {
		return nil, fmt.Errorf("read memory: %w", err)
	}
	pl := plan.Build(in)
	pl.MemoryOff = memOff
	// What the plan shows is what apply writes: links rewritten.
	if err := promote.Preview(pl, in.Catalog.Dir, in.Targets, in.Layout, homes); err != nil {
		w.log.Printf("%v", err)
	}
	return pl, nil
}

// promotedHomes maps the memory files promoted before to the documents
// they went to (relative to the root): a link to one points there.
func promotedHomes(tx *bolt.Tx) (map[string]string, error) {
	homes := map[string]string{}
	err := store.EachPromoted(tx, func(r *store.Promoted) error {
		if r.Kind == string(automem.Memory) && !r.Archived && r.Origin != "" {
			homes[r.Origin] = r.Target
		}
		return nil
	})
	return homes, err
}

// solutionPaths are the paths of the project's solution documents now,
// read through the catalog in a read-only transaction of st (nil: no
// store), so nothing is written: a prune of an entry
// "documented in" one needs it still there.
//
// It also returns the memories in the written set now (writtenNow): an
// approved one must still be there.
func solutionPaths(env *cli.Env, p *project.Project, st *store.Store, now time.Time) (map[string]bool, map[string]automem.Entry, error) {
	paths := map[string]bool{}
	var wr map[string]automem.Entry
	collect := func(c *catalog.Catalog) error {
		for _, e := range solutions(c) {
			paths[e.Path] = true
		}
		wr = writtenNow(c)
		return nil
	}
	if st == nil {
		return paths, wr, buildCatalog(env, p, nil, now, collect)
	}
	return paths, wr, st.View(func(tx *bolt.Tx) error { return buildCatalog(env, p, tx, now, collect) })
}

// recordScores records what a plan learned checking citations as each
// entry's validation, whole (putValidation: confidence, status, date,
// commit and the cited files' blobs), as validate records it: the
// SessionStart hook's count of what is ready reads it (it cannot check
// citations itself: that may run git), and provenance and validate
// compare the cited files with it.
func recordScores(tx *bolt.Tx, pl *plan.Plan) error {
	if len(pl.Checks) == 0 {
		return nil
	}
	root := pl.Root
	if pl.CiteRoot != "" {
		root = pl.CiteRoot
	}
	commit := project.Head(root)
	for id, c := range pl.Checks {
		where := fmt.Sprintf("%s:%d", c.File, c.Line)
		if !c.Written {
			where = automemory.Prefix + where // as validate names it
		}
		rec := store.Check{ID: id, At: pl.Created, Where: where, Confidence: c.Score.Confidence, Status: validate.StatusOf(c.Score),
			Valid: c.Score.Valid, Broken: c.Score.Broken, Moved: c.Score.Moved, Reasons: c.Score.Reasons}
		if _, err := putValidation(tx, &rec, commit, c.Blobs, false, true); err != nil {
			return err
		}
	}
	return nil
}

func printPlan(w io.Writer, pl *plan.Plan, recovered []*journal.Op) {
	for _, op := range recovered {
		fmt.Fprintf(w, "Recovered an interrupted operation first: %s.\n\n", op.Summary)
	}
	if pl.Baseline && pl.MemoryOff {
		fmt.Fprintln(w, "Nothing to plan: auto-memory is switched off in .intermem/config.json (not catalogued, searched or served), and no memory written through intermem is waiting.")
		return
	}
	if pl.Baseline {
		fmt.Fprintf(w, "Building baseline: %d %s seen across %d %s; nothing is stable yet (stable = unchanged in %d %s).\nRun again after a few more sessions.\n",
			pl.Entries, cli.Plural(pl.Entries, "entry", "entries"), pl.Sessions, cli.Plural(pl.Sessions, "session", "sessions"), pl.Threshold, cli.Plural(pl.Threshold, "session", "sessions"))
		return
	}
	from := fmt.Sprintf("%d stable %s", pl.Stable, cli.Plural(pl.Stable, "entry", "entries"))
	if pl.Written > 0 {
		from += fmt.Sprintf(" and %d written %s", pl.Written, cli.Plural(pl.Written, "memory", "memories"))
	}
	fmt.Fprintf(w, "intermem synthesis plan: %d %s from %s (%d %s observed)\n",
		len(pl.Candidates), cli.Plural(len(pl.Candidates), "candidate", "candidates"), cli.Line(from),
		pl.Sessions, cli.Plural(pl.Sessions, "session", "sessions"))
	if !pl.Validated {
		fmt.Fprintln(w, "Citations were not validated (--no-validate): confidences leave them out and stale entries are not blocked; apply checks the entries you approve before promoting them.")
	}
	if pl.CiteRoot != "" {
		fmt.Fprintf(w, "Cited paths resolved against %s (--cite-root).\n", cli.Line(pl.CiteRoot))
	}
	group := ""
	for _, c := range pl.Candidates {
		g := c.Target
		switch {
		case c.Action == plan.ActionPrune && c.DocumentedIn != "":
			g = "Documented in the project's solution docs (approve to prune from memory; the documents stay as they are)"
		case c.Action == plan.ActionPrune:
			g = "Already loaded every session (approve to prune from memory; nothing is added)"
		}
		if g != group {
			group = g
			fmt.Fprintf(w, "\n%s\n", group)
		}
		printCandidate(w, c, "")
	}
	if len(pl.Candidates) == 0 {
		fmt.Fprintln(w, "\nNothing new to promote: every stable entry is already in CLAUDE.md/AGENTS.md, was rejected, blocked or kept private.")
	} else if cost := tokenCost(pl.TokensAdded, pl.TokensSaved); cost != "" {
		fmt.Fprintf(w, "\nApproving all %d: %s.\n", len(pl.Candidates), cost)
	}
	if len(pl.Private) > 0 {
		fmt.Fprintf(w, "\nKept private: holds a secret (%d %s: never pruned from auto-memory, not covered by --approve)\n",
			len(pl.Private), cli.Plural(len(pl.Private), "entry", "entries"))
		for _, c := range pl.Private {
			printCandidate(w, c, " · would go to "+c.Target)
		}
	}
	if len(pl.Blocked) > 0 {
		fmt.Fprintf(w, "\nBlocked (stale, not offered):\n")
		for _, b := range pl.Blocked {
			fmt.Fprintf(w, "   - %q (%s:%d): %s\n", clip(b.Text, 70), cli.Line(b.File), b.Line, cli.Line(b.Reason))
		}
	}
	if len(pl.TimeBound) > 0 {
		fmt.Fprintf(w, "\nTime-bound, not offered (the state of something on a day, stale soon after):\n")
		for _, b := range pl.TimeBound {
			fmt.Fprintf(w, "   - %q (%s:%d): %s\n", clip(b.Text, 70), cli.Line(b.File), b.Line, cli.Line(b.Reason))
		}
	}
	var skipped []string
	if pl.SkippedDuplicates > 0 {
		skipped = append(skipped, fmt.Sprintf("%d already said in a curated document Claude Code does not load", pl.SkippedDuplicates))
	}
	if pl.SkippedPromoted > 0 {
		skipped = append(skipped, fmt.Sprintf("%d promoted before", pl.SkippedPromoted))
	}
	if pl.SkippedRejected > 0 {
		skipped = append(skipped, fmt.Sprintf("%d rejected earlier", pl.SkippedRejected))
	}
	if pl.Pointers > 0 {
		skipped = append(skipped, fmt.Sprintf("%d index %s (%s)", pl.Pointers, cli.Plural(pl.Pointers, "pointer", "pointers"),
			cli.Plural(pl.Pointers, "the file it names is a candidate itself", "the files they name are candidates themselves")))
	}
	if len(skipped) > 0 {
		fmt.Fprintf(w, "\nSkipped: %s.\n", strings.Join(skipped, "; "))
	}
	for _, warn := range pl.Warnings {
		fmt.Fprintf(w, "\nWarning: %s\n", warn)
	}
	for _, o := range pl.Offers {
		if o == "import-agents" {
			fmt.Fprintln(w, "  apply needs --import-agents for entries going to AGENTS.md: it puts the line \"@AGENTS.md\" in CLAUDE.md, so Claude Code loads it.")
		}
	}
	if len(pl.Candidates) > 0 {
		fmt.Fprintf(w, "\nAnswer with one batch, e.g.:\n  %s\n", suggestedAnswer(pl))
	}
	if len(pl.Private) > 0 {
		n := pl.Private[0].N
		fmt.Fprintf(w, "Entries kept private stay in auto-memory. To copy one's redacted text into its document as well, name it:\n  intermem-synthesize apply --promote-redacted %d   (or --reject %d to stop seeing it)\n", n, n)
	}
}

// printCandidate prints one numbered entry of a plan: its first lines, what
// is known about it (where, plus extra, and what it costs every session),
// and its annotations.
func printCandidate(w io.Writer, c plan.Candidate, extra string) {
	lines := strings.Split(c.Text, "\n")
	if c.Action == plan.ActionPrune {
		fmt.Fprintf(w, "%4d. %s\n", c.N, lines[0])
	} else {
		fmt.Fprintf(w, "%4d. [%s] %s\n", c.N, cli.Line(c.Section), lines[0])
	}
	for i, l := range lines[1:] {
		if i == 6 {
			more := len(lines) - 1 - i
			fmt.Fprintf(w, "        … (%d more %s)\n", more, cli.Plural(more, "line", "lines"))
			break
		}
		fmt.Fprintf(w, "        %s\n", l)
	}
	sessions := fmt.Sprintf("stable in %d %s", c.Sessions, cli.Plural(c.Sessions, "session", "sessions"))
	from := fmt.Sprintf("from %s:%d", c.File, c.Line)
	if c.Source == written.Name {
		// A written memory is stable once written: say what it is and who
		// wrote it instead.
		sessions = fmt.Sprintf("written %s %q", c.Type, clip(c.Title, 60))
		if c.WrittenBy != "" {
			sessions += " by " + c.WrittenBy
		}
		if !c.FirstSeen.IsZero() {
			sessions += " on " + c.FirstSeen.UTC().Format("2006-01-02")
		}
	}
	var meta string
	if c.Action == plan.ActionPrune && c.DocumentedIn != "" {
		meta = fmt.Sprintf("documented in %s · %s · %s%s", c.DocumentedIn, sessions, from, extra)
	} else if c.Action == plan.ActionPrune {
		meta = fmt.Sprintf("already in %s · %s · %s%s", c.LoadedIn, sessions, from, extra)
	} else {
		meta = fmt.Sprintf("%s · confidence %.2f · %s · %s%s", sessions, c.Confidence, c.Route, from, extra)
	}
	if cost := tokenCost(c.Tokens, c.TokensSaved); cost != "" {
		meta += " · " + cost
	}
	fmt.Fprintf(w, "        %s\n", cli.Line(meta))
	for _, a := range c.Annotations {
		fmt.Fprintf(w, "        %s\n", cli.Line(a))
	}
}

// suggestedAnswer is the apply command the plan suggests: the syntax,
// with --import-agents when entries go to an AGENTS.md Claude Code does
// not load (apply refuses them without it).
func suggestedAnswer(pl *plan.Plan) string {
	s := "intermem-synthesize apply --approve 1,3,5-8 --reject 2 --edit '4=new text' --target 6=CLAUDE.md"
	for _, o := range pl.Offers {
		if o == "import-agents" {
			s += " --import-agents"
		}
	}
	return s
}

// tokenCost says what a change costs every session, "" when nothing.
func tokenCost(added, saved int) string {
	switch {
	case added > 0 && saved > 0:
		return fmt.Sprintf("adds ~%s tokens to every session, removes ~%s from MEMORY.md", cli.Thousands(added), cli.Thousands(saved))
	case added > 0:
		return fmt.Sprintf("adds ~%s tokens to every session", cli.Thousands(added))
	case saved > 0:
		return fmt.Sprintf("saves ~%s tokens every session", cli.Thousands(saved))
	}
	return ""
}

// multiFlag collects a repeatable flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ", ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

const applyUsage = `Usage: intermem-synthesize apply --approve SPEC [--reject SPEC] [--edit N=TEXT]...
                                [--target N=AGENTS.md|CLAUDE.md]... [--promote-redacted N,…]
                                [--import-agents] [--allow-outside] [--dry-run] [--json] [--project DIR]

Promotes the approved entries of the saved plan into their target
documents, each with its marker, and prunes them from auto-memory (with a
backup under .intermem/backups/). Rejected entries are remembered and not
proposed again unless their text changes. Numbers not mentioned stay in
memory ("--approve all --reject 2" approves all but 2). --edit N=TEXT
approves N with TEXT instead of its original wording (the original is
still pruned). --dry-run prints exactly what would change and writes
nothing at all. An apply of a plan built with --no-validate
checks the citations of the approved entries first and promotes nothing if
one of them is stale. A CLAUDE.md, AGENTS.md or docs/intermem document that
is a link leading out of the project is written through only with
--allow-outside.

Entries the plan kept private hold a secret: they are never pruned and
--approve (even "all") does not cover them. --promote-redacted N,… copies
the redacted text of each one named into its document and keeps the entry
in auto-memory; "all" is refused, each must be named. --reject works on
them too.

The answer may also be written as words, as /intermem:synthesize asks for
it: "apply approve 1,3 reject 2 target 6=CLAUDE.md". Entries the plan lists
under "Already loaded every session" are pruned from memory when approved
and written nowhere. Entries going to an AGENTS.md Claude Code does not load
need --import-agents; --import-agents alone adds the import without a plan.
`

// ApplyReport is the JSON shape of apply.
type ApplyReport struct {
	DryRun         bool                `json:"dry_run"`
	Op             string              `json:"op,omitempty"`
	Promoted       []promote.Promotion `json:"promoted"`
	Pruned         []PrunedEntry       `json:"pruned_only"` // already loaded elsewhere, or documented: removed from memory only
	Rejected       []int               `json:"rejected"`
	PrunedLines    int                 `json:"pruned_lines"`
	MemoryMDLines  int                 `json:"memory_md_lines"`
	MemoryMDChars  int                 `json:"memory_md_chars"`
	LoadedLines    int                 `json:"memory_md_loaded_lines"`
	BeyondLoadCap  int                 `json:"beyond_load_cap"`
	ImportedAgents bool                `json:"imported_agents"`
	Backup         string              `json:"backup,omitempty"`
	Changes        []Change            `json:"changes"`
	Recovered      []string            `json:"recovered,omitempty"`
	importOnly     bool
}

// PrunedEntry is an approved prune-only candidate.
type PrunedEntry struct {
	N        int    `json:"n"`
	ID       string `json:"id"`
	Text     string `json:"text"`
	Origin   string `json:"origin"`
	LoadedIn string `json:"loaded_in"`
	// DocumentedIn is the solution document that says it, for an entry
	// pruned because it is documented (LoadedIn is then empty).
	DocumentedIn string `json:"documented_in,omitempty"`
}

// Change is one file change of an apply.
type Change struct {
	File   string `json:"file"`
	Action string `json:"action"`
	Detail string `json:"detail"`
	Text   string `json:"text,omitempty"`
}

func runApply(ctx context.Context, env *cli.Env, args []string) error {
	var c common
	fset := cli.FlagSet("intermem-synthesize apply", applyUsage, env.Stdout)
	c.register(fset, true)
	approve := fset.String("approve", "", "numbers to promote: `SPEC` like 1,3,5-8 or all")
	reject := fset.String("reject", "", "numbers to reject for good: `SPEC`")
	var edits, tgts multiFlag
	fset.Var(&edits, "edit", "approve N with this text instead: `N=TEXT` (repeatable)")
	fset.Var(&tgts, "target", "send N to another document: `N=AGENTS.md|CLAUDE.md` (repeatable)")
	redacted := fset.String("promote-redacted", "", "entries kept private (they hold a secret) whose redacted text to promote, each named: `N,…`; they stay in auto-memory")
	importAgents := fset.Bool("import-agents", false, "add \"@AGENTS.md\" to CLAUDE.md so Claude Code loads AGENTS.md")
	c.registerAllowOutside(fset)
	dry := fset.Bool("dry-run", false, "print what would change and write nothing")
	pos, err := cli.Parse(fset, args)
	if err != nil {
		return err
	}
	if err := answerWords(pos, approve, reject, &edits, &tgts); err != nil {
		return err
	}
	if *approve == "" && *reject == "" && len(edits) == 0 && *redacted == "" && !*importAgents {
		return cli.Usagef("nothing to do: give --approve, --reject, --edit, --promote-redacted or --import-agents")
	}
	if strings.EqualFold(strings.TrimSpace(*redacted), "all") {
		return cli.Usagef("--promote-redacted all: name each entry (they hold secrets; each copy into a committed document is a choice)")
	}
	// --import-agents alone needs no plan: it only makes CLAUDE.md import
	// AGENTS.md (what status and SessionStart suggest for promoted facts
	// Claude Code does not load).
	importOnly := *approve == "" && *reject == "" && len(edits) == 0 && len(tgts) == 0 && *redacted == ""
	p, err := c.resolve(env)
	if err != nil {
		return err
	}

	// A dry run opens nothing for writing: no lock file, no store write,
	// no log, no recovery, no backup.
	var st *store.Store
	var w *writer
	now, err := env.Now()
	if err != nil {
		return err
	}
	if *dry {
		if st, err = openRead(p); err != nil {
			return err
		}
		if st == nil && !importOnly {
			return cli.Errorf("run intermem-synthesize plan first", "no plan yet for %s", p.Root)
		}
		if st != nil {
			defer st.Close()
		}
	} else {
		if w, err = openWriter(env, p, "intermem-synthesize"); err != nil {
			return err
		}
		defer w.Close()
		st, now = w.store, w.now
	}

	var pl plan.Plan
	var incomplete []*journal.Op
	var found bool
	homes := map[string]string{} // memory files promoted before → their documents
	if st != nil {
		jr := w.journalOrNil()
		if jr == nil {
			// A dry run: the journal as recovery would see it, read-only.
			if jr, err = newJournal(env, p, st, now, nil, false); err != nil {
				return err
			}
		}
		err = st.View(func(tx *bolt.Tx) error {
			var err error
			if found, err = store.GetPlan(tx, &pl); err != nil {
				return err
			}
			sc, err := jr.Scan(tx)
			if err != nil {
				return err
			}
			incomplete = sc.Ops
			homes, err = promotedHomes(tx)
			return err
		})
		if err != nil {
			return err
		}
	}
	if importOnly {
		pl, found = plan.Plan{}, true
	}
	if !found {
		return cli.Errorf("run intermem-synthesize plan first", "no plan yet for %s", p.Root)
	}
	if *dry && len(incomplete) > 0 {
		return cli.Errorf("run intermem-recover to see it; apply without --dry-run resumes it first",
			"an interrupted operation is pending (%s)", incomplete[0].Summary)
	}
	if pl.AppliedBy != "" {
		return &cli.Error{Err: fmt.Errorf("%w: it was already applied (operation %s)", promote.ErrStale, pl.AppliedBy),
			Hint: "run intermem-synthesize plan again", Code: 1}
	}

	// Specs name candidates and entries kept private alike, except "all",
	// which means the candidates; Prepare says why a kept one cannot be
	// approved.
	valid, kept := pl.Numbers(), pl.PrivateNumbers()
	both := make(map[int]*plan.Candidate, len(valid)+len(kept))
	for _, m := range []map[int]*plan.Candidate{valid, kept} {
		for n, c := range m {
			both[n] = c
		}
	}
	req := promote.Request{ImportAgents: *importAgents, Edits: map[int]string{}, Targets: map[int]string{}, Homes: homes}
	approveIn := both
	if strings.EqualFold(strings.TrimSpace(*approve), "all") {
		approveIn = valid
	}
	if req.Approve, err = promote.ParseSpec(*approve, approveIn); err != nil {
		return cli.WithHint(err, "use numbers from the last plan, e.g. --approve 1,3,5-8")
	}
	if req.Reject, err = promote.ParseSpec(*reject, both); err != nil {
		return cli.WithHint(err, "use numbers from the last plan, e.g. --reject 2")
	}
	if req.PromoteRedacted, err = promote.ParseSpec(*redacted, kept); err != nil {
		return cli.WithHint(err, "name entries listed under \"Kept private\" in the last plan")
	}
	if strings.EqualFold(strings.TrimSpace(*approve), "all") {
		// "approve all / reject 2": all means all that is not rejected.
		req.Approve = without(req.Approve, req.Reject)
	}
	for _, e := range edits {
		n, text, err := numberedValue(e)
		if err != nil || strings.TrimSpace(text) == "" {
			return cli.Usagef("--edit %q: want N=TEXT with some text", e)
		}
		req.Edits[n] = text
	}
	for _, t := range tgts {
		n, doc, err := numberedValue(t)
		if err != nil {
			return cli.Usagef("--target %q: want N=AGENTS.md or N=CLAUDE.md", t)
		}
		req.Targets[n] = doc
	}

	mem, err := scanMemory(p)
	if err != nil {
		return err
	}
	ts, err := loadTargets(p)
	if err != nil {
		return err
	}
	req.Said = loaded.Said(loadedSet(env, p))
	if req.Documents, req.Written, err = solutionPaths(env, p, st, now); err != nil {
		return err
	}
	req.WrittenLog, req.Now = filepath.Join(p.StateDir, written.FileName), now
	prep, err := promote.Prepare(&pl, req, mem, ts, tier.Load(env.Get, p.StateDir))
	if err != nil {
		if errors.Is(err, promote.ErrStale) {
			return &cli.Error{Err: err, Hint: "memory or a target changed since the plan: run intermem-synthesize plan again", Code: 1}
		}
		if errors.Is(err, promote.ErrUnloaded) {
			return &cli.Error{Err: err, Code: 1,
				Hint: "add --import-agents (it puts the line \"@AGENTS.md\" in CLAUDE.md), or send them to CLAUDE.md with --target N=CLAUDE.md"}
		}
		return cli.WithHint(err, "run intermem-synthesize plan to see the numbers")
	}

	if !pl.Validated && !importOnly {
		if err := recheck(env, p.Root, &pl, prep); err != nil {
			return err
		}
	}

	rep := ApplyReport{DryRun: *dry, Promoted: []promote.Promotion{}, Pruned: []PrunedEntry{}, Rejected: []int{}, Changes: []Change{}, importOnly: importOnly}
	for _, c := range prep.Rejected {
		rep.Rejected = append(rep.Rejected, c.N)
	}
	for _, c := range prep.Pruned {
		rep.Pruned = append(rep.Pruned, PrunedEntry{N: c.N, ID: c.ID, Text: c.Text, Origin: c.File, LoadedIn: c.LoadedIn, DocumentedIn: c.DocumentedIn})
	}
	memBefore := fileLines(mem)
	op := prep.Op
	if err := c.confineOp(p, ts, op, "apply"); err != nil {
		return err
	}
	contents, exists, err := ops.Simulate(p.Places(), op)
	if err != nil {
		return fmt.Errorf("preparing the changes: %w", err)
	}
	rep.Changes = describeChanges(p.Root, op)
	fillPromotions(&rep, prep, op)

	if !*dry {
		for _, op := range w.Recovered {
			rep.Recovered = append(rep.Recovered, op.Summary)
		}
		b := ops.Book{}
		if !importOnly {
			b.PlanCreated = pl.Created
		}
		for _, c := range prep.Rejected {
			b.Rejected = append(b.Rejected, store.Decision{ID: c.ID, At: now, Preview: c.Text})
		}
		for _, pm := range rep.Promoted {
			rec := store.Promoted{
				ID: pm.ID, Target: pm.File, Section: pm.Section, At: now,
				Text: pm.Text, Origin: pm.Origin, Kind: pm.Kind, LastEvidence: now,
				Cited: cite.Checkable(cite.Extract(pm.Text)) > 0,
			}
			if cand := findCandidate(&pl, pm.N); cand != nil {
				rec.Confidence = cand.Confidence
			}
			b.Promoted = append(b.Promoted, rec)
		}
		if len(op.Steps) == 0 {
			// Only rejections: nothing to journal, one transaction.
			if err := w.update(func(tx *bolt.Tx) error { return b.Apply(tx, "rejections only") }); err != nil {
				return err
			}
		} else {
			op.ID = journal.NewID(now)
			if importOnly {
				op.Summary = "make CLAUDE.md import AGENTS.md"
			}
			if err := b.Attach(op); err != nil {
				return err
			}
			if err := w.run(op); err != nil {
				return err
			}
			rep.Op = op.ID
			rep.Backup = w.journal.BackupDir(op.ID)
		}
	}

	// Sizes after: from the simulation for a dry run, from disk otherwise.
	after := memAfter(mem, contents, exists)
	if !*dry {
		if m2, err := automem.Scan(p.MemoryDir); err == nil {
			after = m2
		}
	}
	rep.PrunedLines = memBefore - fileLines(after)
	if after != nil {
		rep.MemoryMDLines, rep.MemoryMDChars, rep.LoadedLines = after.Load.Lines, after.Load.Chars, after.Load.LoadedLines
		rep.BeyondLoadCap = len(after.BeyondCap())
	}
	for _, s := range op.Steps {
		if s.Action == ops.ActImport {
			rep.ImportedAgents = true
		}
	}
	if c.json {
		return writeJSON(env.Stdout, &rep)
	}
	printApply(env.Stdout, &rep, p.Root)
	return nil
}

// recheck does for a plan built with --no-validate what the plan skipped:
// it checks the citations of each entry about to be promoted (in the
// wording that will land, edits included) and refuses the whole apply if
// one is stale, naming it, so that --no-validate never lets a fact citing
// a deleted file into a document. The confidences it finds replace the
// plan's, for the records.
func recheck(env *cli.Env, root string, pl *plan.Plan, prep *promote.Prepared) error {
	if pl.CiteRoot != "" {
		root = pl.CiteRoot
	}
	checker := cite.NewChecker(root)
	threshold := stability.Threshold(env.Get)
	var stale []string
	for _, pm := range prep.Promotions {
		cand := findCandidate(pl, pm.N)
		if cand == nil {
			continue
		}
		sc, _ := validate.Check(checker, pm.Text, cand.Sessions, threshold)
		cand.Confidence = sc.Confidence
		if sc.Stale {
			stale = append(stale, fmt.Sprintf("%d (%q) %s", pm.N, clip(firstLine(pm.Text), 70), strings.Join(sc.Reasons, "; ")))
		}
	}
	if len(stale) == 0 {
		return nil
	}
	return cli.Errorf("reject or --edit them, or run intermem-synthesize plan without --no-validate to see them blocked",
		"nothing promoted: the plan was built with --no-validate and %s stale now: %s",
		cli.Plural(len(stale), "one approved entry is", fmt.Sprintf("%d approved entries are", len(stale))), strings.Join(stale, "; "))
}

// answerWords reads the user's batch answer written as words, the way
// the skill asks for it ("approve 1,3 reject 2 target 6=CLAUDE.md"), into
// the flags; a lone "/" between parts is allowed. Anything else is an
// error that says what was not understood: an argument is never silently
// ignored.
func answerWords(pos []string, approve, reject *string, edits, tgts *multiFlag) error {
	for i := 0; i < len(pos); i++ {
		word := strings.ToLower(strings.TrimSuffix(pos[i], ":"))
		if word == "/" || word == "," {
			continue
		}
		var dst *string
		switch word {
		case "approve":
			dst = approve
		case "reject":
			dst = reject
		case "edit", "target":
		default:
			return cli.Usagef("unexpected argument %q: answer with flags, e.g. --approve 1,3 --reject 2 (or the words: approve 1,3 reject 2 edit 4=TEXT target 6=CLAUDE.md)", pos[i])
		}
		if i+1 >= len(pos) {
			return cli.Usagef("%q needs a value, e.g. %s", pos[i], map[string]string{
				"approve": "approve 1,3,5-8", "reject": "reject 2", "edit": "edit '4=new text'", "target": "target 6=CLAUDE.md"}[word])
		}
		i++
		val := pos[i]
		switch {
		case dst != nil && *dst != "":
			return cli.Usagef("%s given twice (%q and %q): give it once, e.g. --%s 1,3,5-8", word, *dst, val, word)
		case dst != nil:
			*dst = val
		case word == "edit":
			edits.Set(val)
		default:
			tgts.Set(val)
		}
	}
	return nil
}

func numberedValue(s string) (int, string, error) {
	k, v, ok := strings.Cut(s, "=")
	if !ok {
		return 0, "", fmt.Errorf("missing =")
	}
	n, err := strconv.Atoi(strings.TrimSpace(k))
	if err != nil {
		return 0, "", err
	}
	return n, v, nil
}

func without(ns, drop []int) []int {
	skip := map[int]bool{}
	for _, n := range drop {
		skip[n] = true
	}
	var out []int
	for _, n := range ns {
		if !skip[n] {
			out = append(out, n)
		}
	}
	return out
}

func findCandidate(pl *plan.Plan, n int) *plan.Candidate {
	for _, list := range [][]plan.Candidate{pl.Candidates, pl.Private} {
		for i := range list {
			if list[i].N == n {
				return &list[i]
			}
		}
	}
	return nil
}

// fillPromotions records where each promotion landed, from the simulated
// steps (Place reports a created section through the step).
func fillPromotions(rep *ApplyReport, prep *promote.Prepared, op *journal.Op) {
	created := map[string]bool{}
	for _, s := range op.Steps {
		if s.Action == ops.ActInsert && s.Extra == "created" {
			created[s.ID] = true
		}
	}
	for _, pm := range prep.Promotions {
		pm.Created = created[pm.ID]
		rep.Promoted = append(rep.Promoted, pm)
	}
}

// describeChanges says what each step of op does, for the dry run.
func describeChanges(root string, op *journal.Op) []Change {
	var out []Change
	for _, s := range op.Steps {
		detail, text, ok := ops.Describe(&s)
		if !ok {
			continue
		}
		out = append(out, Change{File: relTo(root, s.Path), Action: s.Action, Detail: detail, Text: text})
	}
	return out
}

func printApply(w io.Writer, r *ApplyReport, root string) {
	for _, s := range r.Recovered {
		fmt.Fprintf(w, "Recovered an interrupted operation first: %s.\n", s)
	}
	if r.DryRun {
		fmt.Fprintln(w, "Dry run: nothing was written. These changes would be made:")
		for _, ch := range r.Changes {
			fmt.Fprintf(w, "  %s: %s\n", cli.Line(ch.File), cli.Line(ch.Detail))
			if ch.Text != "" {
				for _, l := range strings.Split(ch.Text, "\n") {
					fmt.Fprintf(w, "      + %s\n", l)
				}
			}
		}
	} else if len(r.Promoted) > 0 {
		fmt.Fprintf(w, "Promoted %d %s:\n", len(r.Promoted), cli.Plural(len(r.Promoted), "entry", "entries"))
		for _, pm := range r.Promoted {
			sec := pm.Section
			if pm.Created {
				sec += " (new section)"
			}
			edited := ""
			if pm.Edited {
				edited = " (edited)"
			}
			if pm.Kept {
				edited += " (redacted; the entry stays in auto-memory)"
			}
			fmt.Fprintf(w, "  %d → %s § %s%s: %s\n", pm.N, cli.Line(pm.File), cli.Line(sec), edited, cli.Line(clip(firstLine(pm.Text), 70)))
		}
	}
	if r.ImportedAgents && !r.DryRun {
		fmt.Fprintln(w, "Added \"@AGENTS.md\" to CLAUDE.md: Claude Code now loads AGENTS.md.")
	}
	if !r.ImportedAgents && len(r.Changes) == 0 && len(r.Rejected) == 0 {
		if r.importOnly {
			fmt.Fprintln(w, "Nothing to change: Claude Code already loads AGENTS.md.")
		} else {
			fmt.Fprintln(w, "Nothing to change: the plan has no candidates.")
		}
	}
	if len(r.Rejected) > 0 {
		verb := "Rejected"
		if r.DryRun {
			verb = "Would reject"
		}
		fmt.Fprintf(w, "%s %s (remembered; not proposed again unless the text changes).\n", verb, joinInts(r.Rejected))
	}
	if len(r.Pruned) > 0 && !r.DryRun {
		var loadedN, documentedN int
		for _, pe := range r.Pruned {
			if pe.DocumentedIn != "" {
				documentedN++
			} else {
				loadedN++
			}
		}
		if loadedN > 0 {
			fmt.Fprintf(w, "Pruned %d %s Claude Code already loads every session:\n", loadedN, cli.Plural(loadedN, "entry", "entries"))
			for _, pe := range r.Pruned {
				if pe.DocumentedIn == "" {
					fmt.Fprintf(w, "  %d (in %s): %s\n", pe.N, cli.Line(pe.LoadedIn), clip(firstLine(pe.Text), 70))
				}
			}
		}
		if documentedN > 0 {
			fmt.Fprintf(w, "Pruned %d %s the project's solution docs already say:\n", documentedN, cli.Plural(documentedN, "entry", "entries"))
			for _, pe := range r.Pruned {
				if pe.DocumentedIn != "" {
					fmt.Fprintf(w, "  %d (documented in %s): %s\n", pe.N, cli.Line(pe.DocumentedIn), clip(firstLine(pe.Text), 70))
				}
			}
		}
	}
	if len(r.Promoted) > 0 || len(r.Pruned) > 0 {
		verb := "Pruned"
		if r.DryRun {
			verb = "Would prune"
		}
		fmt.Fprintf(w, "%s %d %s from auto-memory. MEMORY.md is now %d %s, %s %s (%s).\n",
			verb, r.PrunedLines, cli.Plural(r.PrunedLines, "line", "lines"), r.MemoryMDLines, cli.Plural(r.MemoryMDLines, "line", "lines"),
			cli.Thousands(r.MemoryMDChars), cli.Plural(r.MemoryMDChars, "char", "chars"), capBar(r.MemoryMDLines, r.MemoryMDChars))
	}
	if r.Backup != "" {
		fmt.Fprintf(w, "Backups of every changed file: %s\n", cli.Line(relTo(root, r.Backup)))
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

func joinInts(ns []int) string {
	sort.Ints(ns)
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ", ")
}
