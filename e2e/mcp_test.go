package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/intermem/intermem/e2e/fakeapi"
)

var mcpPiece = piece{"intermem-mcp (the MCP server)", "cmd/intermem-mcp"}

// mcpLineRE picks the debug-log lines about MCP servers.
var mcpLineRE = regexp.MustCompile(`(?i)\bmcp\b`)

// mcpTools are the tools intermem-mcp offers, by their MCP names.
var mcpTools = []string{"memory_get", "memory_provenance", "memory_search", "memory_validate", "memory_write"}

// mcpToolName is the name Claude Code gives a plugin's MCP tool in the
// request to the model: mcp__plugin_<plugin>_<server>__<tool>.
func mcpToolName(t *testing.T, tool string) string {
	return "mcp__plugin_" + pluginName(t) + "_intermem__" + tool
}

// apiTool is one tool definition of a Messages API request.
type apiTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// requestTools returns the tools of a Messages API request.
func requestTools(t *testing.T, req *fakeapi.Request) []apiTool {
	t.Helper()
	var body struct {
		Tools []apiTool `json:"tools"`
	}
	if err := json.Unmarshal(req.Body, &body); err != nil {
		t.Fatalf("request %d is not JSON: %v", req.Seq, err)
	}
	return body.Tools
}

// The ids of the fake model's tool calls, to tell their results apart.
const (
	searchID     = "toolu_intermem_search"
	toolSearchID = "toolu_intermem_toolsearch"
)

// toolUse is fakeapi.ToolUse with a chosen id.
func toolUse(id, name string, input any) fakeapi.Reply {
	r := fakeapi.ToolUse(name, input)
	r.Blocks[0].ID = id
	return r
}

// How a request offers a tool.
const (
	notOffered = iota
	// offeredUpfront: its definition is in the request's tools.
	offeredUpfront
	// offeredDeferred: the request has the ToolSearch tool and names the
	// tool in its list of deferred tools (Claude Code 2.1.332).
	offeredDeferred
)

// offered says how req offers the tool called name and, when upfront,
// the bytes of its definition.
func offered(t *testing.T, req *fakeapi.Request, name string) (int, int) {
	t.Helper()
	search := false
	for _, tl := range requestTools(t, req) {
		if tl.Name == name {
			var schema struct {
				Type string `json:"type"`
			}
			if json.Unmarshal(tl.InputSchema, &schema) != nil || schema.Type != "object" || tl.Description == "" {
				t.Errorf("%s has description %q and input schema %s", tl.Name, tl.Description, tl.InputSchema)
			}
			b, _ := json.Marshal(tl)
			return offeredUpfront, len(b)
		}
		search = search || tl.Name == "ToolSearch"
	}
	if search {
		for _, s := range texts(req.Body) {
			if slices.Contains(strings.Split(s, "\n"), name) {
				return offeredDeferred, 0
			}
		}
	}
	return notOffered, 0
}

