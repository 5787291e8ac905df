package proof

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// hostileCase is a project or memory dir made hostile, and what it proves.
type hostileCase struct {
	name, proves string
	setup        func(t *testing.T, f *fixture)
	// mustWork lists commands (joined by spaces) that must succeed:
	// intermem can do their job despite the hostile file.
	mustWork []string
	// check runs further assertions after every command ran.
	check func(t *testing.T, f *fixture)
	// fifos are the FIFOs setup made, relative to the fixture directory
	// ("proj/…", "mem/…"): no process may open one for reading.
	fifos []string
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	os.Remove(path)
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
}

func replaceWithDir(t *testing.T, path string) {
	t.Helper()
	os.RemoveAll(path)
	if err := os.MkdirAll(filepath.Join(path, "inside"), 0o755); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, path string) {
	t.Helper()
	os.RemoveAll(path)
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
}

func hostileCases(t *testing.T) []hostileCase {
	all := []string{}
	for _, c := range cliCommands {
		all = append(all, strings.Join(c, " "))
	}
	cases := []hostileCase{
		{
			name: "memory-topic-file-is-a-fifo", proves: "a FIFO among the memory files is skipped, not read (reading it would block forever)",
			setup:    func(t *testing.T, f *fixture) { mkfifo(t, filepath.Join(f.memDir, "topic.md")) },
			mustWork: all, fifos: []string{"mem/topic.md"},
		},
		{
			name: "memory-md-is-a-fifo", proves: "a FIFO named MEMORY.md is skipped, not read",
			setup:    func(t *testing.T, f *fixture) { mkfifo(t, filepath.Join(f.memDir, "MEMORY.md")) },
			mustWork: all, fifos: []string{"mem/MEMORY.md"},
		},
		{
			name: "claude-md-is-a-fifo", proves: "a FIFO named CLAUDE.md never hangs a hook or a command",
			setup: func(t *testing.T, f *fixture) { mkfifo(t, filepath.Join(f.root, "CLAUDE.md")) },
			fifos: []string{"proj/CLAUDE.md"},
		},
		{
			name: "memory-symlink-loops", proves: "symlink loops in the memory dir (self, two-cycle, directory) are skipped",
			setup: func(t *testing.T, f *fixture) {
				symlink(t, "loop.md", filepath.Join(f.memDir, "loop.md"))
				symlink(t, "b.md", filepath.Join(f.memDir, "a.md"))
				symlink(t, "a.md", filepath.Join(f.memDir, "b.md"))
				symlink(t, ".", filepath.Join(f.memDir, "again"))
			},
			mustWork: all,
		},
		{
			name: "project-symlink-loops", proves: "CLAUDE.md and AGENTS.md that are symlink loops, and a docs/intermem loop, are reported, never followed forever",
			setup: func(t *testing.T, f *fixture) {
				symlink(t, "CLAUDE.md", filepath.Join(f.root, "CLAUDE.md"))
				symlink(t, "AGENTS.md", filepath.Join(f.root, "AGENTS.md"))
				os.MkdirAll(filepath.Join(f.root, "docs"), 0o755)
				symlink(t, "../docs/intermem", filepath.Join(f.root, "docs", "intermem"))
			},
		},
		{
			name: "claude-md-is-a-directory", proves: "a directory named CLAUDE.md is reported, never written into",
			setup: func(t *testing.T, f *fixture) { replaceWithDir(t, filepath.Join(f.root, "CLAUDE.md")) },
		},
		{
			name: "agents-md-is-a-directory", proves: "a directory named AGENTS.md is reported, never written into",
			setup: func(t *testing.T, f *fixture) { replaceWithDir(t, filepath.Join(f.root, "AGENTS.md")) },
		},
		{
			name: "memory-md-is-a-directory", proves: "a directory named MEMORY.md is skipped",
			setup:    func(t *testing.T, f *fixture) { replaceWithDir(t, filepath.Join(f.memDir, "MEMORY.md")) },
			mustWork: all,
		},
		{
			name: "docs-intermem-is-a-file", proves: "a file where the detail-docs directory should be is reported, never clobbered",
			setup: func(t *testing.T, f *fixture) {
				f.write(filepath.Join(f.root, "docs", "intermem"), "not a directory\n")
			},
		},
		{
			name: "state-dir-is-a-file", proves: "a file named .intermem (where intermem keeps its state) is reported and kept",
			setup: func(t *testing.T, f *fixture) {
				f.write(filepath.Join(f.root, ".intermem"), "the user's own .intermem file\n")
			},
		},
		{
			name: "memory-dir-is-a-file", proves: "a memory dir that is a file is reported, never replaced",
			setup: func(t *testing.T, f *fixture) {
				os.RemoveAll(f.memDir)
				f.write(f.memDir, "not a directory\n")
			},
		},
		{
			name: "memory-md-of-100000-lines", proves: "a 100,000-line MEMORY.md is read whole and measured against the load cap",
			setup: func(t *testing.T, f *fixture) {
				var b strings.Builder
				b.WriteString("# Memory\n")
				for i := 0; i < 100000; i++ {
					fmt.Fprintf(&b, "- fact %d\n", i)
				}
				f.write(filepath.Join(f.memDir, "MEMORY.md"), b.String())
				os.Remove(filepath.Join(f.memDir, "topic.md"))
			},
			mustWork: all,
			check: func(t *testing.T, f *fixture) {
				var st struct {
					Entries, MemoryMDLines, LoadedLines, BeyondLoadCap int
				}
				r := f.must("intermem", "status", "--json")
				decodeJSON(t, "status --json", strings.NewReplacer(`"memory_md_lines"`, `"MemoryMDLines"`, `"memory_md_loaded_lines"`, `"LoadedLines"`, `"beyond_load_cap"`, `"BeyondLoadCap"`).Replace(r.stdout), &st)
				// 100,000 bullets after a heading: 100,001 lines; lines 1–200
				// load, holding bullets 0–198; the other 99,801 are past the cap.
				if st.Entries != 100000 || st.MemoryMDLines != 100001 || st.LoadedLines != 200 || st.BeyondLoadCap != 99801 {
					t.Errorf("status of a 100,000-line MEMORY.md: %+v; want 100000 entries, 100001 lines, 200 loaded, 99801 beyond the cap", st)
				}
				if r := f.must("intermem", "search", "fact 99999"); !strings.Contains(r.stdout, "fact 99999") {
					t.Errorf("search does not find the last line of a 100,000-line MEMORY.md:\n%s", r.stdout)
				}
			},
		},
		{
			name: "binary-garbage", proves: "random bytes in MEMORY.md, a topic file and CLAUDE.md are read as text, never crash anything",
			setup: func(t *testing.T, f *fixture) {
				rng := rand.New(rand.NewSource(1))
				garbage := func(n int) string {
					b := make([]byte, n)
					rng.Read(b)
					return string(b)
				}
				f.write(filepath.Join(f.memDir, "MEMORY.md"), garbage(64<<10))
				f.write(filepath.Join(f.memDir, "topic.md"), garbage(16<<10))
				f.write(filepath.Join(f.root, "CLAUDE.md"), garbage(32<<10))
			},
			mustWork: all,
		},
		{
			name: "malformed-memory-corpus", proves: "every file of testdata/badinput/memory together in one memory dir is handled",
			setup: func(t *testing.T, f *fixture) {
				ents, err := os.ReadDir("../testdata/badinput/memory")
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range ents {
					b, err := os.ReadFile(filepath.Join("../testdata/badinput/memory", e.Name()))
					if err != nil {
						t.Fatal(err)
					}
					f.write(filepath.Join(f.memDir, e.Name()), string(b))
				}
			},
			mustWork: all,
		},
	}
	if os.Geteuid() != 0 {
		cases = append(cases,
			hostileCase{
				name: "memory-md-unreadable", proves: "an unreadable MEMORY.md (mode 000) is reported or skipped",
				setup: func(t *testing.T, f *fixture) { os.Chmod(filepath.Join(f.memDir, "MEMORY.md"), 0) },
			},
			hostileCase{
				name: "claude-md-unreadable", proves: "an unreadable CLAUDE.md (mode 000) is reported, never replaced",
				setup: func(t *testing.T, f *fixture) { os.Chmod(filepath.Join(f.root, "CLAUDE.md"), 0) },
			},
		)
	} else {
		t.Logf("running as root: mode 000 does not stop root from reading, so the unreadable-file cases are replaced by FIFOs (a file that cannot be read without blocking) and directories named like the files")
	}
	return cases
}

