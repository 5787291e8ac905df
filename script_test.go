package intermem_test

// The testscripts in testdata/script drive the real binaries (their Main
// functions, run as separate processes by testscript) with real hook
// payloads captured from Claude Code, in temporary projects with a
// temporary HOME.

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/command"
	"github.com/intermem/intermem/pkg/inject"
	"github.com/intermem/intermem/pkg/mcpserver"
	"github.com/intermem/intermem/pkg/project"
	"github.com/intermem/intermem/pkg/snapshot"
	"github.com/intermem/intermem/pkg/store"
)

// Binaries maps each intermem binary to its Main, so testscript can run
// them as commands. It is shared by the crash-matrix tests.
var Binaries = map[string]func(){
	"intermem-snapshot":   func() { os.Exit(snapshot.Main(cli.FromOS(), os.Args[1:])) },
	"intermem":            func() { os.Exit(command.Main(context.Background(), cli.FromOS(), os.Args[1:])) },
	"intermem-synthesize": func() { os.Exit(command.SynthesizeMain(context.Background(), cli.FromOS(), os.Args[1:])) },
	"intermem-recover":    func() { os.Exit(command.RecoverMain(context.Background(), cli.FromOS(), os.Args[1:])) },
	"intermem-inject":     func() { os.Exit(inject.Main(cli.FromOS(), os.Args[1:])) },
	"intermem-mcp":        func() { os.Exit(mcpserver.Main(context.Background(), cli.FromOS(), os.Args[1:])) },
	// holdstore DB FLAGFILE holds the store's write lock, to make hooks meet a
	// busy store: it creates FLAGFILE once the lock is held and releases the
	// lock when the script removes FLAGFILE. Test-only.
	"holdstore": holdStore,
}

func holdStore() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: holdstore DB FLAGFILE")
		os.Exit(2)
	}
	s, err := store.Open(os.Args[1], store.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Tell the script the lock is held, then hold it until the script
	// removes the flag: released by the script's step, not by a clock, so
	// a slow machine cannot release it early. The bound only keeps a
	// failed script from leaving the process behind.
	flag := os.Args[2]
	if err := os.WriteFile(flag, []byte("locked\n"), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(flag); err != nil {
			break
		}
	}
	s.Close()
	os.Exit(0)
}

func TestMain(m *testing.M) {
	testscript.Main(m, Binaries)
}

func TestScripts(t *testing.T) {
	root, _ := os.Getwd()
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			home := filepath.Join(env.WorkDir, "home")
			env.Setenv("HOME", home)
			env.Setenv("PAYLOADS", filepath.Join(root, "testdata", "payloads"))
			env.Setenv("CORPUS", filepath.Join(root, "testdata", "corpus"))
			env.Setenv("DEMO", filepath.Join(root, "testdata", "demo"))
			env.Setenv("INTERMEM_NOW", "2026-11-01T09:00:00Z")
			// Claude Code's own variables must not leak in from a developer's
			// session.
			for _, k := range []string{"CLAUDE_CONFIG_DIR", "CLAUDE_PROJECT_DIR", "CLAUDE_PLUGIN_DATA", "INTERMEM_MEMORY_DIR"} {
				env.Setenv(k, "")
			}
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"payload":   cmdPayload,
			"jsonfield": cmdJSONField,
			"memdir":    cmdMemdir,
			"advance":   cmdAdvance,
			"waitfile":  cmdWaitFile,
			"jsonenv":   cmdJSONEnv,
			"treehash":  cmdTreeHash,
			"ctxcheck":  cmdCtxCheck,
			"linkcheck": cmdLinkCheck,
			"exits":     cmdExits,
			"mkfile":    cmdMkfile,
		},
	})
}

// mkfile PATH TEXT: writes TEXT to PATH, both read as the inside of a Go
// string literal ("\n" is a line break), so a script can make a file whose
// name holds characters a txtar name cannot (a newline, a tab).
func cmdMkfile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: mkfile PATH TEXT")
	}
	var un [2]string
	for i, a := range args {
		s, err := strconv.Unquote(`"` + a + `"`)
		if err != nil {
			ts.Fatalf("mkfile: %q: %v", a, err)
		}
		un[i] = s
	}
	path := ts.MkAbs(un[0])
	ts.Check(os.MkdirAll(filepath.Dir(path), 0o755))
	ts.Check(os.WriteFile(path, []byte(un[1]), 0o644))
}

