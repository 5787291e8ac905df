package intermem_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/command"
	"github.com/intermem/intermem/pkg/snapshot"
)

// corpusMemory is the real auto-memory kept byte for byte in the repository
// (real folders written by other people's sessions).
const corpusMemory = "testdata/corpus/auto-memory"

// handCounts are the entries of a few corpus memory folders, counted by
// reading the files: every bullet or numbered item with what nests under
// it, every pointer line, every table, every lead-in with its list or
// fence, every paragraph and every fence of its own under a section
// heading, every one-memory file. Headings, a title's blurb, quotes,
// comments and captions are not entries.
var handCounts = map[string]int{
	// MEMORY.md: 4 + 5 + 2 bullets, 1 pointer to a missing file; hooks.md:
	// "**File:**" with its list, the table with its lead-in, the "Note:"
	// paragraph, 5 format notes.
	"AaronRAppel__dotfiles__claude_memory_": 20,
	// MEMORY.md: the context paragraph, 7 + 4 bullets; one memory file;
	// projeto.md: 33 bullets and 2 command fences.
	"zatiads__projeto-jake-23-03-2026__.claude_projects_-root_memory_": 48,
	// MEMORY.md: 3 + 4 + 4 + 4 + 4 bullets.
	"ashc0815__claudecode-config__projects_-root_memory_": 19,
	// MEMORY.md: 1 paragraph, 3 + 5 + 5 + 3 + 1 bullets, 2 bold lead-ins
	// with fences, 2 with lists, 1 bold-lead paragraph; the flow diagram
	// file: 5 diagrams, one per section.
	"ashc0815__claudecode-config__projects_-Users-ashleychen_memory_": 28,
	// One memory file and no index.
	"austinweitao__claude-backup__projects_-home-cwtrocks-OpenCoreAnalysisKit_memory_": 1,
}

// corpusFolders groups the corpus files by the memory folder they came
// from, as MANIFEST.tsv records it (repo and path): the folder is named
// as the files are, <owner>__<repo>__<directory with / as _>_, and maps to
// the files' names in it.
func corpusFolders(t *testing.T) map[string]map[string]string {
	t.Helper()
	manifest, err := os.ReadFile(filepath.Join(filepath.Dir(corpusMemory), "MANIFEST.tsv"))
	if err != nil {
		t.Fatalf("the vendored corpus is part of the repository: %v", err)
	}
	out := map[string]map[string]string{}
	n := 0
	for _, row := range strings.Split(string(manifest), "\n") {
		cols := strings.Split(row, "\t")
		if len(cols) < 3 || cols[0] != "auto-memory" {
			continue
		}
		repo, p := cols[1], cols[2]
		file := strings.ReplaceAll(repo, "/", "__") + "__" + strings.ReplaceAll(p, "/", "_")
		if _, err := os.Stat(filepath.Join(corpusMemory, file)); err != nil {
			t.Fatalf("MANIFEST.tsv names %s: %v", file, err)
		}
		folder := strings.ReplaceAll(repo, "/", "__") + "__" + strings.ReplaceAll(path.Dir(p), "/", "_") + "_"
		if out[folder] == nil {
			out[folder] = map[string]string{}
		}
		out[folder][file] = path.Base(p)
		n++
	}
	if ents, _ := os.ReadDir(corpusMemory); len(ents) != n {
		t.Fatalf("MANIFEST.tsv lists %d auto-memory files, the folder holds %d", n, len(ents))
	}
	return out
}

// corpusFigures is what the run measures over one folder.
type corpusFigures struct {
	entries, pointers, candidates, timeBound, blocked, keptPrivate, promoted int
	danglingLeadIns, orderViolations, numberLost, brokenLinks                int
}

