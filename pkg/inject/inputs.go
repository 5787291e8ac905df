package inject

import (
	"time"

	"github.com/intermem/intermem/pkg/screen"
)

// Inputs is everything Render needs, gathered beforehand (see Gather): the
// renderer reads no file, no clock and no environment, so the same Inputs
// always give the same bytes.
type Inputs struct {
	// Now is the clock reading that recency is measured against.
	Now time.Time
	// Budget is the token budget (see Tokens for the estimate).
	Budget int

	// MemoryDir is the absolute auto-memory directory, printed once so the
	// model can Read the files it names.
	MemoryDir string
	// Branch is the current git branch of the work tree holding the
	// session's cwd ("" when detached, unknown or not in git).
	Branch string
	// CwdRel is the session's cwd relative to its work tree, slash
	// separated ("" at the top or outside it).
	CwdRel string

	// Boot is where the work stands, rendered first (the bootstrap); nil
	// for a resumed or compacted session, which continues its own
	// history.
	Boot *Boot

	// Index describes MEMORY.md; nil when there is none.
	Index *IndexInfo
	// MemFilesUnread counts the memory files past the most a session
	// start reads (MEMORY.md and the first others by name).
	MemFilesUnread int
	// ConfigUnusable is set when .intermem/config.json cannot be used
	// (Env.Config): the context says it is ignored, first of the health
	// findings, so that the user hears of it.
	ConfigUnusable bool
	// Ready counts the entries /intermem:synthesize would offer (to
	// promote, or to prune what Claude Code already loads): plan.Judge's
	// verdicts, citations judged as Gather says.
	Ready int
	// LastSweep is when "intermem sweep" last ran (zero: never);
	// FirstPromoted when the oldest live promoted fact was promoted (zero:
	// none). A sweep is due SweepEvery after the later of the two.
	LastSweep, FirstPromoted time.Time
	// Interrupted holds the summaries of the incomplete journal operations
	// recovery would replay (verified: see Env.Key).
	Interrupted []string
	// Refused counts incomplete journal operations, and records that no
	// longer decode, that recovery refuses: nothing of them is shown.
	Refused int
	// Agents is set when AGENTS.md holds promoted facts Claude Code will
	// not load.
	Agents *AgentsInfo
	// Stale lists promoted facts whose confidence fell below
	// score.StaleBelow and that are still marked in a curated document.
	Stale []StaleFact
	// Docs is the index of promoted knowledge: the root documents'
	// sections holding intermem markers.
	Docs []DocIndex
	// Details are the detail docs under docs/intermem/.
	Details []Detail
	// Candidates are the memory entries Claude Code did not load, in any
	// order: Render ranks them.
	Candidates []Candidate
	// Related are the other sources' solutions and learnings, and
	// Corrections interfluence's newest observations, as the catalog
	// stored them (see related.go): Render names those that matter now.
	Related     []Related
	Corrections []Correction

	// Redact scrubs secrets from every printed line; nil means
	// redact.String. Any other function must return exactly what
	// redact.String returns (the hook passes a memo of it).
	Redact func(string) string
	// Screen finds prompt-injection forms in every text Render shows; nil
	// means screen.Check. Any other function must return exactly what
	// screen.Check returns (the hook passes a memo of it).
	Screen func(string) []screen.Flag
}

// IndexInfo is MEMORY.md measured against Claude Code's load cap.
type IndexInfo struct {
	Path               string // absolute path of MEMORY.md
	Lines, Chars       int
	LoadedLines        int
	Truncated          bool
	Beyond             []LedgerEntry // entries past the cap, in line order
	BeyondLinesSkipped int           // lines past the cap (for the headline)
}

// LedgerEntry is one MEMORY.md entry past the load cap.
type LedgerEntry struct {
	Line  int
	Text  string // entry text (not yet redacted or clipped)
	Flags []Flag // screening flags of the entry: it is withheld
}

// AgentsInfo says AGENTS.md holds promoted facts that will not be loaded.
type AgentsInfo struct {
	Facts int
	Why   string
}

// StaleFact is a promoted fact that should not be trusted.
type StaleFact struct {
	ID         string
	Doc        string // document holding its marker
	Section    string
	Text       string
	Confidence float64
}

// DocIndex is one root document's sections holding promoted facts.
type DocIndex struct {
	Name     string // "CLAUDE.md", "AGENTS.md"
	Loaded   bool   // Claude Code loads it at session start
	Sections []SectionCount
}

// SectionCount is a section title and how many marked facts it holds.
type SectionCount struct {
	Title string
	Facts int
}

// Detail is one docs/intermem/*.md document.
type Detail struct {
	Name  string // relative to the project root, slash separated
	Title string // first heading, or first line of text
	Facts int    // intermem markers it holds
}

// Candidate is a memory entry that Claude Code did not load: a fact or a
// one-memory file in a topic file.
type Candidate struct {
	ID   string
	File string // memory file name, relative to MemoryDir
	Line int    // 1-based start line
	Kind string // "fact" or "memory"
	// Text is what is shown: a fact's text, or a memory's description
	// (its name and first body line when it has none).
	Text string
	// Body is the rest of the entry that relevance looks at (a memory's
	// name and body); it is never printed.
	Body string
	Type string // a memory's type (user, feedback, project, reference…)
	// Sessions is how many distinct sessions the entry was seen in.
	Sessions int
	// Confidence is a known confidence in [0,1], or a negative number when
	// none is recorded.
	Confidence float64
	LastSeen   time.Time // zero when never observed
	// Cites are the project files the entry cites, with their state.
	Cites []Cited
	// Pointed is set when a pointer in the loaded part of MEMORY.md
	// already links to this entry's file.
	Pointed bool
	// Content is a one-memory file's body (redacted, at most a few
	// hundred bytes): for the memories most relevant now the context
	// shows it, not only the description.
	Content string
	// Stale is set when the entry's citations are broken (validate's or
	// the plan's recorded confidence is below score.StaleBelow, or, when
	// none is recorded, a cited project path is gone): it ranks last and
	// is marked.
	Stale bool
	// Flags are screening flags of the entry as written (or of its file's
	// name): a flagged entry is withheld.
	Flags []Flag
}

// Cited is one file an entry cites.
type Cited struct {
	Path    string // slash separated, relative to the work tree
	Exists  bool
	ModTime time.Time
}
