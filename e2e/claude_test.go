package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/intermem/intermem/e2e/fakeapi"
)

// runTimeout bounds one Claude Code process. A run takes 1–2 s on an idle
// machine and was seen to take 40 s at a load average of 20; the slack is
// for that (go test also runs other packages in parallel).
const runTimeout = 2 * time.Minute

// fakeKey is the API key Claude Code is given. Nothing checks it.
const fakeKey = "sk-ant-api03-intermem-e2e-FAKE-KEY-0123456789abcdef"

// A user is a throwaway Claude Code user: a HOME of its own and, when
// configDir is set, a CLAUDE_CONFIG_DIR that replaces ~/.claude.
type user struct {
	home      string
	configDir string
	logs      string // where debug logs go
	runs      atomic.Int32
}

// newUser makes a user whose HOME is in the test's temporary directory.
func newUser(t *testing.T) *user {
	t.Helper()
	root := scratch(t)
	u := &user{home: filepath.Join(root, "home"), logs: filepath.Join(root, "logs")}
	for _, d := range []string{u.home, u.logs} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return u
}

// scratch returns a fresh directory for a test; with INTERMEM_E2E_KEEP=1 it
// outlives the test and its path is logged.
func scratch(t *testing.T) string {
	t.Helper()
	if os.Getenv("INTERMEM_E2E_KEEP") != "1" {
		return t.TempDir()
	}
	d, err := os.MkdirTemp("", "intermem-e2e-"+strings.ReplaceAll(t.Name(), "/", "_")+"-")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("keeping %s", d)
	return d
}

// withConfigDir gives the user a CLAUDE_CONFIG_DIR outside HOME.
func (u *user) withConfigDir(t *testing.T) *user {
	t.Helper()
	u.configDir = filepath.Join(filepath.Dir(u.home), "claude-config")
	if err := os.MkdirAll(u.configDir, 0o755); err != nil {
		t.Fatal(err)
	}
	return u
}

// config is Claude Code's configuration directory for this user.
func (u *user) config() string {
	if u.configDir != "" {
		return u.configDir
	}
	return filepath.Join(u.home, ".claude")
}

// environ is the complete environment Claude Code (and so every hook)
// runs with. It is built from scratch, not inherited, so that nothing of
// the developer's own Claude Code session leaks in. It has no API key:
// with a key, newer clients fetch remote settings from the real API even
// for `claude plugin …` commands, retrying for ~18 s offline; sessions add
// the key together with the fake API's URL.
func (u *user) environ(extra ...string) []string {
	env := []string{
		"HOME=" + u.home,
		"PATH=" + os.Getenv("PATH"),
		"LANG=C.UTF-8",
		"TERM=dumb",
		"USER=intermem-e2e",
		"TMPDIR=" + os.TempDir(),
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL=1",
		"DISABLE_AUTOUPDATER=1",
	}
	if u.configDir != "" {
		env = append(env, "CLAUDE_CONFIG_DIR="+u.configDir)
	}
	return append(env, extra...)
}

