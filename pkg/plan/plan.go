// Package plan builds the synthesis plan: the numbered list of auto-memory
// entries worth promoting into CLAUDE.md or AGENTS.md, for the user to
// approve in one batch.
//
// From the catalog's stable entries (unchanged across enough sessions), in
// this order:
//
//  1. pointers are dropped (an index line is not knowledge; the file it
//     points to is, and is a candidate of its own);
//  2. entries already promoted (recorded in the store, or carrying a marker
//     in a curated document) and entries the user rejected are dropped —
//     a rejected entry whose text changes has a new id and comes back;
//  3. exact duplicates of a statement in the curated documents, after
//     normalization with every marker stripped (ours included), are
//     skipped and counted; near-identical wording (character-pair
//     Sørensen–Dice ≥ 0.8 on whole statements) stays in the plan flagged
//     "[similar to existing: …]", never silently dropped; otherwise an
//     entry that paraphrases a single sentence or table row of a curated
//     document, adds to one or says less than one is called out, with that
//     sentence or row (package match, Notes);
//  4. time-bound entries (a status snapshot, "Pipeline state (2026-04-02):
//     …", anything under "… snapshots — run … for current") are listed
//     apart, never offered: they pass the stability test because nobody
//     updates them, and are stale the day after (see TimeBound);
//  5. citations are validated; a cited path git recorded as renamed is
//     rewritten to the path that exists now (the candidate's text, with
//     the original kept beside it), and the rewritten text is what is
//     scored, deduplicated and promoted; a stale entry (confidence below 0.3) is
//     listed as blocked with the reason, never offered (a plan built
//     without a Checker skips this and says so: Validated is false);
//  6. secrets are redacted from the text that would be promoted (package
//     automem redacts every field where memory is read), and
//     instruction-like text that could be a prompt injection is flagged;
//     an entry that holds a secret (automem.Entry.Secret: its block, a
//     heading its pruning could remove, its file name, an index line
//     pointing to it) is never a candidate: pruning it would leave the
//     user's only usable copy of the secret in a backup. It is listed
//     apart, as kept private, numbered after the candidates, and only an
//     explicit per-entry choice (apply --promote-redacted N) copies its
//     redacted text into a document; it then stays in auto-memory;
//  7. each entry is routed: behavioural preferences (memory type user or
//     feedback, imperative always/never/prefer/don't rules, preference
//     sections) to CLAUDE.md; structural facts to AGENTS.md.
//
// The best-established entries come first (most sessions, then highest
// confidence, then oldest); entries that tie keep their order in memory
// (file, then line), so "First run…", "Then tag…", "Finally push…" are
// offered in that order and never in the order of their hashes. The list
// is capped, grouped by target document and numbered. A candidate's section
// is its topic (tier.TopicTitle): "Hygiene (updated 2026-04-02)" and
// "Hygiene (updated 2026-05-11)" are one section. The plan is saved in the store so that "apply" acts on
// exactly what the user saw, and can tell when it has gone stale.
package plan

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/catalog"
	"github.com/intermem/intermem/pkg/cite"
	"github.com/intermem/intermem/pkg/match"
	"github.com/intermem/intermem/pkg/redact"
	"github.com/intermem/intermem/pkg/score"
	"github.com/intermem/intermem/pkg/stability"
	"github.com/intermem/intermem/pkg/targets"
	"github.com/intermem/intermem/pkg/tier"
)

// Similar is the fuzzy-match threshold.
const Similar = 0.8

// DefaultMax caps the candidate list.
const DefaultMax = 20

// Dedup classes.
const (
	Novel       = "novel"
	SimilarDup  = "similar"
	targetOrder = "AGENTS.md CLAUDE.md"
)

