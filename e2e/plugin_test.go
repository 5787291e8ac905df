package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// hookDecl is one hook command declared in the plugin's hooks.json.
type hookDecl struct {
	Event   string   `json:"-"`
	Matcher string   `json:"-"`
	Type    string   `json:"type"`
	Command string   `json:"command"`
	Args    []string `json:"args"`
	Timeout float64  `json:"timeout"`
}

// declaredHooks reads hooks.json.
func declaredHooks(t *testing.T) []hookDecl {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repo, "hooks.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Hooks map[string][]struct {
			Matcher string     `json:"matcher"`
			Hooks   []hookDecl `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("hooks.json: %v", err)
	}
	var hs []hookDecl
	for event, groups := range doc.Hooks {
		for _, g := range groups {
			for _, h := range g.Hooks {
				h.Event, h.Matcher = event, g.Matcher
				hs = append(hs, h)
			}
		}
	}
	sort.Slice(hs, func(i, j int) bool { return hs[i].Event < hs[j].Event })
	return hs
}

// declaredSkills returns the names of the skills under skills/.
func declaredSkills(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repo, "skills", "*", "SKILL.md"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(filepath.Dir(f)))
	}
	sort.Strings(names)
	return names
}

// pluginName is the name in the plugin manifest.
func pluginName(t *testing.T) string {
	t.Helper()
	var m struct {
		Name string `json:"name"`
	}
	readJSON(t, filepath.Join(repo, ".claude-plugin", "plugin.json"), &m)
	return m.Name
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestPluginValidates checks the plugin the way the catalog and a user's
// Claude Code see it: `claude plugin validate --strict` passes with no
// warning on the manifest and on the repository (which is also a
// marketplace), and Claude Code's inventory of the plugin lists every hook
// of hooks.json and every skill under skills/.
func TestPluginValidates(t *testing.T) {
	begin(t)
	t.Parallel()
	u := newUser(t)
	manifest := filepath.Join(repo, ".claude-plugin", "plugin.json")

	t.Run("manifest", func(t *testing.T) {
		out := u.cli(t, "plugin", "validate", "--strict", manifest)
		requireClean(t, out)
		if !strings.Contains(out, "Validating plugin manifest: "+manifest) {
			t.Errorf("validate did not check the plugin manifest at %s:\n%s", manifest, out)
		}
	})

	t.Run("repository", func(t *testing.T) {
		// With .claude-plugin/marketplace.json present, validate on the
		// repository checks the marketplace manifest (and, in newer
		// clients, the plugin it lists).
		out := u.cli(t, "plugin", "validate", "--strict", repo)
		requireClean(t, out)
	})

	t.Run("json", func(t *testing.T) {
		out, err := u.cliErr("plugin", "validate", "--strict", "--json", manifest)
		if strings.Contains(out, "unknown option '--json'") {
			t.Skipf("Claude Code %s has no `plugin validate --json` (later versions do); the inventory is checked by the inventory subtest", claudeVersion)
		}
		if err != nil {
			t.Fatalf("claude plugin validate --strict --json %s: %v\n%s", manifest, err, out)
		}
		var v struct {
			Success  bool   `json:"success"`
			Target   string `json:"target"`
			Manifest struct {
				Errors   []json.RawMessage `json:"errors"`
				Warnings []json.RawMessage `json:"warnings"`
			} `json:"manifest"`
			Provides struct {
				Hooks []struct {
					Event   string   `json:"event"`
					Command string   `json:"command"`
					Args    []string `json:"args"`
				} `json:"hooks"`
				Skills []string `json:"skills"`
			} `json:"provides"`
		}
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("validate --json: %v\n%s", err, out)
		}
		if !v.Success || len(v.Manifest.Errors) > 0 || len(v.Manifest.Warnings) > 0 {
			t.Errorf("validate --json: success=%v errors=%s warnings=%s", v.Success, v.Manifest.Errors, v.Manifest.Warnings)
		}
		if !strings.HasSuffix(v.Target, "/.claude-plugin/plugin.json") {
			t.Errorf("validate --json checked %q, want the manifest at .claude-plugin/plugin.json", v.Target)
		}
		var got, want []string
		for _, h := range v.Provides.Hooks {
			got = append(got, h.Event+" "+h.Command+" "+strings.Join(h.Args, " "))
		}
		for _, h := range declaredHooks(t) {
			want = append(want, h.Event+" "+h.Command+" "+strings.Join(h.Args, " "))
		}
		sort.Strings(got)
		sort.Strings(want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("validate --json provides hooks\n  %s\nhooks.json declares\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}
		var skills []string
		for _, s := range declaredSkills(t) {
			skills = append(skills, pluginName(t)+":"+s)
		}
		sort.Strings(v.Provides.Skills)
		if !reflect.DeepEqual(v.Provides.Skills, skills) && (len(skills) > 0 || len(v.Provides.Skills) > 0) {
			t.Errorf("validate --json provides skills %v, skills/ holds %v", v.Provides.Skills, skills)
		}
	})

	t.Run("inventory", func(t *testing.T) {
		// `plugin details` lists what a session loads: the events that
		// have hooks (its count is of events, not of commands) and the
		// skills by name.
		out := u.cli(t, "--plugin-dir", repo, "plugin", "details", pluginName(t))
		m := regexp.MustCompile(`Hooks \((\d+)\)\s*(.*)`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("plugin details lists no hooks:\n%s", out)
		}
		wantEvents := map[string]bool{}
		for _, h := range declaredHooks(t) {
			wantEvents[h.Event] = true
		}
		if got := listed(m[2]); m[1] != strconv.Itoa(len(wantEvents)) || !sameSet(got, wantEvents) {
			t.Errorf("plugin details lists hooks for %s events %v; hooks.json declares hooks for %v\n%s",
				m[1], keys(got), keys(wantEvents), out)
		}
		m = regexp.MustCompile(`Skills \((\d+)\)\s*(.*)`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("plugin details lists no skills:\n%s", out)
		}
		wantSkills := map[string]bool{}
		for _, s := range declaredSkills(t) {
			wantSkills[s] = true
		}
		if got := listed(m[2]); !sameSet(got, wantSkills) {
			t.Errorf("plugin details lists skills %v; skills/ holds %v\n%s", got, keys(wantSkills), out)
		}
	})

	t.Run("hook binaries", func(t *testing.T) {
		// Every hook goes through hooks/run to a binary that is built from
		// cmd/, and has an explicit timeout (SessionEnd's default budget
		// is 1.5 s).
		for _, h := range declaredHooks(t) {
			if h.Type != "command" || h.Command != "${CLAUDE_PLUGIN_ROOT}/hooks/run" || len(h.Args) == 0 {
				t.Errorf("%s hook %q %v: want type command, command ${CLAUDE_PLUGIN_ROOT}/hooks/run and the binary as args[0]", h.Event, h.Command, h.Args)
				continue
			}
			name := h.Args[0]
			if _, err := os.Stat(filepath.Join(repo, "cmd", name)); err != nil {
				t.Errorf("%s hook runs %s, which is not a command in cmd/", h.Event, name)
			}
			if st, err := os.Stat(filepath.Join(repo, "bin", name)); err != nil || st.Mode()&0o111 == 0 {
				t.Errorf("%s hook runs bin/%s, which is not built (scripts/build.sh)", h.Event, name)
			}
			if h.Timeout <= 0 {
				t.Errorf("%s hook %s has no explicit timeout", h.Event, name)
			}
		}
	})
}

// requireClean fails unless a text validate report passed without
// warnings. Newer clients append "plugin directory checks" (README, icon:
// what the public catalog asks for); they do not change the result and are
// not manifest warnings, so they are not counted.
func requireClean(t *testing.T, out string) {
	t.Helper()
	report, _, _ := strings.Cut(out, "Plugin directory checks")
	if !strings.Contains(out, "Validation passed") || strings.Contains(report, "⚠") ||
		regexp.MustCompile(`(?i)\bwarnings?\b`).MatchString(report) {
		t.Errorf("validate did not pass cleanly:\n%s", out)
	}
}

// listed splits "Stop, SessionEnd  (harness-only …)" into a set.
func listed(s string) map[string]bool {
	s, _, _ = strings.Cut(s, "  ")
	set := map[string]bool{}
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			set[f] = true
		}
	}
	return set
}

func sameSet(a, b map[string]bool) bool { return reflect.DeepEqual(a, b) }

func keys(m map[string]bool) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
