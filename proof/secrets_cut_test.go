package proof

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
)

// cutSource is where a source cuts a text into a title, and how a line
// of text is laid out in one of its files.
type cutSource struct {
	name string
	cut  int // the bytes of the text a title keeps
	// file returns the path (relative to the project, or "memory/…" for
	// auto-memory) and the bytes that make one entry of text n.
	file func(n int, text string) (string, string)
}

func jsonQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// cutSources are the sources that cut a title from a text, each with the
// length it cuts at (auto-memory redacts before cutting: here to stay so).
var cutSources = []cutSource{
	{"instructions", 120, func(n int, t string) (string, string) { return "CLAUDE.md", "- " + t + "\n\n" }},
	{"promoted", 120, func(n int, t string) (string, string) {
		return "CLAUDE.md", fmt.Sprintf("- %s <!-- intermem:%016x -->\n\n", t, 0xc0ffee0000+n)
	}},
	{"clavain", 300, func(n int, t string) (string, string) {
		return fmt.Sprintf(".clavain/learnings/l%03d.md", n), "---\nlastConfirmed: 2026-10-01\n---\n" + t + "\n"
	}},
	{"compound", 300, func(n int, t string) (string, string) {
		return fmt.Sprintf("docs/solutions/cut/s%03d.md", n), "---\ntitle: " + jsonQuote(t) + "\ndate: 2026-10-01\n---\n# Solution\n\n## Problem\nplain words\n"
	}},
	{"interfluence", 120, func(n int, t string) (string, string) {
		return ".interfluence/learnings-raw.log", fmt.Sprintf("--- 2026-10-01T10:%02d:%02dZ | src/a.go | CONTEXT:style ---\nNEW: %s\n", n/60, n%60, t)
	}},
	{"interfluence", 60, func(n int, t string) (string, string) { // "file: old → new", 60 bytes of each
		return ".interfluence/learnings-raw.log", fmt.Sprintf("--- 2026-10-01T11:%02d:%02dZ | src/b.go | CONTEXT:style ---\nOLD: plain words before\nNEW: %s\n", n/60, n%60, t)
	}},
	{"continuity", 120, func(n int, t string) (string, string) {
		return ".intermem/continuity.jsonl", fmt.Sprintf(`{"kind":"decision","id":"d%03d","text":%s,"why":"plain words","phase":1,"time":"2026-10-01T10:00:00Z"}`+"\n", n, jsonQuote(t))
	}},
	{"auto-memory", 120, func(n int, t string) (string, string) { return "memory/MEMORY.md", "- " + t + "\n" }},
}

