package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// marketplaceName is the name in .claude-plugin/marketplace.json.
func marketplaceName(t *testing.T) string {
	t.Helper()
	var m struct {
		Name    string `json:"name"`
		Plugins []struct {
			Name   string `json:"name"`
			Source any    `json:"source"`
		} `json:"plugins"`
	}
	readJSON(t, filepath.Join(repo, ".claude-plugin", "marketplace.json"), &m)
	if len(m.Plugins) != 1 || m.Plugins[0].Name != pluginName(t) || m.Plugins[0].Source != "./" {
		t.Fatalf("marketplace.json must list exactly this plugin (%s) with source \"./\"; it lists %+v", pluginName(t), m.Plugins)
	}
	return m.Name
}

// installedPlugin is one entry of `claude plugin list --json`.
type installedPlugin struct {
	ID          string `json:"id"`
	Enabled     bool   `json:"enabled"`
	Scope       string `json:"scope"`
	InstallPath string `json:"installPath"`
}

func (u *user) installedPlugins(t *testing.T) []installedPlugin {
	t.Helper()
	out := u.cli(t, "plugin", "list", "--json")
	var ps []installedPlugin
	if err := json.Unmarshal([]byte(out), &ps); err != nil {
		t.Fatalf("claude plugin list --json: %v\n%s", err, out)
	}
	return ps
}

// requireInstalled fails unless the plugin is installed and enabled.
func (u *user) requireInstalled(t *testing.T, id string) installedPlugin {
	t.Helper()
	for _, p := range u.installedPlugins(t) {
		if p.ID == id {
			if !p.Enabled {
				t.Fatalf("%s is installed but not enabled: %+v", id, p)
			}
			return p
		}
	}
	t.Fatalf("%s is not in claude plugin list: %+v", id, u.installedPlugins(t))
	return installedPlugin{}
}

var skillsPathRE = regexp.MustCompile(`Attempting to load skills from plugin (\S+) default skillsPath: (.*)/skills\n`)

// TestInstall installs the plugin the way a user does, offline and with a
// throwaway HOME: the repository is added as a marketplace and the plugin
// installed from it. A session started without --plugin-dir then loads
// the installed plugin and its hooks run.
func TestInstall(t *testing.T) {
	begin(t)
	t.Parallel()
	u := newUser(t)
	mkt, name := marketplaceName(t), pluginName(t)
	id := name + "@" + mkt

	out := u.cli(t, "plugin", "marketplace", "add", repo)
	if !strings.Contains(out, mkt) {
		t.Errorf("claude plugin marketplace add %s did not mention %s:\n%s", repo, mkt, out)
	}
	u.cli(t, "plugin", "install", id)
	p := u.requireInstalled(t, id)
	t.Logf("installed %s at %s", id, p.InstallPath)

	proj := mkdir(t, scratch(t), "proj")
	r := u.claude(t, proj, "hi", installed())
	for _, want := range []string{"Loaded 1 installed plugins from", "Loading hooks from plugin: " + name} {
		if !strings.Contains(r.debug, want) {
			t.Errorf("%s: the debug log lacks %q: the installed plugin was not loaded\n%s", r.label, want, r.context())
		}
	}
	if strings.Contains(r.debug, "Loaded inline plugin") {
		t.Errorf("%s: a --plugin-dir plugin was loaded; want only the installed one", r.label)
	}
	// Claude Code keys a plugin's data directory by how it was loaded:
	// <name>-<marketplace> when installed, <name>-inline with --plugin-dir.
	data := filepath.Join(u.config(), "plugins", "data", name+"-"+mkt)
	if _, err := os.Stat(data); err != nil {
		t.Errorf("%s: no plugin data directory %s: the hooks did not run as the installed %s (%v)", r.label, data, id, err)
	}
	// Where the hooks ran from. For a directory marketplace Claude Code
	// 2.1.197 runs them from the source directory, though it also copies
	// the plugin to installPath; either is the installed plugin.
	if m := skillsPathRE.FindStringSubmatch(r.debug); m != nil {
		if root := m[2]; root != repo && root != p.InstallPath {
			t.Errorf("%s: the plugin was loaded from %s, want %s or %s", r.label, root, repo, p.InstallPath)
		} else {
			t.Logf("the installed plugin ran from %s", root)
		}
	}
	checkDeclaredHooksRan(t, r)
	snapshotPiece.require(t)
	requireStore(t, proj)
}

// checkDeclaredHooksRan checks that every hook hooks.json declares for
// the events of a one-turn `claude -p` session ran exactly once (Claude
// Code runs identical commands of one event once), and that the SessionEnd
// hook ran the declared command.
func checkDeclaredHooksRan(t *testing.T, r *run) {
	t.Helper()
	commands := map[string]map[string]bool{} // event → distinct command lines
	for _, h := range declaredHooks(t) {
		if h.Event == "SessionStart" && h.Matcher != "" && h.Matcher != "*" && !slices.Contains(strings.Split(h.Matcher, "|"), "startup") {
			continue // not run for a new session
		}
		if commands[h.Event] == nil {
			commands[h.Event] = map[string]bool{}
		}
		commands[h.Event][strings.TrimSpace(h.Command+" "+strings.Join(h.Args, " "))] = true
	}
	for _, event := range []string{"SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"} {
		if len(commands[event]) == 0 {
			continue
		}
		ran := r.requireHooksRan(event, len(commands[event]))
		for _, h := range ran {
			if h.Command != "" && !commands[event][h.Command] {
				t.Errorf("%s: %s ran %q, which hooks.json does not declare (%v)", r.label, event, h.Command, keys(commands[event]))
			}
		}
	}
}

// TestInstallScript runs scripts/install.sh twice for a throwaway user:
// the first run builds, adds the marketplace and installs the plugin; the
// second finds both done and says so.
func TestInstallScript(t *testing.T) {
	begin(t)
	t.Parallel()
	u := newUser(t)
	id := pluginName(t) + "@" + marketplaceName(t)
	install := func() string {
		t.Helper()
		cmd := exec.Command(filepath.Join(repo, "scripts", "install.sh"))
		cmd.Env = append(u.environ(goEnv(t)...), "CLAUDE="+claudeBin)
		cmd.Dir = u.home
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("scripts/install.sh: %v\n%s", err, out)
		}
		return string(out)
	}
	first := install()
	for _, want := range []string{"added marketplace", "installed plugin " + id} {
		if !strings.Contains(first, want) {
			t.Errorf("first scripts/install.sh run does not say %q:\n%s", want, first)
		}
	}
	u.requireInstalled(t, id)
	second := install()
	for _, want := range []string{"already added", "already installed"} {
		if !strings.Contains(second, want) {
			t.Errorf("second scripts/install.sh run does not say %q:\n%s", want, second)
		}
	}
	u.requireInstalled(t, id)
}

// goEnv is the environment the Go toolchain needs to build offline with
// a throwaway HOME: the real module and build caches, and no downloads.
func goEnv(t *testing.T) []string {
	t.Helper()
	goBin := "go"
	if _, err := exec.LookPath(goBin); err != nil {
		goBin = "/usr/local/go/bin/go"
	}
	out, err := exec.Command(goBin, "env", "GOMODCACHE", "GOCACHE", "GOPATH").Output()
	if err != nil {
		t.Fatalf("go env: %v%s", err, stderrOf(err))
	}
	v := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(v) != 3 {
		t.Fatalf("go env printed %q", out)
	}
	return []string{"GOMODCACHE=" + v[0], "GOCACHE=" + v[1], "GOPATH=" + v[2],
		"GOPROXY=off", "GOTOOLCHAIN=local"}
}
