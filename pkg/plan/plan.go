// Package plan builds the synthesis plan: the numbered list of auto-memory
// entries worth promoting into CLAUDE.md or AGENTS.md (or, when Claude
// Code already loads what they say, pruning from memory), for the user to
// approve in one batch.
//
// Memories written through intermem (package written) are offered the
// same way, after auto-memory (an id both hold is auto-memory's): each is
// judged as a one-memory entry whose description is its title
// (WrittenItem), stable from the moment it is written
// (Subject.Deliberate), citing the files its writer named as well as
// those its text names; approving one takes it out of the written set.
//
// Every entry of the catalog is judged by World.Judge (ready.go), the one
// decision status, "intermem context" and the SessionStart hook use too.
// In this order:
//
//  1. entries not yet stable (unchanged across enough sessions) wait, and
//     identical entries are one (the first copy in memory stands for it);
//  2. pointers are dropped (an index line is not knowledge; the file it
//     points to is, and is a candidate of its own);
//  3. entries already promoted (recorded in the store, or carrying a marker
//     in a curated document) and entries the user rejected are dropped —
//     a rejected entry whose text changes has a new id and comes back;
//  4. entries whose own text keeps them out (Intrinsic) are listed apart,
//     never offered: time-bound entries (a status snapshot, "Pipeline
//     state (2026-04-02): …", anything under "… snapshots — run … for
//     current") pass the stability test because nobody updates them, and
//     are stale the day after (see TimeBound);
//  5. an entry that a file Claude Code loads every session already says
//     (package loaded: ~/.claude/CLAUDE.md, rules, imports, CLAUDE.md …),
//     after normalization with every marker stripped, is offered for
//     pruning only: promoting it would load it twice (an entry holding a
//     secret is never pruned: it is skipped instead);
//  6. exact duplicates of a statement of a curated document Claude Code
//     does not load are skipped and counted (pruning them would move
//     knowledge out of what sessions load);
//     An entry a solution document of the project already says (the
//     catalog's compound source, docs/solutions/**; see Documents) is
//     offered for pruning, "documented in" that document, never for
//     promotion; that is decided after 7 and 8, so a stale entry is
//     still blocked and a secret still kept private;
//  7. citations are validated; a cited path git recorded as renamed is
//     rewritten to the path that exists now (the candidate's text, with
//     the original kept beside it), and the rewritten text is what is
//     scored, deduplicated (as in 5 and 6) and promoted; a stale entry
//     (confidence below 0.3) is listed as blocked with the reason, never
//     offered (a plan built without a Checker skips this and says so:
//     Validated is false);
//  8. an entry that holds a secret (automem.Entry.Secret: its block, a
//     heading its pruning could remove, its file name, an index line
//     pointing to it) is never a candidate: pruning it would leave the
//     user's only usable copy of the secret in a backup. It is listed
//     apart, as kept private, numbered after the candidates, and only an
//     explicit per-entry choice (apply --promote-redacted N) copies its
//     redacted text into a document; it then stays in auto-memory.
//
// Then, for the candidates shown: near-identical wording (character-pair
// Sørensen–Dice ≥ 0.8 on whole statements of curated and loaded
// documents) is flagged "[similar to existing: …]", never silently
// dropped; otherwise an entry that paraphrases a single sentence or table
// row of a curated document, adds to one or says less than one is called
// out, with that sentence or row (package match, Notes); secrets are
// redacted from the text that would be promoted (package automem redacts
// every field where memory is read), and instruction-like text that could
// be a prompt injection is flagged; each entry is routed — behavioural
// preferences (memory type user or feedback, imperative always/never/
// prefer/don't rules, preference sections) to CLAUDE.md, structural facts
// to AGENTS.md — and priced: the tokens it adds to what every session
// loads (cost.go).
//
// The best-established entries come first (most sessions, then highest
// confidence, then oldest); entries that tie keep their order in memory
// (file, then line), so "First run…", "Then tag…", "Finally push…" are
// offered in that order and never in the order of their hashes. The list
// is capped, grouped by target document (prunes last) and numbered. A
// candidate's section is its topic (tier.TopicTitle): "Hygiene (updated
// 2026-04-02)" and "Hygiene (updated 2026-05-11)" are one section. The
// plan is saved in the store so that "apply" acts on exactly what the user
// saw, and can tell when it has gone stale.
package plan

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/catalog"
	"github.com/intermem/intermem/pkg/cite"
	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/lazyre"
	"github.com/intermem/intermem/pkg/loaded"
	"github.com/intermem/intermem/pkg/match"
	"github.com/intermem/intermem/pkg/mdoc"
	"github.com/intermem/intermem/pkg/redact"
	"github.com/intermem/intermem/pkg/score"
	"github.com/intermem/intermem/pkg/source"
	"github.com/intermem/intermem/pkg/source/written"
	"github.com/intermem/intermem/pkg/stability"
	"github.com/intermem/intermem/pkg/store"
	"github.com/intermem/intermem/pkg/targets"
	"github.com/intermem/intermem/pkg/tier"
)