// cli runs a claude subcommand that needs no model (plugin, marketplace)
// and returns its combined output; it fails the test on a non-zero exit.
func (u *user) cli(t *testing.T, args ...string) string {
	t.Helper()
	out, err := u.cliErr(args...)
	if err != nil {
		t.Fatalf("claude %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (u *user) cliErr(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, claudeBin, args...)
	cmd.Env = u.environ()
	cmd.Dir = u.home
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// options of one Claude Code run.
type options struct {
	installed bool           // load the plugin as installed, not with --plugin-dir
	script    fakeapi.Script // the fake model; nil means fakeapi.Default
	args      []string       // more claude arguments
}

type option func(*options)

// installed loads the plugin from the user's installed plugins instead of
// passing --plugin-dir.
func installed() option { return func(o *options) { o.installed = true } }

// model makes the fake API answer with script.
func model(script fakeapi.Script) option { return func(o *options) { o.script = script } }

// args appends claude arguments.
func args(a ...string) option { return func(o *options) { o.args = append(o.args, a...) } }

// A run is one finished Claude Code process.
type run struct {
	t       *testing.T
	label   string // "run 2 (claude -p hi; --plugin-dir) in /tmp/…" for messages
	dir     string
	stdout  string
	stderr  string
	events  []event
	debug   string // the --debug-file log
	api     *fakeapi.Server
	elapsed time.Duration
}

// event is one line of --output-format stream-json. Only the fields the
// suite reads are decoded.
type event struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`
	// hook_started / hook_response (with --include-hook-events)
	HookID    string `json:"hook_id"`
	HookName  string `json:"hook_name"`
	HookEvent string `json:"hook_event"`
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr"`
	ExitCode  *int   `json:"exit_code"`
	Outcome   string `json:"outcome"`
	// result
	Result  string `json:"result"`
	IsError bool   `json:"is_error"`
	// init
	SlashCommands []string `json:"slash_commands"`
}

// claude runs `claude -p prompt` in dir and checks that it succeeded and
// that every hook behaved.
func (u *user) claude(t *testing.T, dir, prompt string, opts ...option) *run {
	t.Helper()
	return u.start(t, dir, []string{"-p", prompt}, nil, opts...)
}

// converse runs one `claude -p --input-format stream-json` process and
// sends the prompts one at a time, each after the previous turn's result,
// so that each is a turn of its own (prompts sent together are merged
// into one turn).
func (u *user) converse(t *testing.T, dir string, prompts []string, opts ...option) *run {
	t.Helper()
	return u.start(t, dir, []string{"-p", "--input-format", "stream-json"}, prompts, opts...)
}

// start runs claude with the leading arguments argv; with prompts, they
// are fed on stdin as stream-json user messages, one turn each.
func (u *user) start(t *testing.T, dir string, argv, prompts []string, opts ...option) *run {
	t.Helper()
	var o options
	for _, f := range opts {
		f(&o)
	}
	api, err := fakeapi.Start(o.script)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { api.Close() })

	n := u.runs.Add(1)
	debugFile := filepath.Join(u.logs, fmt.Sprintf("run%d.debug.log", n))
	shown := slices.Concat(argv, o.args)
	full := slices.Concat(shown, []string{"--output-format", "stream-json", "--verbose", "--include-hook-events",
		"--debug-file", debugFile})
	how := "installed plugin"
	if !o.installed {
		full = append(full, "--plugin-dir", repo)
		how = "--plugin-dir"
	}
	r := &run{t: t, dir: dir, api: api,
		label: fmt.Sprintf("run %d (claude %s; %s) in %s", n, strings.Join(shown, " "), how, dir)}

	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, claudeBin, full...)
	cmd.Dir = dir
	cmd.Env = u.environ("ANTHROPIC_BASE_URL="+api.URL, "ANTHROPIC_API_KEY="+fakeKey)
	// On a timeout, kill the hooks Claude Code started along with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdin io.WriteCloser
	if prompts != nil {
		if stdin, err = cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
	}
	began := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", r.label, err)
	}
	var out strings.Builder
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	send := func() {
		if len(prompts) == 0 {
			if stdin != nil {
				stdin.Close()
				stdin = nil
			}
			return
		}
		line, _ := json.Marshal(map[string]any{"type": "user",
			"message": map[string]any{"role": "user", "content": prompts[0]}})
		prompts = prompts[1:]
		if _, err := stdin.Write(append(line, '\n')); err != nil {
			t.Errorf("%s: writing a prompt: %v", r.label, err)
		}
	}
	if stdin != nil {
		send()
	}
	for sc.Scan() {
		line := sc.Text()
		out.WriteString(line + "\n")
		var ev event
		if json.Unmarshal([]byte(line), &ev) != nil {
			continue
		}
		r.events = append(r.events, ev)
		if ev.Type == "result" && stdin != nil {
			send() // the turn is over: the next prompt is a turn of its own
		}
	}
	if stdin != nil {
		stdin.Close()
	}
	err = cmd.Wait()
	r.elapsed = time.Since(began)
	r.stdout, r.stderr = out.String(), stderr.String()
	if b, rerr := os.ReadFile(debugFile); rerr == nil {
		r.debug = string(b)
	}
	t.Logf("%s: %.2fs", r.label, r.elapsed.Seconds())
	if ctx.Err() != nil {
		t.Fatalf("%s: still running after %v\n%s", r.label, runTimeout, r.context())
	}
	if err != nil {
		t.Fatalf("%s: %v\n%s", r.label, err, r.context())
	}
	if res := r.result(); res == nil || res.IsError {
		t.Fatalf("%s: no successful result event\n%s", r.label, r.context())
	}
	r.checkHooks()
	return r
}

// context is what a failure message shows about a run: stderr, the tail
// of stdout, and the hook-related part of the debug log.
func (r *run) context() string {
	var b strings.Builder
	if s := strings.TrimSpace(r.stderr); s != "" {
		fmt.Fprintf(&b, "--- stderr:\n%s\n", clip(s, 2000))
	}
	fmt.Fprintf(&b, "--- stdout (tail):\n%s\n", tail(r.stdout, 3000))
	fmt.Fprintf(&b, "--- debug log (hook and plugin lines):\n%s", r.debugExcerpt(hookLineRE))
	return b.String()
}

var hookLineRE = regexp.MustCompile(`(?i)\bhooks?\b|\bplugins?\b|\[error\]|skill prompt|SessionEnd|SessionStart`)

// debugExcerpt returns the debug-log lines matching re (each clipped),
// at most 80 of them.
func (r *run) debugExcerpt(re *regexp.Regexp) string {
	var lines []string
	for _, l := range strings.Split(r.debug, "\n") {
		if re.MatchString(l) {
			lines = append(lines, clip(l, 300))
		}
	}
	if len(lines) > 80 {
		lines = append(lines[:40], append([]string{"…"}, lines[len(lines)-40:]...)...)
	}
	if len(lines) == 0 {
		return "(none)"
	}
	return strings.Join(lines, "\n")
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// result returns the run's last result event.
func (r *run) result() *event {
	for i := len(r.events) - 1; i >= 0; i-- {
		if r.events[i].Type == "result" {
			return &r.events[i]
		}
	}
	return nil
}

// sessionID is the session id Claude Code reported.
func (r *run) sessionID() string {
	r.t.Helper()
	for _, e := range r.events {
		if e.SessionID != "" {
			return e.SessionID
		}
	}
	r.t.Fatalf("%s: no session_id in the output\n%s", r.label, r.context())
	return ""
}

// init returns the run's init event (tools, slash commands, plugins).
func (r *run) init() *event {
	for i := range r.events {
		if r.events[i].Type == "system" && r.events[i].Subtype == "init" {
			return &r.events[i]
		}
	}
	return nil
}
