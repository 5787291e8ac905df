package proof

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A plugin installed from a git checkout has no bin/. The first hook must
// not fail or print: hooks/run drains stdin, starts one background build
// (under a lock) and exits 0, logging why; the next event finds the binary.
func TestLauncherBuildsMissingBinaries(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatal("go is required: the launcher builds with it")
	}
	repo, _ := filepath.Abs("..")
	plugin := filepath.Join(t.TempDir(), "plugin")
	// A copy of the checkout without bin/ (what git clone gives).
	cp := exec.Command("sh", "-c", `mkdir -p "$2" && cd "$1" && tar --exclude=./bin --exclude=./.git --exclude=./testdata/corpus -cf - . | (cd "$2" && tar -xf -)`, "sh", repo, plugin)
	if out, err := cp.CombinedOutput(); err != nil {
		t.Fatalf("copy: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(plugin, "bin")); !os.IsNotExist(err) {
		t.Fatal("the copy must start without bin/")
	}
	proj := t.TempDir()
	payload := `{"session_id":"s1","cwd":"` + proj + `","hook_event_name":"Stop"}` + "\n"
	hook := func() (int, string, string) {
		cmd := exec.Command(filepath.Join(plugin, "hooks", "run"), "intermem-snapshot")
		cmd.Env = append(os.Environ(), "CLAUDE_PLUGIN_ROOT="+plugin, "HOME="+t.TempDir())
		cmd.Stdin = strings.NewReader(payload)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, out.String(), errb.String()
	}
	start := time.Now()
	code, out, errs := hook()
	if code != 0 || out != "" || errs != "" {
		t.Fatalf("first hook without bin/: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	t.Logf("the hook returned in %v while the build runs in the background", time.Since(start).Round(time.Millisecond))
	// A second event during the build starts no second build.
	if code, out, _ := hook(); code != 0 || out != "" {
		t.Fatalf("second hook during the build: exit %d, stdout %q", code, out)
	}
	bin := filepath.Join(plugin, "bin", "intermem-snapshot")
	deadline := time.Now().Add(5 * time.Minute)
	for {
		if _, err := os.Stat(filepath.Join(plugin, "bin", ".build.lock")); os.IsNotExist(err) {
			if _, err := os.Stat(bin); err == nil {
				break
			}
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(plugin, "bin", "build.log"))
			t.Fatalf("the background build did not produce %s; build.log:\n%s", bin, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
	log, err := os.ReadFile(filepath.Join(plugin, "bin", "build.log"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(log), "is missing; building all binaries in the background"); n != 1 {
		t.Errorf("build.log says it started %d builds, want 1:\n%s", n, log)
	}
	// The next event uses the binary: the snapshot lands in the project.
	if code, out, _ := hook(); code != 0 || out != "" {
		t.Fatalf("hook with the binary: exit %d, stdout %q", code, out)
	}
	if _, err := os.Stat(filepath.Join(proj, ".intermem", "intermem.db")); err != nil {
		t.Errorf("the hook ran but recorded nothing: %v", err)
	}
}

// When the background build fails (offline, no module cache), the next
// events do not start a doomed build each: hooks/run waits 10 minutes
// after a failure, still exiting 0 silently.
func TestLauncherBacksOffAfterAFailedBuild(t *testing.T) {
	repo, _ := filepath.Abs("..")
	plugin := filepath.Join(t.TempDir(), "plugin")
	for _, d := range []string{"hooks", "scripts"} {
		if err := os.MkdirAll(filepath.Join(plugin, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"hooks/run", "scripts/build.sh"} {
		b, err := os.ReadFile(filepath.Join(repo, f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(plugin, f), b, 0o755)
	}
	os.MkdirAll(filepath.Join(plugin, ".claude-plugin"), 0o755)
	os.WriteFile(filepath.Join(plugin, ".claude-plugin", "plugin.json"), []byte(`{"name":"intermem","version":"0.0.0"}`), 0o644)
	fakeBin := t.TempDir()
	os.WriteFile(filepath.Join(fakeBin, "go"), []byte("#!/bin/sh\necho 'go: cannot download modules: network unreachable' >&2\nexit 1\n"), 0o755)
	hook := func() {
		t.Helper()
		cmd := exec.Command(filepath.Join(plugin, "hooks", "run"), "intermem-snapshot")
		cmd.Env = []string{"PATH=" + fakeBin + ":/usr/bin:/bin", "CLAUDE_PLUGIN_ROOT=" + plugin, "HOME=" + t.TempDir()}
		cmd.Stdin = strings.NewReader(`{"session_id":"s","cwd":"/tmp","hook_event_name":"Stop"}`)
		out, err := cmd.CombinedOutput()
		if err != nil || len(out) > 0 {
			t.Fatalf("hook: %v, output %q", err, out)
		}
	}
	waitIdle := func() {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); ; {
			if _, err := os.Stat(filepath.Join(plugin, "bin", ".build.lock")); os.IsNotExist(err) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatal("the background build never finished")
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	hook()
	waitIdle()
	if _, err := os.Stat(filepath.Join(plugin, "bin", ".build-failed")); err != nil {
		t.Fatalf("a failed build must leave bin/.build-failed: %v", err)
	}
	hook()
	hook()
	waitIdle()
	log, _ := os.ReadFile(filepath.Join(plugin, "bin", "build.log"))
	if n := strings.Count(string(log), "building all binaries in the background"); n != 1 {
		t.Errorf("%d builds started, want 1 (back off after a failure):\n%s", n, log)
	}
	if !strings.Contains(string(log), "network unreachable") || !strings.Contains(string(log), "the build failed; the next try is in 10 minutes") {
		t.Errorf("build.log does not say why:\n%s", log)
	}
}
