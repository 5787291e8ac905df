package command

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/archive"
	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/catalog"
	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/plan"
	"github.com/intermem/intermem/pkg/snapshot"
	"github.com/intermem/intermem/pkg/source/automemory"
	"github.com/intermem/intermem/pkg/stability"
	"github.com/intermem/intermem/pkg/targets"
	"github.com/intermem/intermem/pkg/tier"
)

const statusUsage = `Usage: intermem status [--project DIR] [--json]

Shows where intermem looks (project root, auto-memory directory, store),
how many Claude Code sessions it has observed, how many memory entries are
stable, recent or volatile, and how MEMORY.md compares with the part
Claude Code loads each session (the first 200 lines / 25,000 characters).
Running it never counts as a session.
`

// StatusReport is the JSON shape of "intermem status --json".
type StatusReport struct {
	ProjectRoot     string `json:"project_root"`
	MemoryDir       string `json:"memory_dir"`
	MemoryDirExists bool   `json:"memory_dir_exists"`
	// MemoryOff is set when .intermem/config.json switches the auto-memory
	// source off: it is not catalogued, searched or served, so no count
	// here includes it (sessions, entries, ready).
	MemoryOff       bool   `json:"memory_off,omitempty"`
	Store           string `json:"store"`
	Sessions        int    `json:"sessions"`
	LastSession     string `json:"last_session,omitempty"`
	StableThreshold int    `json:"stable_threshold"`
	Files           int    `json:"files"`
	// Entries counts auto-memory's entries as sources and validate do
	// (plan.Count): an index line pointing to a topic file is not one;
	// Pointers counts those lines.
	Entries  int `json:"entries"`
	Pointers int `json:"pointers"`
	Stable   int `json:"stable"`
	Recent   int `json:"recent"`
	Volatile int `json:"volatile"`
	Unseen   int `json:"unseen"`
	// Written counts the memories written through intermem (intermem
	// write, memory_write) that the plan judges beside the entries.
	Written int `json:"written"`
	// Ready is how many entries /intermem:synthesize would offer: the
	// candidates of "intermem-synthesize plan --max 0" (plan.Ready).
	Ready         int           `json:"ready"`
	MemoryMDLines int           `json:"memory_md_lines"`
	MemoryMDChars int           `json:"memory_md_chars"`
	LoadedLines   int           `json:"memory_md_loaded_lines"`
	BeyondLoadCap int           `json:"beyond_load_cap"`
	Beyond        []BeyondEntry `json:"beyond"`
	Spooled       bool          `json:"spooled,omitempty"`
	// Promoted knowledge: marked entries in the curated documents, the
	// detail documents, the archive, and the bytes Claude Code loads every
	// session because of intermem.
	Promoted          int      `json:"promoted"`
	DetailDocs        int      `json:"detail_docs"`
	Archived          int      `json:"archived"`
	AlwaysLoadedBytes int      `json:"always_loaded_bytes"`
	Layout            string   `json:"layout"`
	AgentsLoaded      bool     `json:"agents_loaded"`
	Warnings          []string `json:"warnings"`
}

// promotedIn counts the promoted facts a root document holds or indexes:
// its own markers and, for AGENTS.md in the tiered layout, those of the
// detail documents its topic index points to.
func promotedIn(ts *targets.Set, d *targets.Doc) int {
	if !d.Exists {
		return 0
	}
	n := 0
	for _, m := range d.Doc.Marked() {
		if !m.Heading {
			n++
		}
	}
	if d == ts.Agents && bytes.Contains(d.Content, []byte(tier.IndexBegin)) {
		for _, dt := range ts.Details {
			for _, m := range dt.Doc.Marked() {
				if !m.Heading {
					n++
				}
			}
		}
	}
	return n
}

// BeyondEntry is a MEMORY.md entry past the load cap.
type BeyondEntry struct {
	Line int    `json:"line"`
	Kind string `json:"kind"`
	Text string `json:"text"`
}

