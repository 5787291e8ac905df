package command

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/continuity"
	"github.com/intermem/intermem/pkg/project"
	"github.com/intermem/intermem/pkg/store"
)

// optInt is an optional integer flag.
type optInt struct{ v *int }

func (o *optInt) String() string {
	if o == nil || o.v == nil {
		return ""
	}
	return strconv.Itoa(*o.v)
}

func (o *optInt) Set(s string) error {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 {
		return fmt.Errorf("want a phase number (0, 1, 2, …), not %q", s)
	}
	o.v = &n
	return nil
}

// strList is a repeatable string flag.
type strList []string

func (l *strList) String() string     { return strings.Join(*l, ", ") }
func (l *strList) Set(s string) error { *l = append(*l, s); return nil }

// decisionFlags pairs each --why with the --decision before it.
type decisionFlags struct {
	list []continuity.DecisionInput
}

type decisionText struct{ d *decisionFlags }
type decisionWhy struct{ d *decisionFlags }

func (decisionText) String() string { return "" }
func (decisionWhy) String() string  { return "" }
func (f decisionText) Set(s string) error {
	f.d.list = append(f.d.list, continuity.DecisionInput{Text: s})
	return nil
}
func (f decisionWhy) Set(s string) error {
	n := len(f.d.list)
	if n == 0 || f.d.list[n-1].Why != "" {
		return errors.New("each --why follows the --decision it explains")
	}
	f.d.list[n-1].Why = s
	return nil
}

func phaseArg(pos []string, what string) (int, error) {
	if len(pos) != 1 {
		return 0, cli.Usagef("say which phase to %s: a number (0, 1, 2, …)", what)
	}
	n, err := strconv.Atoi(pos[0])
	if err != nil || n < 0 {
		return 0, cli.Usagef("phase %q: want a number (0, 1, 2, …)", pos[0])
	}
	return n, nil
}

// continuityError adds the hint a continuity failure needs.
func continuityError(err error) error {
	switch {
	case errors.Is(err, continuity.ErrFlagged):
		return cli.WithHint(err, "intermem injects this text into later sessions, so it refuses text that reads as instructions to the model; rephrase it")
	case errors.Is(err, continuity.ErrEmpty):
		return &cli.Error{Err: err, Code: 2, Hint: "run with --help for usage"}
	case errors.Is(err, continuity.ErrNoPhase):
		return cli.WithHint(err, "start it first with intermem phase start N; intermem head lists the phases")
	case errors.Is(err, continuity.ErrOpen):
		return cli.WithHint(err, "close it with intermem phase close N --summary TEXT, or go on working in it")
	}
	return err
}

// gitHere is the branch and HEAD of the directory a command runs in (the
// project root when that is elsewhere).
func gitHere(env *cli.Env, p *project.Project) (string, string) {
	dir := env.Dir
	if dir == "" || !strings.HasPrefix(dir, p.Root) {
		dir = p.Root
	}
	return continuity.Git(dir)
}

// statusMark is how a list marks a record that is not valid (" [invalidated]",
// " [archived]"); a valid one is unmarked.
func statusMark(status string) string {
	if status == store.StatusValid {
		return ""
	}
	return " [" + status + "]"
}

func phaseText(ph *int) string {
	if ph == nil {
		return "no phase"
	}
	return fmt.Sprintf("phase %d", *ph)
}

const checkpointUsage = `Usage: intermem checkpoint --summary TEXT [--phase N] [--scope project|session]
                           [--session ID] [--project DIR] [--json]

Records a checkpoint: a short summary of where the work stands, which the
next session's SessionStart shows as its resume note. With --scope project
(the default: the user said "save") it is long-term project memory, listed
by intermem head and found by search; with --scope session ("skip") it
serves only the next session's resume. It belongs to --phase N, else to
the current phase (intermem head). The summary is redacted; text that
reads as instructions to the model is refused.

The Stop hook also records checkpoints by itself every
INTERMEM_CHECKPOINT_INTERVAL turns (default 10; 0 switches them off) and
SessionEnd a final one: intermem checkpoints lists them all.
`