// TestMCPDeclared checks the manifest's MCP server the way a user's Claude
// Code sees it: `claude plugin validate --strict` stays clean with it
// declared (and, where the client has --json, lists it among what the
// plugin provides), and it runs a binary that scripts/build.sh built from cmd/,
// directly: the hooks/run launcher drains stdin when the binary is
// missing, which for an MCP server (whose stdin stays open for the whole
// session) would leave Claude Code waiting on a server that never
// answers, instead of failing at once.
func TestMCPDeclared(t *testing.T) {
	begin(t)
	mcpPiece.require(t)
	t.Parallel()
	u := newUser(t)
	manifest := filepath.Join(repo, ".claude-plugin", "plugin.json")
	requireClean(t, u.cli(t, "plugin", "validate", "--strict", manifest))
	requireClean(t, u.cli(t, "plugin", "validate", "--strict", repo))

	var m struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	readJSON(t, manifest, &m)
	s, ok := m.MCPServers["intermem"]
	if !ok || len(m.MCPServers) != 1 {
		t.Fatalf("the manifest declares MCP servers %v; want exactly one, intermem", m.MCPServers)
	}
	if s.Command != "${CLAUDE_PLUGIN_ROOT}/bin/intermem-mcp" || len(s.Args) != 0 {
		t.Errorf("the intermem MCP server runs %q %q; want ${CLAUDE_PLUGIN_ROOT}/bin/intermem-mcp", s.Command, s.Args)
	}
	if st, err := os.Stat(filepath.Join(repo, "bin", "intermem-mcp")); err != nil || st.Mode()&0o111 == 0 {
		t.Errorf("bin/intermem-mcp is not built (scripts/build.sh)")
	}

	// Newer clients say what the plugin provides; 2.1.197 has no --json.
	out, err := u.cliErr("plugin", "validate", "--strict", "--json", manifest)
	if strings.Contains(out, "unknown option '--json'") {
		t.Logf("Claude Code %s has no `plugin validate --json`; its inventory of MCP servers is not checked", claudeVersion)
		return
	}
	if err != nil {
		t.Fatalf("claude plugin validate --strict --json: %v\n%s", err, out)
	}
	var v struct {
		Provides struct {
			MCPServers []struct {
				Name, Type, Target string
				Args               []string
			} `json:"mcpServers"`
		} `json:"provides"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("validate --json: %v\n%s", err, out)
	}
	if got := v.Provides.MCPServers; len(got) != 1 || got[0].Name != "intermem" || got[0].Type != "stdio" ||
		got[0].Target != "${CLAUDE_PLUGIN_ROOT}/bin/intermem-mcp" || len(got[0].Args) != 0 {
		t.Errorf("validate --json provides MCP servers %+v; want intermem, stdio, ${CLAUDE_PLUGIN_ROOT}/bin/intermem-mcp", got)
	}
}

// TestMCPTools runs a session in which the fake model calls memory_search
// and checks, on what Claude Code sent to the API: intermem's five tools
// are offered under their plugin names — with their descriptions and
// input schemas in every request (2.1.197), or by name, their definitions
// loaded through ToolSearch (2.1.332); what that costs each session is
// logged — the call is allowed by a server-wide permission rule (in -p
// mode nothing prompts, so an unlisted MCP tool is refused); and the next
// request carries intermem's ranked results, found in a solution document
// and in auto-memory of the project the session runs in. A session
// started in the home directory is offered no intermem tool at all.
func TestMCPTools(t *testing.T) {
	begin(t)
	mcpPiece.require(t)
	cliPiece.require(t)
	t.Parallel()
	u := newUser(t)
	proj := gitRepo(t, scratch(t), "proj")
	writeFile(t, filepath.Join(proj, "docs", "solutions", "build-errors", "zebra-stripes.md"), `---
title: Zebra stripes break the MCPMARKER build
date: 2026-02-04
tags: [build, zebra]
---
# Zebra stripes break the MCPMARKER build

## Problem
The build fails with "stripe overflow" when the zebra table has more than
255 stripes.

## Solution
Split the table in two.
`)
	writeFile(t, filepath.Join(u.observe(t, proj).MemoryDir, "MEMORY.md"),
		"# Memory\n\n- MCPMARKER-MEMORY: zebra stripes are counted from one, not zero\n")

	search := mcpToolName(t, "memory_search")
	script := func(req *fakeapi.Request) fakeapi.Reply {
		if res := req.ToolResults(); len(res) > 0 {
			if res[0].ToolUseID == toolSearchID && !res[0].IsError {
				return toolUse(searchID, search, map[string]any{"query": "zebra stripes", "limit": 5})
			}
			return fakeapi.Text(fakeapi.ToolDoneReply)
		}
		switch mode, _ := offered(t, req, search); mode {
		case offeredUpfront:
			return toolUse(searchID, search, map[string]any{"query": "zebra stripes", "limit": 5})
		case offeredDeferred:
			return toolUse(toolSearchID, "ToolSearch", map[string]any{"query": "select:" + search})
		}
		return fakeapi.Default(req)
	}
	r := u.claude(t, proj, "what do we know about zebra stripes?", model(script),
		args("--allowedTools", "mcp__plugin_"+pluginName(t)+"_intermem"))

	reqs := r.api.Messages()
	if len(reqs) == 0 {
		t.Fatalf("%s: no request reached the fake API", r.label)
	}
	// Older clients send every tool's definition in every request; newer
	// ones send MCP tools by name only ("deferred"), and the model loads
	// a definition with ToolSearch when it needs it.
	mode, cost := offered(t, reqs[0], mcpToolName(t, "memory_search"))
	for _, tool := range mcpTools {
		if m, _ := offered(t, reqs[0], mcpToolName(t, tool)); m == notOffered || m != mode {
			t.Errorf("%s: the first request does not offer %s as it offers memory_search\n%s", r.label, mcpToolName(t, tool), r.debugExcerpt(mcpLineRE))
		}
	}
	switch mode {
	case offeredUpfront:
		cost = 0
		for _, tool := range mcpTools {
			_, c := offered(t, reqs[0], mcpToolName(t, tool))
			cost += c
		}
		t.Logf("Claude Code %s sends intermem's tool definitions in every request: %d bytes, about %d tokens (bytes/3, as inject.Tokens)", claudeVersion, cost, (cost+2)/3)
	case offeredDeferred:
		names := 0
		for _, tool := range mcpTools {
			names += len(mcpToolName(t, tool)) + 1
		}
		t.Logf("Claude Code %s sends intermem's tools by name only: %d bytes, about %d tokens; a definition is loaded with ToolSearch when used", claudeVersion, names, (names+2)/3)
		// ToolSearch answers with a tool_reference, and the requests
		// after it carry the tool's definition, which the API expands.
		var ref string
		for _, b := range r.toolResults() {
			if b.ToolUseID == toolSearchID {
				ref = string(b.Content)
			}
		}
		if !strings.Contains(ref, `"tool_reference"`) || !strings.Contains(ref, search) {
			t.Errorf("%s: ToolSearch did not load %s: %s", r.label, search, ref)
		}
		defined := 0
		for _, req := range reqs[1:] {
			if m, c := offered(t, req, search); m == offeredUpfront {
				defined = c
			}
		}
		if defined == 0 {
			t.Errorf("%s: no request after ToolSearch carries the definition of %s", r.label, search)
		} else {
			t.Logf("memory_search's definition, sent once loaded: %d bytes, about %d tokens", defined, (defined+2)/3)
		}
	default:
		t.Fatalf("%s: the first request does not offer %s, upfront or deferred\n%s", r.label, search, r.debugExcerpt(mcpLineRE))
	}

	var res []fakeapi.Block
	for _, b := range r.toolResults() {
		if b.ToolUseID == searchID {
			res = append(res, b)
		}
	}
	if len(res) != 1 {
		t.Fatalf("%s: %d memory_search results reached the model, want 1\n%s", r.label, len(res), r.debugExcerpt(mcpLineRE))
	}
	text := res[0].ResultText()
	if res[0].IsError {
		t.Fatalf("%s: memory_search failed or was refused: %s", r.label, text)
	}
	var out struct {
		Results []struct {
			ID, Source, Where, Title, Text, Status string
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		t.Fatalf("%s: the tool result is not memory_search's JSON (%v):\n%s", r.label, err, text)
	}
	var got []string
	for _, h := range out.Results {
		got = append(got, h.Source+" "+h.Where)
	}
	want := []string{"compound docs/solutions/build-errors/zebra-stripes.md:1", "auto-memory memory/MEMORY.md:3"}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("%s: memory_search results %q lack %q:\n%s", r.label, got, w, text)
		}
	}
	if !strings.Contains(text, "Zebra stripes break the MCPMARKER build") || !strings.Contains(text, "MCPMARKER-MEMORY") {
		t.Errorf("%s: the results lack the document's title or the memory's text:\n%s", r.label, text)
	}
	t.Logf("memory_search result as the model received it (%d bytes):\n%s", len(text), text)

	// In the home directory there is no project: the server offers no
	// tools, so nothing is paid for and nothing under HOME is read.
	home := u.claude(t, u.home, "hi")
	for _, req := range home.api.Messages() {
		for _, tool := range mcpTools {
			if m, _ := offered(t, req, mcpToolName(t, tool)); m != notOffered {
				t.Errorf("%s: a session in the home directory is offered %s", home.label, mcpToolName(t, tool))
			}
		}
	}
	if !strings.Contains(home.debug, `MCP server "plugin:`+pluginName(t)+`:intermem": Connection established`) {
		t.Errorf("%s: the MCP server did not connect in the home directory:\n%s", home.label, home.debugExcerpt(mcpLineRE))
	}
}

// TestMCPWriteCaller runs a session in which the fake model calls
// memory_write, and checks what intermem records about the caller against
// what the real client gives a plugin's MCP server: the session the server
// was started in (CLAUDE_CODE_SESSION_ID in its environment) is the
// session Claude Code reports; the tool call's id (_meta
// "claudecode/toolUseId") is the model's tool_use id; no agent is named,
// so none is recorded (pkg/mcpserver/caller.go).
func TestMCPWriteCaller(t *testing.T) {
	begin(t)
	mcpPiece.require(t)
	t.Parallel()
	u := newUser(t)
	proj := gitRepo(t, scratch(t), "proj")
	const writeID = "toolu_intermem_write"
	write := mcpToolName(t, "memory_write")
	call := func() fakeapi.Reply {
		return toolUse(writeID, write, map[string]any{"type": "insight", "title": "Zebra stripes", "content": "Zebra stripes are counted from one, not zero."})
	}
	script := func(req *fakeapi.Request) fakeapi.Reply {
		if res := req.ToolResults(); len(res) > 0 {
			if res[0].ToolUseID == toolSearchID && !res[0].IsError {
				return call()
			}
			return fakeapi.Text(fakeapi.ToolDoneReply)
		}
		switch mode, _ := offered(t, req, write); mode {
		case offeredUpfront:
			return call()
		case offeredDeferred:
			return toolUse(toolSearchID, "ToolSearch", map[string]any{"query": "select:" + write})
		}
		return fakeapi.Default(req)
	}
	r := u.claude(t, proj, "remember how zebra stripes are counted", model(script),
		args("--allowedTools", "mcp__plugin_"+pluginName(t)+"_intermem"))
	for _, b := range r.toolResults() {
		if b.ToolUseID == writeID && b.IsError {
			t.Fatalf("%s: memory_write failed: %s", r.label, b.ResultText())
		}
	}
	log, err := os.ReadFile(filepath.Join(proj, ".intermem", "written.jsonl"))
	if err != nil {
		t.Fatalf("%s: nothing written (%v)\n%s", r.label, err, r.debugExcerpt(mcpLineRE))
	}
	var rec struct {
		Title     string `json:"title"`
		AgentID   string `json:"agent_id"`
		SessionID string `json:"session_id"`
		ToolUseID string `json:"tool_use_id"`
	}
	if err := json.Unmarshal(log, &rec); err != nil {
		t.Fatalf("%s: written.jsonl is not one record (%v):\n%s", r.label, err, log)
	}
	if rec.Title != "Zebra stripes" || rec.SessionID != r.sessionID() || rec.ToolUseID != writeID || rec.AgentID != "" {
		t.Errorf("%s: the record says session %q, tool call %q, agent %q; want session %q, tool call %q, no agent:\n%s",
			r.label, rec.SessionID, rec.ToolUseID, rec.AgentID, r.sessionID(), writeID, log)
	}
}
