package e2e

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/intermem/intermem/e2e/fakeapi"
)

// A hookRun is one execution of one hook command, as Claude Code reported
// it: from the hook_response events of --include-hook-events, and, for
// SessionEnd (which runs after the last event is printed), from the debug
// log line "SessionEnd:<reason> [<command>] completed with status <n>".
type hookRun struct {
	Event   string // SessionStart, Stop, SessionEnd, …
	Name    string // e.g. "SessionStart:startup", "SessionEnd:other"
	Command string // known from the debug log only
	Exit    int
	Outcome string // success|error|cancelled; "" when from the debug log
	Stdout  string
	Stderr  string
}

func (h hookRun) String() string {
	s := fmt.Sprintf("%s exit=%d", h.Name, h.Exit)
	if h.Outcome != "" {
		s += " outcome=" + h.Outcome
	}
	if h.Command != "" {
		s += " command=" + h.Command
	}
	if h.Stdout != "" {
		s += fmt.Sprintf(" stdout=%q", clip(h.Stdout, 500))
	}
	if h.Stderr != "" {
		s += fmt.Sprintf(" stderr=%q", clip(h.Stderr, 500))
	}
	return s
}

var sessionEndRE = regexp.MustCompile(`(SessionEnd:\S*) \[(.*)\] completed with status (-?\d+)`)

// hooks returns every hook execution of the run, in order.
func (r *run) hooks() []hookRun {
	var hs []hookRun
	sawEnd := false
	for _, e := range r.events {
		if e.Type != "system" || e.Subtype != "hook_response" {
			continue
		}
		h := hookRun{Event: e.HookEvent, Name: e.HookName, Outcome: e.Outcome, Stdout: e.Stdout, Stderr: e.Stderr, Exit: -1}
		if e.ExitCode != nil {
			h.Exit = *e.ExitCode
		}
		sawEnd = sawEnd || h.Event == "SessionEnd"
		hs = append(hs, h)
	}
	if !sawEnd {
		for _, m := range sessionEndRE.FindAllStringSubmatch(r.debug, -1) {
			code, _ := strconv.Atoi(m[3])
			hs = append(hs, hookRun{Event: "SessionEnd", Name: m[1], Command: m[2], Exit: code})
		}
	}
	return hs
}

// hooksFor returns the executions of the hooks of one event.
func (r *run) hooksFor(event string) []hookRun {
	var hs []hookRun
	for _, h := range r.hooks() {
		if h.Event == event {
			hs = append(hs, h)
		}
	}
	return hs
}

// silentEvents are the events whose hooks must print nothing: any JSON
// there can force another model turn, and plain text is noise.
var silentEvents = map[string]bool{"Stop": true, "SubagentStop": true, "SessionEnd": true}

// hookTrouble matches the debug-log lines Claude Code writes when a hook
// misbehaves: a non-zero exit ("Hook Stop (Stop) error:"; the line may be
// logged as a quoted string), output that is not valid hook JSON, a
// SessionEnd hook that failed, timed out or was cancelled, and errors
// loading a plugin's hooks.
var hookTrouble = regexp.MustCompile(
	`Hook \S+ \(\w+\) error:` +
		`|Hook JSON output validation failed` +
		`|completed with status [^0]` +
		`|(?i:hook)[^\n]*(?:timed out|cancell?ed|failed)` +
		`|\[ERROR\][^\n]*\b(?i:hooks?|plugins?|skills?)\b`)

