// Command bench times intermem's hook binaries exec-to-exit and prints one
// table. scripts/bench.sh builds the binaries and runs it; it is not meant
// to be run on its own.
//
// Each row is a binary, its arguments, its stdin and its environment, run
// many times after a few warm-up runs; the table gives the median (p50) and
// 95th percentile (p95) wall time of fork+exec+exit as seen by this
// process, which is what Claude Code waits for, the child's CPU time, its
// minor page faults (what starting a large binary costs beyond the floor)
// and its peak resident set. The floor row is a static Go binary that does
// nothing: no hook can be faster, and every hook row is also given as a
// ratio to it (p50 to p50, p95 to p95), which is what carries from one
// machine to another; so is `intermem search` (issue 13 sets its p50 at
// 20,000 entries). The ratio's floor is timed in runs interleaved with the
// row's own (one before each), so that a load that changes over the table
// (a shared machine) weighs on both alike. Projects are generated at five scales: about 50
// memory entries; about 2,000 and 20,000 entries spread over every source
// (auto-memory, instruction files, promoted facts, docs/solutions,
// .clavain/learnings, an interfluence log); 10,000 and 100,000 topic files
// in the memory directory. INTERMEM_BENCH_LARGE=0 skips the 20,000-entry
// and 100,000-file scales. INTERMEM_BENCH_ROWS, a regular expression,
// keeps only the rows whose names it matches (and the floor).
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/catalog"
	"github.com/intermem/intermem/pkg/inject"
	"github.com/intermem/intermem/pkg/inject/benchgen"
	"github.com/intermem/intermem/pkg/store"
)

type row struct {
	name  string
	bin   string
	args  []string
	stdin []byte
	// next, when set, gives each run's stdin instead of stdin (a row
	// whose every run is another session's).
	next   func() []byte
	env    []string
	hook   bool         // a hook row: also given as a ratio to the floor
	ratio  bool         // a command row given as a ratio to the floor too
	runs   int          // timed runs, 0 for the default
	setup  func() error // run once before the row, untimed
	before func()       // run before each timed run, untimed
}

// input is the stdin of the row's next run.
func (r row) input() []byte {
	if r.next != nil {
		return r.next()
	}
	return r.stdin
}

type result struct {
	row      row
	n        int
	p50, p95 time.Duration
	min      time.Duration
	cpu50    time.Duration // median user+system CPU time of the child
	faults   int64         // median minor page faults of the child
	// fl50 and fl95 are the floor's, timed in runs interleaved with the
	// row's (a hook row's ratio is to them: a shared machine's load
	// changes over a table, and the ratio must not).
	fl50, fl95 time.Duration
	rssKB      int64 // peak resident set of one run, measured apart
	out        int   // bytes of stdout of the last run
}