// Similar is the fuzzy-match threshold.
const Similar = 0.8

// DefaultMax caps the candidate list.
const DefaultMax = 20

// Dedup classes.
const (
	Novel      = "novel"
	SimilarDup = "similar"
)

// Candidate actions.
const (
	ActionPromote = "promote"
	ActionPrune   = "prune"
)

// Candidate is one numbered entry of a plan.
type Candidate struct {
	N           int      `json:"n"`
	ID          string   `json:"id"`
	Target      string   `json:"target"`
	Section     string   `json:"section"`
	Text        string   `json:"text"`  // redacted text as it would be promoted (block without list marker, links rewritten: promote.Preview)
	Block       string   `json:"block"` // the markdown apply inserts (without marker), its links still as memory has them
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
	// the list marker) when Text differs from it: a cited path moved
	// (Text cites the path that exists now, Corrected lists each change),
	// so what lands in the document is true; or its links were rewritten
	// for the document it lands in (promote.Preview).
	Original    string     `json:"original,omitempty"`
	Corrected   []cite.Fix `json:"corrected,omitempty"`
	Annotations []string   `json:"annotations"`
	// Action is "promote", or "prune" for an entry a file Claude Code
	// loads every session already says (LoadedIn names it): approving it
	// removes it from memory and adds nothing.
	Action   string `json:"action"`
	LoadedIn string `json:"loaded_in,omitempty"`
	// DocumentedIn is the solution document (docs/solutions/…) that
	// already says a "prune" candidate: approving it removes the entry
	// from memory; the document stays as it is.
	DocumentedIn string `json:"documented_in,omitempty"`
	// Tokens estimates what approving the candidate adds to the text
	// Claude Code loads every session (loaded.Tokens of what lands in a
	// loaded document: the entry and its marker, or a new line of the
	// topic index); TokensSaved what it removes (the entry's lines or its
	// pointer in the loaded part of MEMORY.md).
	Tokens      int `json:"tokens_per_session"`
	TokensSaved int `json:"tokens_saved_per_session"`
	// Link is the memory file a pointer in MEMORY.md names for a Memory
	// entry (pruning removes those pointers too).
	FirstSeen time.Time `json:"first_seen"`
	// Source is "written" for a memory written through intermem (package
	// written; File is then its log, Line the line that wrote it), with
	// its Type, Title and the tool or agent that wrote it (WrittenBy);
	// empty for auto-memory. Approving it takes it out of the written set.
	Source    string `json:"source,omitempty"`
	Type      string `json:"type,omitempty"`
	Title     string `json:"title,omitempty"`
	WrittenBy string `json:"written_by,omitempty"`
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
	Private           []Candidate `json:"private"`
	Blocked           []Blocked   `json:"blocked"`
	TimeBound         []Blocked   `json:"time_bound"` // listed apart, not offered
	SkippedDuplicates int         `json:"skipped_duplicates"`
	SkippedPromoted   int         `json:"skipped_promoted"`
	SkippedRejected   int         `json:"skipped_rejected"`
	Pointers          int         `json:"pointers_ignored"`
	Capped            int         `json:"capped"` // candidates left out by --max
	// Ready is how many candidates the plan would number without --max
	// (what status reports as ready).
	Ready int `json:"ready"`
	// TokensAdded and TokensSaved total the candidates' Tokens and
	// TokensSaved: what approving all of them changes in every session.
	TokensAdded  int               `json:"tokens_per_session"`
	TokensSaved  int               `json:"tokens_saved_per_session"`
	Warnings     []string          `json:"warnings"`
	Offers       []string          `json:"offers"`
	TargetHashes map[string]string `json:"target_hashes"`
	// Stable counts the stable auto-memory entries; Written the memories
	// written through intermem (every one is offered at once: it was
	// written on purpose, so it has no sessions to wait for).
	Stable    int  `json:"stable"`
	Written   int  `json:"written"`
	Entries   int  `json:"entries"`
	Sessions  int  `json:"sessions"`
	Threshold int  `json:"stable_threshold"`
	Baseline  bool `json:"baseline"` // nothing stable yet
	// MemoryOff is set when .intermem/config.json switches the auto-memory
	// source off: nothing of it is planned (the caller sets it).
	MemoryOff bool `json:"memory_off,omitempty"`
	// Validated is false for a plan built without citation checks
	// (Inputs.Checker nil: plan --no-validate): its confidences ignore
	// citations and stale entries are not blocked, so apply checks the
	// approved entries before promoting them.
	Validated bool `json:"validated"`
	// CiteRoot is the directory citations were resolved against when it is
	// not the project root (plan --cite-root).
	CiteRoot  string `json:"cite_root,omitempty"`
	AppliedBy string `json:"applied_by,omitempty"`
	// Checks are what the plan learned checking citations, by entry id:
	// recorded whole as the entry's validation (for the SessionStart hook,
	// which cannot check citations itself, and for provenance and
	// validate, which compare the cited files with their blobs then).
	Checks map[string]Check `json:"-"`
}