func runCheckpoint(ctx context.Context, env *cli.Env, args []string) error {
	var c common
	fset := cli.FlagSet("intermem checkpoint", checkpointUsage, env.Stdout)
	c.register(fset, true)
	summary := fset.String("summary", "", "the checkpoint's `TEXT`: where the work stands, what is next")
	var phase optInt
	fset.Var(&phase, "phase", "the phase `N` it belongs to (default: the current phase)")
	scope := fset.String("scope", store.ScopeProject, "`project|session`: long-term project memory, or the next session's resume only")
	session := fset.String("session", "", "the Claude Code session `ID` it belongs to")
	pos, err := cli.Parse(fset, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return cli.Usagef("unexpected %q: the text goes in --summary", pos[0])
	}
	if strings.TrimSpace(*summary) == "" {
		return cli.Usagef("say what the checkpoint records with --summary TEXT")
	}
	if *scope != store.ScopeProject && *scope != store.ScopeSession {
		return cli.Usagef("--scope is project or session, not %q", *scope)
	}
	p, err := c.resolve(env)
	if err != nil {
		return err
	}
	cp, err := SaveCheckpoint(env, p, continuity.Manual{Summary: *summary, Phase: phase.v, Session: *session, Scope: *scope}, "intermem checkpoint")
	if err != nil {
		return err
	}
	if c.json {
		return writeJSON(env.Stdout, &cp)
	}
	where := "long-term project memory"
	if cp.Scope == store.ScopeSession {
		where = "kept for the next session's resume only"
	}
	fmt.Fprintf(env.Stdout, "Checkpoint %s recorded (%s; %s).\n", cp.ID, phaseText(cp.Phase), where)
	return nil
}

// SaveCheckpoint records a manual checkpoint of project p at the branch
// and HEAD the command runs on: the one way `intermem checkpoint` and
// memory_write(type=checkpoint) save one (redacted; refused when
// screening flags it), under the writer lock, rewriting the continuity
// source's file.
func SaveCheckpoint(env *cli.Env, p *project.Project, m continuity.Manual, prog string) (store.Checkpoint, error) {
	w, err := openWriter(env, p, prog)
	if err != nil {
		return store.Checkpoint{}, err
	}
	defer w.Close()
	m.Branch, m.Commit = gitHere(env, p)
	var cp store.Checkpoint
	err = updateContinuity(env, w, func(tx *bolt.Tx) error {
		var err error
		cp, err = continuity.AddManual(tx, m, w.now)
		return err
	})
	if err != nil {
		return cp, continuityError(err)
	}
	return cp, nil
}

const checkpointsUsage = `Usage: intermem checkpoints [--phase N] [--all] [--project DIR] [--json]

Lists checkpoints, oldest first: saved summaries (manual), phase marks
(phase), and those the hooks took every N turns (auto) and at a session's
end (final). Checkpoints of phases a backtrack left behind are listed only
with --all; forgotten ones never (intermem phase restore N).
`

// CheckpointsReport is the JSON shape of checkpoints.
type CheckpointsReport struct {
	Checkpoints []store.Checkpoint `json:"checkpoints"`
}

func runCheckpoints(ctx context.Context, env *cli.Env, args []string) error {
	var c common
	fset := cli.FlagSet("intermem checkpoints", checkpointsUsage, env.Stdout)
	c.register(fset, true)
	var phase optInt
	fset.Var(&phase, "phase", "only the checkpoints of phase `N`")
	all := fset.Bool("all", false, "include checkpoints of invalidated phases")
	p, err := c.parseNone(env, fset, args)
	if err != nil {
		return err
	}
	var rep CheckpointsReport
	rep.Checkpoints, err = viewContinuity(env, p, []store.Checkpoint{}, func(tx *bolt.Tx) ([]store.Checkpoint, error) {
		return continuity.ListCheckpoints(tx, continuity.Filter{Phase: phase.v, All: *all})
	})
	if err != nil {
		return err
	}
	if c.json {
		return writeJSON(env.Stdout, &rep)
	}
	out := env.Stdout
	if len(rep.Checkpoints) == 0 {
		fmt.Fprintln(out, "No checkpoints yet.")
		return nil
	}
	for _, cp := range rep.Checkpoints {
		fmt.Fprintf(out, "%s  %s  %s, %s%s\n", cp.ID, cp.Time.UTC().Format("2006-01-02 15:04"), cp.Kind, phaseText(cp.Phase), statusMark(cp.Status))
		text := cp.Summary
		if text == "" {
			text = cp.Message
		}
		if text != "" {
			if cp.Flagged {
				fmt.Fprintln(out, "    (flagged by screening: never injected)")
			}
			fmt.Fprintf(out, "    %s\n", clip(strings.Join(strings.Fields(text), " "), 100))
		}
	}
	return nil
}

