package mcpserver

import (
	"context"
	"errors"
	"time"
)

// Backend answers the tools. It is the seam between the protocol (this
// package) and whatever knows the memories: Catalog, over intermem's
// catalog through package retrieve (what the CLI's read commands use);
// its Write is where the write API plugs in (write.go). One method per tool,
// typed requests and results, text as the memory systems hold it: the
// server, not the backend, redacts, screens, escapes and budgets what
// reaches the model, so a backend cannot forget to.
//
// Errors: wrap ErrNotFound, ErrUnknownSource, ErrSwitchedOff, ErrBusy or
// ErrNotAvailable
// (the server turns them into tool errors with a hint for the model);
// anything else is reported as it is. A backend must be safe for
// concurrent use: the client may run several tools at once.
type Backend interface {
	Search(ctx context.Context, req SearchRequest) (*SearchResult, error)
	Get(ctx context.Context, req GetRequest) (*Entry, error)
	Validate(ctx context.Context, req ValidateRequest) (*Validation, error)
	Provenance(ctx context.Context, req ProvenanceRequest) (*Provenance, error)
	Write(ctx context.Context, req WriteRequest) (*WriteResult, error)
}

// ErrNotFound is returned when no memory has the requested id.
var ErrNotFound = errors.New("no memory has this id")

// ErrUnknownSource is returned for a source filter that names no source;
// the error's text lists the known ones.
var ErrUnknownSource = errors.New("no such source")

// ErrSwitchedOff is returned for a source filter naming a source that
// .intermem/config.json switches off: it exists (not ErrUnknownSource),
// and the user chose not to have it read.
var ErrSwitchedOff = errors.New("source is switched off")

// ErrNotInSource is returned by Get for an id that sources hold, but not
// the one named; the error's text names those that do.
var ErrNotInSource = errors.New("the source named does not hold this id")

// ErrBusy is returned when what the tool needs is held by another process
// past the backend's short wait (intermem's store while a hook writes).
var ErrBusy = errors.New("busy")

// ErrNotAvailable is returned by a backend that does not offer a tool.
var ErrNotAvailable = errors.New("not available yet")

// The statuses of an entry, as validation leaves them.
const (
	// StatusOK: what the entry cites was checked and holds.
	StatusOK = "ok"
	// StatusStale: a citation is broken (or several moved); do not trust it.
	StatusStale = "stale"
	// StatusUnchecked: it cites nothing that can be checked here.
	StatusUnchecked = "unchecked"
	// StatusUnvalidated: nothing has validated it yet (memory_validate does).
	StatusUnvalidated = "unvalidated"
	// StatusMissing: nothing has validated it yet, and a project path it
	// cites is missing on disk (retrieve.StatusMissing).
	StatusMissing = "missing"
	// StatusObservation: an edit observation, not a claim: nothing to
	// validate (retrieve.StatusObservation).
	StatusObservation = "observation"
	// StatusArchived: intermem archived it; it no longer holds.
	StatusArchived = "archived"
)

// SearchRequest asks for the entries that best match Query.
type SearchRequest struct {
	Query string
	// Source keeps only entries of this source; "" keeps all.
	Source string
	// Limit is the most hits returned, at least 1.
	Limit int
	// Since and Until keep entries dated within [Since, Until] by calendar
	// day; zero means unbounded.
	Since, Until time.Time
	// Now is the time recency is measured from.
	Now time.Time
	// Scope keeps only memories of this scope; "" keeps every one.
	Scope string
	// AllProjects adds every project of the per-user registry, as
	// `intermem search --all-projects` does: a hit from another project
	// names it, and a project that cannot be read is skipped with a note.
	AllProjects bool
}

// SearchResult is a ranked list of hits, best first.
type SearchResult struct {
	Hits []Hit
	// Notes say what the result could not take into account (a busy store,
	// an unreadable source), one sentence each.
	Notes []string
}

// Hit is one search result.
type Hit struct {
	ID     string
	Source string
	Kind   string
	// Path is where the entry lives, for people and the model: relative to
	// the project root, or "memory/<file>" for auto-memory.
	Path string
	Line int
	// Title is the entry's one-line name.
	Title string
	// Summary is the short text shown with the hit.
	Summary string
	// Text is the entry's whole text. It is not shown: the server screens
	// it, so a hit whose entry holds an injection is withheld even when its
	// summary looks clean.
	Text       string
	Date       time.Time
	Confidence float64
	Status     string
	Score      float64
	// Scope is the memory's scope; Project the root of another project
	// it comes from ("" for this one).
	Scope, Project string
}

// GetRequest names one entry: the one Source holds under ID, when more
// than one source holds it ("": the first in source-name order that
// holds it live, as `intermem get` shows).
type GetRequest struct{ ID, Source string }

// ValidateRequest names one entry.
type ValidateRequest struct{ ID string }

// ProvenanceRequest names one entry.
type ProvenanceRequest struct{ ID string }

// Section is one addressable part of an entry (a compound document's
// "## Root Cause").
type Section struct {
	Name string
	Line int
}

