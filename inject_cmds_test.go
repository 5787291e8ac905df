package intermem_test

import (
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/tidwall/gjson"

	"github.com/intermem/intermem/pkg/cli"
)

// cmdCtxCheck is "ctxcheck FILE|stdout BUDGET [OUT]": FILE must hold
// exactly one JSON object, either the SessionStart hook's output
// ({"hookSpecificOutput":{"hookEventName":"SessionStart",
// "additionalContext":…}}) or "intermem context --json" ({"context":…}),
// whose context is non-empty valid UTF-8 of at most 3 × BUDGET bytes and
// fewer than 9,000 characters (UTF-16 code units, as Claude Code counts),
// holding no character cli.Unsafe rejects (controls, bidi, invisible).
// With OUT, the context is written there for cmp and grep.
func cmdCtxCheck(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: ctxcheck FILE|stdout BUDGET [OUT]")
	}
	data := ts.ReadFile(args[0])
	budget, err := strconv.Atoi(args[1])
	ts.Check(err)
	trimmed := strings.TrimSpace(data)
	if !strings.HasPrefix(trimmed, "{") || !gjson.Valid(trimmed) {
		ts.Fatalf("%s is not one JSON object:\n%s", args[0], data)
	}
	var ctx string
	if h := gjson.Get(trimmed, "hookSpecificOutput"); h.Exists() {
		if ev := h.Get("hookEventName").String(); ev != "SessionStart" {
			ts.Fatalf("hookEventName is %q, want SessionStart", ev)
		}
		v := h.Get("additionalContext")
		if v.Type != gjson.String {
			ts.Fatalf("additionalContext is not a string: %s", v.Raw)
		}
		ctx = v.String()
	} else {
		v := gjson.Get(trimmed, "context")
		if v.Type != gjson.String {
			ts.Fatalf("no context in %s", trimmed)
		}
		ctx = v.String()
		if n := gjson.Get(trimmed, "tokens").Int(); int(n) != (len(ctx)+2)/3 {
			ts.Fatalf("tokens is %d for %d bytes", n, len(ctx))
		}
	}
	if ctx == "" {
		ts.Fatalf("empty context")
	}
	if !utf8.ValidString(ctx) {
		ts.Fatalf("context is not valid UTF-8")
	}
	for i, r := range ctx {
		if r != '\n' && cli.Unsafe(r) {
			ts.Fatalf("context holds %U at byte %d as itself: it must be escaped", r, i)
		}
	}
	if len(ctx) > 3*budget {
		ts.Fatalf("context is %d bytes, over 3 × %d", len(ctx), budget)
	}
	units := 0
	for _, r := range ctx {
		units++
		if r >= 0x10000 {
			units++
		}
	}
	if units >= 9000 {
		ts.Fatalf("context is %d characters", units)
	}
	ts.Logf("context: %d bytes of %d, %d characters", len(ctx), 3*budget, units)
	if len(args) == 3 {
		ts.Check(os.WriteFile(ts.MkAbs(args[2]), []byte(ctx+"\n"), 0o644))
	}
}