// updateContinuity runs fn in a write transaction and then rewrites
// .intermem/continuity.jsonl, the continuity source's file, from what the
// store holds. The file is derived: failing to write it is a warning (the
// next continuity command writes it again), never a lost record.
func updateContinuity(env *cli.Env, w *writer, fn func(tx *bolt.Tx) error) error {
	var exp []byte
	var rebuilt *continuity.Rebuilt
	err := w.update(func(tx *bolt.Tx) error {
		// A store that lost its continuity gets it back from the file
		// before anything rewrites the file from the store.
		if continuity.Empty(tx) {
			if data, err := continuity.ReadExport(w.p.StateDir); err == nil {
				res, err := continuity.Rebuild(tx, data)
				if err != nil {
					return err
				}
				rebuilt = &res
			}
		}
		if err := fn(tx); err != nil {
			return err
		}
		var err error
		exp, err = continuity.Export(tx)
		return err
	})
	if err != nil {
		return err
	}
	if rebuilt != nil {
		w.log.Printf("continuity rebuilt from the export: %s", rebuiltWords(*rebuilt))
		fmt.Fprintf(env.Stderr, "intermem: note: the store held no continuity records: rebuilt from .intermem/continuity.jsonl (%s)\n", rebuiltWords(*rebuilt))
	}
	if err := continuity.WriteExport(w.p.StateDir, exp); err != nil {
		w.log.Printf("continuity export: %v", err)
		fmt.Fprintf(env.Stderr, "intermem: warning: the store has it, but .intermem/continuity.jsonl (what search reads) was not rewritten: %v\n", err)
	}
	registerRoot(env, w.p.Root, w.now, w.log.Printf)
	return nil
}

// userWait bounds the wait for a busy per-user store where it is only
// an extra (the registry, user decisions beside the project's).
const userWait = 300 * time.Millisecond

// registerRoot records the project at root in the per-user store's
// registry (search and decisions --all-projects) when intermem writes
// there. It is best-effort: the project scope works without the per-user
// store, so a failure is a log line.
func registerRoot(env *cli.Env, root string, now time.Time, logf func(string, ...any)) {
	us, err := continuity.OpenUser(env, true, userWait)
	if err != nil {
		logf("project registry: %v", err)
		return
	}
	defer us.Close()
	if err := us.Update(func(tx *bolt.Tx) error { return continuity.Register(tx, root, now) }); err != nil {
		logf("project registry: %v", err)
	}
}

// readContinuity runs fn in a read transaction of the project's store; a
// project without a store runs nothing (an empty history). A store that
// holds no continuity record (lost, or damaged and made anew) while
// .intermem/continuity.jsonl holds some is read as rebuilt from the file
// (continuity.ReadRebuilt) in a scratch store outside the project, with a
// note: a listing writes nothing in the project, and the next continuity
// write stores them for good. A damaged store is read the same way, with
// a note saying so.
func readContinuity(env *cli.Env, p *project.Project, fn func(tx *bolt.Tx) error) error {
	s, err := openRead(p)
	if err != nil && !errors.Is(err, store.ErrCorrupt) {
		return err
	}
	damaged := err
	empty := true
	if s != nil {
		defer s.Close()
		if err := s.View(func(tx *bolt.Tx) error { empty = continuity.Empty(tx); return nil }); err != nil {
			return err
		}
	}
	if !empty {
		return s.View(fn)
	}
	data, rerr := continuity.ReadExport(p.StateDir)
	if rerr != nil {
		if damaged != nil {
			return damaged
		}
		if s == nil {
			return nil
		}
		return s.View(fn)
	}
	res, err := continuity.ReadRebuilt(data, fn)
	if err != nil {
		return err
	}
	why := "the store holds no continuity records"
	if damaged != nil {
		why = "the store cannot be read (" + damaged.Error() + ")"
	}
	fmt.Fprintf(env.Stderr, "intermem: note: %s: read from .intermem/continuity.jsonl instead (%s)\n", why, rebuiltWords(res))
	return nil
}

