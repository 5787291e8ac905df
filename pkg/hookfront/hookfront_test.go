package hookfront_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/intermem/intermem/pkg/payload"
)

// binDir holds the real intermem-hook, built once; each test puts its
// stand-ins for the full hooks beside a copy of it.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "intermem-front-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cmd := exec.Command("go", "build", "-o", dir+"/", "../../cmd/intermem-hook")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building intermem-hook: %v\n%s", err, out)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// allowed is every package cmd/intermem-hook may link, besides the
// standard library's internal ones. The front runs at every turn and must
// stay light: a package added here needs a reason (what it costs the
// front's start-up, measured), never a quiet dependency of a shared
// package. The full hooks' heavy packages — the store (bbolt), YAML, gjson
// and tidwall/pretty, regexp, crypto, strutil, doublestar, os/exec — must
// never appear, nor encoding/json, flag or pkg/cli (which links both): a
// front linking them paid about thirteen page faults more at every turn
// (its package initialisation and size), so the front reads
// .intermem/config.json with package config's own decoder and takes its
// environment from pkg/clienv.
var allowed = strings.Fields(`
	bufio bytes cmp encoding/binary errors fmt hash hash/fnv
	io io/fs iter math math/bits os path path/filepath reflect runtime slices sort strconv strings sync
	sync/atomic syscall time unicode unicode/utf16 unicode/utf8 unsafe
	golang.org/x/sys/unix
	github.com/intermem/intermem/cmd/intermem-hook
	github.com/intermem/intermem/pkg/clienv
	github.com/intermem/intermem/pkg/config
	github.com/intermem/intermem/pkg/confine
	github.com/intermem/intermem/pkg/hookfront
	github.com/intermem/intermem/pkg/jsonscan
	github.com/intermem/intermem/pkg/logfile
	github.com/intermem/intermem/pkg/memlist
	github.com/intermem/intermem/pkg/payload
	github.com/intermem/intermem/pkg/project
	github.com/intermem/intermem/pkg/quiet
	github.com/intermem/intermem/pkg/rendercache
	github.com/intermem/intermem/pkg/settings
	github.com/intermem/intermem/pkg/statefile
	github.com/intermem/intermem/pkg/turns
`)

func TestDependenciesStayLight(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "../../cmd/intermem-hook").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	ok := map[string]bool{}
	for _, p := range allowed {
		ok[p] = true
	}
	var extra []string
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "internal/") || strings.Contains(p, "/internal/") || strings.HasPrefix(p, "vendor/") {
			if strings.HasPrefix(p, "crypto/") || strings.Contains(p, "/bbolt/") {
				extra = append(extra, p)
			}
			continue
		}
		if !ok[p] {
			extra = append(extra, p)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		t.Fatalf("cmd/intermem-hook links packages beyond its allowlist (the hook front must stay light):\n  %s", strings.Join(extra, "\n  "))
	}
}

// front is a directory holding intermem-hook and stand-ins for the full
// hooks: shell scripts that record their stdin and arguments.
type front struct {
	t               *testing.T
	bin, root, home string
	env             []string // more of the front's environment
}

