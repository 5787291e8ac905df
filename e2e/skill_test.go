package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/intermem/intermem/e2e/fakeapi"
)

// planRE matches the plan command line of the expanded synthesize skill,
// after Claude Code substituted ${CLAUDE_PLUGIN_ROOT} and $ARGUMENTS.
var planRE = regexp.MustCompile(`(?m)^"[^"\n]*/bin/intermem-synthesize" plan\b.*$`)

// followSkill is a fake model that does what the expanded skill says: it
// runs the plan command line with the Bash tool, then stops.
func followSkill(req *fakeapi.Request) fakeapi.Reply {
	if req.HasToolResult() {
		return fakeapi.Text(fakeapi.ToolDoneReply)
	}
	if cmd := planRE.FindString(req.LastTurnText()); cmd != "" {
		return fakeapi.ToolUse("Bash", map[string]string{"command": cmd, "description": "Plan the synthesis"})
	}
	return fakeapi.Default(req)
}

// TestSynthesizeSkill checks, in one `claude -p "/intermem:synthesize"`
// session, that the skill is offered (it is a slash command and in the
// skills list the model sees), that invoking it expands the SKILL.md body
// into the request, and that the
// plan command the body tells the model to run is allowed by the skill's
// allowed-tools and runs: in -p mode nothing prompts, so a command the
// rules do not cover is refused.
func TestSynthesizeSkill(t *testing.T) {
	begin(t)
	skillPiece.require(t)
	synthesizePiece.require(t)
	t.Parallel()
	u := newUser(t)
	proj := mkdir(t, scratch(t), "proj")
	skill := pluginName(t) + ":synthesize"
	r := u.claude(t, proj, "/"+skill, model(followSkill))
	if in := r.init(); in == nil || !slices.Contains(in.SlashCommands, skill) {
		t.Errorf("%s: /%s is not among the session's slash commands", r.label, skill)
	}
	r.requireSent("- "+skill+":", "the skills list")
	r.requireSent(skillBody(t, filepath.Join(repo, skillPiece.path)), "the SKILL.md body")
	r.requireSent("Base directory for this skill: "+filepath.Join(repo, "skills", "synthesize"), "the skill's base directory")

	res := r.toolResults()
	if len(res) == 0 {
		t.Fatalf("%s: the skill's plan command never ran (no tool_result); the expanded skill has no line matching %s\n%s",
			r.label, planRE, r.requestExcerpt())
	}
	if out := res[0].ResultText(); res[0].IsError || strings.Contains(strings.ToLower(out), "permission") {
		t.Errorf("%s: the plan command failed or was refused:\n%s", r.label, out)
	} else {
		t.Logf("plan output: %s", clip(out, 400))
	}
}

// skillBody returns the first line of a SKILL.md body (after the
// frontmatter) that has no placeholder for Claude Code to substitute.
func skillBody(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if rest, ok := strings.CutPrefix(s, "---\n"); ok {
		if _, after, ok := strings.Cut(rest, "\n---\n"); ok {
			s = after
		}
	}
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); len(l) > 10 && !strings.Contains(l, "$") {
			return l
		}
	}
	t.Fatalf("%s has no body line to look for", path)
	return ""
}