func runStatus(ctx context.Context, env *cli.Env, args []string) error {
	c, p, err := flagsOnly(env, "intermem status", statusUsage, args)
	if err != nil {
		return err
	}
	threshold := stability.Threshold(env.Get)
	now, err := env.Now()
	if err != nil {
		return err
	}
	var cat *catalog.Memory
	ready, nwritten, memOff := 0, 0, false
	err = readCatalogTx(env, p, now, func(c *catalog.Catalog, tx *bolt.Tx) error {
		memOff = !c.On(automemory.Name)
		in, err := planInputs(env, p, c, tx, now, 0)
		if err != nil {
			return err
		}
		cat, ready, nwritten = in.Catalog, plan.Ready(in, recordedIn(tx), onDisk(p.Root)), len(in.Written)
		return nil
	})
	if err != nil {
		return fmt.Errorf("read memory: %w", err)
	}

	counts := plan.Count(cat)
	r := StatusReport{
		ProjectRoot: p.Root, MemoryDir: p.MemoryDir, Store: p.Path("intermem.db"),
		Sessions: cat.Sessions, StableThreshold: threshold,
		Entries: counts.Entries, Pointers: counts.Pointers, Stable: counts.Status[stability.Stable], Recent: counts.Status[stability.Recent],
		Volatile: counts.Status[stability.Volatile], Unseen: counts.Status[stability.Unseen], Written: nwritten, Ready: ready,
		Spooled: snapshot.Pending(p.StateDir), Beyond: []BeyondEntry{}, Warnings: []string{}, MemoryOff: memOff,
	}
	if memOff {
		// Said so by name, never "not created yet": the directory may well
		// exist.
		r.MemoryDirExists = dirExists(p.MemoryDir)
	}
	if !cat.LastSession.IsZero() {
		r.LastSession = cat.LastSession.Format("2006-01-02 15:04 UTC")
	}
	if cat.Dir != nil {
		r.MemoryDirExists = true
		r.Files = len(cat.Dir.Files)
		r.MemoryMDLines, r.MemoryMDChars, r.LoadedLines = cat.Dir.Load.Lines, cat.Dir.Load.Chars, cat.Dir.Load.LoadedLines
		for _, e := range cat.Dir.BeyondCap() {
			r.Beyond = append(r.Beyond, BeyondEntry{Line: e.StartLine, Kind: string(e.Kind), Text: snapshot.Preview(e.Text, redactText)})
		}
		r.BeyondLoadCap = len(r.Beyond)
		r.Warnings = append(r.Warnings, cat.Dir.Warnings...)
	}
	if ts, err := loadTargets(p); err == nil {
		for _, d := range ts.Docs() {
			for _, m := range d.Doc.Marked() {
				if !m.Heading {
					r.Promoted++
				}
			}
		}
		r.DetailDocs = len(ts.Details)
		if ts.Archive.Exists {
			r.Archived = len(archive.Parse(ts.Archive.Content))
		}
		r.AlwaysLoadedBytes = alwaysLoaded(ts)
		var why string
		r.AgentsLoaded, why = ts.AgentsLoaded()
		r.Warnings = append(r.Warnings, ts.Warnings()...)
		if n := promotedIn(ts, ts.Agents); n > 0 && !r.AgentsLoaded {
			r.Warnings = append(r.Warnings, fmt.Sprintf("%d promoted %s in AGENTS.md (or the detail documents it indexes) where Claude Code will not load %s: %s; run intermem-synthesize apply --import-agents",
				n, cli.Plural(n, "fact sits", "facts sit"), cli.Plural(n, "it", "them"), why))
		}
	} else {
		r.Warnings = append(r.Warnings, err.Error())
	}
	r.Layout = tier.Load(env.Get, p.StateDir).Layout
	if c.json {
		return writeJSON(env.Stdout, &r)
	}
	printStatus(env, &r)
	return nil
}