func main() {
	bin := flag.String("bin", "", "directory holding the built binaries and the floor binary")
	work := flag.String("work", "", "scratch directory (created)")
	runs := flag.Int("runs", 300, "timed runs per row")
	demo := flag.String("demo", "testdata/demo", "the demo project and memory")
	flag.Parse()
	if *bin == "" || *work == "" || *runs < 1 {
		fmt.Fprintln(os.Stderr, "usage: bench -bin DIR -work DIR [-runs N]")
		os.Exit(2)
	}
	if err := run(*bin, *work, *demo, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// scale is one generated project size. files marks the scales of many
// topic files, whose rows run fewer times (each run reads every file's
// metadata at least) and skip plan and apply.
type scale struct {
	name  string
	opts  benchgen.Options
	files bool
}

func run(bin, work, demo string, runs int) error {
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	home := filepath.Join(work, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return err
	}
	now := time.Now().UTC()
	large := os.Getenv("INTERMEM_BENCH_LARGE") != "0"
	// INTERMEM_BENCH_LARGE=20k keeps the 20,000-entry scale and leaves out
	// the 100,000-file one, whose generation and rows take minutes.
	huge := large && os.Getenv("INTERMEM_BENCH_LARGE") != "20k"
	hooksOnly := os.Getenv("INTERMEM_BENCH_HOOKS") == "1"
	scales := []scale{
		{name: "~50", opts: benchgen.Options{IndexLines: 30, FactFiles: 1, FactsEach: 10, MemoryFiles: 10, DocLines: 100, Now: now}},
		// About 1,000 memory entries and 1,000 in the other sources.
		{name: "~2,000", opts: benchgen.Options{Solutions: 150, Learnings: 150, Edits: 200, Now: now}},
	}
	if large {
		// About 10,000 memory entries and 10,000 in the other sources.
		scales = append(scales, scale{name: "~20,000", opts: benchgen.Options{IndexLines: 260, FactFiles: 100, FactsEach: 96, MemoryFiles: 300,
			DocLines: 1500, Solutions: 2500, Learnings: 2500, Edits: 2000, Now: now}})
	}
	scales = append(scales, scale{name: "10,000 files", files: true, opts: benchgen.Options{TopicFiles: 10000, Sessions: 2, Now: now}})
	if huge {
		scales = append(scales, scale{name: "100,000 files", files: true, opts: benchgen.Options{TopicFiles: 100000, Sessions: 2, Now: now}})
	}
	baseEnv := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	payload := func(cwd, event, session string) []byte {
		m := map[string]string{
			"session_id": session, "cwd": cwd, "hook_event_name": event,
			"transcript_path": filepath.Join(home, ".claude", "projects", "x", session+".jsonl"),
		}
		if event == "SessionStart" {
			m["source"] = "startup"
		}
		b, _ := json.Marshal(m)
		return append(b, '\n')
	}
	cliRuns := max(5, runs/20)
	searchRuns := max(10, runs/6)
	fileRuns := max(5, runs/30)

	rows := []row{{name: "floor: static do-nothing binary", bin: "floor", stdin: payload(work, "Stop", "s"), env: baseEnv}}
	var projects []*benchgen.Project
	for i, sc := range scales {
		fmt.Fprintf(os.Stderr, "bench: generating the %s project\n", sc.name)
		pr, err := benchgen.Write(filepath.Join(work, fmt.Sprintf("scale%d", i)), sc.opts)
		if err != nil {
			return fmt.Errorf("generate %s project: %w", sc.name, err)
		}
		generated := time.Now()
		env := append([]string{"INTERMEM_MEMORY_DIR=" + pr.MemoryDir}, baseEnv...)
		label := fmt.Sprintf("%s entries", thousands(pr.Entries))
		hookRuns := 0
		if sc.files {
			label = fmt.Sprintf("%s files", thousands(pr.Files))
			hookRuns = fileRuns
		}
		state := filepath.Join(pr.Root, ".intermem")
		changed := pr.Changed["auto-memory"]
		// What Claude Code runs: the hook front, which hands what it does
		// not answer to the full hook (a checkout from before the front
		// runs the full hooks).
		start, stop := hookBin(bin, "intermem-inject"), hookBin(bin, "intermem-snapshot")
		rows = append(rows,
			row{name: "SessionStart, " + label, bin: start, stdin: payload(pr.Root, "SessionStart", "s1"), env: env, runs: hookRuns, hook: true},
			row{name: "SessionStart, inputs changed, " + label, bin: start, stdin: payload(pr.Root, "SessionStart", "s1"), env: env, runs: hookRuns, hook: true,
				before: func() {
					os.Remove(filepath.Join(state, inject.RenderCacheName))
					os.Remove(filepath.Join(state, inject.IndexName))
				}},
			row{name: "Stop, nothing changed, " + label, bin: stop, stdin: payload(pr.Root, "Stop", "s1"), env: env, runs: hookRuns, hook: true,
				setup: func() error {
					// The session's first turns record what it sees (a
					// memory of many files over several turns, swept
					// over turns beyond 4,096 entries): then nothing has
					// changed.
					return settle(bin, env, payload(pr.Root, "Stop", "s1"), filepath.Join(state, "log"), pr.Files)
				}},
			row{name: "Stop, one memory file changed, " + label, bin: stop, stdin: payload(pr.Root, "Stop", "s1"), env: env, runs: hookRuns, hook: true,
				before: func() { touchAppend(changed) }},
			// The worst case of session checkpoints (package continuity):
			// one at every turn instead of every tenth.
			row{name: "Stop, a checkpoint every turn, " + label, bin: stop, stdin: payload(pr.Root, "Stop", "s2"),
				env: append([]string{"INTERMEM_CHECKPOINT_INTERVAL=1"}, env...), runs: hookRuns, hook: true},
			// Every run a session's first turn: it counts the session in
			// every entry of the memory (package snapshot).
			row{name: "Stop, a new session's first turn, " + label, bin: "intermem-snapshot", env: env, runs: hookRuns, hook: true,
				next: func() func() []byte {
					n := 0
					return func() []byte {
						n++
						return payload(pr.Root, "Stop", fmt.Sprintf("new-%d", n))
					}
				}()},
			// A session start after the turns above: its rendering is not
			// cached, but the memory files were read before (their parses
			// kept in the catalog by the Stop hook).
			row{name: "SessionStart, not cached, after turns, " + label, bin: start, stdin: payload(pr.Root, "SessionStart", "s1"), env: env, runs: hookRuns, hook: true,
				before: func() { os.Remove(filepath.Join(state, inject.RenderCacheName)) }},
		)
		// Every memory file changed at once (a pull, a first install, a
		// directory replaced): a turn of a settled session, and a session's
		// end that had no turn (each run another session's), each after a
		// line of every file was rewritten. Last in the scale's rows: each
		// run changes an entry of every file.
		allChanged := []row{
			{name: "Stop, every memory file changed, " + label, bin: stop, stdin: payload(pr.Root, "Stop", "s1"), env: env, runs: cliRuns, hook: true,
				before: func() { noteAll(pr.MemoryDir) }},
			{name: "SessionEnd, every memory file changed, " + label, bin: stop, env: env, runs: cliRuns, hook: true,
				before: func() {
					noteAll(pr.MemoryDir)
					time.Sleep(catalog.RacyWindow + 200*time.Millisecond)
				},
				next: func() func() []byte {
					n := 0
					return func() []byte {
						n++
						return payload(pr.Root, "SessionEnd", fmt.Sprintf("all-%d-%d", time.Now().UnixNano(), n))
					}
				}()},
		}
		if sc.files {
			continue
		}
		if hooksOnly {
			rows = append(rows, allChanged...)
			continue
		}
		projects = append(projects, pr)
		rows = append(rows,
			row{name: "intermem-synthesize plan (top 20), " + label, bin: "intermem-synthesize", args: []string{"plan", "--project", pr.Root}, env: env, runs: cliRuns},
			row{name: "intermem-synthesize apply --dry-run (20), " + label, bin: "intermem-synthesize", args: []string{"apply", "--project", pr.Root, "--approve", "1-20", "--import-agents", "--dry-run"}, env: env, runs: cliRuns,
				setup: func() error {
					return runCLI(bin, env, "intermem-synthesize", "plan", "--project", pr.Root, "--max", "20")
				}},
			// Issue 13's target: search p50 ≤ 50 ms at 20,000 entries, on
			// a catalog and index a writer stored (plan is one) a while
			// after the files were written (a directory modified within
			// the catalog's racy window is read at every search).
			row{name: "intermem search (3 words), " + label, bin: "intermem", args: []string{"search", "--project", pr.Root, "invoice render retry"},
				env: env, runs: searchRuns, ratio: true,
				setup: func() error {
					time.Sleep(time.Until(generated.Add(3 * time.Second)))
					return runCLI(bin, env, "intermem-synthesize", "plan", "--project", pr.Root, "--max", "20")
				}},
		)
		// A solution document edited, then a session's end (its catalog
		// refresh), each run another session's, over the catalog and
		// index a writer stored: the session's end, and the first search
		// after one, which decodes the index the session's end left.
		if pr.Changed["compound"] == "" {
			rows = append(rows, allChanged...)
			continue
		}
		docEnded := sessionEnds(bin, env, pr, payload, func() { touchAppend(pr.Changed["compound"]) })
		rows = append(rows,
			row{name: "SessionEnd, a solution doc changed, " + label, bin: stop, env: env, runs: cliRuns, hook: true,
				setup: docEnded.setup, before: docEnded.turn, next: docEnded.end},
			row{name: "intermem search after a source changed, " + label, bin: "intermem", args: []string{"search", "--project", pr.Root, "invoice render retry"},
				env: env, runs: cliRuns, ratio: true, setup: docEnded.setup,
				before: func() {
					docEnded.turn()
					if err := runHook(bin, env, "intermem-snapshot", docEnded.end()); err != nil {
						panic(err)
					}
				}},
		)
		// The same after a memory file changed: the session's end brings
		// auto-memory up to date in the catalog (before, a read-only search
		// scanned the memory whole again, every time, until a command
		// wrote); after more ids changed since the index's base than a
		// delta takes (solution docs and learnings, as a pull brings them):
		// the session's end stores a new base (before, every read-only
		// search built the whole index); and after an upgrade, whose stored
		// index does not decode (the same).
		memEnded := sessionEnds(bin, env, pr, payload, func() { touchAppend(changed) })
		many := pr.Entries/8 + 64 + 48 // past catalog's maxDelta
		manyEnded := sessionEnds(bin, env, pr, payload, func() { editDocs(pr.Root, many) })
		oldEnded := sessionEnds(bin, env, pr, payload, func() {
			touchAppend(changed)
			if err := oldIndex(filepath.Join(state, "intermem.db")); err != nil {
				panic(err)
			}
		})
		manyLabel := fmt.Sprintf("%s docs changed, %s", thousands(many), label)
		for _, c := range []struct {
			what string
			e    ended
		}{{"a memory file changed, " + label, memEnded}, {manyLabel, manyEnded}, {"an older index, " + label, oldEnded}} {
			e := c.e
			rows = append(rows,
				row{name: "SessionEnd, " + c.what, bin: stop, env: env, runs: cliRuns, hook: true,
					setup: e.setup, before: e.turn, next: e.end},
				row{name: "intermem search after SessionEnd, " + c.what, bin: "intermem", args: []string{"search", "--project", pr.Root, "invoice render retry"},
					env: env, runs: cliRuns, ratio: true, setup: e.setup,
					before: func() {
						e.turn()
						if err := runHook(bin, env, "intermem-snapshot", e.end()); err != nil {
							panic(err)
						}
					}},
			)
		}
		rows = append(rows, allChanged...)
	}
	if !hooksOnly {
		rows = append(rows, cliRows(bin, work, baseEnv, projects, cliRuns)...)
	}
	return report(bin, work, demo, baseEnv, rows, runs, fileRuns, cliRuns, projects, hooksOnly)
}

// ended is what the rows of a session's end after a source changed run:
// setup stores the catalog and index (a writer, plan); turn edits a
// solution document, runs a new session's turn (its first Stop) and waits
// out the catalog's racy window; end is that session's SessionEnd payload.
type ended struct {
	setup func() error
	turn  func()
	end   func() []byte
}

func sessionEnds(bin string, env []string, pr *benchgen.Project, payload func(cwd, event, session string) []byte, edit func()) ended {
	n := 0
	session := func() string { return fmt.Sprintf("ended-%d-%d", time.Now().UnixNano(), n) }
	id := session()
	return ended{
		setup: func() error {
			return runCLI(bin, env, "intermem-synthesize", "plan", "--project", pr.Root, "--max", "20")
		},
		turn: func() {
			n++
			id = session()
			edit()
			if err := runHook(bin, env, "intermem-snapshot", payload(pr.Root, "Stop", id)); err != nil {
				panic(err)
			}
			// The session ends a while after the edit: a file modified
			// within the catalog's racy window of its stat is read again
			// by every later build until one stats it past the window.
			time.Sleep(catalog.RacyWindow + 200*time.Millisecond)
		},
		end: func() []byte { return payload(pr.Root, "SessionEnd", id) },
	}
}

// cliRows are the rows of plan and apply.
func cliRows(bin, work string, baseEnv []string, projects []*benchgen.Project, cliRuns int) []row {
	var rows []row
	// The design's scale target: every stable entry planned (no cap) for
	// about 1,000 candidates.
	mid := projects[min(1, len(projects)-1)]
	midEnv := append([]string{"INTERMEM_MEMORY_DIR=" + mid.MemoryDir}, baseEnv...)
	rows = append(rows, row{name: fmt.Sprintf("intermem-synthesize plan --max 0, %d entries", mid.Entries), bin: "intermem-synthesize",
		args: []string{"plan", "--project", mid.Root, "--max", "0"}, env: midEnv, runs: cliRuns})
	// A real apply, on a fresh copy of the ~1,000-entry project each run.
	pristine := filepath.Join(work, "pristine")
	applyDir := filepath.Join(work, "apply")
	applyEnv := append([]string{"INTERMEM_MEMORY_DIR=" + filepath.Join(applyDir, "memory")}, baseEnv...)
	rows = append(rows, row{name: fmt.Sprintf("intermem-synthesize apply (20), %d entries", mid.Entries), bin: "intermem-synthesize",
		args: []string{"apply", "--project", filepath.Join(applyDir, "proj"), "--approve", "1-20", "--import-agents"}, env: applyEnv, runs: cliRuns,
		setup: func() error {
			if err := copyAll(filepath.Dir(mid.Root), pristine); err != nil {
				return err
			}
			return nil
		},
		before: func() {
			os.RemoveAll(applyDir)
			if err := copyAll(pristine, applyDir); err != nil {
				panic(err)
			}
			// The generated project's memory dir sits beside it.
			if err := runCLI(bin, applyEnv, "intermem-synthesize", "plan", "--project", filepath.Join(applyDir, "proj"), "--max", "20"); err != nil {
				panic(err)
			}
		}})
	return rows
}

// report measures the rows and prints the table, the binary sizes and,
// unless hooksOnly, the budget fill.
func report(bin, work, demo string, baseEnv []string, rows []row, runs, fileRuns, cliRuns int, projects []*benchgen.Project, hooksOnly bool) error {
	if expr := os.Getenv("INTERMEM_BENCH_ROWS"); expr != "" {
		re, err := regexp.Compile(expr)
		if err != nil {
			return fmt.Errorf("INTERMEM_BENCH_ROWS: %w", err)
		}
		kept := rows[:1] // the floor
		for _, r := range rows[1:] {
			if re.MatchString(r.name) {
				kept = append(kept, r)
			}
		}
		rows = kept
	}
	var results []result
	for _, r := range rows {
		if r.setup != nil {
			if err := r.setup(); err != nil {
				return fmt.Errorf("%s: %w", r.name, err)
			}
		}
		n := runs
		if r.runs > 0 {
			n = r.runs
		}
		var fl *row
		if r.hook || r.ratio {
			fl = &rows[0]
		}
		res, err := measure(bin, r, n, fl)
		if err != nil {
			return fmt.Errorf("%s: %w", r.name, err)
		}
		results = append(results, res)
	}
	fmt.Printf("exec-to-exit wall time after warm-up runs; hooks %d runs per row (%d at the scales of many files), CLI rows %d\n", runs, fileRuns, cliRuns)
	fmt.Printf("(×floor: the row's p50 and p95 over the floor's, timed in runs interleaved with the row's (one before each);\n")
	fmt.Printf("cpu: the child's user+system time, p50; ")
	fmt.Printf("faults: the child's minor page faults, p50; rss: peak resident set of one run)\n\n")
	fmt.Printf("%-56s %5s %10s %10s %8s %8s %10s %7s %8s\n", "row", "runs", "p50", "p95", "p50×fl", "p95×fl", "cpu", "faults", "rss")
	floor := results[0]
	for _, r := range results {
		r50, r95 := "", ""
		if r.row.hook || r.row.ratio || r.row.bin == "floor" {
			f50, f95 := floor.p50, floor.p95
			if r.fl50 > 0 {
				f50, f95 = r.fl50, r.fl95
			}
			r50 = fmt.Sprintf("%.2f×", float64(r.p50)/float64(f50))
			r95 = fmt.Sprintf("%.2f×", float64(r.p95)/float64(f95))
		}
		fmt.Printf("%-56s %5d %10s %10s %8s %8s %10s %7d %6.1fMB\n", r.row.name, r.n, ms(r.p50), ms(r.p95), r50, r95, ms(r.cpu50), r.faults, float64(r.rssKB)/1024)
	}
	fmt.Printf("\nbinary sizes\n\n")
	ents, err := os.ReadDir(bin)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			fmt.Printf("%-58s %9.2f MB\n", e.Name(), float64(fi.Size())/(1<<20))
		}
	}

	if hooksOnly {
		return nil
	}
	demoProj := filepath.Join(work, "demo")
	if err := copyTree(filepath.Join(demo, "project"), demoProj); err != nil {
		return fmt.Errorf("copy demo: %w", err)
	}
	demoMem, err := filepath.Abs(filepath.Join(demo, "memory"))
	if err != nil {
		return err
	}
	fmt.Printf("\nbudget fill: UTF-8 bytes of context used of 3 × budget (intermem context --json)\n\n")
	fmt.Printf("%-58s %14s %14s %14s\n", "project", "budget 200", "budget 1200", "budget 5000")
	fills := []struct{ name, dir, mem string }{{"demo", demoProj, demoMem}}
	for _, pr := range projects {
		fills = append(fills, struct{ name, dir, mem string }{fmt.Sprintf("generated, %d entries", pr.Entries), pr.Root, pr.MemoryDir})
	}
	for _, p := range fills {
		fmt.Printf("%-58s", p.name)
		for _, b := range []int{200, 1200, 5000} {
			cmd := exec.Command(filepath.Join(bin, "intermem"), "context", "--project", p.dir, "--budget", fmt.Sprint(b), "--json")
			cmd.Env = append([]string{"INTERMEM_MEMORY_DIR=" + p.mem}, baseEnv...)
			out, err := cmd.Output()
			if err != nil {
				return fmt.Errorf("intermem context: %w", err)
			}
			var rep struct{ Context string }
			if err := json.Unmarshal(out, &rep); err != nil {
				return err
			}
			fmt.Printf(" %14s", fmt.Sprintf("%d/%d", len(rep.Context), 3*b))
		}
		fmt.Println()
	}
	return nil
}