func newFront(t *testing.T, full ...string) *front {
	t.Helper()
	dir := t.TempDir()
	f := &front{t: t, bin: filepath.Join(dir, "bin"), root: filepath.Join(dir, "proj"), home: filepath.Join(dir, "home")}
	for _, d := range []string{f.bin, filepath.Join(f.root, ".git"), f.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(filepath.Join(binDir, "intermem-hook"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.bin, "intermem-hook"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range full {
		script := "#!/bin/sh\ncat > \"$0.stdin\"\necho \"$@\" > \"$0.args\"\n"
		if err := os.WriteFile(filepath.Join(f.bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// run runs the front with payload on stdin; a front that does not end
// within a minute has hung.
func (f *front) run(payload []byte, args ...string) (stdout string) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(f.bin, "intermem-hook"), args...)
	cmd.Dir = f.root
	cmd.Env = append([]string{"HOME=" + f.home, "PATH=/usr/bin:/bin", "INTERMEM_MEMORY_DIR=" + filepath.Join(f.home, "memory")}, f.env...)
	cmd.Stdin = bytes.NewReader(payload)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		f.t.Fatalf("intermem-hook hung")
	}
	if err != nil {
		f.t.Fatalf("intermem-hook: %v (exit status must be 0); stderr %q", err, errb.String())
	}
	return out.String()
}

// received is what the stand-in name read on stdin; ok is false when it
// did not run.
func (f *front) received(name string) (stdin []byte, ok bool) {
	b, err := os.ReadFile(filepath.Join(f.bin, name+".stdin"))
	return b, err == nil
}

func (f *front) payload(event string, extra string) []byte {
	return []byte(`{"session_id":"s1","cwd":"` + f.root + `","hook_event_name":"` + event + `"` + extra + `}`)
}

// The payload reaches the full hook intact, a payload larger than a pipe
// buffer too, with the front's arguments; each event goes to its hook.
func TestHandOverCarriesThePayload(t *testing.T) {
	f := newFront(t, "intermem-snapshot", "intermem-inject")
	big := `,"last_assistant_message":"` + strings.Repeat("x", 300<<10) + `"`
	for _, c := range []struct {
		event, full string
		payload     []byte
	}{
		{"SessionEnd", "intermem-snapshot", f.payload("SessionEnd", big)},
		{"Stop", "intermem-snapshot", f.payload("Stop", big)}, // no quiet copy: handed over
		{"SessionStart", "intermem-inject", f.payload("SessionStart", `,"source":"startup"`)},
		{"not JSON", "intermem-snapshot", []byte("not json\n")},
	} {
		os.Remove(filepath.Join(f.bin, c.full+".stdin"))
		if out := f.run(c.payload, "--extra"); out != "" {
			t.Errorf("%s: the front printed %q", c.event, out)
		}
		got, ok := f.received(c.full)
		if !ok {
			t.Fatalf("%s: %s did not run", c.event, c.full)
		}
		if !bytes.Equal(got, c.payload) {
			t.Fatalf("%s: %s read %d bytes, want the %d of the payload", c.event, c.full, len(got), len(c.payload))
		}
		if args, _ := os.ReadFile(filepath.Join(f.bin, c.full+".args")); string(args) != "--extra\n" {
			t.Errorf("%s: arguments %q, want --extra", c.event, args)
		}
	}
}

// A full hook that cannot be started: exit 0, nothing printed, one line in
// the project's log.
func TestHandOverMissingFullHook(t *testing.T) {
	f := newFront(t)
	for _, ev := range []string{"SessionEnd", "SessionStart"} {
		if out := f.run(f.payload(ev, "")); out != "" {
			t.Errorf("%s: printed %q", ev, out)
		}
	}
	log, err := os.ReadFile(filepath.Join(f.root, ".intermem", "log"))
	if err != nil {
		t.Fatalf("no log: %v", err)
	}
	for _, want := range []string{"SessionEnd: cannot hand over to intermem-snapshot", "SessionStart: cannot hand over to intermem-inject"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}

// A payload without a cwd (and no CLAUDE_PROJECT_DIR) is the working
// directory's project, which the front asks for only then: its log line
// lands in that project.
func TestNoCwdIsTheWorkingDirectory(t *testing.T) {
	f := newFront(t)
	if out := f.run([]byte(`{"session_id":"s1","hook_event_name":"SessionEnd"}`)); out != "" {
		t.Errorf("printed %q", out)
	}
	log, err := os.ReadFile(filepath.Join(f.root, ".intermem", "log"))
	if err != nil || !strings.Contains(string(log), "SessionEnd: cannot hand over to intermem-snapshot") {
		t.Fatalf("no log line in the working directory's project: %q, %v", log, err)
	}
}

// The state files the front reads are hostile: damaged, a link, a FIFO —
// each is handed over (the full hook says why in the log), never waited
// on.
func TestHostileStateFilesAreHandedOver(t *testing.T) {
	for _, file := range []struct{ name, event, full string }{
		{"stop.quiet", "Stop", "intermem-snapshot"},
		{"intermem.db", "Stop", "intermem-snapshot"}, // its meta pages are read
		{"turns", "Stop", "intermem-snapshot"},
		{"context.render", "SessionStart", "intermem-inject"},
	} {
		for _, kind := range []string{"damaged", "link", "fifo"} {
			t.Run(file.name+"/"+kind, func(t *testing.T) {
				f := newFront(t, file.full)
				state := filepath.Join(f.root, ".intermem")
				if err := os.MkdirAll(state, 0o700); err != nil {
					t.Fatal(err)
				}
				p := filepath.Join(state, file.name)
				switch kind {
				case "damaged":
					os.WriteFile(p, []byte("intermem stop quiet v1\nstore 1:2:3:4\nsession s1\tx\n\x00\xff"), 0o600)
				case "link":
					os.WriteFile(filepath.Join(f.root, "elsewhere"), []byte("intermem stop quiet v1\n"), 0o600)
					os.Symlink(filepath.Join(f.root, "elsewhere"), p)
				case "fifo":
					if err := syscall.Mkfifo(p, 0o600); err != nil {
						t.Fatal(err)
					}
				}
				if out := f.run(f.payload(file.event, "")); out != "" {
					t.Errorf("printed %q", out)
				}
				if _, ok := f.received(file.full); !ok {
					t.Fatalf("%s was not handed over", file.full)
				}
			})
		}
	}
}

// A payload written whole on a pipe its writer keeps open (a wrapper's
// sleep, a parent stuck after writing) does not hold the front until the
// pipe closes: the front reads to the end of the JSON value, hands over,
// and the full hook gets the payload.
func TestPayloadOnAPipeHeldOpen(t *testing.T) {
	f := newFront(t, "intermem-snapshot")
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(f.bin, "intermem-hook"))
	cmd.Dir = f.root
	cmd.Env = []string{"HOME=" + f.home, "PATH=/usr/bin:/bin", "INTERMEM_MEMORY_DIR=" + filepath.Join(f.home, "memory")}
	cmd.Stdin = pr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pr.Close()
	payload := append(f.payload("Stop", ""), '\n')
	if _, err := pw.Write(payload); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	if ctx.Err() != nil {
		t.Fatal("intermem-hook waited for its stdin to close")
	}
	if err != nil {
		t.Fatalf("intermem-hook: %v", err)
	}
	if got, ok := f.received("intermem-snapshot"); !ok || !bytes.Equal(got, payload) {
		t.Errorf("the full hook read %q (ran: %v), want the payload", got, ok)
	}
}

// A payload that stops half-way, the pipe held open — ending exactly at
// the front's first read (512 bytes) or not — costs the front
// payload.ReadTimeout, and the project's log says why: the input was
// incomplete, with how much of it came (the turn used to be handed over
// with no input, and the log said only "empty hook input").
func TestPayloadIncompleteIsLogged(t *testing.T) {
	for _, n := range []int{300, 512, 4096} {
		f := newFront(t, "intermem-snapshot")
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, filepath.Join(f.bin, "intermem-hook"))
		cmd.Dir = f.root
		cmd.Env = []string{"HOME=" + f.home, "PATH=/usr/bin:/bin", "INTERMEM_MEMORY_DIR=" + filepath.Join(f.home, "memory")}
		cmd.Stdin = pr
		var out bytes.Buffer
		cmd.Stdout = &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pr.Close()
		whole := f.payload("Stop", `,"last_assistant_message":"`+strings.Repeat("x", n)+`"`)
		if _, err := pw.Write(whole[:n]); err != nil {
			t.Fatal(err)
		}
		err = cmd.Wait()
		waited := ctx.Err() != nil
		pw.Close()
		cancel()
		if waited {
			t.Fatalf("%d bytes: intermem-hook waited for its stdin to close", n)
		}
		if err != nil || out.Len() > 0 {
			t.Errorf("%d bytes: intermem-hook: %v, printed %q", n, err, out.Bytes())
		}
		if _, ok := f.received("intermem-snapshot"); ok {
			t.Errorf("%d bytes: the turn was handed over", n)
		}
		log, _ := os.ReadFile(filepath.Join(f.root, ".intermem", "log"))
		want := fmt.Sprintf("hook: read hook input: hook input incomplete after %v (%d bytes)", payload.ReadTimeout, n)
		if !strings.Contains(string(log), want) {
			t.Errorf("%d bytes: the log lacks %q:\n%s", n, want, log)
		}
	}
}

// An unusable config.json is handed over, at a Stop the front would
// otherwise answer (meta mode, which records nothing, asked for by the
// file or by INTERMEM_MODE) as at a session start: the full hook logs the
// problem, and a session start's context says the file is ignored; the
// front could say neither. A usable file, or none, is answered as before.
func TestUnusableConfigIsHandedOver(t *testing.T) {
	for _, c := range []struct {
		config, event, full string
		meta, handed        bool
	}{
		{`{"mode":"meta"}`, "Stop", "intermem-snapshot", false, false},
		{"", "Stop", "intermem-snapshot", true, false},
		{`{"layout":"flat"}`, "Stop", "intermem-snapshot", true, false},
		{`{"mode":"meta","source":{"auto-memory":false}}`, "Stop", "intermem-snapshot", false, true},
		{`{"source":{"auto-memory":false}}`, "Stop", "intermem-snapshot", true, true},
		{`{"mode":"meta",`, "Stop", "intermem-snapshot", true, true},
		{`{"source":{"auto-memory":false}}`, "SubagentStop", "intermem-snapshot", true, true},
		{`{"project":"p","source":{}}`, "SessionStart", "intermem-inject", false, true},
	} {
		f := newFront(t, c.full)
		if c.meta {
			f.env = []string{"INTERMEM_MODE=meta"}
		}
		state := filepath.Join(f.root, ".intermem")
		if err := os.MkdirAll(state, 0o700); err != nil {
			t.Fatal(err)
		}
		if c.config != "" {
			if err := os.WriteFile(filepath.Join(state, "config.json"), []byte(c.config), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if out := f.run(f.payload(c.event, "")); out != "" {
			t.Errorf("%s %s: printed %q", c.event, c.config, out)
		}
		if _, ok := f.received(c.full); ok != c.handed {
			t.Errorf("%s with %q (meta mode %v): handed over %v, want %v", c.event, c.config, c.meta, ok, c.handed)
		}
	}
}