// TestHostileFiles makes a project or its memory dir hostile, one way per
// case, then fires the hooks and runs every command. Hooks keep their
// rules; commands work normally (where the case says they can) or fail
// with an error and a hint, never hang or crash; afterwards every user
// file, FIFO, symlink and directory is exactly as it was.
func TestHostileFiles(t *testing.T) {
	timeouts := hookTimeouts(t)
	for _, c := range hostileCases(t) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := hostileFixture(t)
			c.setup(t, f)
			before := fsState(t, f)
			must := map[string]bool{}
			for _, m := range c.mustWork {
				must[m] = true
			}
			var fifos []string
			for _, p := range c.fifos {
				fifos = append(fifos, f.abs(p))
			}
			runHooks(t, f, timeouts, "hostile-"+c.name, fifos)
			for _, args := range cliCommands {
				stop := watchFIFOs(fifos)
				r, _, hung := f.runLimited("", nil, args[0], args[1:]...)
				what := fmt.Sprintf("%s (%s): %s", c.name, c.proves, strings.Join(args, " "))
				for _, p := range stop() {
					t.Errorf("%s opened the FIFO %s for reading: without a writer that blocks forever", what, p)
				}
				checkCLI(t, what, r, hung, must[strings.Join(args, " ")])
			}
			if c.check != nil {
				c.check(t, f)
			}
			after := fsState(t, f)
			for path := range union(before, after) {
				if before[path] != after[path] {
					t.Errorf("%s (%s): %s changed:\n--- before\n%s\n--- after\n%s", c.name, c.proves, path, clip(before[path]), clip(after[path]))
				}
			}
		})
	}
}
