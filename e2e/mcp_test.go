package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
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

// TestMCPDeclared checks the manifest's MCP server the way a user's Claude
// Code sees it: `claude plugin validate --strict` stays clean with it
// declared, and it runs a binary that scripts/build.sh built from cmd/,
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
}

// TestMCPTools runs a session in which the fake model calls memory_search
// and checks, on what Claude Code sent to the API: intermem's five tools
// are offered under their plugin names, with their descriptions and input
// schemas (their token cost is logged: it is paid in every session); the
// call is allowed by a server-wide permission rule (in -p mode nothing
// prompts, so an unlisted MCP tool is refused); and the next request
// carries intermem's ranked results, found in a solution document and in
// auto-memory of the project the session runs in. A session started in
// the home directory gets no intermem tools at all.
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
	var calls atomic.Int32
	script := func(req *fakeapi.Request) fakeapi.Reply {
		if req.HasToolResult() {
			return fakeapi.Text(fakeapi.ToolDoneReply)
		}
		for _, tl := range requestTools(t, req) {
			if tl.Name == search && calls.Add(1) == 1 {
				return fakeapi.ToolUse(search, map[string]any{"query": "zebra stripes", "limit": 5})
			}
		}
		return fakeapi.Default(req)
	}
	r := u.claude(t, proj, "what do we know about zebra stripes?", model(script),
		args("--allowedTools", "mcp__plugin_"+pluginName(t)+"_intermem"))

	reqs := r.api.Messages()
	if len(reqs) == 0 {
		t.Fatalf("%s: no request reached the fake API", r.label)
	}
	tools := map[string]apiTool{}
	var names []string
	for _, tl := range requestTools(t, reqs[0]) {
		tools[tl.Name] = tl
		names = append(names, tl.Name)
	}
	sort.Strings(names)
	cost := 0
	for _, tool := range mcpTools {
		tl, ok := tools[mcpToolName(t, tool)]
		if !ok {
			t.Errorf("%s: the first request offers no %s; its tools are %v\n%s", r.label, mcpToolName(t, tool), names,
				r.debugExcerpt(mcpLineRE))
			continue
		}
		var schema struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(tl.InputSchema, &schema) != nil || schema.Type != "object" || tl.Description == "" {
			t.Errorf("%s: %s has description %q and input schema %s", r.label, tl.Name, tl.Description, tl.InputSchema)
		}
		b, _ := json.Marshal(tl)
		cost += len(b)
	}
	t.Logf("intermem's tool definitions in the request: %d bytes, about %d tokens (bytes/3, as inject.Tokens)", cost, (cost+2)/3)

	res := r.toolResults()
	if len(res) != 1 {
		t.Fatalf("%s: %d tool results reached the model, want 1 (the memory_search call)\n%s", r.label, len(res), r.debugExcerpt(mcpLineRE))
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
		for _, tl := range requestTools(t, req) {
			if strings.HasPrefix(tl.Name, "mcp__plugin_"+pluginName(t)+"_intermem__") {
				t.Errorf("%s: a session in the home directory is offered %s", home.label, tl.Name)
			}
		}
	}
	if !strings.Contains(home.debug, `MCP server "plugin:`+pluginName(t)+`:intermem": Connection established`) {
		t.Errorf("%s: the MCP server did not connect in the home directory:\n%s", home.label, home.debugExcerpt(mcpLineRE))
	}
}
