package proof

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/store"
)

// hookCase is one stdin for the hooks and what it proves.
type hookCase struct {
	name   string
	proves string
	stdin  []byte
	bins   []string // hook binaries to feed it to
	// recorded, when set, is a session id this input must get recorded
	// (the input is odd but usable); inject, when true, demands a
	// SessionStart context from intermem-inject.
	recorded string
	inject   bool
}

var bothHooks = []string{"intermem-snapshot", "intermem-inject"}

// corpusCases reads testdata/badinput/hook and checks README.md describes
// every file there and in memory/.
func corpusCases(t *testing.T, root string) []hookCase {
	t.Helper()
	readme, err := os.ReadFile("../testdata/badinput/README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"hook", "memory"} {
		ents, err := os.ReadDir(filepath.Join("../testdata/badinput", sub))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if !bytes.Contains(readme, []byte("`"+e.Name()+"` — ")) {
				t.Errorf("testdata/badinput/%s/%s is not described in testdata/badinput/README.md", sub, e.Name())
			}
		}
	}
	ents, _ := os.ReadDir("../testdata/badinput/hook")
	var out []hookCase
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("../testdata/badinput/hook", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		b = bytes.ReplaceAll(b, []byte("@ROOT@"), []byte(root))
		line := readme[bytes.Index(readme, []byte("`"+e.Name()+"` — ")):]
		line = line[:bytes.IndexByte(line, '\n')]
		out = append(out, hookCase{name: "corpus/" + e.Name(), proves: string(line), stdin: b, bins: bothHooks})
	}
	if len(out) < 30 {
		t.Fatalf("the hook corpus has %d files; want the full set", len(out))
	}
	return out
}

// generatedCases are the inputs too large or too fixture-specific for files.
func generatedCases(t *testing.T, f *fixture) []hookCase {
	start := func(id, cwd string) string {
		return fmt.Sprintf(`{"session_id":%q,"cwd":%q,"hook_event_name":"SessionStart","source":"startup"}`, id, cwd)
	}
	big := func(id string, n int) []byte {
		p := payload(t, "Stop.2.1.197.json", id, f.root)
		p, err := sjson.Set(p, "last_assistant_message", strings.Repeat("x", n))
		if err != nil {
			t.Fatal(err)
		}
		return []byte(p)
	}
	nested := func(open, close string, depth int) []byte {
		return []byte(`{"session_id":"gen-nested","cwd":"` + f.root + `","hook_event_name":"Stop","x":` +
			strings.Repeat(open, depth) + strings.Repeat(close, depth) + `}`)
	}
	long := filepath.Join(f.dir, strings.Repeat("d", 10000))
	return []hookCase{
		{name: "gen/10MB-payload", proves: "a 10 MB payload is refused at the 4 MB cap, drained, and logged", stdin: big("gen-10mb", 10<<20), bins: bothHooks},
		{name: "gen/just-under-the-cap", proves: "a 4 MB payload under the cap is an ordinary Stop", stdin: big("gen-4mb", 4<<20-4096), bins: []string{"intermem-snapshot"}, recorded: "gen-4mb"},
		{name: "gen/nested-arrays", proves: "200,000 nested arrays in an ignored field neither crash nor block a hook", stdin: nested("[", "]", 200000), bins: bothHooks},
		{name: "gen/nested-objects", proves: "100,000 nested objects in an ignored field neither crash nor block a hook", stdin: nested(`{"a":`, "}", 100000), bins: bothHooks},
		{name: "gen/cwd-does-not-exist", proves: "a cwd that does not exist is no project: log, exit 0", stdin: []byte(start("gen-nodir", filepath.Join(f.dir, "gone", "away"))), bins: bothHooks},
		{name: "gen/cwd-is-a-file", proves: "a cwd that is a file is no project", stdin: []byte(start("gen-file", filepath.Join(f.root, "CLAUDE.md"))), bins: bothHooks},
		{name: "gen/cwd-is-relative", proves: "a relative cwd is not trusted: the hook uses its own directory (the project)", stdin: []byte(start("gen-rel", "proj")), bins: bothHooks, recorded: "gen-rel", inject: true},
		{name: "gen/cwd-of-10000-chars", proves: "a cwd of 10,000 characters (past PATH_MAX) is no project", stdin: []byte(start("gen-long", long)), bins: bothHooks},
	}
}