// Candidate is one numbered entry of a plan.
type Candidate struct {
	N           int      `json:"n"`
	ID          string   `json:"id"`
	Target      string   `json:"target"`
	Section     string   `json:"section"`
	Text        string   `json:"text"`  // redacted text as it would be promoted (block without list marker)
	Block       string   `json:"block"` // the markdown inserted into the target (without marker)
	Kind        string   `json:"kind"`
	File        string   `json:"file"` // memory file it comes from
	Line        int      `json:"line"`
	Sessions    int      `json:"sessions"`
	Confidence  float64  `json:"confidence"`
	Dedup       string   `json:"dedup"`
	SimilarTo   string   `json:"similar_to"`
	Similarity  float64  `json:"similarity"`
	Refinement  string   `json:"refinement,omitempty"` // "refines" or "narrower"
	RefinesText string   `json:"refines_text,omitempty"`
	Redacted    bool     `json:"redacted"`
	Injection   []string `json:"injection"`
	Route       string   `json:"route"` // why this target
	// Original is the entry's text as memory has it (redacted, without
	// the list marker) when Text differs from it because a cited path
	// moved: Text cites the path that exists now (Corrected lists each
	// change), so what lands in the document is true.
	Original    string     `json:"original,omitempty"`
	Corrected   []cite.Fix `json:"corrected,omitempty"`
	Annotations []string   `json:"annotations"`
	// Link is the memory file a pointer in MEMORY.md names for a Memory
	// entry (pruning removes those pointers too).
	FirstSeen time.Time `json:"first_seen"`
}

// Blocked is a stable entry that will not be offered.
type Blocked struct {
	ID         string  `json:"id"`
	Text       string  `json:"text"`
	Reason     string  `json:"reason"`
	File       string  `json:"file"`
	Line       int     `json:"line"`
	Confidence float64 `json:"confidence"`
}

// Plan is the result of Build.
type Plan struct {
	Created    time.Time   `json:"created"`
	Root       string      `json:"project_root"`
	Candidates []Candidate `json:"candidates"`
	// Private are the stable entries that hold a secret: kept in
	// auto-memory, never approved by --approve (not even "all"), numbered
	// after the candidates for apply --promote-redacted.
	Private           []Candidate       `json:"private"`
	Blocked           []Blocked         `json:"blocked"`
	TimeBound         []Blocked         `json:"time_bound"` // listed apart, not offered
	SkippedDuplicates int               `json:"skipped_duplicates"`
	SkippedPromoted   int               `json:"skipped_promoted"`
	SkippedRejected   int               `json:"skipped_rejected"`
	Pointers          int               `json:"pointers_ignored"`
	Capped            int               `json:"capped"` // candidates left out by --max
	Warnings          []string          `json:"warnings"`
	Offers            []string          `json:"offers"`
	TargetHashes      map[string]string `json:"target_hashes"`
	Stable            int               `json:"stable"`
	Entries           int               `json:"entries"`
	Sessions          int               `json:"sessions"`
	Threshold         int               `json:"stable_threshold"`
	Baseline          bool              `json:"baseline"` // nothing stable yet
	// Validated is false for a plan built without citation checks
	// (Inputs.Checker nil: plan --no-validate): its confidences ignore
	// citations and stale entries are not blocked, so apply checks the
	// approved entries before promoting them.
	Validated bool `json:"validated"`
	// CiteRoot is the directory citations were resolved against when it is
	// not the project root (plan --cite-root).
	CiteRoot  string `json:"cite_root,omitempty"`
	AppliedBy string `json:"applied_by,omitempty"`
}

// Inputs are what Build needs; the caller loads them.
type Inputs struct {
	Catalog *catalog.Catalog
	Targets *targets.Set
	// Checker checks citations; nil builds a plan without citation checks
	// (Plan.Validated false).
	Checker  *cite.Checker
	CiteRoot string          // set on the plan as CiteRoot
	Promoted map[string]bool // ids promoted before (store)
	Rejected map[string]bool // ids the user rejected
	Max      int             // 0 = no cap
	Now      time.Time
	// Screen reports why text could be a prompt injection (nil: no
	// screening).
	Screen func(text string) []string
}

