// Package mcpserver is intermem-mcp: the MCP server through which the model
// pulls what the SessionStart index only points at. Claude Code starts it
// for each session (the plugin manifest declares it under mcpServers) and
// speaks JSON-RPC to it over stdin and stdout, through the official Go SDK
// (github.com/modelcontextprotocol/go-sdk), which does the handshake,
// version negotiation, framing and schema generation.
//
// # Tools
//
//	memory_search(query, source?, limit?, since?, until?, scope?, all_projects?)  ranked hits within a token budget
//	memory_get(id)                                         one whole entry with its overlay
//	memory_validate(id)                                    its citations checked now, with fixes
//	memory_provenance(id)                                  where it came from, what intermem did with it
//	memory_write(type, title, content, tags?, files?, source?)  store a memory
//
// Their names, descriptions and input schemas are sent to the model in
// every session (about 830 tokens, measured in TestTools and in the
// end-to-end suite), so descriptions say what a tool is for and no more,
// and limits are checked in code rather than spelled out in the schema.
//
// # Layers
//
// The server (this package's NewServer) owns the protocol side: argument
// decoding with messages a model can act on, the guard on everything
// returned (view.go: redact, screen and withhold, escape, budget), and
// panic recovery. It calls a Backend, one method per tool with typed
// requests and results; Catalog is the backend, over intermem's catalog
// through package retrieve, the functions the CLI's search, get and
// provenance call (one story: the same query, the same hits). The binary's Main resolves the
// project and serves over stdio (stdio.go).
//
// # Invariants
//
//   - Never a crash, never a protocol error for a bad call: a wrong argument,
//     an unknown id, a busy store and a panic are tool errors in the house
//     style ("intermem: error: …" and "intermem: hint: …"); the server keeps
//     answering. A line that is not JSON gets a JSON-RPC parse error and the
//     session goes on.
//   - Nothing held between calls: Catalog opens the store read-only for one
//     call, waits at most StoreWait for a writer, and closes it before
//     answering. A busy store makes search answer without the store's
//     confidence (and say so) and provenance a tool error naming the store.
//   - What reaches the model is context: every string is redacted, an item
//     any of whose text screen flags is withheld (listed by where and why,
//     never its text, with a notice not to act on it), and what is shown is
//     escaped. Search results are at most Options.SearchBudget tokens,
//     estimated as inject.Tokens estimates them.
//   - No project, no tools: in the home directory or at / (project.Resolve
//     refuses them) the server starts and offers nothing, silently — Claude
//     Code logs an MCP server's stderr as errors.
//   - --help and --version answer without reading stdin.
package mcpserver