// wrongTypeCases replaces every field (nested ones too) of every real
// payload of a registered event with values of every other JSON type.
func wrongTypeCases(t *testing.T, f *fixture) []hookCase {
	t.Helper()
	files, err := filepath.Glob("../testdata/payloads/*.json")
	if err != nil {
		t.Fatal(err)
	}
	wrong := []struct{ name, raw string }{
		{"number", "42"}, {"bool", "true"}, {"null", "null"}, {"array", `[1,"two"]`}, {"object", `{"x":1}`}, {"string", `"wrong"`},
	}
	typeOf := func(v gjson.Result) string {
		switch {
		case v.IsObject():
			return "object"
		case v.IsArray():
			return "array"
		case v.Type == gjson.String:
			return "string"
		case v.Type == gjson.Number:
			return "number"
		case v.Type == gjson.True || v.Type == gjson.False:
			return "bool"
		}
		return "null"
	}
	seen := map[string]bool{}
	var out []hookCase
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		event := gjson.GetBytes(raw, "hook_event_name").String()
		bin := map[string]string{"Stop": "intermem-snapshot", "SessionEnd": "intermem-snapshot", "SessionStart": "intermem-inject"}[event]
		if bin == "" {
			continue // not an event intermem registers
		}
		var paths []string
		var walk func(prefix string, v gjson.Result)
		walk = func(prefix string, v gjson.Result) {
			v.ForEach(func(k, child gjson.Result) bool {
				p := k.String()
				if prefix != "" {
					p = prefix + "." + p
				}
				paths = append(paths, p)
				if child.IsObject() {
					walk(p, child)
				}
				return true
			})
		}
		walk("", gjson.ParseBytes(raw))
		for _, path := range paths {
			orig := typeOf(gjson.GetBytes(raw, path))
			for _, w := range wrong {
				key := event + "|" + path + "|" + w.name
				if w.name == orig || seen[key] {
					continue
				}
				seen[key] = true
				id := fmt.Sprintf("wt-%s-%s-%s", event, strings.ReplaceAll(path, ".", "_"), w.name)
				s := string(raw)
				s, _ = sjson.Set(s, "session_id", id)
				s, _ = sjson.Set(s, "cwd", f.root)
				s, err := sjson.SetRaw(s, path, w.raw)
				if err != nil {
					t.Fatal(err)
				}
				c := hookCase{
					name:   fmt.Sprintf("wrong-type/%s/%s=%s", filepath.Base(file), path, w.name),
					proves: fmt.Sprintf("a %s where %s %s has a %s is parsed leniently", event, event, path, orig),
					stdin:  []byte(s), bins: []string{bin},
				}
				usable := path != "session_id"
				if event != "SessionStart" && usable {
					c.recorded = id
				}
				c.inject = event == "SessionStart" && usable && path != "hook_event_name"
				out = append(out, c)
			}
		}
	}
	if len(out) < 50 {
		t.Fatalf("only %d wrong-type cases generated", len(out))
	}
	return out
}

// validSessionKey is what may ever become a session key in the store.
func validSessionKey(s string) bool {
	if s == "" || len(s) > 128 || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == '/' || r == '\\' {
			return false
		}
	}
	return true
}