// Build makes a plan.
func Build(in Inputs) *Plan {
	cat := in.Catalog
	p := &Plan{
		Created: in.Now, Root: in.Targets.Root, Threshold: cat.Threshold, Sessions: cat.Sessions,
		Entries: len(cat.Items), Candidates: []Candidate{}, Private: []Candidate{}, Blocked: []Blocked{}, TimeBound: []Blocked{},
		Warnings: []string{}, Offers: []string{}, TargetHashes: map[string]string{},
		Validated: in.Checker != nil, CiteRoot: in.CiteRoot,
	}
	for _, name := range []string{targets.Agents, targets.Claude} {
		p.TargetHashes[name] = in.Targets.Target(name).Hash
	}

	// Everything already marked in a curated document is promoted.
	marked := map[string]bool{}
	ix := match.NewIndex()
	notes := match.NewNotes()
	var stmts []string
	for _, d := range in.Targets.Docs() {
		for _, m := range d.Doc.Marked() {
			marked[m.ID] = true
		}
		for _, s := range d.Doc.AllStatements() {
			ix.Add(len(stmts), s.Text)
			notes.Add(len(stmts), s.Text)
			stmts = append(stmts, s.Text)
		}
	}

	cands, private := []Candidate{}, []Candidate{}
	seen := make(map[string]bool, len(cat.Items))
	for i := range cat.Items {
		it := &cat.Items[i]
		if it.Status != stability.Stable {
			continue
		}
		// Identical entries are one fact (pruning removes every copy):
		// the first copy in memory stands for it.
		if seen[it.ID] {
			continue
		}
		seen[it.ID] = true
		p.Stable++
		switch {
		case it.Kind == automem.Pointer:
			p.Pointers++
			continue
		case in.Promoted[it.ID] || marked[it.ID]:
			p.SkippedPromoted++
			continue
		case in.Rejected[it.ID]:
			p.SkippedRejected++
			continue
		}
		block := Block(it.Entry)
		if why, ok := TimeBound(it.Entry); ok {
			p.TimeBound = append(p.TimeBound, Blocked{
				ID: it.ID, Text: preview(strings.TrimPrefix(redact.String(block), "- ")), Reason: why,
				File: it.File, Line: it.StartLine,
			})
			continue
		}
		if _, ok := ix.Exact(block); ok {
			p.SkippedDuplicates++
			continue
		}
		if it.Kind == automem.Memory && it.Description != "" {
			if _, ok := ix.Exact(it.Description); ok {
				p.SkippedDuplicates++
				continue
			}
		}
		var results []cite.Result
		if in.Checker != nil {
			results = in.Checker.Check(cite.Extract(it.Text))
		}
		// A fact citing a file git recorded as renamed is offered in the
		// wording that is true now, with the original shown: promoting it
		// as written would put a wrong path into a document that validate
		// flags right after.
		original, fixes := "", []cite.Fix(nil)
		if fixed, fx := cite.Rewrite(block, results); len(fx) > 0 {
			text, _ := cite.Rewrite(it.Text, results)
			original, block, fixes = block, fixed, fx
			results = in.Checker.Check(cite.Extract(text))
			if _, ok := ix.Exact(block); ok {
				p.SkippedDuplicates++
				continue
			}
		}
		sc := score.Of(score.Evidence{Results: results, Sessions: it.Sessions(), Threshold: cat.Threshold})
		c := Candidate{
			ID: it.ID, Kind: string(it.Kind), File: it.File, Line: it.StartLine,
			Sessions: it.Sessions(), Confidence: sc.Confidence, Dedup: Novel,
			Block: block, Original: original, Corrected: fixes, Injection: []string{}, Annotations: []string{},
			Redacted: it.Secret || strings.Contains(block, redact.Marker),
		}
		if it.Rec != nil {
			c.FirstSeen = it.Rec.FirstSeen
		}
		if sc.Stale {
			p.Blocked = append(p.Blocked, Blocked{
				ID: it.ID, Text: preview(strings.TrimPrefix(redact.String(block), "- ")), Reason: strings.Join(sc.Reasons, "; "),
				File: it.File, Line: it.StartLine, Confidence: sc.Confidence,
			})
			continue
		}
		c.Target, c.Route = Route(it.Entry)
		c.Section = Section(it.Entry, cat.Dir)
		c.Annotations = append(c.Annotations, sc.Reasons...)
		if it.Secret {
			private = append(private, c)
			continue
		}
		cands = append(cands, c)
	}
	p.Baseline = p.Stable == 0

	p.Candidates = p.list(cands, in, ix, notes, stmts, 1)
	p.Private = p.list(private, in, ix, notes, stmts, len(p.Candidates)+1)

	p.warn(in.Targets, marked)
	return p
}