// Check is one entry's citations as a plan checked them: its score and
// the git blob hash of each file it validly cites (cite.Blobs), what
// validate records for an entry too.
type Check struct {
	Score score.Score
	Blobs map[string]string
	// File and Line are where the entry is (a memory file's name, or the
	// written set's log for a written memory: Written).
	File    string
	Line    int
	Written bool
}

// Inputs are what Build needs; the caller loads them.
type Inputs struct {
	Catalog *catalog.Memory
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
	// Loaded is what Claude Code loads every session (loaded.ReadAll for
	// the project root); nil means nothing beyond the curated documents.
	Loaded *loaded.Set[*mdoc.Doc]
	// Layout is where promoted facts land (for the per-session cost).
	Layout tier.Config
	// Documents are the project's solution documents (the catalog's
	// compound entries): a memory entry one of them already says is
	// offered for pruning, "documented in" it (NewDocuments; nil: none).
	Documents *Documents
	// Written are the memories in the written set (package written), each
	// offered like an auto-memory entry (WrittenItem).
	Written []Written
}

// Written is a memory written through intermem as a plan judges it.
type Written struct {
	// Item is the memory as an auto-memory entry (WrittenItem): a
	// one-memory entry whose description is the title.
	catalog.Item
	// Files are the paths the writer named (--file): citations beyond
	// those of the text.
	Files []string
	// By is who wrote it: the source the writer named, and the agent.
	By string
	// Cites are its citations as the catalog lists them (the files named
	// and those its text cites): what Known stats.
	Cites []string
}