// settle runs Stop turns of one session until nothing is left to do: 20
// turns at least, and then, for a memory swept over turns, two whole
// sweeps (ceil(files/4,096)+1 turns each) in which no turn logs that it
// left files for the next (a sweep's chunks are stored for the session
// in the first, and cost it nothing from the second on).
func settle(bin string, env []string, stdin []byte, logPath string, files int) error {
	sweep := (files+4095)/4096 + 1
	quiet := 0
	for turn := 1; turn <= 20 || quiet < 2*sweep; turn++ {
		if turn > 2000 {
			return fmt.Errorf("the Stop hook still leaves work after %d turns", turn)
		}
		before := logLines(logPath)
		if err := runHook(bin, env, "intermem-snapshot", stdin); err != nil {
			return err
		}
		after := logLines(logPath)
		if len(after) < len(before) { // rotated
			before = ""
		}
		if strings.Contains(after[len(before):], "on the next turns") {
			quiet = 0
		} else {
			quiet++
		}
	}
	return nil
}

// logLines returns the hook log's content ("" when there is none).
func logLines(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// touchAppend changes a memory file, so the next Stop observes a change.
func touchAppend(path string) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	fmt.Fprintf(f, "- Bench note %d.\n", time.Now().UnixNano())
	f.Close()
}