// list ranks cs (best-established first), caps them at in.Max (counting
// what is left out in Capped), annotates them, groups them by target
// keeping rank order within each group, and numbers them from first.
func (p *Plan) list(cs []Candidate, in Inputs, ix *match.Index, notes *match.Notes, stmts []string, first int) []Candidate {
	sort.SliceStable(cs, func(a, b int) bool {
		x, y := cs[a], cs[b]
		if x.Sessions != y.Sessions {
			return x.Sessions > y.Sessions
		}
		if x.Confidence != y.Confidence {
			return x.Confidence > y.Confidence
		}
		if !x.FirstSeen.Equal(y.FirstSeen) {
			return x.FirstSeen.Before(y.FirstSeen)
		}
		if x.File != y.File {
			return x.File < y.File
		}
		return x.Line < y.Line
	})
	if in.Max > 0 && len(cs) > in.Max {
		p.Capped += len(cs) - in.Max
		cs = cs[:in.Max]
	}
	// The fuzzy comparisons, redaction and screening are done only for the
	// entries that made the list: they are what a person reads, and on a
	// large memory they are most of the cost.
	for i := range cs {
		annotate(&cs[i], ix, notes, stmts, in.Screen)
	}
	// Group by target, keeping rank order within each group, and number.
	sort.SliceStable(cs, func(a, b int) bool {
		return strings.Index(targetOrder, cs[a].Target) < strings.Index(targetOrder, cs[b].Target)
	})
	for i := range cs {
		cs[i].N = first + i
	}
	return cs
}

// annotate adds what a person needs to judge a candidate: the existing
// statement it nearly repeats (Index.Best on whole statements), or else the
// sentence or table row it paraphrases, refines or says less than
// (match.Notes), a redacted secret, signs of a prompt injection.
func annotate(c *Candidate, ix *match.Index, notes *match.Notes, stmts []string, screenText func(string) []string) {
	raw := c.Block
	safe := redact.String(raw)
	c.Block, c.Text, c.Redacted = safe, strings.TrimPrefix(safe, "- "), c.Redacted || safe != raw
	var out []string
	if c.Original != "" {
		c.Original = strings.TrimPrefix(redact.String(c.Original), "- ")
		for i, f := range c.Corrected {
			f.Old, f.New = redact.String(f.Old), redact.String(f.New)
			c.Corrected[i] = f
			out = append(out, fmt.Sprintf("corrected: %s → %s (renamed in git history)", f.Old, f.New))
		}
		out = append(out, fmt.Sprintf("original: %q", preview(c.Original)))
	}
	if m, ok := ix.Best(raw, Similar); ok {
		c.Dedup, c.SimilarTo, c.Similarity = SimilarDup, preview(redact.String(stmts[m.ID])), round2(m.Score)
		out = append(out, fmt.Sprintf("[similar to existing: %q]", c.SimilarTo))
	} else if n, ok := notes.Find(raw); ok {
		unit := preview(redact.String(n.Unit))
		switch n.Kind {
		case match.KindSimilar:
			c.Dedup, c.SimilarTo, c.Similarity = SimilarDup, unit, round2(n.Score)
			out = append(out, fmt.Sprintf("[similar to existing: %q]", unit))
		case match.KindRefines:
			c.Refinement, c.RefinesText = n.Kind, unit
			out = append(out, fmt.Sprintf("refines existing: %q", unit))
		case match.KindNarrower:
			c.Refinement, c.RefinesText = n.Kind, unit
			out = append(out, fmt.Sprintf("narrower than existing: %q", unit))
		}
	}
	if c.Redacted {
		out = append(out, "secret redacted")
	}
	if screenText != nil {
		c.Injection = append(c.Injection, screenText(raw)...)
	}
	if len(c.Injection) > 0 {
		out = append(out, "possible prompt injection: "+strings.Join(c.Injection, "; "))
	}
	c.Annotations = append(append([]string{}, out...), c.Annotations...)
}