// WrittenItem returns the written memory e (an entry of the written
// source, as the catalog holds it: redacted, Secret set; its Citations the
// files named and those its text cites) as plan judges it: a one-memory entry whose description is its title and whose type is
// the memory's, at the log's line. A written memory needs no history to be
// stable: Subject.Deliberate.
func WrittenItem(e source.Entry) Written {
	by := e.Fields["source"]
	if a := e.Fields["agent_id"]; a != "" {
		by = strings.TrimSpace(by + " (agent " + a + ")")
	}
	var files []string
	if f := e.Fields["files"]; f != "" {
		files = strings.Split(f, ", ")
	}
	return Written{
		Item: catalog.Item{Entry: automem.Entry{
			ID: e.ID, Kind: automem.Memory, File: e.Path, StartLine: e.Line, EndLine: e.EndLine,
			Section: e.Title, Name: e.Title, Description: e.Title, Text: e.Text, Type: e.Fields["type"], Secret: e.Secret,
		}, Rec: &store.Entry{FirstSeen: e.Created}, Status: stability.Stable},
		Files: files, By: by, Cites: e.Citations,
	}
}

// Build makes a plan.
func Build(in Inputs) *Plan {
	cat := in.Catalog
	p := &Plan{
		Created: in.Now, Root: in.Targets.Root, Threshold: cat.Threshold, Sessions: cat.Sessions,
		Entries: Count(cat).Entries, Candidates: []Candidate{}, Private: []Candidate{}, Blocked: []Blocked{}, TimeBound: []Blocked{},
		Warnings: []string{}, Offers: []string{}, TargetHashes: map[string]string{}, Checks: map[string]Check{},
		Validated: in.Checker != nil, CiteRoot: in.CiteRoot,
	}
	for _, name := range []string{targets.Agents, targets.Claude} {
		p.TargetHashes[name] = in.Targets.Target(name).Hash
	}
	w, ix, notes, stmts := world(in)
	citeRoot := in.CiteRoot
	if citeRoot == "" {
		citeRoot = in.Targets.Root
	}

	cands, private := []Candidate{}, []Candidate{}
	seen := make(map[string]bool, len(cat.Items)+len(in.Written))
	judge := func(it *catalog.Item, wr *Written) {
		// Identical entries are one fact (pruning removes every copy):
		// the first copy in memory stands for it.
		if seen[it.ID] {
			return
		}
		seen[it.ID] = true
		switch {
		case wr != nil:
			p.Written++
		case it.Status == stability.Stable && it.Kind != automem.Pointer:
			p.Stable++
		}
		subj := SubjectOf(it.Entry)
		subj.Sessions, subj.Deliberate = it.Sessions(), wr != nil
		block := Block(it.Entry)
		original, fixes := "", []cite.Fix(nil)
		d := w.Judge(&subj, func() Evidence {
			if in.Checker == nil {
				return Evidence{Score: score.Of(score.Evidence{Sessions: it.Sessions(), Threshold: cat.Threshold})}
			}
			var ev Evidence
			var results []cite.Result
			original, block, fixes, ev, results = check(in.Checker, it, wr, block, cat.Threshold)
			p.Checks[it.ID] = Check{Score: ev.Score, Blobs: cite.Blobs(citeRoot, results), File: it.File, Line: it.StartLine, Written: wr != nil}
			return ev
		})
		listed := func() Blocked {
			return Blocked{ID: it.ID, Text: preview(strings.TrimPrefix(redact.String(block), "- ")),
				File: it.File, Line: it.StartLine, Confidence: d.Score.Confidence}
		}
		switch d.Verdict {
		case Unstable:
			return
		case IsPointer:
			p.Pointers++
			return
		case Promoted:
			p.SkippedPromoted++
			return
		case Rejected:
			p.SkippedRejected++
			return
		case Duplicate:
			p.SkippedDuplicates++
			return
		case Withheld:
			b := listed()
			b.Reason, b.Confidence = d.Reason, 0
			p.TimeBound = append(p.TimeBound, b)
			return
		case Stale:
			b := listed()
			b.Reason = strings.Join(d.Score.Reasons, "; ")
			p.Blocked = append(p.Blocked, b)
			return
		}
		c := Candidate{
			ID: it.ID, Kind: string(it.Kind), File: it.File, Line: it.StartLine,
			Sessions: it.Sessions(), Confidence: d.Score.Confidence, Dedup: Novel, Action: ActionPromote,
			Block: block, Original: original, Corrected: fixes, Injection: []string{}, Annotations: []string{},
			Redacted: it.Secret || strings.Contains(block, redact.Marker),
		}
		if it.Rec != nil {
			c.FirstSeen = it.Rec.FirstSeen
		}
		if wr != nil {
			// Nothing of it is loaded at session start: it saves nothing.
			c.Source, c.Type, c.Title, c.WrittenBy = written.Name, it.Type, it.Description, wr.By
		} else {
			c.TokensSaved = savedTokens(cat.Dir, &it.Entry)
		}
		switch d.Verdict {
		case PruneOnly:
			c.Action, c.LoadedIn, c.Confidence = ActionPrune, d.Reason, score.Base
		case Documented:
			c.Action, c.DocumentedIn = ActionPrune, d.Reason
		default:
			c.Target, c.Route = Route(it.Entry)
			c.Section = Section(it.Entry, cat.Dir)
			c.Annotations = append(c.Annotations, d.Score.Reasons...)
		}
		if d.Verdict == Private {
			c.TokensSaved = 0 // it stays in memory
			private = append(private, c)
			return
		}
		cands = append(cands, c)
	}
	for i := range cat.Items {
		judge(&cat.Items[i], nil)
	}
	for i := range in.Written {
		judge(&in.Written[i].Item, &in.Written[i])
	}
	p.Baseline = p.Stable+p.Written == 0

	p.Ready = len(cands)
	p.Candidates = p.list(cands, in, ix, notes, stmts, 1)
	p.Private = p.list(private, in, ix, notes, stmts, len(p.Candidates)+1)
	costs(p, in)

	p.warn(in.Targets, w.Marked)
	return p
}

