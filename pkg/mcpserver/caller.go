package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What the server knows about who calls a tool.
//
// Observed with the real client (Claude Code 2.1.197 and 2.1.332, a
// plugin's stdio server, e2e):
//
//   - The environment carries CLAUDE_CODE_SESSION_ID, the id of the
//     session the server was started in (the hooks' session_id), and
//     CLAUDE_PROJECT_DIR. It is fixed when the process starts: a session
//     that starts later in the same process (/clear gives a new
//     session_id) is not seen by the server. memory_write records it as
//     the memory's session_id.
//   - Each tools/call carries _meta "claudecode/toolUseId": the id of the
//     model's tool_use block (2.1.332 adds its client info and protocol
//     version per request). The block is in the transcript of whoever made
//     the call: the session's <session>.jsonl, or a subagent's
//     <session>/subagents/agent-<agent_id>.jsonl. memory_write records it
//     as the memory's tool_use_id.
//   - Nothing names the calling agent: no environment variable (AI_AGENT
//     is the product, "claude-code_<version>_harness", the same for every
//     agent), and the client sends _meta "claudecode/agentId" and
//     "claudecode/agentType" only to particular servers of its own (read
//     in 2.1.332's bundle), never to a plugin's stdio server. So a memory
//     written through memory_write has no agent_id; the model is not asked
//     for one (it could claim any), and the tool_use_id is what leads to
//     the agent, through the transcripts.

// toolUseMeta is the _meta key under which Claude Code names the tool call.
const toolUseMeta = "claudecode/toolUseId"

// maxToolUseID bounds a tool call id taken from a request.
const maxToolUseID = 128

type toolUseKey struct{}

// withToolUse returns ctx carrying the tool call id of req, when it names
// a plausible one (letters, digits, "_" and "-", at most maxToolUseID
// bytes): it comes from the client and ends up in a file.
func withToolUse(ctx context.Context, req *mcp.CallToolRequest) context.Context {
	if req == nil || req.Params == nil {
		return ctx
	}
	id, _ := req.Params.GetMeta()[toolUseMeta].(string)
	if id == "" || len(id) > maxToolUseID {
		return ctx
	}
	for _, c := range id {
		if !(c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return ctx
		}
	}
	return context.WithValue(ctx, toolUseKey{}, id)
}

// ToolUseID is the id of the tool call ctx serves ("" when the client
// named none).
func ToolUseID(ctx context.Context) string {
	id, _ := ctx.Value(toolUseKey{}).(string)
	return id
}