// rebuiltWords says what a rebuild brought back.
func rebuiltWords(r continuity.Rebuilt) string {
	s := fmt.Sprintf("%d %s, %d %s, %d saved %s, %d %s of scope phase",
		r.Phases, cli.Plural(r.Phases, "phase", "phases"), r.Decisions, cli.Plural(r.Decisions, "decision", "decisions"),
		r.Checkpoints, cli.Plural(r.Checkpoints, "checkpoint", "checkpoints"), r.Memories, cli.Plural(r.Memories, "memory", "memories"))
	if r.Skipped > 0 {
		s += fmt.Sprintf("; %d %s left out", r.Skipped, cli.Plural(r.Skipped, "line", "lines"))
	}
	return s
}

// viewContinuity returns what read finds in a read transaction of the
// project's store (readContinuity); a project without a store has an
// empty history, none.
func viewContinuity[T any](env *cli.Env, p *project.Project, none T, read func(tx *bolt.Tx) (T, error)) (T, error) {
	v := none
	err := readContinuity(env, p, func(tx *bolt.Tx) error {
		var err error
		v, err = read(tx)
		return err
	})
	return v, err
}

const phaseUsage = `Usage: intermem phase start N [--name NAME] [--on-backtrack continue|forget|abort] [--json]
       intermem phase close N --summary TEXT [--decision TEXT --why TEXT]… [--artifact PATH]…
                              [--issue TEXT]… [--json]
       intermem phase restore N [--json]

start begins phase N and moves the head to it (intermem head). Starting a
phase below the head is a backtrack, and the records of the later phases
(checkpoints, decisions, closeouts) no longer describe the work:
  continue  mark them invalidated: kept, never in a resume note or recall,
            listed by checkpoints/decisions only with --all
  forget    archive them: listed nowhere; phase restore N brings phase N's
            back (as invalidated)
  abort     change nothing
On a terminal intermem asks; otherwise say --on-backtrack.

close records the phase's closeout: its summary, each decision with why
it was taken (--decision/--why pairs, in order), the artifacts it produced
and the issues met. Nothing goes into a committed file.

restore N brings back the records of phase N that a backtrack with
"forget" archived (as invalidated). Every form takes --project DIR.
`

// PhaseReport is the JSON shape of phase.
type PhaseReport struct {
	Action string `json:"action"`
	continuity.StartResult
	Decisions []store.PhaseDecision `json:"decisions,omitempty"`
	Restored  int                   `json:"restored,omitempty"`
}