// Counts are how many entries the auto-memory catalog holds, counted
// as every command counts them (sources, validate, status, the plan):
// each distinct entry once, an index line pointing to a topic file not
// at all (the file it points to is the entry), and such index lines
// apart.
type Counts struct {
	Entries  int
	Pointers int
	Status   map[stability.Status]int // of Entries
}

// Count counts cat's entries (Counts).
func Count(cat *catalog.Memory) Counts {
	c := Counts{Status: map[stability.Status]int{}}
	seen := make(map[string]bool, len(cat.Items))
	for i := range cat.Items {
		it := &cat.Items[i]
		if seen[it.ID] {
			continue
		}
		seen[it.ID] = true
		if it.Kind == automem.Pointer {
			c.Pointers++
			continue
		}
		c.Entries++
		c.Status[it.Status]++
	}
	return c
}

// Ready returns how many entries are ready for synthesis as every view
// that does not check citations counts them (status, and the SessionStart
// hook by the same Judge over its cached Subjects): Build's own filtering
// (Judge), with each entry's citations judged by what is known (Known:
// the verdict a plan or validate recorded, recorded returns a negative
// for none, else the cited paths on disk) instead of checked. Once a plan
// has recorded its verdicts, Ready is the number it offers.
func Ready(in Inputs, recorded func(id string) float64, exists Exists) int {
	w := judgeWorld(in)
	cat := in.Catalog
	n := 0
	seen := make(map[string]bool, len(cat.Items))
	judge := func(it *catalog.Item, wr *Written) {
		if seen[it.ID] {
			return
		}
		seen[it.ID] = true
		subj := SubjectOf(it.Entry)
		subj.Sessions, subj.Deliberate = it.Sessions(), wr != nil
		d, decided := w.Before(&subj)
		if !decided {
			var cites []string
			switch {
			case wr != nil:
				cites = wr.Cites
			case it.Kind == automem.Memory:
				cites = CitePaths(it.Description + "\n" + it.Text)
			default:
				cites = CitePaths(it.Text)
			}
			d = w.After(&subj, Known(recorded(it.ID), cites, exists))
		}
		if d.Verdict.Ready() {
			n++
		}
	}
	for i := range cat.Items {
		judge(&cat.Items[i], nil)
	}
	for i := range in.Written {
		judge(&in.Written[i].Item, &in.Written[i])
	}
	return n
}

