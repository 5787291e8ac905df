package inject

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/hookfront"
	"github.com/intermem/intermem/pkg/hookio"
	"github.com/intermem/intermem/pkg/inject/benchgen"
	"github.com/intermem/intermem/pkg/project"
	"github.com/intermem/intermem/pkg/snapshot"
	"github.com/intermem/intermem/pkg/source"
	"github.com/intermem/intermem/pkg/store"
)

// The render cache must be exact: after any change to anything a rendering
// depends on, the hook's answer equals a fresh computation byte for byte;
// with no change, the answer comes from the cache.
func TestRenderCacheIsExact(t *testing.T) { renderCacheIsExact(t, false) }

// The same through the hook front (hookfront.Main), as Claude Code runs
// it: a hit is served by the front itself, byte for byte what
// intermem-inject prints, and every change hands the session start over
// to intermem-inject (here this package's hook, in process).
func TestRenderCacheIsExactThroughTheFront(t *testing.T) { renderCacheIsExact(t, true) }

// benchProject generates the benchmark's default project (benchgen) in a
// temporary directory dir, as of now.
func benchProject(t *testing.T) (dir string, now time.Time, pr *benchgen.Project) {
	t.Helper()
	dir = t.TempDir()
	now = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	pr, err := benchgen.Write(filepath.Join(dir, "k"), benchgen.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return dir, now, pr
}

// startThroughFront runs the session start env holds through the hook
// front, which hands it over, when its cache does not hold, to this
// package's hook in process (self, this test's executable, is the
// renderer the front's key names), with vars and working directory root;
// the hook's output goes to out, and handed counts the hand-overs.
func startThroughFront(t *testing.T, env *cli.Env, vars []string, root, self string, out *bytes.Buffer, handed *int) {
	t.Helper()
	hookfront.Main(env, nil, hookfront.Options{Inject: self, Exec: func(path string, args []string, input []byte) error {
		if path != self {
			t.Fatalf("handed over to %s", path)
		}
		*handed++
		hookio.Run(cli.New(vars, root, bytes.NewReader(input), out, &bytes.Buffer{}), args, HookOptions, Hook)
		return nil
	}})
}

func renderCacheIsExact(t *testing.T, front bool) {
	dir, now, pr := benchProject(t)
	home := filepath.Join(dir, "home")
	os.MkdirAll(filepath.Join(home, ".claude"), 0o755)
	cwd := pr.Root
	budget := "1200"
	// The front's key names the renderer by its executable: this test's,
	// which renders in process.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	handed := 0
	run := func() string {
		t.Helper()
		payload := `{"session_id":"s","cwd":"` + cwd + `","hook_event_name":"SessionStart","source":"startup"}`
		var out bytes.Buffer
		vars := []string{"HOME=" + home, "INTERMEM_MEMORY_DIR=" + pr.MemoryDir,
			"INTERMEM_NOW=" + now.Format(time.RFC3339), "INTERMEM_TOKEN_BUDGET=" + budget}
		env := cli.New(vars, pr.Root, strings.NewReader(payload), &out, &bytes.Buffer{})
		if !front {
			hookio.Run(env, nil, HookOptions, Hook)
			return out.String()
		}
		startThroughFront(t, env, vars, pr.Root, self, &out, &handed)
		return out.String()
	}
	renderPath := filepath.Join(pr.Root, ".intermem", RenderCacheName)
	check := func(what string) {
		t.Helper()
		h := handed
		cached := run()
		if front && handed == h {
			t.Fatalf("%s: the front served a rendering the change invalidated", what)
		}
		if _, err := os.Stat(renderPath); err != nil {
			t.Fatalf("%s: no render cache written: %v", what, err)
		}
		os.Remove(renderPath)
		fresh := run()
		if cached != fresh {
			log, _ := os.ReadFile(filepath.Join(pr.Root, ".intermem", "log"))
			t.Fatalf("%s: the cached answer differs from a fresh one\n--- cached\n%s\n--- fresh\n%s\n--- log\n%s", what, cached, fresh, log)
		}
		// Unchanged inputs are served from the cache: poison the cached
		// text and see it come back.
		b, _ := os.ReadFile(renderPath)
		i := bytes.LastIndex(b, []byte("\ntext "))
		poisoned := append(append([]byte{}, b[:i]...), []byte("\ntext 8\nPOISONED")...)
		os.WriteFile(renderPath, poisoned, 0o600)
		h = handed
		if got := run(); !strings.Contains(got, "POISONED") {
			t.Fatalf("%s: with nothing changed the cache was not used", what)
		}
		if front && handed != h {
			t.Fatalf("%s: the front handed a cache hit over", what)
		}
		os.WriteFile(renderPath, b, 0o600)
		if got := run(); front && got != fresh {
			t.Fatalf("%s: the front's answer differs from intermem-inject's\n--- front\n%s\n--- inject\n%s", what, got, fresh)
		}
	}
	write := func(path, s string) {
		t.Helper()
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	appendTo := func(path, s string) {
		t.Helper()
		b, _ := os.ReadFile(path)
		write(path, string(b)+s)
	}
	tick := func() { time.Sleep(5 * time.Millisecond) } // distinct mtimes on coarse filesystems
	settled := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	// shown returns the text and the cited file of the first memory the
	// answer shows, so a step can repeat it in a loaded document (it must
	// then drop out) or touch its file (its recency must change).
	shown := func() (text, cited string) {
		t.Helper()
		out := run()
		ctx := strings.ReplaceAll(out, `\u003e`, ">")
		_, rest, ok := strings.Cut(ctx, "Memories not loaded")
		if !ok {
			t.Fatalf("no memories shown:\n%s", out)
		}
		for _, line := range strings.Split(rest, `\n`)[1:] {
			if !strings.HasPrefix(line, "- topic_") {
				continue
			}
			_, text, _ = strings.Cut(line, ": ")
			text, _, _ = strings.Cut(text, " (relevant:")
			if i := strings.Index(text, "`"); i >= 0 {
				if j := strings.Index(text[i+1:], "`"); j >= 0 {
					cited = text[i+1 : i+1+j]
				}
			}
			text = strings.ReplaceAll(text, `\"`, `"`)
			return text, cited
		}
		t.Fatalf("no topic fact shown:\n%s", ctx)
		return "", ""
	}
	repeatIn := func(path string) func() {
		return func() {
			text, _ := shown()
			appendTo(path, "\n- "+text+"\n")
		}
	}

	check("initial")
	ents, _ := os.ReadDir(pr.MemoryDir)
	var topic string
	for _, e := range ents {
		if e.Name() != "MEMORY.md" && strings.HasSuffix(e.Name(), ".md") {
			topic = filepath.Join(pr.MemoryDir, e.Name())
			break
		}
	}
	steps := []struct {
		what string
		do   func()
	}{
		{"a topic file edited in place", func() { appendTo(topic, "\n- A new fact about the ledger cache.\n") }},
		{"a topic file added", func() {
			write(filepath.Join(pr.MemoryDir, "zz_new.md"), "---\nname: zz\ndescription: Brand new memory about invoices\ntype: project\n---\nBody.\n")
		}},
		{"a topic file removed", func() { os.Remove(filepath.Join(pr.MemoryDir, "zz_new.md")) }},
		{"a topic file added, the directory's time set back", func() {
			write(filepath.Join(pr.MemoryDir, "zz_back.md"), "---\nname: zb\ndescription: Memory about refunds\ntype: project\n---\nBody.\n")
			os.Chtimes(pr.MemoryDir, settled, settled)
		}},
		{"MEMORY.md edited", func() { appendTo(filepath.Join(pr.MemoryDir, "MEMORY.md"), "- Another capped fact.\n") }},
		{"CLAUDE.md repeats a shown memory", repeatIn(filepath.Join(pr.Root, "CLAUDE.md"))},
		{"AGENTS.md gains a promoted fact", func() {
			appendTo(filepath.Join(pr.Root, "AGENTS.md"), "\n- Promoted fact. <!-- intermem:0123456789abcdef -->\n")
		}},
		{"a detail document added", func() {
			write(filepath.Join(pr.Root, "docs", "intermem", "zz-topic.md"), "# ZZ topic\n\n- A detail. <!-- intermem:1111222233334444 -->\n")
		}},
		{"CLAUDE.local.md created, repeating a shown memory", repeatIn(filepath.Join(pr.Root, "CLAUDE.local.md"))},
		{"an unconditional rule repeating a shown memory", repeatIn(filepath.Join(pr.Root, ".claude", "rules", "style.md"))},
		{"the user's global CLAUDE.md repeating a shown memory", repeatIn(filepath.Join(home, ".claude", "CLAUDE.md"))},
		{"a CLAUDE.md in a parent directory repeating a shown memory", repeatIn(filepath.Join(filepath.Dir(pr.Root), "CLAUDE.md"))},
		{"the branch switched", func() {
			// What git checkout -b writes (the generated project's .git
			// holds only HEAD).
			write(filepath.Join(pr.Root, ".git", "HEAD"), "ref: refs/heads/fix/ledger-rounding\n")
		}},
		{"a session end stored a solution for the branch", func() {
			write(filepath.Join(pr.Root, "docs", "solutions", "logic", "ledger-rounding.md"),
				"---\ncomponent: ledger\n---\n# Ledger rounding drifted\n\n## Root Cause\nRounding ran twice; see `src/zz.go`.\n")
			old := now.Add(-400 * 24 * time.Hour)
			write(filepath.Join(pr.Root, "src", "zz.go"), "package src\n")
			os.Chtimes(filepath.Join(pr.Root, "src", "zz.go"), old, old)
			s, err := store.Open(filepath.Join(pr.Root, ".intermem", "intermem.db"), store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := snapshot.RefreshCatalog(s, snapshot.Refresh{Env: source.Env{Root: pr.Root, MemoryDir: pr.MemoryDir}, Now: now}); err != nil {
				t.Fatal(err)
			}
		}},
		{"a shown solution's cited file changed", func() {
			os.Chtimes(filepath.Join(pr.Root, "src", "zz.go"), now.Add(-time.Minute), now.Add(-time.Minute))
		}},
		{"a shown solution's document deleted", func() {
			os.Rename(filepath.Join(pr.Root, "docs", "solutions", "logic", "ledger-rounding.md"), filepath.Join(pr.Root, "ledger-rounding.md.bak"))
		}},
		{"the solution's document restored", func() {
			os.Rename(filepath.Join(pr.Root, "ledger-rounding.md.bak"), filepath.Join(pr.Root, "docs", "solutions", "logic", "ledger-rounding.md"))
		}},
		{"config.json switched the solutions off", func() {
			write(filepath.Join(pr.Root, ".intermem", "config.json"), `{"sources": {"compound": false}}`)
		}},
		{"a shown memory's cited file aged", func() {
			_, cited := shown()
			if cited == "" {
				t.Fatal("the first shown memory cites no file")
			}
			p := filepath.Join(pr.Root, filepath.FromSlash(cited))
			os.MkdirAll(filepath.Dir(p), 0o755)
			if _, err := os.Stat(p); err != nil {
				write(p, "package x\n")
			}
			old := now.Add(-40 * 24 * time.Hour)
			os.Chtimes(p, old, old)
		}},
		{"time crossed a recency boundary", func() { now = now.Add(2 * time.Hour) }},
		{"the store was written", func() {
			s, err := store.Open(filepath.Join(pr.Root, ".intermem", "intermem.db"), store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			s.Update(func(tx *bolt.Tx) error {
				return store.Put(tx, store.BucketPromoted, "0123456789abcdef", &store.Promoted{ID: "0123456789abcdef", Confidence: 0.1})
			})
			s.Close()
		}},
		{"the session's cwd moved below the root", func() { cwd = filepath.Join(pr.Root, "internal"); os.MkdirAll(cwd, 0o755) }},
		{"the budget changed", func() { budget = "300" }},
	}
	for _, st := range steps {
		// The memory directory last changed long ago, as it usually has:
		// the cache records its stat, not its names.
		os.Chtimes(pr.MemoryDir, settled, settled)
		before := run() // the cache is current before the change
		tick()
		st.do()
		tick()
		check(st.what)
		// Each change must alter the answer, or a stale cache hit could
		// pass unnoticed.
		if after := run(); after == before {
			t.Errorf("%s: the answer did not change, so this step proves nothing", st.what)
		}
	}
}

// A session start cut off by its deadline answers nothing and caches no
// rendering. (What it parsed of the memory files it does not keep: the
// Stop hook's sweep stores every file's parse in the catalog.)
func TestCutOffCachesNothing(t *testing.T) {
	dir, now, pr := benchProject(t)
	env := cli.New([]string{"HOME=" + filepath.Join(dir, "home"), "INTERMEM_MEMORY_DIR=" + pr.MemoryDir},
		pr.Root, strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{})
	p, err := project.Resolve(env, pr.Root)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the deadline passed while it worked
	h := &hookio.Hook{Name: "intermem-inject", Env: env, Project: p, Now: now,
		Input: hookio.Input{Event: "SessionStart", Source: "startup", SessionID: "s", Cwd: pr.Root}}
	if out, err := Hook(ctx, h); err == nil || out != nil {
		t.Fatalf("a session start past its deadline answered %q, %v", out, err)
	}
	if _, err := os.Stat(filepath.Join(pr.Root, ".intermem", RenderCacheName)); err == nil {
		t.Fatalf("a session start past its deadline wrote the render cache")
	}
}
