// Package promote decides what applying a user's approvals of a synthesis
// plan does: it checks the plan against the memory and the targets as they
// are now (stale entries, secrets, what is already written or loaded, an
// AGENTS.md Claude Code would not load), chooses where each approved entry
// lands (its target or, in the tiered layout, its detail document), puts
// the inserts in source order, rewrites each entry's links for its new
// location (links.go), and hands that to ops.Promote, which builds the one
// journaled operation: insert each entry with its marker, then prune it
// from auto-memory (package ops says what each step does). An entry that
// holds a secret (automem.Entry.Secret) is never pruned: its redacted text
// is promoted only on explicit request, and it stays in auto-memory.
package promote

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/journal"
	"github.com/intermem/intermem/pkg/match"
	"github.com/intermem/intermem/pkg/ops"
	"github.com/intermem/intermem/pkg/plan"
	"github.com/intermem/intermem/pkg/redact"
	"github.com/intermem/intermem/pkg/source/written"
	"github.com/intermem/intermem/pkg/targets"
	"github.com/intermem/intermem/pkg/tier"
)

// Request is the user's batch answer to a plan.
type Request struct {
	Approve []int
	Reject  []int          // candidates or entries kept private
	Edits   map[int]string // approve with this text instead
	Targets map[int]string // route override: "AGENTS.md" or "CLAUDE.md"
	// PromoteRedacted are entries the plan kept private (they hold a
	// secret) whose redacted text the user chose, one by one, to promote:
	// they are inserted like candidates and never pruned. An --edit of a
	// kept entry is such a choice too.
	PromoteRedacted []int
	ImportAgents    bool
	// Homes maps memory files promoted by earlier operations (slash paths
	// in the memory directory) to the documents they went to (relative to
	// the root), so a link to one points there.
	Homes map[string]string
	// Said is what Claude Code loads every session now (loaded.Said): an
	// approved prune must still be said there, or pruning would lose it.
	Said map[uint64]string
	// Documents holds the paths of the project's solution documents now
	// (the catalog's compound entries): a prune of an entry "documented
	// in" one needs the document still there.
	Documents map[string]bool
	// Written are the memories in the written set now (package written),
	// by id, as plan.WrittenItem makes them; WrittenLog is the log's path
	// (under the state directory). An approved written memory leaves the
	// set by a retire line, at Now, once every insert is durable.
	Written    map[string]automem.Entry
	WrittenLog string
	Now        time.Time
}

// ErrSpec is returned for a malformed or out-of-range selection.
var ErrSpec = errors.New("bad selection")

// ParseSpec parses "1,3,5-8" or "all" against the plan's numbers.
func ParseSpec(spec string, valid map[int]*plan.Candidate) ([]int, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil, nil
	}
	var out []int
	seen := map[int]bool{}
	add := func(n int) error {
		if valid[n] == nil {
			switch len(valid) {
			case 0:
				return fmt.Errorf("%w: %d is not a number in the plan: it has no candidates", ErrSpec, n)
			case 1:
				return fmt.Errorf("%w: %d is not a number in the plan (only 1)", ErrSpec, n)
			}
			return fmt.Errorf("%w: %d is not a number in the plan (1-%d)", ErrSpec, n, len(valid))
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
		return nil
	}
	if strings.EqualFold(spec, "all") {
		for n := range valid {
			add(n)
		}
		sort.Ints(out)
		return out, nil
	}
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil {
			return nil, fmt.Errorf("%w: %q is not a number or a range like 5-8", ErrSpec, part)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(strings.TrimSpace(hi)); err != nil || b < a {
				return nil, fmt.Errorf("%w: %q is not a range like 5-8", ErrSpec, part)
			}
		}
		for n := a; n <= b; n++ {
			if err := add(n); err != nil {
				return nil, err
			}
		}
	}
	sort.Ints(out)
	return out, nil
}

// ErrStale is returned when the saved plan no longer matches the project.
var ErrStale = errors.New("the plan is stale")

// ErrUnloaded is returned when approved entries would go to an AGENTS.md
// Claude Code does not load, without --import-agents: promotion would move
// knowledge out of what sessions load (MEMORY.md is loaded; the entries
// are pruned from it).
var ErrUnloaded = errors.New("AGENTS.md is not loaded")