// WrittenSubject is the Subject of the written memory e (WrittenItem), for
// a caller that judges entries as stored (the SessionStart hook).
func WrittenSubject(e source.Entry) Subject {
	s := SubjectOf(WrittenItem(e).Entry)
	s.Deliberate = true
	return s
}

// check validates an item's citations. A fact citing a file git
// recorded as renamed is offered in the wording that is true now, with
// the original kept: promoting it as written would put a wrong path into
// a document that validate flags right after. The corrected text is what
// is scored (and, by Judge, deduplicated).
//
// A written memory (wr not nil) also cites the files its writer named.
func check(c *cite.Checker, it *catalog.Item, wr *Written, block string, threshold int) (original, final string, fixes []cite.Fix, ev Evidence, results []cite.Result) {
	cites := it.Text
	if wr != nil {
		cites = WrittenCites(it.Text, wr.Files)
	}
	results = c.Check(cite.Extract(cites))
	final = block
	if fixed, fx := cite.Rewrite(block, results); len(fx) > 0 {
		text, _ := cite.Rewrite(it.Text, results)
		original, final, fixes = block, fixed, fx
		results = c.Check(cite.Extract(text))
		ev.Corrected, ev.CorrectedKey = true, match.Key(fixed)
	}
	ev.Score = score.Of(score.Evidence{Results: results, Sessions: it.Sessions(), Threshold: threshold})
	return original, final, fixes, ev, results
}

// WrittenCites is the text whose citations are a written memory's: its
// content, then each file its writer named on a line of its own, in
// backticks (as validate.CitesOf lists them), so cite.Extract reads each
// as a path.
func WrittenCites(text string, files []string) string {
	var b strings.Builder
	b.WriteString(text)
	for _, f := range files {
		if strings.ContainsAny(f, "`\n") {
			continue
		}
		b.WriteString("\n`" + f + "`")
	}
	return b.String()
}

// judgeWorld gathers what entries are judged against.
func judgeWorld(in Inputs) *World {
	w := &World{
		Threshold: in.Catalog.Threshold, Promoted: in.Promoted, Rejected: in.Rejected,
		Marked: map[string]bool{}, Curated: map[uint64]bool{}, Loaded: map[uint64]string{},
	}
	for _, d := range in.Targets.Docs() {
		// Everything already marked in a curated document is promoted.
		for _, m := range d.Doc.Marked() {
			w.Marked[m.ID] = true
		}
		for _, s := range d.Doc.AllStatements() {
			w.Curated[match.Key(s.Text)] = true
		}
	}
	if in.Loaded != nil {
		w.Loaded = loaded.Said(in.Loaded)
	}
	if in.Documents.Len() > 0 {
		w.Documented = map[string]string{}
		for i := range in.Catalog.Items {
			if doc := in.Documents.Covering(in.Catalog.Items[i].Entry); doc != "" {
				w.Documented[in.Catalog.Items[i].ID] = doc
			}
		}
	}
	return w
}

// world is judgeWorld plus the indexes of existing statements the notes
// on shown candidates compare with: whole statements of the curated and
// loaded documents for near-identical wording, sentences and rows of the
// curated documents for paraphrases and refinements.
func world(in Inputs) (*World, *match.Index, *match.Notes, []string) {
	w := judgeWorld(in)
	ix := match.NewIndex()
	notes := match.NewNotes()
	var stmts []string
	for _, d := range in.Targets.Docs() {
		for _, s := range d.Doc.AllStatements() {
			ix.Add(len(stmts), s.Text)
			notes.Add(len(stmts), s.Text)
			stmts = append(stmts, s.Text)
		}
	}
	if in.Loaded != nil {
		for i := range in.Loaded.Files {
			f := &in.Loaded.Files[i]
			if isTarget(in.Targets, f.Real) {
				continue // indexed above
			}
			for _, s := range f.Doc.AllStatements() {
				ix.Add(len(stmts), s.Text)
				stmts = append(stmts, s.Text)
			}
		}
	}
	return w, ix, notes, stmts
}