func runPhase(ctx context.Context, env *cli.Env, args []string) error {
	var c common
	fset := cli.FlagSet("intermem phase", phaseUsage, env.Stdout)
	c.register(fset, true)
	name := fset.String("name", "", "start: the phase's `NAME`")
	onBack := fset.String("on-backtrack", "", "`continue|forget|abort`: start: what to do when N is below the head")
	summary := fset.String("summary", "", "close: the `TEXT` of what the phase did")
	var dec decisionFlags
	fset.Var(decisionText{&dec}, "decision", "close: the `TEXT` of a decision taken in the phase (repeatable; each with a --why)")
	fset.Var(decisionWhy{&dec}, "why", "close: the `TEXT` of why the decision before it was taken")
	var arts, issues strList
	fset.Var(&arts, "artifact", "close: the `PATH` of a file (or the name of a thing) the phase produced (repeatable)")
	fset.Var(&issues, "issue", "close: the `TEXT` of an issue met (repeatable)")
	pos, err := cli.Parse(fset, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return cli.Usagef("say start, close or restore")
	}
	action := pos[0]
	if action != "start" && action != "close" && action != "restore" {
		return cli.Usagef("unknown phase action %q: say start, close or restore", action)
	}
	n, err := phaseArg(pos[1:], action)
	if err != nil {
		return err
	}
	var choice continuity.Choice
	if *onBack != "" {
		ch, ok := continuity.ParseChoice(*onBack)
		if !ok {
			return cli.Usagef("--on-backtrack is continue, forget or abort, not %q", *onBack)
		}
		choice = ch
	}
	if action == "close" {
		if strings.TrimSpace(*summary) == "" {
			return cli.Usagef("say what phase %d did with --summary TEXT", n)
		}
		for _, d := range dec.list {
			if strings.TrimSpace(d.Why) == "" {
				return cli.Usagef("the decision %q has no --why", clip(d.Text, 40))
			}
		}
	}
	p, err := c.resolve(env)
	if err != nil {
		return err
	}
	rep := PhaseReport{Action: action}
	if action == "start" && choice == "" {
		back, later, head, err := backtrackOf(env, p, n)
		if err != nil {
			return err
		}
		if back {
			if !terminal(env) {
				return &cli.Error{
					Err:  fmt.Errorf("starting phase %d is a backtrack: the head is at phase %d%s", n, head, laterText(later)),
					Hint: "say what becomes of them with --on-backtrack continue (invalidate), forget (archive; phase restore brings them back) or abort",
					Code: 2,
				}
			}
			choice = askBacktrack(env.Stdin, env.Stdout, n, head, later)
		}
	}
	if choice == continuity.Abort && action == "start" {
		// Nothing to write: say so without taking the lock.
		rep.Backtrack, rep.Choice = true, continuity.Abort
		return phaseAborted(env, &c, &rep, n)
	}
	w, err := openWriter(env, p, "intermem phase")
	if err != nil {
		return err
	}
	defer w.Close()
	err = updateContinuity(env, w, func(tx *bolt.Tx) error {
		var err error
		switch action {
		case "start":
			rep.StartResult, err = continuity.StartPhase(tx, n, *name, choice, "", w.now)
		case "close":
			rep.Phase, rep.Decisions, err = continuity.ClosePhase(tx, n, continuity.Closeout{
				Summary: *summary, Decisions: dec.list, Artifacts: arts, Issues: issues,
			}, "", w.now)
		case "restore":
			rep.Restored, err = continuity.RestorePhase(tx, n)
			if err == nil {
				rep.Phase, _, err = store.GetPhase(tx, n)
			}
		}
		return err
	})
	if errors.Is(err, continuity.ErrAborted) {
		return phaseAborted(env, &c, &rep, n)
	}
	if errors.Is(err, continuity.ErrBacktrack) {
		return &cli.Error{Err: err, Hint: "run it again with --on-backtrack continue, forget or abort", Code: 2}
	}
	if err != nil {
		return continuityError(err)
	}
	if c.json {
		return writeJSON(env.Stdout, &rep)
	}
	out := env.Stdout
	switch action {
	case "start":
		label := fmt.Sprintf("Phase %d", n)
		if rep.Phase.Name != "" {
			label += " (" + rep.Phase.Name + ")"
		}
		fmt.Fprintf(out, "%s started; the head is at phase %d.\n", label, n)
		switch {
		case rep.Invalidated > 0:
			fmt.Fprintf(out, "Backtrack: %d %s of later phases invalidated (never recalled; listed with --all).\n",
				rep.Invalidated, cli.Plural(rep.Invalidated, "record", "records"))
		case rep.Archived > 0:
			fmt.Fprintf(out, "Backtrack: %d %s of later phases archived (intermem phase restore N brings them back).\n",
				rep.Archived, cli.Plural(rep.Archived, "record", "records"))
		case rep.Backtrack:
			fmt.Fprintln(out, "Backtrack: the later phases held no records.")
		}
	case "close":
		fmt.Fprintf(out, "Phase %d closed: %s\n", n, clip(rep.Phase.Summary, 100))
		if len(rep.Decisions) > 0 {
			fmt.Fprintf(out, "%d %s recorded.\n", len(rep.Decisions), cli.Plural(len(rep.Decisions), "decision", "decisions"))
		}
	case "restore":
		fmt.Fprintf(out, "Phase %d: %d archived %s restored, as invalidated (listed with --all).\n",
			n, rep.Restored, cli.Plural(rep.Restored, "record", "records"))
	}
	return nil
}

func phaseAborted(env *cli.Env, c *common, rep *PhaseReport, n int) error {
	if c.json {
		return writeJSON(env.Stdout, rep)
	}
	fmt.Fprintf(env.Stdout, "Backtrack to phase %d aborted: nothing changed.\n", n)
	return nil
}

// backtrackOf reads whether starting phase n is a backtrack.
func backtrackOf(env *cli.Env, p *project.Project, n int) (back bool, later []int, head int, err error) {
	err = readContinuity(env, p, func(tx *bolt.Tx) error {
		var err error
		back, later, err = continuity.Backtrack(tx, n)
		if h, herr := store.GetHead(tx); herr == nil && h.Phase != nil {
			head = *h.Phase
		}
		return err
	})
	return back, later, head, err
}