// noteAll changes every memory file of dir: its last line, when a run
// before wrote it, is written anew, else a line is appended (an entry of
// each file changed, their number kept from one run to the next).
func noteAll(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if i := bytes.LastIndex(b, []byte("- Sweep note ")); i >= 0 && bytes.IndexByte(b[i:], '\n') == len(b[i:])-1 {
			b = b[:i]
		}
		if len(b) > 0 && b[len(b)-1] != '\n' {
			b = append(b, '\n')
		}
		b = fmt.Appendf(b, "- Sweep note %d.\n", time.Now().UnixNano())
		_ = os.WriteFile(p, b, 0o644)
	}
}

// editDocs appends a line to n of the project's solution documents and
// learnings, alternately: n ids changed in the catalog.
func editDocs(root string, n int) {
	var docs [2][]string
	for i, dir := range []string{"docs/solutions", ".clavain/learnings"} {
		_ = filepath.WalkDir(filepath.Join(root, filepath.FromSlash(dir)), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
				docs[i] = append(docs[i], p)
			}
			return nil
		})
	}
	for i := range n {
		if d := docs[i%2]; i/2 < len(d) {
			touchAppend(d[i/2])
		}
	}
}

// oldIndex stores, as the catalog's search index, bytes that do not
// decode, as an older intermem's format does not.
func oldIndex(dbPath string) error {
	s, err := store.Open(dbPath, store.Options{Timeout: 5 * time.Second})
	if err != nil {
		return err
	}
	defer s.Close()
	return s.Update(func(tx *bolt.Tx) error {
		ct := store.Catalog(tx)
		return ct.PutIndex([]byte("IMSX\x01an older format"), ct.Generation())
	})
}

