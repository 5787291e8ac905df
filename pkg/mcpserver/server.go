package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/intermem/intermem/pkg/continuity"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/redact"
)

// Options configure a server.
type Options struct {
	// Version is reported to the client in the handshake.
	Version string
	// SearchBudget is the most tokens a memory_search result may take
	// (estimated as inject.Tokens does); 0 means DefaultSearchBudget.
	SearchBudget int
	// GetBudget is the most tokens a memory_get result may take; a longer
	// entry's text is cut. 0 means DefaultGetBudget.
	GetBudget int
	// Now is the clock (INTERMEM_NOW in the binary); nil means time.Now.
	Now func() (time.Time, error)
	// Logf receives internal errors (a recovered panic, with its stack).
	// The binary sends them to stderr, which Claude Code keeps in its
	// debug log. May be nil.
	Logf func(format string, args ...any)
}

// DefaultSearchBudget bounds a memory_search result, in tokens.
const DefaultSearchBudget = 1500

// DefaultGetBudget bounds a memory_get result, in tokens: Claude Code
// warns about tool results over 10,000 tokens, and one entry should never
// crowd out the conversation.
const DefaultGetBudget = 6000

// Limits on arguments. They are checked here, with messages a model can
// act on, rather than in the schema, whose failures read as JSON Schema
// jargon (and whose every keyword is paid for in every session).
const (
	DefaultLimit   = 10
	MaxLimit       = 50
	maxQueryBytes  = 1000
	maxTitleBytes  = 200
	maxWriteBytes  = 64 << 10
	maxListItems   = 50
	maxSourceBytes = 64
)

// The tools' names and descriptions. Every byte here is in the context of
// every session that loads the plugin: say what the tool is for and when
// to use it, nothing more.
const (
	searchName = "memory_search"
	searchDesc = "Search the project's (and the user's) memory for what is known about a problem, error, file or decision. Ranked hits; status stale: their cites changed."

	getName = "memory_get"
	getDesc = "The whole memory entry with this id (and source), with its confidence, status and promotion."

	validateName = "memory_validate"
	validateDesc = "Re-check now the files and symbols a memory cites: each citation's status and a suggested fix."

	provenanceName = "memory_provenance"
	provenanceDesc = "Where a memory came from: source, file, line, dates, sessions, agent, the operation that promoted or archived it."

	writeName = "memory_write"
	writeDesc = "Store a memory (solution, learning, insight, decision, style rule, or a checkpoint the user chose to save); returns its id."
)

// WriteTypes are the kinds of memory memory_write accepts.
var WriteTypes = []string{"solution", "learning", "insight", "decision", "style", "checkpoint"}

// Tool inputs. Their inferred JSON Schemas are the tools' input schemas:
// a field without omitempty is required, the jsonschema tag is its
// description, and unknown arguments are refused.

type searchIn struct {
	Query  string `json:"query" jsonschema:"what to look for, in words"`
	Source string `json:"source,omitempty" jsonschema:"only this source (as in results)"`
	Limit  int    `json:"limit,omitempty" jsonschema:"most results, 1-50 (default 10)"`
	Since  string `json:"since,omitempty" jsonschema:"dated on or after YYYY-MM-DD"`
	Until  string `json:"until,omitempty" jsonschema:"dated on or before YYYY-MM-DD"`
	Scope  string `json:"scope,omitempty" jsonschema:"project, phase, session or user"`
	All    bool   `json:"all_projects,omitempty"`
}

type idIn struct {
	ID string `json:"id" jsonschema:"a result's id"`
}

// getIn is memory_get's arguments: a result's id and, when more than one
// source holds it (the result's also names the others), which source's
// entry. They go undescribed but for the tool's description: the tool
// list is paid for in every session (TestTools).
type getIn struct {
	ID     string `json:"id"`
	Source string `json:"source,omitempty"`
}

type writeIn struct {
	Type    string   `json:"type" jsonschema:"solution, learning, insight, decision, style or checkpoint"`
	Title   string   `json:"title"`
	Content string   `json:"content"`
	Tags    []string `json:"tags,omitempty"`
	Files   []string `json:"files,omitempty" jsonschema:"files it is about, relative to the project"`
	Source  string   `json:"source,omitempty" jsonschema:"who writes it, if not you"`
	Scope   string   `json:"scope,omitempty" jsonschema:"project (default), phase, session or user"`
}

