package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSynthesizeSkill checks that /intermem:synthesize is offered to the
// model as a skill and that invoking it expands the SKILL.md body into
// the request.
func TestSynthesizeSkill(t *testing.T) {
	begin(t)
	skillPiece.require(t)
	t.Parallel()
	u := newUser(t)
	proj := mkdir(t, scratch(t), "proj")
	skill := pluginName(t) + ":synthesize"
	body := skillBody(t, filepath.Join(repo, skillPiece.path))

	t.Run("listed", func(t *testing.T) {
		r := u.claude(t, proj, "hi")
		if in := r.init(); in == nil || !slices.Contains(in.SlashCommands, skill) {
			t.Errorf("%s: /%s is not among the slash commands of the session", r.label, skill)
		}
		r.requireSent("- "+skill+":", "the skills list")
	})

	t.Run("expands", func(t *testing.T) {
		r := u.claude(t, proj, "/"+skill)
		r.requireSent(body, "the SKILL.md body")
		r.requireSent("Base directory for this skill: "+filepath.Join(repo, "skills", "synthesize"), "the skill's base directory")
	})
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