// TestBadHookInput feeds every malformed stdin (the corpus in
// testdata/badinput/hook, generated oversize, nested and cwd cases, and a
// wrong-typed variant of every field of every real payload) to the hooks
// of a project with stable entries. Each hook must exit 0 within its
// hooks.json timeout, print nothing on stderr, nothing on stdout for
// Stop/SessionEnd and nothing or one valid JSON object for SessionStart.
// Usable inputs must still work (the session is recorded, the context
// injected). Afterwards no user file has changed, no invalid session id
// reached the store, and the store passes bbolt's consistency check.
func TestBadHookInput(t *testing.T) {
	t.Parallel()
	timeouts := hookTimeouts(t)
	f := promoteFixture(t, "tiered")
	f.sessions(3)
	before := f.tree()

	corpus, gen, wt := corpusCases(t, f.root), generatedCases(t, f), wrongTypeCases(t, f)
	cases := append(append(append([]hookCase(nil), corpus...), gen...), wt...)

	type job struct {
		c   hookCase
		bin string
	}
	type outcome struct {
		job
		res  result
		wall time.Duration
	}
	jobs := make(chan job)
	var (
		mu   sync.Mutex
		outs []outcome
		wg   sync.WaitGroup
	)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				cmd := exec.Command(filepath.Join(binDir, j.bin))
				cmd.Dir = f.root
				cmd.Env = f.env()
				cmd.Stdin = bytes.NewReader(j.c.stdin)
				var out, errb bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &errb
				t0 := time.Now()
				err := cmd.Run()
				o := outcome{job: j, wall: time.Since(t0), res: result{stdout: out.String(), stderr: errb.String()}}
				if ee, ok := err.(*exec.ExitError); ok {
					o.res.code = ee.ExitCode()
				} else if err != nil {
					o.res.code = -1
					o.res.stderr += err.Error()
				}
				mu.Lock()
				outs = append(outs, o)
				mu.Unlock()
			}
		}()
	}
	for _, c := range cases {
		for _, bin := range c.bins {
			jobs <- job{c, bin}
		}
		// What Claude Code runs: the hook front, which answers or hands
		// over to the hooks above.
		jobs <- job{c, "intermem-hook"}
	}
	close(jobs)
	wg.Wait()
	sort.Slice(outs, func(i, j int) bool { return outs[i].c.name+outs[i].bin < outs[j].c.name+outs[j].bin })
	// A Stop that met the store busy spooled its observation for the next
	// writer; the last one of the run may have had no writer after it. One
	// more Stop, alone, ingests the spool before the store is read.
	if r := f.run(fmt.Sprintf(`{"session_id":"bh-final","cwd":%q,"hook_event_name":"Stop"}`, f.root), nil, "intermem-snapshot"); r.code != 0 {
		t.Fatalf("final Stop: exit %d", r.code)
	}

	limit := map[string]time.Duration{"intermem-snapshot": timeouts["Stop"], "intermem-inject": timeouts["SessionStart"],
		"intermem-hook": min(timeouts["Stop"], timeouts["SessionStart"])}
	var worst time.Duration
	for _, o := range outs {
		fail := func(format string, args ...any) {
			t.Errorf("%s (%s) via %s: %s\nstdout: %q\nstderr: %q", o.c.name, o.c.proves, o.bin, fmt.Sprintf(format, args...), clip(o.res.stdout), clip(o.res.stderr))
		}
		if o.res.code != 0 {
			fail("exit %d, want 0", o.res.code)
		}
		if o.res.stderr != "" {
			fail("wrote to stderr")
		}
		if o.bin == "intermem-snapshot" && o.res.stdout != "" {
			fail("printed on stdout")
		}
		if o.bin == "intermem-inject" || o.bin == "intermem-hook" {
			if err := checkSessionStartOutput(o.res.stdout); err != nil {
				fail("invalid SessionStart output: %v", err)
			}
			if o.c.inject && o.res.stdout == "" {
				log, _ := os.ReadFile(filepath.Join(f.root, ".intermem", "log"))
				fail("a usable SessionStart payload injected nothing; the project log:\n%s", log)
			}
		}
		if o.wall > limit[o.bin] {
			fail("took %v, past the hooks.json timeout %v", o.wall, limit[o.bin])
		}
		if o.wall > worst {
			worst = o.wall
		}
	}

	diffTrees(t, "after the bad hook inputs, the user's files", f.tree(), before)
	var bad []string
	recorded := map[string]bool{}
	f.view(func(tx *bolt.Tx) error {
		return store.Each(tx, store.BucketSessions, func(id string, _ *store.Session) error {
			recorded[id] = true
			if !validSessionKey(id) {
				bad = append(bad, fmt.Sprintf("%q", id))
			}
			return nil
		})
	})
	if len(bad) > 0 {
		t.Errorf("invalid session ids reached the store: %v", bad)
	}
	usable, injects := 0, 0
	for _, c := range cases {
		if c.recorded != "" {
			usable++
		}
		if c.inject {
			injects++
		}
		if c.recorded != "" && !recorded[c.recorded] {
			t.Errorf("%s (%s): the usable payload's session %s was not recorded", c.name, c.proves, c.recorded)
		}
	}
	db, err := store.Open(f.storePath(), store.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Check(); err != nil {
		t.Errorf("bbolt consistency check after the bad inputs: %v", err)
	}
	if n := countFiles(t, filepath.Join(f.root, ".intermem", "spool", "bad"), ""); n != 0 {
		t.Errorf("%d spool files set aside as unreadable", n)
	}
	t.Logf("bad hook input: %d cases (%d corpus files, %d generated, %d wrong-type fields), %d hook runs, worst %v; %d usable odd inputs recorded, %d injected",
		len(cases), len(corpus), len(gen), len(wt), len(outs), worst.Round(time.Millisecond), usable, injects)
}

// clip shortens output for failure messages.
func clip(s string) string {
	if len(s) > 600 {
		return s[:600] + fmt.Sprintf("… (%d bytes)", len(s))
	}
	return s
}