func (p *Plan) warn(ts *targets.Set, marked map[string]bool) {
	toAgents := false
	for _, c := range append(p.Candidates[:len(p.Candidates):len(p.Candidates)], p.Private...) {
		if c.Target == targets.Agents {
			toAgents = true
		}
	}
	hasPromotedInAgents := false
	if ts.Agents.Exists {
		for _, m := range ts.Agents.Doc.Marked() {
			if marked[m.ID] {
				hasPromotedInAgents = true
				break
			}
		}
	}
	// A target whose name leads out of the project: say where, before
	// anyone approves a candidate apply would refuse to write.
	p.Warnings = append(p.Warnings, ts.Warnings()...)
	if toAgents || hasPromotedInAgents {
		if ok, why := ts.AgentsLoaded(); !ok {
			p.Warnings = append(p.Warnings, "AGENTS.md will not be loaded: "+why+".")
			p.Offers = append(p.Offers, "import-agents")
		}
	}
	if p.Capped > 0 {
		p.Warnings = append(p.Warnings, fmt.Sprintf("%d more candidates left out by --max; they come back in the next plan.", p.Capped))
	}
}

// Block renders an entry as the markdown to insert into a curated document
// (without the marker), keeping the shape it has in memory:
//
//   - a list item keeps its text, and a numbered one its number ("3. …":
//     other notes refer to "rule #3");
//   - a lead-in with its list, or a bold-lead paragraph, becomes one bullet
//     whose first line is the lead-in and whose list, fence or table is
//     indented under it, so the two stay one entry in the document too;
//   - a table stays a table, a fence a fence;
//   - a one-memory file becomes one bullet: its description (or first
//     line) on the first line and its body indented under it, with any
//     headings in the body turned into bold lines so they cannot split the
//     target document's sections.
func Block(e automem.Entry) string {
	if e.Kind != automem.Memory {
		switch {
		case isOrdered(e.Marker):
			return e.Marker + " " + e.Text
		case e.Marker != "":
			return "- " + e.Text
		case strings.HasPrefix(e.Text, "|"), strings.HasPrefix(e.Text, "```"), strings.HasPrefix(e.Text, "~~~"):
			return e.Text
		}
		first, rest, ok := strings.Cut(e.Text, "\n")
		if !ok {
			return "- " + first
		}
		var b strings.Builder
		b.WriteString("- " + first)
		for _, line := range strings.Split(rest, "\n") {
			if strings.TrimSpace(line) == "" {
				b.WriteString("\n")
				continue
			}
			b.WriteString("\n  " + line)
		}
		return b.String()
	}
	body := strings.TrimSpace(e.Text)
	first := strings.TrimSpace(e.Description)
	if first == "" {
		first, body, _ = strings.Cut(body, "\n")
		first = strings.TrimSpace(strings.TrimLeft(first, "#"))
		body = strings.TrimSpace(body)
	}
	var b strings.Builder
	b.WriteString("- ")
	b.WriteString(strings.Join(strings.Fields(first), " "))
	if body == "" {
		return b.String()
	}
	fence := ""
	for _, line := range strings.Split(body, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case fence == "" && (strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")):
			fence = t[:3]
		case fence != "" && strings.HasPrefix(t, fence):
			fence = ""
		case fence == "" && headingRE.MatchString(line):
			line = "**" + strings.TrimSpace(strings.Trim(headingRE.ReplaceAllString(line, ""), "#")) + "**"
		}
		if t == "" {
			b.WriteString("\n")
			continue
		}
		b.WriteString("\n  " + line)
	}
	return strings.TrimRight(b.String(), "\n")
}