// NewServer returns an MCP server whose tools answer from b. A nil b (no
// project here) gives a server with no tools: nothing to pay for in the
// session's context, and nothing that could read the home directory.
func NewServer(b Backend, o Options) *mcp.Server {
	if o.SearchBudget <= 0 {
		o.SearchBudget = DefaultSearchBudget
	}
	if o.GetBudget <= 0 {
		o.GetBudget = DefaultGetBudget
	}
	if o.Now == nil {
		o.Now = func() (time.Time, error) { return time.Now().UTC(), nil }
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	version := o.Version
	if version == "" {
		version = "dev"
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "intermem", Version: version}, &mcp.ServerOptions{
		// No logging capability, and no list-changed notifications: the
		// tool list is fixed for the life of the process.
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
	})
	if b == nil {
		return s
	}
	h := &handlers{b: b, o: o}
	closed, notDestructive := false, false
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &closed}
	addTool(s, h, &mcp.Tool{Name: searchName, Description: searchDesc, Annotations: readOnly}, h.search)
	addTool(s, h, &mcp.Tool{Name: getName, Description: getDesc, Annotations: readOnly}, h.get)
	addTool(s, h, &mcp.Tool{Name: validateName, Description: validateDesc, Annotations: readOnly}, h.validate)
	addTool(s, h, &mcp.Tool{Name: provenanceName, Description: provenanceDesc, Annotations: readOnly}, h.provenance)
	addTool(s, h, &mcp.Tool{Name: writeName, Description: writeDesc,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &notDestructive, OpenWorldHint: &closed}}, h.write)
	return s
}

type handlers struct {
	b Backend
	o Options
}

// addTool registers fn as tool t. The input and output schemas are
// inferred from In and Out by the SDK's schema package (a field without
// omitempty is required, the jsonschema tag is its description, unknown
// properties are refused). The handler is ours rather than mcp.AddTool's
// so that every failure is a tool error a model can act on:
//
//   - arguments are decoded here (decodeArgs), and a wrong one is named
//     with what is expected ("limit must be an integer"), not as a JSON
//     Schema validation trace;
//   - a panic becomes a tool error, and the server answers every later
//     call as before;
//   - an error result carries no structured content (mcp.AddTool would
//     attach the zero Out, which does not match the output schema).
//
// Errors are never JSON-RPC errors: a model reads a tool error and can
// correct its call, while a protocol error only tells the client that
// something broke.
func addTool[In, Out any](s *mcp.Server, h *handlers, t *mcp.Tool, fn func(context.Context, In) (Out, error)) {
	in, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: input schema: %v", t.Name, err)) // a programming error, caught by the tests
	}
	// The output schema is that of the result struct, not of the pointer
	// the handler returns: a pointer's schema is {"type":["null","object"]},
	// which the protocol forbids and Claude Code rejects, failing the
	// whole tools/list.
	ot := reflect.TypeFor[Out]()
	if ot.Kind() == reflect.Pointer {
		ot = ot.Elem()
	}
	out, err := jsonschema.ForType(ot, nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: output schema: %v", t.Name, err))
	}
	t.InputSchema, t.OutputSchema = in, out
	name := t.Name
	s.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
		defer func() {
			if r := recover(); r != nil {
				h.o.Logf("intermem-mcp: %s: internal error: %v\n%s", name, r, debug.Stack())
				res, err = toolError(fmt.Errorf("internal error in %s: %v", name, r), "this is a bug in intermem; the other tools still work"), nil
			}
		}()
		var args In
		if err := decodeArgs(req.Params.Arguments, in, &args); err != nil {
			return toolError(fmt.Errorf("%s: %w", name, err), ""), nil
		}
		v, err := fn(withToolUse(ctx, req), args)
		if err != nil {
			return toolError(err, hintFor(err)), nil
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("%s: encoding the result: %w", name, err)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: json.RawMessage(b)}, nil
	})
}