func laterText(later []int) string {
	if len(later) == 0 {
		return ""
	}
	var s []string
	for _, n := range later {
		s = append(s, strconv.Itoa(n))
	}
	return fmt.Sprintf(", and phase%s %s hold%s records", map[bool]string{true: "", false: "s"}[len(s) == 1],
		strings.Join(s, ", "), map[bool]string{true: "s", false: ""}[len(s) == 1])
}

// terminal reports whether stdin is a terminal a person answers at.
func terminal(env *cli.Env) bool {
	f, ok := env.Stdin.(*os.File)
	return ok && isTerminal(f.Fd())
}

// askBacktrack asks what to do at a backtrack until the answer is one of
// the choices; the end of input is abort.
func askBacktrack(in io.Reader, out io.Writer, n, head int, later []int) continuity.Choice {
	fmt.Fprintf(out, "Starting phase %d goes back from phase %d%s.\n", n, head, laterText(later))
	fmt.Fprintln(out, "  continue  invalidate them (kept, never recalled)")
	fmt.Fprintln(out, "  forget    archive them (phase restore N brings them back)")
	fmt.Fprintln(out, "  abort     change nothing")
	sc := bufio.NewScanner(in)
	for {
		fmt.Fprint(out, "continue, forget or abort? ")
		if f, ok := out.(interface{ Flush() error }); ok {
			_ = f.Flush()
		}
		if !sc.Scan() {
			fmt.Fprintln(out)
			return continuity.Abort
		}
		if ch, ok := continuity.ParseChoice(sc.Text()); ok {
			return ch
		}
	}
}

const headUsage = `Usage: intermem head [--project DIR] [--json]

The phase the work stands at (the head), its latest checkpoint, and the
checkpoints of every phase with their status: valid, or invalidated by a
backtrack. --json prints the phase state for other tools:
  {"head_phase", "head_checkpoint", "checkpoints": [{"id", "phase", "status"}], "phases": […]}
`

func runHead(ctx context.Context, env *cli.Env, args []string) error {
	var c common
	fset := cli.FlagSet("intermem head", headUsage, env.Stdout)
	c.register(fset, true)
	p, err := c.parseNone(env, fset, args)
	if err != nil {
		return err
	}
	v, err := viewContinuity(env, p, continuity.HeadView{Checkpoints: []continuity.CheckpointRef{}, Phases: []store.Phase{}}, continuity.Head)
	if err != nil {
		return err
	}
	if c.json {
		return writeJSON(env.Stdout, &v)
	}
	out := env.Stdout
	if v.HeadPhase == nil {
		fmt.Fprintln(out, "No phase started yet (intermem phase start N).")
		return nil
	}
	cp := ""
	if v.HeadCheckpoint != nil {
		cp = ", checkpoint " + *v.HeadCheckpoint
	}
	fmt.Fprintf(out, "Head: phase %d%s\n", *v.HeadPhase, cp)
	for _, ph := range v.Phases {
		state := "open"
		if !ph.Closed.IsZero() {
			state = "closed " + ph.Closed.UTC().Format("2006-01-02")
		}
		name := ""
		if ph.Name != "" {
			name = " " + ph.Name
		}
		fmt.Fprintf(out, "  phase %d%s: %s%s\n", ph.N, cli.Line(name), state, statusMark(ph.Status))
	}
	if len(v.Checkpoints) > 0 {
		fmt.Fprintln(out, "Checkpoints:")
		for _, r := range v.Checkpoints {
			fmt.Fprintf(out, "  %s  phase %d  %s\n", r.ID, r.Phase, r.Status)
		}
	}
	return nil
}

const decideUsage = `Usage: intermem decide TEXT --why RATIONALE [--phase N] [--scope project|user] [--project DIR] [--json]

Records a decision and why it was taken, in phase N (default: the current
phase). intermem decisions lists them; intermem search finds them ("why did
we choose X"). Recording the same decision again changes nothing.

--scope user records a decision that holds in every project of yours (a
preference, a pattern, a convention) in the per-user store, outside every
project ($XDG_STATE_HOME/intermem/user.db, else
~/.local/state/intermem/user.db); it belongs to no phase.
`

// DecideReport is the JSON shape of decide.
type DecideReport struct {
	Decision store.PhaseDecision `json:"decision"`
	Created  bool                `json:"created"`
}