// Entry is one whole memory with intermem's overlay.
type Entry struct {
	ID     string
	Source string
	Kind   string
	// Path is as in Hit; File is the absolute path of the file, when known.
	Path          string
	File          string
	Line, EndLine int
	Title         string
	Text          string
	Tags          []string
	Symptoms      []string
	Citations     []string
	Sections      []Section
	// Fields are the source's other named values (component, root_cause,
	// provenance, …).
	Fields                      map[string]string
	Created, Updated, Confirmed time.Time
	Overlay                     Overlay
	// Written is who wrote a memory written through intermem, as
	// recorded; nil for other entries.
	Written *Writer
	// Also are the other sources that hold the same id (GetRequest.Source
	// reads each).
	Also []Place
	// Notes say what the read could not take into account (a busy store,
	// a source that cannot be read), one sentence each, as
	// SearchResult.Notes says them.
	Notes []string
}

// Place is where another source holds an entry's id; Gone when that
// source no longer holds it but the catalog keeps its tombstone.
type Place struct {
	Source, Path string
	Line         int
	Gone         bool
}

// Writer is who wrote a memory written through intermem (memory_write,
// intermem write) and where it is kept: what its record says, nothing
// inferred.
type Writer struct {
	// Scope is project, phase, session or user; Phase the phase of scope
	// phase.
	Scope string
	Phase *int
	// By is the tool that wrote it; Session, Agent and ToolUse the
	// session, subagent and tool call, when recorded.
	By, Session, Agent, ToolUse string
	At                          time.Time
	// Store is where it is kept (for scope user, the per-user store,
	// outside every project).
	Store string
}

// Overlay is what intermem knows about an entry beyond its text.
type Overlay struct {
	// Confidence is in [0, 1]; Known is false when nothing has scored the
	// entry (Confidence is then the neutral 0.5).
	Confidence float64
	Known      bool
	Status     string
	// Validated is when the confidence was last computed; zero if never.
	Validated time.Time
	// Promoted is set when intermem promoted the entry into a curated
	// document (and perhaps archived it since).
	Promoted *Promotion
}

// Promotion is what intermem did with an entry: promoted it into a
// curated document, and perhaps archived it later.
type Promotion struct {
	Target, Section string
	At              time.Time
	// Op is the journal operation that promoted it.
	Op string
	// Origin is the memory file it was promoted from.
	Origin     string
	Archived   bool
	ArchivedAt time.Time
	Reason     string
}

// Validation is an entry's citations checked now.
type Validation struct {
	ID         string
	Confidence float64
	Status     string
	Reasons    []string
	Citations  []CitationCheck
}

// CitationCheck is one citation and what checking it found.
type CitationCheck struct {
	Text, Kind, Status, Detail string
	MovedTo                    string
	// Fix is a suggested correction, for a citation that is not valid.
	Fix          string
	NotInProject bool
}

// Provenance is where an entry came from and what happened to it.
type Provenance struct {
	ID, Source, Kind string
	Path, File       string
	Line, EndLine    int
	// Created, Updated and Confirmed are the dates the source records.
	Created, Updated, Confirmed time.Time
	// FirstSeen and LastSeen bound the sessions intermem saw the entry in;
	// Sessions counts them. Zero when intermem never observed it (only
	// auto-memory is observed per session today).
	FirstSeen, LastSeen time.Time
	Sessions            int
	// RecentSessions are the latest sessions that saw it, newest first.
	RecentSessions []SessionSeen
	// Agent and AgentType name the agent that wrote it, when recorded.
	Agent, AgentType string
	// Cataloged is when a scan of its source first found it; Gone when
	// its source stopped holding it (zero while it exists).
	Cataloged, Gone time.Time
	// Validated is its last validation, at Commit; ChangedSince are the
	// cited files whose content differs from what it was then.
	Validated    time.Time
	Commit       string
	ChangedSince []string
	// ArchivedBy is the journal operation that archived it.
	ArchivedBy string
	// Replaced is the id of the entry this one replaced (an edit).
	Replaced string
	// Fields are the source's own provenance values (provenance,
	// synthesized_from, reviewer, …).
	Fields map[string]string
	// Promotion is set when intermem promoted (or archived) it.
	Promotion *Promotion
	// Written is who wrote a memory written through intermem.
	Written *Writer
	// Notes say what is not known and why.
	Notes []string
}

// SessionSeen is one session that saw an entry.
type SessionSeen struct {
	ID          string
	First, Last time.Time
}

// WriteRequest asks to store a new memory.
type WriteRequest struct {
	Type, Title, Content string
	Tags, Files          []string
	Source               string
	// Scope is project ("" too), phase, session or user.
	Scope string
	// ToolUseID is the client's id of the tool call (ToolUseID).
	ToolUseID string
}

// WriteResult is the stored memory's id, and what storing it did.
type WriteResult struct {
	ID        string
	CreatedAt time.Time
	// Source is the catalog source holding it: written, or the source of
	// the entry a duplicate matched.
	Source string
	// Duplicate says the catalog already held it; nothing was stored.
	Duplicate bool
	// Redacted lists the kinds of the secrets replaced before storing.
	Redacted []string
	// Writer, AgentID and SessionID are its provenance: who wrote it.
	Writer, AgentID, SessionID string
	// Scope is the memory's scope.
	Scope string
	// ToolUseID is the tool call that wrote it, when the client named it.
	ToolUseID string
}