// toolError is a CallToolResult with IsError set and the error in the
// house style: "intermem: error: …" and "intermem: hint: …".
func toolError(err error, hint string) *mcp.CallToolResult {
	var ce *cli.Error
	if errors.As(err, &ce) && ce.Hint != "" {
		hint = ce.Hint
	}
	text := "intermem: error: " + safe(err.Error())
	if hint != "" {
		text += "\nintermem: hint: " + safe(hint)
	}
	r := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
	r.SetError(err)
	return r
}

// safe is what every string of ours that quotes outside text goes
// through: secrets redacted, unsafe characters escaped.
func safe(s string) string { return cli.Escape(redact.String(s)) }

func hintFor(err error) string {
	switch {
	case errors.Is(err, ErrNotFound):
		return "ids come from memory_search results; the entry may have been edited or removed since"
	case errors.Is(err, ErrUnknownSource):
		return "leave source out to search every source"
	case errors.Is(err, ErrSwitchedOff):
		return "the user switched it off in .intermem/config.json (\"sources\"): leave source out to search the sources that are on"
	case errors.Is(err, ErrNotInSource):
		return "name one of the sources it is in, or leave source out"
	case errors.Is(err, ErrBusy):
		return "another intermem process holds it for a moment; try again shortly"
	case errors.Is(err, ErrNotAvailable):
		return "this version of intermem does not offer it; say what you would have stored in your answer instead"
	}
	return ""
}

// argError is a bad argument; its text says what is wrong and what is
// right.
func argError(format string, args ...any) error { return fmt.Errorf(format, args...) }

// isID reports whether s is an entry id: 16 lower-case hex digits (what
// `^[0-9a-f]{16}$` matched; a package-level regexp compiles at start-up).
func isID(s string) bool {
	if len(s) != 16 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// checkID returns the id normalised, or an error a model can act on.
func checkID(id string) (string, error) {
	n := strings.ToLower(strings.TrimSpace(id))
	if !isID(n) {
		if n == "" {
			return "", argError("id is empty: give a result's id (16 hex digits)")
		}
		return "", argError("id %s is not an intermem id: ids are 16 hex digits, as in memory_search results", quote(id))
	}
	return n, nil
}

// quote shows an argument in an error, clipped.
func quote(s string) string {
	if len(s) > 40 {
		s = clip(s, 40)
	}
	return strconv.Quote(s)
}

// parseDay reads a since/until argument: a calendar day (YYYY-MM-DD) or
// an RFC 3339 time.
func parseDay(name, v string) (time.Time, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t.UTC(), nil
	}
	return time.Time{}, argError("%s %s is not a date: write it as YYYY-MM-DD", name, quote(v))
}

func (h *handlers) search(ctx context.Context, in searchIn) (*searchOut, error) {
	q := strings.TrimSpace(in.Query)
	if q == "" {
		return nil, argError("query is empty: give the words to look for")
	}
	if len(q) > maxQueryBytes {
		return nil, argError("query is %d bytes long; at most %d: ask with a few words", len(q), maxQueryBytes)
	}
	limit := in.Limit
	switch {
	case limit == 0:
		limit = DefaultLimit
	case limit < 1 || limit > MaxLimit:
		return nil, argError("limit %d is out of range: 1 to %d", limit, MaxLimit)
	}
	since, err := parseDay("since", in.Since)
	if err != nil {
		return nil, err
	}
	until, err := parseDay("until", in.Until)
	if err != nil {
		return nil, err
	}
	if !since.IsZero() && !until.IsZero() && until.Before(since) {
		return nil, argError("until %s is before since %s", in.Until, in.Since)
	}
	src := strings.TrimSpace(in.Source)
	if len(src) > maxSourceBytes {
		return nil, argError("source %s is not a source name", quote(src))
	}
	scope := strings.ToLower(strings.TrimSpace(in.Scope))
	if scope != "" && !continuity.ValidScope(scope) {
		return nil, argError("scope %s is not one of %s", quote(in.Scope), strings.Join(continuity.Scopes, ", "))
	}
	now, err := h.o.Now()
	if err != nil {
		return nil, err
	}
	res, err := h.b.Search(ctx, SearchRequest{Query: q, Source: src, Limit: limit, Since: since, Until: until, Now: now, Scope: scope,
		AllProjects: in.All})
	if err != nil {
		return nil, err
	}
	return budgetSearch(res, h.o.SearchBudget), nil
}