// TestSecretsCutInTitles: a secret in a text a source cuts into a title
// (interfluence's observations, instruction and promoted statements,
// clavain learnings, compound titles, continuity decisions) is redacted
// before the cut, so no part of it reaches any sink. Secrets of several
// kinds are planted so that the cut falls inside them (a few bytes in,
// half-way, a few bytes from the end); after a session end catalogues
// them, no 8-byte piece may be in the store's bytes, search (human and
// --json), get (human and --json) of every hit, provenance, memory_search
// over MCP, intermem context or the SessionStart context.
func TestSecretsCutInTitles(t *testing.T) {
	recs := readSecretCorpus(t)
	byFormat := map[string]secretRecord{}
	for _, r := range recs {
		byFormat[r.format] = r
	}
	formats := []string{"github-token/ghp", "aws-secret-key", "stripe-key", "password/label", "jwt", "slack-token",
		"url-credentials/postgres", "token/prose-is", "openai-key", "password/prose-is"}
	files := map[string]string{"CLAUDE.md": "# Project\n\n## Rules\n\n"}
	memory := map[string]string{"MEMORY.md": "# Memory\n\n"}
	var ps []planted
	perSource := map[string]int{}
	n := 0
	for k, src := range cutSources {
		for _, format := range formats {
			r, ok := byFormat[format]
			if !ok {
				t.Fatalf("secrets.txt has no %s record", format)
			}
			v := variant(r.value, k+1) // a leak names its source
			line := strings.ReplaceAll(strings.TrimPrefix(r.bullet, "- "), r.value, v)
			at := strings.Index(line, v)
			var texts []string
			for _, in := range []int{5, len(v) / 2, len(v) - 2} {
				// The text before the secret, so that the cut keeps in bytes
				// of it ("- " before a statement or a memory).
				f := src.cut - at - in
				if src.name == "instructions" || src.name == "promoted" || src.name == "auto-memory" {
					f -= 2
				}
				tag := fmt.Sprintf("cutw%03d ", n)
				if f < len(tag)+len("lorem ipsum dolor ") {
					continue
				}
				text := tag + filler(f-len(tag)) + line
				path, body := src.file(n, text)
				if name, ok := strings.CutPrefix(path, "memory/"); ok {
					memory[name] += body
				} else {
					files[path] += body
				}
				texts = append(texts, text)
				perSource[src.name]++
				n++
			}
			// One planted secret for the three cuts: the leak index takes a
			// piece that several planted secrets share for a common one.
			if len(texts) > 0 {
				ps = append(ps, planted{rec: r, field: src.name + " title", value: v, text: strings.Join(texts, "\n")})
			}
		}
	}
	f := newFixture(t, files, memory)
	sinks := map[string][]byte{}
	run := func(name string, stdin string, bin string, args ...string) result {
		r := f.run(stdin, nil, bin, args...)
		if r.code != 0 {
			t.Fatalf("%s: exit %d\n%s", name, r.code, r.stderr)
		}
		sinks["stdout of "+name] = []byte(r.stdout)
		sinks["stderr of "+name] = []byte(r.stderr)
		return r
	}
	run("SessionEnd hook", payload(t, "SessionEnd.prompt_input_exit.json", "cut-end", f.root), "intermem-hook")
	db, err := os.ReadFile(f.storePath())
	if err != nil {
		t.Fatalf("the session end made no store: %v", err)
	}
	sinks["the store's bytes"] = db

	// Every planted entry is found, by source, and each hit shown whole.
	ids, hits := map[string]bool{}, map[string]bool{} // sources searched, entries found
	for _, src := range cutSources {
		if ids[src.name] {
			continue // searched already
		}
		ids[src.name] = true
		r := run("search --json --source "+src.name, "", "intermem", "search", "lorem ipsum dolor", "--source", src.name, "--limit", "1000", "--json")
		var res struct {
			Results []struct {
				ID string `json:"id"`
			} `json:"results"`
		}
		decodeJSON(t, "search --json", r.stdout, &res)
		if len(res.Results) < perSource[src.name] {
			t.Errorf("search finds %d entries of %s; %d were planted", len(res.Results), src.name, perSource[src.name])
		}
		for _, h := range res.Results {
			hits[h.ID] = true
		}
		run("search --source "+src.name, "", "intermem", "search", "lorem ipsum dolor", "--source", src.name, "--limit", "1000")
	}
	sorted := make([]string, 0, len(hits))
	for id := range hits {
		sorted = append(sorted, id)
	}
	sort.Strings(sorted)
	for _, id := range sorted {
		run("get "+id, "", "intermem", "get", id)
		run("get --json "+id, "", "intermem", "get", id, "--json")
	}
	run("provenance "+sorted[0], "", "intermem", "provenance", sorted[0])

	// memory_search over MCP, a search per source.
	var req strings.Builder
	req.WriteString(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"proof","version":"1"}}}` + "\n")
	req.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	for i, src := range cutSources {
		fmt.Fprintf(&req, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"memory_search","arguments":{"query":"lorem ipsum dolor","source":%q,"limit":50}}}`+"\n", i+2, src.name)
	}
	mcp := run("intermem-mcp", req.String(), "intermem-mcp")
	if got := strings.Count(mcp.stdout, `"structuredContent"`); got != len(cutSources) {
		t.Errorf("intermem-mcp answered %d searches with results, want %d:\n%s", got, len(cutSources), mcp.stdout)
	}

	// The session's context.
	run("intermem context", "", "intermem", "context")
	r := run("SessionStart hook", payload(t, "SessionStart.startup.interactive.json", "cut-start", f.root), "intermem-inject")
	var inj struct {
		HookSpecificOutput struct{ AdditionalContext string } `json:"hookSpecificOutput"`
	}
	decodeJSON(t, "SessionStart output", r.stdout, &inj)
	sinks["injected context (decoded)"] = []byte(inj.HookSpecificOutput.AdditionalContext)

	ix := newLeakIndex(ps)
	var planted []byte
	for _, p := range ps {
		planted = append(append(planted, p.text...), 0)
	}
	found := ix.leaks(planted)
	for i, p := range ps {
		if _, ok := found[i]; !ok {
			t.Errorf("the leak detector does not find %s in the text it was planted in", p)
		}
	}
	names := make([]string, 0, len(sinks))
	for name := range sinks {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		for i, where := range ix.leaks(sinks[name]) {
			t.Errorf("LEAK: %s reaches %s: %s", ps[i], name, where)
		}
	}
	t.Logf("%d secrets planted in %d entries of %d sources, the cut inside each, %d entries shown whole, %d sinks checked", len(ps), n, len(cutSources), len(sorted), len(names))
}

// filler is n bytes of plain words.
func filler(n int) string {
	const words = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor "
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(words)
	}
	return b.String()[:n]
}