// Promotion is one entry being promoted.
type Promotion struct {
	N       int    `json:"n"`
	ID      string `json:"id"`
	File    string `json:"file"` // target document, relative to the root
	Section string `json:"section"`
	Created bool   `json:"section_created"`
	Edited  bool   `json:"edited"`
	Text    string `json:"text"`
	Origin  string `json:"origin"` // memory file it came from
	Kind    string `json:"kind"`
	// Kept is set for an entry that holds a secret: its redacted text was
	// promoted and the entry stays in auto-memory.
	Kept bool `json:"kept_in_memory,omitempty"`
}

// Prepared is an Op ready to run, with what it will do.
type Prepared struct {
	Op         *journal.Op
	Promotions []Promotion
	Rejected   []*plan.Candidate
	// Pruned are approved prune-only candidates: removed from memory,
	// because a file Claude Code loads already says them.
	Pruned []*plan.Candidate
}

// Prepare checks the plan against the current memory and targets and
// builds the journal Op for the request. It changes nothing. Facts whose
// target the layout tiers go to detail documents, and the AGENTS.md index
// is refreshed at the end of phase 1.
func Prepare(pl *plan.Plan, req Request, mem *automem.Dir, ts *targets.Set, layout tier.Config) (*Prepared, error) {
	cands, kept := pl.Numbers(), pl.PrivateNumbers()
	valid := make(map[int]*plan.Candidate, len(cands)+len(kept))
	for n, c := range cands {
		valid[n] = c
	}
	for n, c := range kept {
		valid[n] = c
	}
	approved := map[int]bool{}
	for _, n := range req.Approve {
		if kept[n] != nil {
			return nil, fmt.Errorf("%w: %d holds a secret and is kept private: --promote-redacted %d promotes its redacted text and keeps it in auto-memory", ErrSpec, n, n)
		}
		if cands[n] == nil {
			return nil, fmt.Errorf("%w: %d is not a number in the plan", ErrSpec, n)
		}
		approved[n] = true
	}
	for _, n := range req.PromoteRedacted {
		if kept[n] == nil {
			return nil, fmt.Errorf("%w: --promote-redacted %d is not an entry the plan kept private", ErrSpec, n)
		}
		approved[n] = true
	}
	for n := range req.Edits {
		if valid[n] == nil {
			return nil, fmt.Errorf("%w: --edit %d is not a number in the plan", ErrSpec, n)
		}
		approved[n] = true
	}
	for n := range req.Edits {
		if c := valid[n]; c.Action == plan.ActionPrune {
			return nil, fmt.Errorf("%w: --edit %d: %d is already %s and is only pruned, never written anywhere", ErrSpec, n, n, saidWhere(c))
		}
	}
	for n, t := range req.Targets {
		if valid[n] == nil {
			return nil, fmt.Errorf("%w: --target %d is not a number in the plan", ErrSpec, n)
		}
		if c := valid[n]; c.Action == plan.ActionPrune {
			return nil, fmt.Errorf("%w: --target %d: %d is already %s and is only pruned, never written anywhere", ErrSpec, n, n, saidWhere(c))
		}
		if t != targets.Agents && t != targets.Claude {
			return nil, fmt.Errorf("%w: --target %d=%s: the target must be AGENTS.md or CLAUDE.md", ErrSpec, n, t)
		}
	}
	for _, n := range req.Reject {
		if approved[n] {
			return nil, fmt.Errorf("%w: %d is both approved and rejected", ErrSpec, n)
		}
	}

	// The plan must still describe the memory: every approved or rejected
	// entry present, unchanged (same id).
	byID := map[string]automem.Entry{}
	if mem != nil {
		for _, e := range mem.Entries() {
			if _, dup := byID[e.ID]; !dup {
				byID[e.ID] = e
			}
		}
	}
	// A written memory is judged by what the written set holds now; an id
	// both hold is the same text, and auto-memory's copy is the one
	// pruned.
	isWritten := func(c *plan.Candidate) bool { return c.Source == written.Name }
	for id, e := range req.Written {
		if _, dup := byID[id]; !dup {
			byID[id] = e
		}
	}
	var stale []string
	var nums []int
	for n := range approved {
		nums = append(nums, n)
	}
	nums = append(nums, req.Reject...)
	sort.Ints(nums)
	for _, n := range nums {
		c := valid[n]
		e, ok := byID[c.ID]
		switch {
		case !ok, isWritten(c) && req.Written[c.ID].ID == "":
			stale = append(stale, fmt.Sprintf("%d (%q) changed or vanished from %s", n, short(c.Text), c.File))
		case e.Secret && kept[n] == nil:
			// A pointer or heading with a secret appeared since the plan:
			// pruning the entry now would remove it.
			stale = append(stale, fmt.Sprintf("%d (%q) holds a secret now and would be kept private", n, short(c.Text)))
		}
	}
	// A target that now carries an approved entry's marker, or says the
	// same thing already, conflicts.
	existing := match.NewIndex()
	for _, d := range ts.Docs() {
		for _, m := range d.Doc.Marked() {
			for n := range approved {
				if valid[n].ID == m.ID {
					stale = append(stale, fmt.Sprintf("%d is already in %s (line %d)", n, d.Name, m.Line))
				}
			}
		}
		for i, s := range d.Doc.AllStatements() {
			existing.Add(i, s.Text)
		}
	}
	for n := range approved {
		c := valid[n]
		if c.Action == plan.ActionPrune && c.DocumentedIn != "" {
			if !req.Documents[c.DocumentedIn] {
				stale = append(stale, fmt.Sprintf("%d (%q): %s is no longer a solution document of the project", n, short(c.Text), c.DocumentedIn))
			}
			continue
		}
		if c.Action == plan.ActionPrune {
			if _, ok := req.Said[match.Key(c.Block)]; !ok {
				stale = append(stale, fmt.Sprintf("%d (%q) is no longer said in %s", n, short(c.Text), c.LoadedIn))
			}
			continue
		}
		if _, ok := existing.Exact(c.Block); ok {
			stale = append(stale, fmt.Sprintf("%d (%q) is now already written in a target document", n, short(c.Text)))
		}
	}
	if len(stale) > 0 {
		sort.Strings(stale)
		return nil, fmt.Errorf("%w: %s", ErrStale, strings.Join(stale, "; "))
	}

	pr := &Prepared{}
	for _, n := range req.Reject {
		pr.Rejected = append(pr.Rejected, valid[n])
	}
	var appr []int
	for n := range approved {
		appr = append(appr, n)
	}
	sort.Ints(appr)

	// Never move knowledge out of what sessions load: entries going to an
	// AGENTS.md Claude Code does not load need the import. (One kept in
	// auto-memory, a secret's redacted copy, moves nothing out.)
	if ok, why := ts.AgentsLoaded(); !ok && !req.ImportAgents {
		var to []string
		for _, n := range appr {
			c := valid[n]
			target := c.Target
			if t, ok := req.Targets[n]; ok {
				target = t
			}
			if c.Action != plan.ActionPrune && target == targets.Agents && kept[n] == nil && !byID[c.ID].Secret {
				to = append(to, strconv.Itoa(n))
			}
		}
		if len(to) > 0 {
			return nil, fmt.Errorf("%w: %s would go to AGENTS.md (or its detail documents), which Claude Code will not load: %s",
				ErrUnloaded, strings.Join(to, ", "), why)
		}
	}

	// Where each approved entry goes, first: a link in one promoted entry
	// to the memory of another must point to where that one lands.
	type dest struct {
		n                  int
		e                  automem.Entry
		target, file, path string
		section            string
		tiered             bool
		srcFile            string // source order: file, then line
		srcLine            int
	}
	var dests []dest
	mapper := tier.NewMapper(ts)
	homes := map[string]string{}
	for f, home := range req.Homes {
		homes[f] = filepath.Join(ts.Root, filepath.FromSlash(home))
	}
	creates := map[string]bool{ts.Target(targets.Claude).Path: true, ts.Target(targets.Agents).Path: true}
	var prunes []int
	for _, n := range appr {
		c := valid[n]
		e := byID[c.ID]
		if c.Action == plan.ActionPrune {
			prunes = append(prunes, n)
			continue
		}
		target := c.Target
		if t, ok := req.Targets[n]; ok {
			target = t
		}
		d := dest{n: n, e: e, target: target, file: target, path: ts.Target(target).Path, section: c.Section,
			srcFile: e.File, srcLine: e.StartLine}
		if layout.Tiers(target) {
			d.path, d.tiered = mapper.Path(c.Section), true
			if rel, err := filepath.Rel(ts.Root, d.path); err == nil {
				d.file = filepath.ToSlash(rel)
			}
			if doc := detailDoc(ts, d.path); doc != nil {
				d.section = tier.Title(doc.Content)
			}
			creates[d.path] = true
		}
		if e.Kind == automem.Memory && !isWritten(c) {
			homes[e.File] = d.path
			// A memory file sits where its pointer sits in the index.
			if mem != nil && mem.Index != nil {
				for _, p := range mem.Index.Entries {
					if p.Kind == automem.Pointer && p.Link == e.File {
						d.srcFile, d.srcLine = p.File, p.StartLine
						break
					}
				}
			}
		}
		dests = append(dests, d)
	}
	// Inserts go in source order, so that within a section promoted facts
	// read in the order they were written (each insert lands at the end of
	// its section).
	sort.SliceStable(dests, func(a, b int) bool {
		x, y := dests[a], dests[b]
		if x.srcFile != y.srcFile {
			return x.srcFile < y.srcFile
		}
		return x.srcLine < y.srcLine
	})

	links := newLinker(ts.Root, mem, homes, creates)
	var sp ops.PromoteSpec
	for _, d := range dests {
		c, e, n := valid[d.n], d.e, d.n
		// A written memory's links are not relative to a memory file: they
		// land as written.
		block, edited, kind := c.Block, false, string(e.Kind)
		if isWritten(c) {
			kind = written.Name
		} else {
			block = links.rewrite(c.Block, e.File, d.path)
		}
		if t, ok := req.Edits[n]; ok {
			block, edited = "- "+strings.Join(strings.Fields(redact.String(t)), " "), true
		}
		sp.Inserts = append(sp.Inserts, ops.Insert{Path: d.path, ID: c.ID, Section: d.section, Block: block, Detail: d.tiered})
		pr.Promotions = append(pr.Promotions, Promotion{
			N: n, ID: c.ID, File: d.file, Section: d.section, Edited: edited,
			Text: strings.TrimPrefix(block, "- "), Origin: e.File, Kind: kind, Kept: e.Secret || kept[n] != nil,
		})
		if e.Secret || kept[n] != nil {
			continue // never pruned: the user's only usable copy of the secret is here
		}
		if isWritten(c) {
			st, err := ops.RetireStep(2, req.WrittenLog, c.ID, written.Promoted, req.Now)
			if err != nil {
				return nil, err
			}
			sp.Retire = append(sp.Retire, st)
			continue
		}
		// An entry without a secret has none in its file's name either:
		// e.File is the name on disk.
		sp.Prune = append(sp.Prune, e)
	}
	sort.SliceStable(pr.Promotions, func(a, b int) bool { return pr.Promotions[a].N < pr.Promotions[b].N })
	// Entries already loaded elsewhere are only pruned.
	for _, n := range prunes {
		c := valid[n]
		pr.Pruned = append(pr.Pruned, c)
		if isWritten(c) {
			st, err := ops.RetireStep(2, req.WrittenLog, c.ID, written.Pruned, req.Now)
			if err != nil {
				return nil, err
			}
			sp.Retire, sp.RetireOnly = append(sp.Retire, st), append(sp.RetireOnly, c.ID)
			continue
		}
		sp.PruneOnly = append(sp.PruneOnly, byID[c.ID])
	}
	if req.ImportAgents {
		if ok, _ := ts.AgentsLoaded(); !ok {
			sp.Import = true
		}
	}
	sp.Index = mapper.Paths()
	pr.Op = ops.Promote(ts, mem, sp)
	return pr, nil
}

func detailDoc(ts *targets.Set, path string) *targets.Doc {
	for _, d := range ts.Details {
		if d.Path == path {
			return d
		}
	}
	return nil
}

func short(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 60 {
		return string(r[:59]) + "…"
	}
	return s
}

// Lines counts lines the way an editor does: a final line without a
// newline still counts.
func Lines(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	n := bytes.Count(b, []byte("\n"))
	if b[len(b)-1] != '\n' {
		n++
	}
	return n
}

// saidWhere says where a prune candidate is already said.
func saidWhere(c *plan.Candidate) string {
	if c.DocumentedIn != "" {
		return "documented in " + c.DocumentedIn
	}
	return "loaded from " + c.LoadedIn
}