func (h *handlers) get(ctx context.Context, in getIn) (*entryOut, error) {
	id, err := checkID(in.ID)
	if err != nil {
		return nil, err
	}
	src := strings.TrimSpace(in.Source)
	if len(src) > maxSourceBytes {
		return nil, argError("source %s is not a source name", quote(src))
	}
	e, err := h.b.Get(ctx, GetRequest{ID: id, Source: src})
	if err != nil {
		return nil, err
	}
	return entryView(e, h.o.GetBudget), nil
}

func (h *handlers) validate(ctx context.Context, in idIn) (*validationOut, error) {
	id, err := checkID(in.ID)
	if err != nil {
		return nil, err
	}
	v, err := h.b.Validate(ctx, ValidateRequest{ID: id})
	if err != nil {
		return nil, err
	}
	return validationView(v), nil
}

func (h *handlers) provenance(ctx context.Context, in idIn) (*provenanceOut, error) {
	id, err := checkID(in.ID)
	if err != nil {
		return nil, err
	}
	p, err := h.b.Provenance(ctx, ProvenanceRequest{ID: id})
	if err != nil {
		return nil, err
	}
	return provenanceView(p), nil
}

func (h *handlers) write(ctx context.Context, in writeIn) (*writeOut, error) {
	req := WriteRequest{Type: strings.ToLower(strings.TrimSpace(in.Type)), Title: strings.TrimSpace(in.Title),
		Content: strings.TrimSpace(in.Content), Source: strings.TrimSpace(in.Source), Scope: strings.ToLower(strings.TrimSpace(in.Scope))}
	ok := false
	for _, t := range WriteTypes {
		ok = ok || req.Type == t
	}
	switch {
	case !ok:
		return nil, argError("type %s is not one of %s", quote(in.Type), strings.Join(WriteTypes, ", "))
	case req.Title == "":
		return nil, argError("title is empty: give the memory a one-line title")
	case len(req.Title) > maxTitleBytes || strings.ContainsAny(req.Title, "\r\n"):
		return nil, argError("title must be one line of at most %d bytes", maxTitleBytes)
	case req.Content == "":
		return nil, argError("content is empty: write what should be remembered")
	case len(req.Content) > maxWriteBytes:
		return nil, argError("content is %d bytes long; at most %d", len(req.Content), maxWriteBytes)
	case len(in.Tags) > maxListItems || len(in.Files) > maxListItems:
		return nil, argError("at most %d tags and %d files", maxListItems, maxListItems)
	case len(req.Source) > maxSourceBytes:
		return nil, argError("source must be a name of at most %d bytes", maxSourceBytes)
	case req.Scope != "" && !continuity.ValidScope(req.Scope):
		return nil, argError("scope %s is not one of %s", quote(in.Scope), strings.Join(continuity.Scopes, ", "))
	case req.Scope != "" && req.Scope != "project" && req.Type == "checkpoint":
		return nil, argError("a checkpoint is of scope project: leave scope out")
	}
	for _, t := range in.Tags {
		if t = strings.TrimSpace(t); t != "" {
			req.Tags = append(req.Tags, t)
		}
	}
	for _, f := range in.Files {
		if f = strings.TrimSpace(f); f != "" {
			req.Files = append(req.Files, f)
		}
	}
	req.ToolUseID = ToolUseID(ctx)
	w, err := h.b.Write(ctx, req)
	if err != nil {
		return nil, err
	}
	return &writeOut{ID: w.ID, CreatedAt: stamp(w.CreatedAt), Source: safe(w.Source), Scope: safe(w.Scope), Duplicate: w.Duplicate, Redacted: w.Redacted,
		Provenance: writerOut{Source: safe(w.Writer), AgentID: safe(w.AgentID), SessionID: safe(w.SessionID), ToolUseID: safe(w.ToolUseID)}}, nil
}

// round2 rounds a confidence for display: 0.8000000000000002 is 0.8.
func round2(f float64) float64 { return math.Round(f*100) / 100 }

// day formats a date; zero is "".
func day(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.DateOnly)
}

// stamp formats a time; zero is "".
func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// where is "path:line", or the path alone.
func where(path string, line int) string {
	if line > 0 {
		return path + ":" + strconv.Itoa(line)
	}
	return path
}

// clip cuts s to at most n bytes at a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + "…"
}