// checkHooks fails the test when any hook exited non-zero, did not finish,
// printed on Stop/SessionEnd, or made Claude Code log a hook error.
func (r *run) checkHooks() {
	r.t.Helper()
	var bad []string
	// A hook that started and never answered was killed: a timeout, or
	// the session ended under it.
	pending := map[string]event{}
	for _, e := range r.events {
		switch e.Subtype {
		case "hook_started":
			pending[e.HookID] = e
		case "hook_response":
			delete(pending, e.HookID)
		}
	}
	for _, e := range pending {
		bad = append(bad, "started and never finished: "+e.HookName)
	}
	for _, h := range r.hooks() {
		switch {
		case h.Exit != 0:
			bad = append(bad, "exited non-zero: "+h.String())
		case h.Outcome != "" && h.Outcome != "success":
			bad = append(bad, "did not succeed: "+h.String())
		case silentEvents[h.Event] && strings.TrimSpace(h.Stdout) != "":
			bad = append(bad, "printed on "+h.Event+": "+h.String())
		}
	}
	for _, l := range strings.Split(r.debug, "\n") {
		if hookTrouble.MatchString(l) {
			bad = append(bad, "debug log: "+clip(l, 400))
		}
	}
	for _, l := range strings.Split(r.stderr, "\n") {
		if strings.Contains(strings.ToLower(l), "hook") {
			bad = append(bad, "stderr: "+clip(l, 400))
		}
	}
	if len(bad) > 0 {
		r.t.Errorf("%s: hooks misbehaved:\n  %s\n%s", r.label, strings.Join(bad, "\n  "), r.context())
	}
}

// requireHooksRan fails the test unless the hooks of event ran exactly n
// times (n < 0: at least once).
func (r *run) requireHooksRan(event string, n int) []hookRun {
	r.t.Helper()
	hs := r.hooksFor(event)
	if (n < 0 && len(hs) == 0) || (n >= 0 && len(hs) != n) {
		want := strconv.Itoa(n)
		if n < 0 {
			want = "at least 1"
		}
		var all []string
		for _, h := range r.hooks() {
			all = append(all, h.String())
		}
		r.t.Fatalf("%s: %s hooks ran %d times, want %s; all hook runs:\n  %s\n%s",
			r.label, event, len(hs), want, strings.Join(all, "\n  "), r.context())
	}
	return hs
}

// sent reports whether marker appears in any string of any Messages API
// request body (system prompt, messages, tool definitions).
func (r *run) sent(marker string) bool {
	for _, req := range r.api.Messages() {
		for _, s := range texts(req.Body) {
			if strings.Contains(s, marker) {
				return true
			}
		}
	}
	return false
}

// requireSent fails the test unless marker reached the model.
func (r *run) requireSent(marker, what string) {
	r.t.Helper()
	if !r.sent(marker) {
		r.t.Errorf("%s: %s: %q is in no request to the model\n%s\n%s", r.label, what, marker, r.requestExcerpt(), r.context())
	}
}

// requireNotSent fails the test if marker reached the model.
func (r *run) requireNotSent(marker, what string) {
	r.t.Helper()
	if r.sent(marker) {
		r.t.Errorf("%s: %s: %q reached the model\n%s", r.label, what, marker, r.requestExcerpt())
	}
}

// requestExcerpt shows the start of each message of the first request:
// where MEMORY.md, CLAUDE.md, hook context and the skills list land.
func (r *run) requestExcerpt() string {
	reqs := r.api.Messages()
	if len(reqs) == 0 {
		return "--- the fake API received no Messages request"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "--- first of %d request(s) to the fake API:\n", len(reqs))
	for i, m := range reqs[0].Messages {
		for j, bl := range m.Blocks() {
			fmt.Fprintf(&b, "messages[%d].content[%d] role=%s %s: %s\n", i, j, m.Role, bl.Type, clip(bl.Text, 1500))
		}
	}
	return b.String()
}

// toolResults returns the tool_result blocks Claude Code sent back to the
// model, in order.
func (r *run) toolResults() []fakeapi.Block {
	var out []fakeapi.Block
	for _, req := range r.api.Messages() {
		out = append(out, req.ToolResults()...)
	}
	return out
}

// texts returns every string value in a JSON document.
func texts(body []byte) []string {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return []string{string(body)}
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}