// isOrdered reports whether a list marker is numbered ("3.", "10)").
func isOrdered(marker string) bool {
	return len(marker) > 1 && marker[0] >= '0' && marker[0] <= '9'
}

var headingRE = regexp.MustCompile(`^ {0,3}#{1,6}(\s+|$)`)

// Route decides the target of an entry and says why.
func Route(e automem.Entry) (target, why string) {
	switch strings.ToLower(e.Type) {
	case "user", "feedback":
		return targets.Claude, e.Type + " memory"
	case "project", "reference":
		return targets.Agents, e.Type + " memory"
	}
	text := strings.TrimSpace(e.Text)
	if e.Kind == automem.Memory && e.Description != "" {
		text = e.Description
	}
	if imperativeRE.MatchString(text) {
		return targets.Claude, "behavioural rule"
	}
	if preferenceRE.MatchString(text) {
		return targets.Claude, "user preference"
	}
	if preferenceSectionRE.MatchString(e.Section) {
		return targets.Claude, "preference section"
	}
	return targets.Agents, "project fact"
}

var (
	// An imperative rule: always/never/prefer/don't/do not/avoid… at the
	// start, after optional emphasis or an emoji.
	imperativeRE = regexp.MustCompile(`(?i)^[^\p{L}\p{N}` + "`" + `]{0,6}(always|never|prefer|don'?t|do not|avoid|must not|please|make sure)\b`)
	// A statement about what the user wants.
	preferenceRE = regexp.MustCompile(`(?i)\b(the )?user (prefers|wants|likes|dislikes|hates|asked|expects)\b`)
	// Sections of preferences and feedback.
	preferenceSectionRE = regexp.MustCompile(`(?i)\b(preferences?|feedback|user|workflow|style guide|communication)\b`)
)

// Section picks the section a candidate goes under: its own section's topic
// in memory (without a dated suffix, see tier.TopicTitle); for a one-memory file, the MEMORY.md section of the pointer that
// names it unless that is a generic type heading, else a heading for its
// type.
func Section(e automem.Entry, d *automem.Dir) string {
	if e.Kind != automem.Memory {
		if e.Section != "" {
			return tier.TopicTitle(e.Section)
		}
		return "Notes"
	}
	if d != nil && d.Index != nil {
		for _, p := range d.Index.Entries {
			if p.Kind == automem.Pointer && p.Link == e.File && p.Section != "" && !genericRE.MatchString(p.Section) {
				return tier.TopicTitle(p.Section)
			}
		}
	}
	switch strings.ToLower(e.Type) {
	case "user":
		return "User preferences"
	case "feedback":
		return "Working preferences"
	case "reference":
		return "References"
	case "project":
		return "Project notes"
	}
	return "Notes"
}

var genericRE = regexp.MustCompile(`(?i)^\s*(user|feedback|project|reference|memories|memory|index|notes?)\s*$`)

func preview(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) > 100 {
		return string(r[:99]) + "…"
	}
	return s
}

func round2(f float64) float64 { return float64(int(f*100+0.5)) / 100 }

// Numbers returns the candidate numbers of a plan, for validating a spec.
func (p *Plan) Numbers() map[int]*Candidate {
	m := make(map[int]*Candidate, len(p.Candidates))
	for i := range p.Candidates {
		m[p.Candidates[i].N] = &p.Candidates[i]
	}
	return m
}

// PrivateNumbers returns the numbers of the entries kept private.
func (p *Plan) PrivateNumbers() map[int]*Candidate {
	m := make(map[int]*Candidate, len(p.Private))
	for i := range p.Private {
		m[p.Private[i].N] = &p.Private[i]
	}
	return m
}