func runDecide(ctx context.Context, env *cli.Env, args []string) error {
	var c common
	fset := cli.FlagSet("intermem decide", decideUsage, env.Stdout)
	c.register(fset, true)
	why := fset.String("why", "", "the `RATIONALE`: why it was decided")
	var phase optInt
	fset.Var(&phase, "phase", "the phase `N` it belongs to (default: the current phase)")
	scope := fset.String("scope", store.ScopeProject, "`project|user`: this project, or every project of yours (the per-user store)")
	pos, err := cli.Parse(fset, args)
	if err != nil {
		return err
	}
	if *scope != store.ScopeProject && *scope != store.ScopeUser {
		return cli.Usagef("--scope is project or user, not %q", *scope)
	}
	if *scope == store.ScopeUser && phase.v != nil {
		return cli.Usagef("a decision of scope user holds in every project and belongs to no phase: drop --phase")
	}
	text := strings.Join(pos, " ")
	if strings.TrimSpace(text) == "" {
		return cli.Usagef("say what was decided: intermem decide TEXT --why RATIONALE")
	}
	if strings.TrimSpace(*why) == "" {
		return cli.Usagef("say why with --why RATIONALE: a decision without its reason cannot be revisited")
	}
	if *scope == store.ScopeUser {
		return decideUser(env, &c, text, *why)
	}
	p, err := c.resolve(env)
	if err != nil {
		return err
	}
	w, err := openWriter(env, p, "intermem decide")
	if err != nil {
		return err
	}
	defer w.Close()
	var rep DecideReport
	err = updateContinuity(env, w, func(tx *bolt.Tx) error {
		var err error
		rep.Decision, rep.Created, err = continuity.Decide(tx, text, *why, phase.v, "", w.now)
		return err
	})
	if err != nil {
		return continuityError(err)
	}
	if c.json {
		return writeJSON(env.Stdout, &rep)
	}
	if !rep.Created {
		fmt.Fprintf(env.Stdout, "Already recorded as %s (%s).\n", rep.Decision.ID, phaseText(rep.Decision.Phase))
		return nil
	}
	fmt.Fprintf(env.Stdout, "Decision %s recorded (%s).\n", rep.Decision.ID, phaseText(rep.Decision.Phase))
	return nil
}

// decideUser records a decision of scope user in the per-user store.
func decideUser(env *cli.Env, c *common, text, why string) error {
	now, err := env.Now()
	if err != nil {
		return cli.WithHint(err, "set INTERMEM_NOW to an RFC 3339 time such as 2026-11-25T09:00:00Z, or unset it")
	}
	us, err := continuity.OpenUser(env, true, cliWait)
	if err != nil {
		return cli.WithHint(err, "decisions of scope project work without it; check $XDG_STATE_HOME/intermem (else ~/.local/state/intermem)")
	}
	defer us.Close()
	var rep DecideReport
	err = us.Update(func(tx *bolt.Tx) error {
		var err error
		rep.Decision, rep.Created, err = continuity.DecideUser(tx, text, why, "", now)
		return err
	})
	if err != nil {
		return continuityError(err)
	}
	if c.json {
		return writeJSON(env.Stdout, &rep)
	}
	if !rep.Created {
		fmt.Fprintf(env.Stdout, "Already recorded as %s (scope user: every project).\n", rep.Decision.ID)
		return nil
	}
	fmt.Fprintf(env.Stdout, "Decision %s recorded (scope user: every project).\n", rep.Decision.ID)
	return nil
}

const decisionsUsage = `Usage: intermem decisions [--phase N] [--all] [--scope project|user|all] [--all-projects]
                          [--project DIR] [--json]

Lists the decisions taken, oldest first, each with why: this project's and
those of scope user (every project of yours, from the per-user store).
Decisions of phases a backtrack left behind are listed only with --all.
--all-projects adds the decisions of every project you have used these
commands in (the per-user store's registry). Without the per-user store,
this project's decisions are listed alone, with a warning.
`

// DecisionItem is one decision as decisions lists it: the record, its
// scope, and for --all-projects the project it belongs to.
type DecisionItem struct {
	store.PhaseDecision
	Project string `json:"project,omitempty"`
}

// DecisionsReport is the JSON shape of decisions.
type DecisionsReport struct {
	Decisions []DecisionItem `json:"decisions"`
	Warnings  []string       `json:"warnings,omitempty"`
}

