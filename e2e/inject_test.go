package e2e

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestInject checks that what intermem-inject prints at SessionStart
// reaches the model: the hook prints one JSON object whose
// hookSpecificOutput.additionalContext is under Claude Code's 10,000
// character inline limit and surfaces the memory Claude Code does not
// load by itself (a topic file) without repeating what it does load
// (MEMORY.md), and that text is in the request Claude Code sends.
func TestInject(t *testing.T) {
	begin(t)
	injectPiece.require(t)
	cliPiece.require(t)
	t.Parallel()
	u := newUser(t)
	proj := mkdir(t, scratch(t), "proj")
	seedMemory(t, u.observe(t, proj).MemoryDir, "INJECT-MEM")

	r := u.claude(t, proj, "hi")
	start := r.requireHooksRan("SessionStart", 1)[0]
	var out struct {
		HookSpecificOutput struct {
			HookEventName     string `json:"hookEventName"`
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(start.Stdout), &out); err != nil {
		t.Fatalf("%s: intermem-inject's stdout is not one JSON object (%v):\n%s", r.label, err, start.Stdout)
	}
	ctx := out.HookSpecificOutput.AdditionalContext
	switch {
	case out.HookSpecificOutput.HookEventName != "SessionStart":
		t.Errorf("%s: hookEventName is %q, want SessionStart", r.label, out.HookSpecificOutput.HookEventName)
	case strings.TrimSpace(ctx) == "":
		t.Fatalf("%s: intermem-inject gave no additionalContext for a project with memories:\n%s", r.label, start.Stdout)
	case len([]rune(ctx)) >= 10000:
		t.Errorf("%s: additionalContext is %d characters; Claude Code replaces 10,000 or more with a preview", r.label, len([]rune(ctx)))
	}
	if !strings.Contains(ctx, "INJECT-MEM-UNPOINTED") {
		t.Errorf("%s: additionalContext lacks the topic-file memory Claude Code does not load (INJECT-MEM-UNPOINTED):\n%s", r.label, ctx)
	}
	if strings.Contains(ctx, "errors are wrapped") {
		t.Errorf("%s: additionalContext repeats MEMORY.md, which Claude Code already loaded:\n%s", r.label, ctx)
	}
	t.Logf("additionalContext (%d chars):\n%s", len([]rune(ctx)), ctx)
	r.requireSent("SessionStart hook additional context: "+ctx, "intermem-inject's additionalContext")
}