// hookBin is the binary Claude Code runs for a hook whose full binary is
// full: the hook front when bin holds one, else full itself.
func hookBin(bin, full string) string {
	if _, err := os.Stat(filepath.Join(bin, "intermem-hook")); err == nil {
		return "intermem-hook"
	}
	return full
}

// runHook runs a hook binary once with stdin.
func runHook(bin string, env []string, name string, stdin []byte) error {
	cmd := exec.Command(filepath.Join(bin, name))
	cmd.Env = env
	cmd.Stdin = bytes.NewReader(stdin)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v\n%s", name, err, out)
	}
	return nil
}

func runCLI(bin string, env []string, name string, args ...string) error {
	cmd := exec.Command(filepath.Join(bin, name), args...)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %v: %v\n%s", name, args, err, out)
	}
	return nil
}

// copyAll copies a directory tree, dot files included.
func copyAll(src, dst string) error {
	return filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if fi.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !fi.Mode().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, fi.Mode().Perm())
	})
}

func measure(bin string, r row, runs int, fl *row) (result, error) {
	path := filepath.Join(bin, r.bin)
	var times, cpu, flTimes []time.Duration
	var faults []int64
	var last []byte
	var rss int64
	warm := min(10, max(2, runs/5))
	for i := 0; i < runs+warm; i++ {
		if fl != nil && i >= warm {
			cmd := exec.Command(filepath.Join(bin, fl.bin))
			cmd.Stdin = bytes.NewReader(fl.stdin)
			cmd.Env = fl.env
			start := time.Now()
			if err := cmd.Run(); err != nil {
				return result{}, fmt.Errorf("floor: %v", err)
			}
			flTimes = append(flTimes, time.Since(start))
		}
		if r.before != nil {
			r.before()
		}
		var out bytes.Buffer
		cmd := exec.Command(path, r.args...)
		cmd.Stdin = bytes.NewReader(r.input())
		cmd.Stdout = &out
		cmd.Env = r.env
		start := time.Now()
		err := cmd.Run()
		d := time.Since(start)
		if err != nil {
			return result{}, fmt.Errorf("%v: %s", err, out.String())
		}
		if i >= warm {
			times = append(times, d)
			cpu = append(cpu, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
			if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
				faults = append(faults, ru.Minflt)
			}
		}
		last = out.Bytes()
	}
	rss = peakRSS(path, r)
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	sort.Slice(cpu, func(i, j int) bool { return cpu[i] < cpu[j] })
	sort.Slice(faults, func(i, j int) bool { return faults[i] < faults[j] })
	pct := func(ts []time.Duration, p float64) time.Duration { return ts[int(p*float64(len(ts)-1)+0.5)] }
	var flt int64
	if len(faults) > 0 {
		flt = faults[len(faults)/2]
	}
	res := result{row: r, n: runs, p50: pct(times, 0.50), p95: pct(times, 0.95), min: times[0], cpu50: pct(cpu, 0.50), faults: flt, rssKB: rss, out: len(last)}
	if len(flTimes) > 0 {
		sort.Slice(flTimes, func(i, j int) bool { return flTimes[i] < flTimes[j] })
		res.fl50, res.fl95 = pct(flTimes, 0.50), pct(flTimes, 0.95)
	}
	return res, nil
}

// peakRSS runs the row once under /usr/bin/time and returns the child's
// peak resident set in KB (0 when time is not installed). The rusage of a
// child started from this process would count this process's own memory:
// Go starts children with vfork, and the kernel's high-water mark covers
// the time before exec.
func peakRSS(path string, r row) int64 {
	if _, err := os.Stat("/usr/bin/time"); err != nil {
		return 0
	}
	if r.before != nil {
		r.before()
	}
	var errb bytes.Buffer
	cmd := exec.Command("/usr/bin/time", append([]string{"-f", "rss=%M", path}, r.args...)...)
	cmd.Stdin = bytes.NewReader(r.input())
	cmd.Stderr = &errb
	cmd.Env = r.env
	if cmd.Run() != nil {
		return 0
	}
	i := strings.LastIndex(errb.String(), "rss=")
	if i < 0 {
		return 0
	}
	var kb int64
	fmt.Sscan(strings.TrimSpace(errb.String()[i+4:]), &kb)
	return kb
}

// thousands writes n with thousands separators.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

// copyTree copies a directory of regular files.
func copyTree(src, dst string) error {
	return filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if fi.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !fi.Mode().IsRegular() || strings.HasPrefix(fi.Name(), ".") && fi.Name() != ".gitignore" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}