func runDecisions(ctx context.Context, env *cli.Env, args []string) error {
	var c common
	fset := cli.FlagSet("intermem decisions", decisionsUsage, env.Stdout)
	c.register(fset, true)
	var phase optInt
	fset.Var(&phase, "phase", "only the decisions of phase `N`")
	all := fset.Bool("all", false, "include decisions of invalidated phases")
	scope := fset.String("scope", "all", "`project|user|all`: this project's decisions, those of scope user, or both")
	allProjects := fset.Bool("all-projects", false, "add the decisions of every project in the per-user registry")
	pos, err := cli.Parse(fset, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return cli.Usagef("unexpected %q", pos[0])
	}
	if *scope != "all" && *scope != store.ScopeProject && *scope != store.ScopeUser {
		return cli.Usagef("--scope is project, user or all, not %q", *scope)
	}
	p, err := c.resolve(env)
	if err != nil {
		return err
	}
	rep := DecisionsReport{Decisions: []DecisionItem{}}
	f := continuity.Filter{Phase: phase.v, All: *all}
	add := func(ds []store.PhaseDecision, scope, project string) {
		for _, d := range ds {
			d.Scope = scope
			rep.Decisions = append(rep.Decisions, DecisionItem{PhaseDecision: d, Project: project})
		}
	}
	if *scope != store.ScopeUser {
		if err := readContinuity(env, p, func(tx *bolt.Tx) error {
			ds, err := continuity.Decisions(tx, f)
			add(ds, store.ScopeProject, "")
			return err
		}); err != nil {
			return err
		}
	}
	var registry []store.UserProject
	if (*scope != store.ScopeProject && phase.v == nil) || *allProjects {
		us, err := continuity.OpenUser(env, false, userWait)
		switch {
		case errors.Is(err, store.ErrNotExist):
		case err != nil:
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("%v; listing this project's decisions only", err))
		default:
			err = us.View(func(tx *bolt.Tx) error {
				if *scope != store.ScopeProject && phase.v == nil {
					ds, err := continuity.Decisions(tx, continuity.Filter{All: *all})
					if err != nil {
						return err
					}
					add(ds, store.ScopeUser, "")
				}
				var err error
				registry, err = continuity.Projects(tx)
				return err
			})
			us.Close()
			if err != nil {
				rep.Warnings = append(rep.Warnings, fmt.Sprintf("the per-user store could not be read: %v", err))
			}
		}
	}
	if *allProjects && *scope != store.ScopeUser {
		for _, up := range registry {
			if up.Root == p.Root {
				continue
			}
			ds, err := otherDecisions(env, up.Root, f)
			if err != nil {
				rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s: %v", up.Root, err))
				continue
			}
			add(ds, store.ScopeProject, up.Root)
		}
	}
	sort.SliceStable(rep.Decisions, func(i, j int) bool { return rep.Decisions[i].Time.Before(rep.Decisions[j].Time) })
	for _, w := range rep.Warnings {
		fmt.Fprintf(env.Stderr, "intermem: warning: %s\n", w)
	}
	if c.json {
		return writeJSON(env.Stdout, &rep)
	}
	out := env.Stdout
	if len(rep.Decisions) == 0 {
		fmt.Fprintln(out, "No decisions recorded.")
		return nil
	}
	for _, d := range rep.Decisions {
		where := phaseText(d.Phase)
		if d.Scope == store.ScopeUser {
			where = "scope user"
		}
		if d.Project != "" {
			where += ", in " + d.Project
		}
		fmt.Fprintf(out, "%s  %s, %s%s\n  %s\n  why: %s\n", d.ID, cli.Line(where), d.Time.UTC().Format("2006-01-02"), statusMark(d.Status), cli.Line(d.Text), cli.Line(d.Why))
	}
	return nil
}

// otherDecisions reads the decisions of another registered project, with
// every check a command makes of its own project: a directory that is a
// project, a state directory of real entries, the store opened read-only.
func otherDecisions(env *cli.Env, root string, f continuity.Filter) ([]store.PhaseDecision, error) {
	op, err := project.Resolve(env, root)
	if err != nil {
		return nil, err
	}
	if op.Root != root {
		return nil, fmt.Errorf("no longer a project root (now inside %s)", op.Root)
	}
	if err := op.CheckState(); err != nil {
		return nil, err
	}
	return viewContinuity(env, op, nil, func(tx *bolt.Tx) ([]store.PhaseDecision, error) { return continuity.Decisions(tx, f) })
}

var _ flag.Value = (*optInt)(nil)
