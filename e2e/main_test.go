package e2e

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// netnsEnv marks a test process that runs inside the loopback-only network
// namespace made for it (by scripts/e2e.sh or by TestMain re-executing).
const netnsEnv = "INTERMEM_E2E_NETNS"

var (
	// repo is the absolute path of the repository under test: the plugin.
	repo string
	// claudeBin is the claude executable under test.
	claudeBin string
	// claudeVersion is what `claude --version` reports, e.g. "2.1.197".
	claudeVersion string
	// skipReason, when set, makes every test skip: the suite was not asked
	// for and cannot run here.
	skipReason string
)

func TestMain(m *testing.M) {
	code, err := setup()
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: error: %v\n", err)
		os.Exit(1)
	}
	if code >= 0 {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// setup prepares the suite. It returns code >= 0 when this process has
// already done the work (it re-executed itself in a network namespace) and
// should exit with that code; -1 to go on and run the tests here; an error
// when the suite was asked for and cannot run.
func setup() (code int, err error) {
	repo, err = findRepo()
	if err != nil {
		return 0, err
	}
	mode := os.Getenv("INTERMEM_E2E")
	required := mode == "1" || (os.Getenv("CI") != "" && mode != "0")
	if os.Getenv(netnsEnv) == "1" {
		if err := checkIsolated(); err != nil {
			return 0, err
		}
		claudeBin = os.Getenv("INTERMEM_CLAUDE")
		if claudeBin == "" {
			return 0, errors.New("INTERMEM_CLAUDE is not set inside the namespace; run scripts/e2e.sh")
		}
		if claudeVersion, err = version(claudeBin); err != nil {
			return 0, err
		}
		fmt.Fprintf(os.Stderr, "e2e: Claude Code %s (%s), plugin %s\n", claudeVersion, claudeBin, repo)
		return -1, nil
	}
	if !required {
		skipReason = "the end-to-end suite runs the real Claude Code in a network namespace: " +
			"run scripts/e2e.sh, or set INTERMEM_E2E=1 (CI does)"
		if mode == "0" {
			skipReason = "INTERMEM_E2E=0"
		}
		return -1, nil
	}
	return reexec()
}

// reexec builds the binaries, installs Claude Code and runs this test binary
// again inside a fresh loopback-only network namespace.
func reexec() (int, error) {
	if os.Geteuid() != 0 {
		return 0, errors.New("the suite needs root to create a network namespace (unshare -n); run it as root, or in CI")
	}
	for _, tool := range []string{"unshare", "ip"} {
		if _, err := exec.LookPath(tool); err != nil {
			return 0, fmt.Errorf("%s is not installed; it is needed to isolate Claude Code from the network (apt-get install util-linux iproute2)", tool)
		}
	}
	if err := buildBinaries(); err != nil {
		return 0, err
	}
	claude := os.Getenv("INTERMEM_CLAUDE")
	if claude == "" {
		out, err := exec.Command(filepath.Join(repo, "scripts", "claude-code.sh")).Output()
		if err != nil {
			return 0, fmt.Errorf("installing Claude Code with scripts/claude-code.sh: %v%s", err, stderrOf(err))
		}
		claude = strings.TrimSpace(string(out))
	}
	cmd := exec.Command("unshare", append([]string{"-n", "--", "sh", "-c",
		`ip link set lo up && exec "$0" "$@"`, os.Args[0]}, os.Args[1:]...)...)
	cmd.Env = append(os.Environ(), netnsEnv+"=1", "INTERMEM_CLAUDE="+claude)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, os.Stdout, os.Stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), nil
	}
	if err != nil {
		return 0, fmt.Errorf("running the suite under unshare -n: %w", err)
	}
	return 0, nil
}

// buildBinaries runs scripts/build.sh, which builds every cmd/* into bin/.
func buildBinaries() error {
	cmds, _ := filepath.Glob(filepath.Join(repo, "cmd", "*", "*.go"))
	if len(cmds) == 0 {
		return nil // nothing has landed in cmd/ yet
	}
	out, err := exec.Command(filepath.Join(repo, "scripts", "build.sh")).CombinedOutput()
	if err != nil {
		return fmt.Errorf("scripts/build.sh: %v\n%s", err, out)
	}
	return nil
}

func stderrOf(err error) string {
	var exit *exec.ExitError
	if errors.As(err, &exit) && len(exit.Stderr) > 0 {
		return "\n" + strings.TrimSpace(string(exit.Stderr))
	}
	return ""
}

// findRepo returns the repository root: INTERMEM_REPO, or the parent of
// the package directory (go test runs a test binary in its package's
// directory, and scripts/e2e.sh does the same).
func findRepo() (string, error) {
	dir := os.Getenv("INTERMEM_REPO")
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		dir = filepath.Dir(wd)
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(dir, ".claude-plugin", "plugin.json")); err != nil {
		return "", fmt.Errorf("%s is not the intermem repository (no .claude-plugin/plugin.json); run from e2e/ or set INTERMEM_REPO", dir)
	}
	return dir, nil
}

// checkIsolated makes sure no network interface but loopback exists, so
// that nothing Claude Code does can leave the machine, and that loopback
// is up for the fake API.
func checkIsolated() error {
	ifs, err := net.Interfaces()
	if err != nil {
		return fmt.Errorf("listing network interfaces: %w", err)
	}
	up := false
	for _, i := range ifs {
		if i.Flags&net.FlagLoopback == 0 {
			return fmt.Errorf("%s=1 but interface %s exists: the suite must run in a loopback-only network namespace (unshare -n)", netnsEnv, i.Name)
		}
		up = up || i.Flags&net.FlagUp != 0
	}
	if !up {
		return errors.New("loopback is down in the network namespace (ip link set lo up)")
	}
	return nil
}

var versionRE = regexp.MustCompile(`^(\d+\.\d+\.\d+)`)

func version(claude string) (string, error) {
	out, err := exec.Command(claude, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %v%s", claude, err, stderrOf(err))
	}
	v := versionRE.FindString(strings.TrimSpace(string(out)))
	if v == "" {
		return "", fmt.Errorf("%s --version printed %q, not a version", claude, out)
	}
	return v, nil
}

// A piece is a part of intermem the suite exercises. Every piece is part
// of the product now: a missing one is a failure, never a skip, so that
// removing a binary or the skill cannot make its assertions vanish.
type piece struct {
	what string // what it is, for messages
	path string // the file or directory whose presence means it has landed
}

var (
	snapshotPiece   = piece{"intermem-snapshot (Stop/SessionEnd hook)", "cmd/intermem-snapshot"}
	cliPiece        = piece{"the intermem CLI", "cmd/intermem"}
	injectPiece     = piece{"intermem-inject (SessionStart hook)", "cmd/intermem-inject"}
	skillPiece      = piece{"the /intermem:synthesize skill", "skills/synthesize/SKILL.md"}
	synthesizePiece = piece{"intermem-synthesize", "cmd/intermem-synthesize"}
)

func (p piece) landed() bool {
	_, err := os.Stat(filepath.Join(repo, p.path))
	return err == nil
}

// require fails the test when p is missing from the repository.
func (p piece) require(t *testing.T) {
	t.Helper()
	if !p.landed() {
		t.Fatalf("%s is missing (no %s)", p.what, p.path)
	}
}

// begin starts every test: it skips when the suite is not running here.
func begin(t *testing.T) {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
}