func isTarget(ts *targets.Set, real string) bool {
	for _, d := range ts.Docs() {
		if d.Real == real {
			return true
		}
	}
	return false
}

// group orders the plan: AGENTS.md, CLAUDE.md, then prunes.
func group(c Candidate) int {
	if c.Action == ActionPrune && c.DocumentedIn != "" {
		return 3
	}
	if c.Action == ActionPrune {
		return 2
	}
	if c.Target == targets.Claude {
		return 1
	}
	return 0
}

// list ranks cs (best-established first), caps them at in.Max (counting
// what is left out in Capped), annotates them, groups them by target
// keeping rank order within each group, and numbers them from first.
func (p *Plan) list(cs []Candidate, in Inputs, ix *match.Index, notes *match.Notes, stmts []string, first int) []Candidate {
	sort.SliceStable(cs, func(a, b int) bool {
		x, y := cs[a], cs[b]
		if (x.Action == ActionPrune) != (y.Action == ActionPrune) {
			return y.Action == ActionPrune
		}
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
	// Group by target (prunes last), keeping rank order within each
	// group, and number.
	sort.SliceStable(cs, func(a, b int) bool { return group(cs[a]) < group(cs[b]) })
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
		p.Warnings = append(p.Warnings, fmt.Sprintf("%d more %s left out by --max; %s back in the next plan.", p.Capped,
			cli.Plural(p.Capped, "candidate", "candidates"), cli.Plural(p.Capped, "it comes", "they come")))
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
		case fence == "" && headingRE.Get().MatchString(line):
			line = "**" + strings.TrimSpace(strings.Trim(headingRE.Get().ReplaceAllString(line, ""), "#")) + "**"
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

// The regular expressions compile on first use: the SessionStart hook
// links this package (for Judge) and must not pay for them at start-up.
var headingRE = lazyre.New(`^ {0,3}#{1,6}(\s+|$)`)

// Route decides the target of an entry and says why.
func Route(e automem.Entry) (target, why string) {
	switch strings.ToLower(e.Type) {
	case "user", "feedback":
		return targets.Claude, e.Type + " memory"
	case "project", "reference":
		return targets.Agents, e.Type + " memory"
	case "style":
		// A written style rule (package written) is how to work.
		return targets.Claude, "style memory"
	}
	text := strings.TrimSpace(e.Text)
	if e.Kind == automem.Memory && e.Description != "" {
		text = e.Description
	}
	if imperativeRE.Get().MatchString(text) {
		return targets.Claude, "behavioural rule"
	}
	if preferenceRE.Get().MatchString(text) {
		return targets.Claude, "user preference"
	}
	if preferenceSectionRE.Get().MatchString(e.Section) {
		return targets.Claude, "preference section"
	}
	return targets.Agents, "project fact"
}

var (
	// An imperative rule: always/never/prefer/don't/do not/avoid… at the
	// start, after optional emphasis or an emoji.
	imperativeRE = lazyre.New(`(?i)^[^\p{L}\p{N}` + "`" + `]{0,6}(always|never|prefer|don'?t|do not|avoid|must not|please|make sure)\b`)
	// A statement about what the user wants.
	preferenceRE = lazyre.New(`(?i)\b(the )?user (prefers|wants|likes|dislikes|hates|asked|expects)\b`)
	// Sections of preferences and feedback.
	preferenceSectionRE = lazyre.New(`(?i)\b(preferences?|feedback|user|workflow|style guide|communication)\b`)
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
			if p.Kind == automem.Pointer && p.Link == e.File && p.Section != "" && !genericRE.Get().MatchString(p.Section) {
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
	// The types of written memories (package written).
	case "decision":
		return "Decisions"
	case "solution":
		return "Solutions"
	case "learning":
		return "Learnings"
	case "insight":
		return "Insights"
	case "style":
		return "Style"
	}
	return "Notes"
}

var genericRE = lazyre.New(`(?i)^\s*(user|feedback|project|reference|memories|memory|index|notes?)\s*$`)

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