// TestCorpusRun takes every auto-memory folder of the corpus as a
// project's memory, in both layouts: one session makes everything stable,
// the real plan runs, everything it offers is applied. It checks what the
// user's documents and memory look like afterwards — no lead-in left
// dangling in memory, promoted facts in their source order with their
// numbers, no broken relative link in any promoted document — and that the
// entries found match the counts made by hand. The figures are printed
// (go test -run TestCorpusRun -v).
func TestCorpusRun(t *testing.T) {
	folders := corpusFolders(t)
	if len(folders) != 9 {
		t.Fatalf("%d memory folders in the corpus, want 9", len(folders))
	}
	names := make([]string, 0, len(folders))
	for f := range folders {
		names = append(names, f)
	}
	sort.Strings(names)
	for _, layout := range []string{"tiered", "flat"} {
		var total corpusFigures
		var rows []string
		for _, folder := range names {
			f := runCorpusFolder(t, layout, folder, folders[folder])
			if want, ok := handCounts[folder]; ok && f.entries != want {
				t.Errorf("%s: %d entries found, %d counted by hand", folder, f.entries, want)
			}
			hand := "-"
			if want, ok := handCounts[folder]; ok {
				hand = fmt.Sprint(want)
			}
			rows = append(rows, fmt.Sprintf("%-40.40s %5d %5s %5d %5d %5d %5d %5d %5d %5d %5d %5d %5d", folder, f.entries, hand, f.pointers,
				f.candidates, f.timeBound, f.blocked, f.keptPrivate, f.promoted, f.danglingLeadIns, f.orderViolations, f.numberLost, f.brokenLinks))
			total.entries += f.entries
			total.pointers += f.pointers
			total.candidates += f.candidates
			total.timeBound += f.timeBound
			total.blocked += f.blocked
			total.keptPrivate += f.keptPrivate
			total.promoted += f.promoted
			total.danglingLeadIns += f.danglingLeadIns
			total.orderViolations += f.orderViolations
			total.numberLost += f.numberLost
			total.brokenLinks += f.brokenLinks
		}
		t.Logf("layout %s\n%-40s %5s %5s %5s %5s %5s %5s %5s %5s %5s %5s %5s %5s\n%s\n%-40s %5d %5s %5d %5d %5d %5d %5d %5d %5d %5d %5d %5d",
			layout, "folder", "found", "hand", "ptrs", "cands", "time", "block", "priv", "prom", "dangl", "order", "numbr", "links",
			strings.Join(rows, "\n"), "total", total.entries, "", total.pointers, total.candidates, total.timeBound, total.blocked,
			total.keptPrivate, total.promoted, total.danglingLeadIns, total.orderViolations, total.numberLost, total.brokenLinks)
		if total.danglingLeadIns != 0 || total.orderViolations != 0 || total.numberLost != 0 || total.brokenLinks != 0 {
			t.Errorf("layout %s: %d dangling lead-ins, %d order violations, %d lost numbers, %d broken links (all must be 0)",
				layout, total.danglingLeadIns, total.orderViolations, total.numberLost, total.brokenLinks)
		}
		// Checked by hand: the corpus holds two entries with a credential-
		// shaped value — an admin password (zatiads, projeto.md:31) and a
		// Google OAuth client id written as "client_secret:" (1000ssam,
		// project_book-writer.md:32). Both are kept private.
		if total.keptPrivate != 2 {
			t.Errorf("layout %s: %d entries kept private, want 2", layout, total.keptPrivate)
		}
		if total.promoted != total.candidates {
			t.Errorf("layout %s: %d promoted of %d candidates", layout, total.promoted, total.candidates)
		}
	}
}