func printStatus(env *cli.Env, r *StatusReport) {
	w := env.Stdout
	home := env.Get("HOME")
	short := func(p string) string {
		if home != "" && strings.HasPrefix(p, home+string(os.PathSeparator)) {
			return "~" + p[len(home):]
		}
		return p
	}
	fmt.Fprintf(w, "intermem status for %s\n\n", cli.Line(r.ProjectRoot))
	mem := short(r.MemoryDir)
	if r.MemoryOff {
		mem += "  (auto-memory is switched off in .intermem/config.json: not catalogued, searched or served)"
	} else if !r.MemoryDirExists {
		mem += "  (not created yet: Claude Code creates it when it first saves a memory)"
	} else {
		mem += fmt.Sprintf("  (%d %s)", r.Files, cli.Plural(r.Files, "file", "files"))
	}
	fmt.Fprintf(w, "  memory dir  %s\n", cli.Line(mem))
	fmt.Fprintf(w, "  store       %s\n", cli.Line(short(r.Store)))
	sess := fmt.Sprintf("%d observed", r.Sessions)
	if r.LastSession != "" {
		sess += ", last " + r.LastSession
	}
	if r.Spooled {
		sess += " (observations waiting in the spool)"
	}
	if r.MemoryOff {
		fmt.Fprintf(w, "  sessions    not counted: auto-memory is switched off\n")
		fmt.Fprintf(w, "  entries     none from auto-memory: it is switched off\n")
	} else {
		fmt.Fprintf(w, "  sessions    %s\n", sess)
		fmt.Fprintf(w, "  entries     %d in auto-memory: %d stable · %d recent · %d volatile · %d unseen  (stable = unchanged in ≥%d %s)\n",
			r.Entries, r.Stable, r.Recent, r.Volatile, r.Unseen, r.StableThreshold, cli.Plural(r.StableThreshold, "session", "sessions"))
		if r.Pointers > 0 {
			fmt.Fprintf(w, "              and %d index %s pointing to topic files (not counted: each file is)\n", r.Pointers, cli.Plural(r.Pointers, "line", "lines"))
		}
	}
	if r.Written > 0 {
		fmt.Fprintf(w, "  written     %d %s (intermem write, memory_write)\n", r.Written, cli.Plural(r.Written, "memory", "memories"))
	}
	if !r.MemoryOff && r.MemoryDirExists && (r.MemoryMDLines > 0 || r.MemoryMDChars > 0) {
		fmt.Fprintf(w, "  MEMORY.md   %d %s, %s %s  %s\n", r.MemoryMDLines, cli.Plural(r.MemoryMDLines, "line", "lines"),
			cli.Thousands(r.MemoryMDChars), cli.Plural(r.MemoryMDChars, "char", "chars"),
			capBar(r.MemoryMDLines, r.MemoryMDChars))
		if r.BeyondLoadCap > 0 {
			fmt.Fprintf(w, "              only lines 1–%d load; %d %s beyond the cap, never seen by Claude Code:\n",
				r.LoadedLines, r.BeyondLoadCap, cli.Plural(r.BeyondLoadCap, "entry is", "entries are"))
			for i, b := range r.Beyond {
				if i == 8 {
					fmt.Fprintf(w, "                … and %d more (intermem status --json lists them all)\n", len(r.Beyond)-i)
					break
				}
				fmt.Fprintf(w, "                line %d: %s\n", b.Line, cli.Line(clip(b.Text, 70)))
			}
		}
	}
	if r.Promoted > 0 || r.Archived > 0 {
		fmt.Fprintf(w, "  promoted    %d %s (%s layout, %d detail %s), %d archived; %s %s always loaded\n",
			r.Promoted, cli.Plural(r.Promoted, "fact", "facts"), r.Layout, r.DetailDocs, cli.Plural(r.DetailDocs, "doc", "docs"),
			r.Archived, cli.Thousands(r.AlwaysLoadedBytes), cli.Plural(r.AlwaysLoadedBytes, "byte", "bytes"))
	}
	for _, warn := range r.Warnings {
		fmt.Fprintf(w, "  warning     %s\n", cli.Line(warn))
	}
	if r.Ready > 0 {
		fmt.Fprintf(w, "\n%d %s ready for /intermem:synthesize.\n", r.Ready, cli.Plural(r.Ready, "memory is", "memories are"))
	} else if r.MemoryDirExists && r.LoadedLines < r.MemoryMDLines {
		fmt.Fprintln(w, "\nMEMORY.md is over its load cap and nothing is ready to promote: intermem tidy shows how moving its largest sections into topic files brings it back under (a dry run; --apply moves them).")
	}
}

// capBar draws MEMORY.md's use of its load cap: the larger of the line
// and character fractions, 20 cells wide.
func capBar(lines, chars int) string {
	frac := float64(lines) / automem.MaxLoadLines
	what := "of the 200-line cap"
	if f := float64(chars) / automem.MaxLoadChars; f > frac {
		frac, what = f, "of the 25,000-char cap"
	}
	cells := int(frac*20 + 0.5)
	if cells > 20 {
		cells = 20
	}
	bar := strings.Repeat("█", cells) + strings.Repeat("░", 20-cells)
	return fmt.Sprintf("[%s] %d%% %s", bar, int(frac*100+0.5), what)
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// dirExists reports whether path is a directory.
func dirExists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}