// payload NAME OUT [key=value...]: writes the captured payload NAME (from
// testdata/payloads) to OUT with cwd set to $WORK/proj (or cwd=...) and any
// other top-level string fields overridden.
func cmdPayload(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: payload NAME OUT [key=value...]")
	}
	b, err := os.ReadFile(filepath.Join(ts.Getenv("PAYLOADS"), args[0]+".json"))
	ts.Check(err)
	s := string(b)
	s, err = sjson.Set(s, "cwd", filepath.Join(ts.Getenv("WORK"), "proj"))
	ts.Check(err)
	for _, kv := range args[2:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			ts.Fatalf("bad override %q", kv)
		}
		if k == "cwd" && !filepath.IsAbs(v) {
			v = filepath.Join(ts.Getenv("WORK"), v)
		}
		s, err = sjson.Set(s, k, v)
		ts.Check(err)
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(s+"\n"), 0o644))
}

// jsonfield FILE PATH WANT: asserts that the gjson PATH in FILE (or
// "stdout") renders as WANT.
func cmdJSONField(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: jsonfield FILE|stdout PATH WANT")
	}
	var data string
	if args[0] == "stdout" {
		data = ts.ReadFile("stdout")
	} else {
		data = ts.ReadFile(args[0])
	}
	if !gjson.Valid(data) {
		ts.Fatalf("%s is not valid JSON:\n%s", args[0], data)
	}
	got := gjson.Get(data, args[1]).String()
	if (got == args[2]) == neg {
		ts.Fatalf("%s %s = %q, want %s%q", args[0], args[1], got, map[bool]string{true: "not ", false: ""}[neg], args[2])
	}
}

// memdir DIR: copies DIR (relative to $WORK, or absolute) into the
// auto-memory directory Claude Code would use for $WORK/proj under $HOME.
func cmdMemdir(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: memdir SRC")
	}
	root, err := project.FindRoot(filepath.Join(ts.Getenv("WORK"), "proj"))
	ts.Check(err)
	dst := filepath.Join(ts.Getenv("HOME"), ".claude", "projects", project.Encode(root), "memory")
	ts.Check(os.MkdirAll(dst, 0o755))
	src := args[0]
	if !filepath.IsAbs(src) {
		src = ts.MkAbs(src)
	}
	// Sub-folders too: a hand-kept memory points into notes/.
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == src {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	ts.Check(err)
	ts.Setenv("MEMDIR", dst)
}

// advance DURATION: moves INTERMEM_NOW forward.
func cmdAdvance(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: advance DURATION")
	}
	d, err := time.ParseDuration(args[0])
	ts.Check(err)
	now, err := time.Parse(time.RFC3339, ts.Getenv("INTERMEM_NOW"))
	ts.Check(err)
	ts.Setenv("INTERMEM_NOW", now.Add(d).Format(time.RFC3339))
}

// waitfile FILE [TIMEOUT]: waits until FILE exists and is non-empty.
func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: waitfile FILE [TIMEOUT]")
	}
	limit := 10 * time.Second
	if len(args) > 1 {
		d, err := time.ParseDuration(args[1])
		ts.Check(err)
		limit = d
	}
	deadline := time.Now().Add(limit)
	for {
		if st, err := os.Stat(ts.MkAbs(args[0])); err == nil && st.Size() > 0 {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("%s did not appear within %v", args[0], limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// jsonenv VAR FILE|stdout PATH: sets VAR to the gjson PATH of the JSON in
// FILE, failing when it is empty. Scripts use it to find a plan's number
// for an entry by its text instead of hard-coding numbers.
func cmdJSONEnv(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: jsonenv VAR FILE|stdout PATH")
	}
	data := ts.ReadFile(args[1])
	v := gjson.Get(data, args[2]).String()
	if v == "" {
		ts.Fatalf("%s: %s is empty in\n%s", args[1], args[2], data)
	}
	ts.Setenv(args[0], v)
}

// treehash OUT DIR...: writes one line per regular file under the DIRs
// (path, size, mode, SHA-256 of the bytes), sorted, so a script can prove
// that a command changed nothing at all.
func cmdTreeHash(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: treehash OUT DIR...")
	}
	var lines []string
	for _, dir := range args[1:] {
		root := ts.MkAbs(dir)
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			if d.IsDir() {
				lines = append(lines, fmt.Sprintf("%s/%s dir %v", dir, rel, info.Mode()))
				return nil
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			lines = append(lines, fmt.Sprintf("%s/%s %d %v %x", dir, rel, len(b), info.Mode(), sha256.Sum256(b)))
			return nil
		})
		ts.Check(err)
	}
	sort.Strings(lines)
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(strings.Join(lines, "\n")+"\n"), 0o644))
}

// exits CODE PROG [ARGS...]: runs PROG as exec does (its stdout and stderr
// are the script's to match next) and asserts that it exits with CODE: the
// usage errors' 2 is told from the other failures' 1.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE PROG [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("%s: %v", args[1], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}