// runCorpusFolder runs snapshot, plan and apply --approve all over one
// folder and measures the result.
func runCorpusFolder(t *testing.T, layout, folder string, files map[string]string) corpusFigures {
	t.Helper()
	work := t.TempDir()
	proj, mem, home := filepath.Join(work, "proj"), filepath.Join(work, "mem"), filepath.Join(work, "home")
	for _, d := range []string{proj, mem, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	before := map[string][]byte{}
	for name, base := range files {
		b, err := os.ReadFile(filepath.Join(corpusMemory, name))
		if err != nil {
			t.Fatal(err)
		}
		before[base] = b
		if err := os.WriteFile(filepath.Join(mem, base), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	environ := []string{"HOME=" + home, "INTERMEM_MEMORY_DIR=" + mem, "INTERMEM_STABLE_SESSIONS=1",
		"INTERMEM_NOW=2026-11-01T09:00:00Z", "INTERMEM_LAYOUT=" + layout, "PATH=" + os.Getenv("PATH")}
	run := func(stdin []byte, main func(*cli.Env) int) string {
		var out, errb bytes.Buffer
		env := cli.New(environ, proj, bytes.NewReader(stdin), &out, &errb)
		if code := main(env); code != 0 {
			t.Fatalf("%s (%s): exit %d\n%s%s", folder, layout, code, out.String(), errb.String())
		}
		return out.String()
	}
	payload, err := os.ReadFile(filepath.Join("testdata", "payloads", "Stop.print-mode.json"))
	if err != nil {
		t.Fatal(err)
	}
	stop, err := sjson.SetBytes(payload, "cwd", proj)
	if err != nil {
		t.Fatal(err)
	}
	run(stop, func(env *cli.Env) int { return snapshot.Main(env, nil) })
	plan := run(nil, func(env *cli.Env) int {
		return command.SynthesizeMain(context.Background(), env, []string{"plan", "--project", proj, "--max", "0", "--json"})
	})
	var f corpusFigures
	// The plan counts entries as sources does, index lines pointing to
	// topic files apart; the hand counts count those lines too.
	f.pointers = int(gjson.Get(plan, "pointers_ignored").Int())
	f.entries = int(gjson.Get(plan, "entries").Int()) + f.pointers
	f.candidates = int(gjson.Get(plan, "candidates.#").Int())
	f.timeBound = int(gjson.Get(plan, "time_bound.#").Int())
	f.blocked = int(gjson.Get(plan, "blocked.#").Int())
	f.keptPrivate = int(gjson.Get(plan, "private.#").Int())
	for _, tb := range gjson.Get(plan, "time_bound").Array() {
		t.Logf("%s: time-bound %s:%d %s", folder, tb.Get("file"), tb.Get("line").Int(), tb.Get("reason"))
	}
	if f.candidates == 0 {
		return f
	}
	apply := run(nil, func(env *cli.Env) int {
		return command.SynthesizeMain(context.Background(), env, []string{"apply", "--project", proj, "--approve", "all", "--import-agents", "--json"})
	})
	f.promoted = int(gjson.Get(apply, "promoted.#").Int())

	// Memory afterwards: no lead-in the apply left above nothing.
	for name, b := range before {
		after, err := os.ReadFile(filepath.Join(mem, name))
		if err != nil {
			continue // a promoted memory file is deleted
		}
		was := danglingColons(string(b))
		for _, l := range danglingColons(string(after)) {
			if !contains(was, l) {
				f.danglingLeadIns++
				t.Errorf("%s (%s): %s: lead-in left dangling: %q", folder, layout, name, l)
			}
		}
	}

	// The promoted documents: order, numbers, links.
	src := map[string]srcPos{}
	for _, c := range gjson.Get(plan, "candidates").Array() {
		if c.Get("kind").String() == "memory" {
			continue
		}
		file, line := c.Get("file").String(), int(c.Get("line").Int())
		first := strings.Split(string(before[file]), "\n")[line-1]
		src[c.Get("id").String()] = srcPos{file: file, line: line, number: numberRE.FindString(strings.TrimSpace(first))}
	}
	docs, _ := filepath.Glob(filepath.Join(proj, "docs", "intermem", "*.md"))
	for _, name := range []string{"CLAUDE.md", "AGENTS.md"} {
		if _, err := os.Stat(filepath.Join(proj, name)); err == nil {
			docs = append(docs, filepath.Join(proj, name))
		}
	}
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		order, numbers := promotedOrder(string(b), src)
		f.orderViolations += len(order)
		f.numberLost += len(numbers)
		for _, v := range append(order, numbers...) {
			t.Errorf("%s (%s): %s: %s", folder, layout, filepath.Base(doc), v)
		}
		broken := brokenMarkdownLinks(doc, string(b))
		f.brokenLinks += len(broken)
		for _, l := range broken {
			t.Errorf("%s (%s): broken link %s", folder, layout, l)
		}
	}
	return f
}

type srcPos struct {
	file   string
	line   int
	number string // "3." when the item was numbered
}

var (
	markerRE  = regexp.MustCompile(`<!-- intermem:([0-9a-f]{16}) -->`)
	numberRE  = regexp.MustCompile(`^\d{1,9}[.)]\s`)
	headingRE = regexp.MustCompile(`^#{1,6}\s`)
)

// promotedOrder walks a promoted document section by section and reports
// facts from one memory file that are out of their source order, and
// numbered items that lost their number.
func promotedOrder(doc string, src map[string]srcPos) (order, numbers []string) {
	last := map[string]int{} // memory file → source line of its last fact in this section
	fence := false
	for _, line := range strings.Split(doc, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fence = !fence
		}
		if fence {
			continue
		}
		if headingRE.MatchString(line) && !markerRE.MatchString(line) {
			last = map[string]int{}
			continue
		}
		m := markerRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		p, ok := src[m[1]]
		if !ok {
			continue
		}
		if prev, seen := last[p.file]; seen && p.line < prev {
			order = append(order, fmt.Sprintf("%s:%d placed after %s:%d", p.file, p.line, p.file, prev))
		}
		last[p.file] = p.line
		if p.number != "" && !strings.HasPrefix(t, strings.TrimSpace(p.number)+" ") {
			numbers = append(numbers, fmt.Sprintf("%s:%d lost its number %q: %q", p.file, p.line, p.number, t))
		}
	}
	return order, numbers
}

// danglingColons returns the lines of a markdown file (outside fences, not
// headings) that end in a colon with nothing introduced after them: the
// next non-blank line is not a list item, a table or a fence.
func danglingColons(text string) []string {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	var out []string
	fence := false
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fence = !fence
			continue
		}
		if fence || t == "" || headingRE.MatchString(t) {
			continue
		}
		s := strings.TrimRight(t, "*_ ")
		if !strings.HasSuffix(s, ":") && !strings.HasSuffix(s, "：") {
			continue
		}
		next := ""
		for _, n := range lines[i+1:] {
			if strings.TrimSpace(n) != "" {
				next = strings.TrimSpace(n)
				break
			}
		}
		if next == "" || !(strings.HasPrefix(next, "- ") || strings.HasPrefix(next, "* ") || strings.HasPrefix(next, "+ ") ||
			numberRE.MatchString(next) || strings.HasPrefix(next, "|") || strings.HasPrefix(next, "```") || strings.HasPrefix(next, "~~~")) {
			out = append(out, t)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
