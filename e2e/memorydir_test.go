package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/intermem/intermem/pkg/project"
)

// TestMemoryDir checks that the auto-memory directory intermem computes is
// the one Claude Code itself uses, for project paths that exercise every
// rule of Claude Code's path encoding and for git layouts where the key is
// the main worktree root rather than the launch directory.
//
// Two facts are checked per case, in two sessions:
//  1. After a first session in a fresh HOME, the only memory directory
//     under <config>/projects, if any, is intermem's memory_dir: Claude
//     Code creates it at startup.
//  2. A MEMORY.md written into intermem's memory_dir reaches the model in
//     the next session (the ground truth: it is what Claude Code loads),
//     and one written where the launch directory would be keyed does not.
func TestMemoryDir(t *testing.T) {
	begin(t)
	cliPiece.require(t)
	t.Parallel()

	// odd is a path segment with spaces, dots, underscores, an '@', a
	// '+', a '~', non-ASCII letters and an emoji (two UTF-16 units).
	const odd = "My Project.v2_x@y+z~w ünï 😀"

	cases := []struct {
		name string
		// layout makes the project under base and returns the launch
		// directory and the root Claude Code keys its memory by.
		layout    func(t *testing.T, base string) (launch, root string)
		configDir bool // use CLAUDE_CONFIG_DIR instead of ~/.claude
	}{
		{name: "plain", layout: func(t *testing.T, base string) (string, string) {
			d := mkdir(t, base, "proj")
			return d, d
		}},
		{name: "odd characters and over 200", configDir: true, layout: func(t *testing.T, base string) (string, string) {
			d := mkdir(t, base, odd, odd, odd, odd, odd, odd, odd)
			if n := len(utf16.Encode([]rune(d))); n <= 200 {
				t.Fatalf("the path is %d UTF-16 units, want over 200: %s", n, d)
			}
			return d, d
		}},
		{name: "git subdirectory", layout: func(t *testing.T, base string) (string, string) {
			root := gitRepo(t, base, "repo")
			return mkdir(t, root, "sub", "deeper"), root
		}},
		{name: "git linked worktree", layout: func(t *testing.T, base string) (string, string) {
			root := gitRepo(t, base, "repo")
			wt := filepath.Join(base, "repo-wt")
			git(t, root, "worktree", "add", "-q", "-b", "wt", wt)
			return mkdir(t, wt, "pkg"), root
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			u := newUser(t)
			if c.configDir {
				u.withConfigDir(t)
			}
			launch, root := c.layout(t, scratch(t))

			st := u.observe(t, launch)
			if st.ProjectRoot != root {
				t.Errorf("intermem's project root for %s is %s, want %s", launch, st.ProjectRoot, root)
			}
			want := filepath.Join(u.config(), "projects", project.Encode(root), "memory")
			if st.MemoryDir != want {
				t.Errorf("intermem's memory_dir is\n  %s\nwant (Claude Code's encoding of %s)\n  %s", st.MemoryDir, root, want)
			}

			first := u.claude(t, launch, "hi")
			// Claude Code creates the memory directory at startup without
			// waiting for it (it logs nothing); on a loaded machine a short
			// session can exit first. Whatever it created must be ours.
			switch dirs := memoryDirs(t, u.config()); {
			case len(dirs) == 0:
				t.Logf("%s: Claude Code had not created a memory directory by exit; the MEMORY.md check decides", first.label)
			case len(dirs) > 1 || dirs[0] != st.MemoryDir:
				t.Errorf("%s: Claude Code created the memory directories\n  %s\nintermem computes\n  %s",
					first.label, strings.Join(dirs, "\n  "), st.MemoryDir)
			}

			seedMemory(t, st.MemoryDir, "MEMDIR-RIGHT")
			// Where the launch directory itself would be keyed.
			decoy := filepath.Join(u.config(), "projects", project.Encode(launch), "memory")
			if decoy != st.MemoryDir {
				seedMemory(t, decoy, "MEMDIR-DECOY")
			}
			second := u.claude(t, launch, "hi again")
			second.requireSent("MEMDIR-RIGHT: errors are wrapped", "MEMORY.md in intermem's memory_dir")
			second.requireNotSent("MEMDIR-DECOY", "MEMORY.md keyed by the launch directory")

			snapshotPiece.require(t)
			requireStore(t, root)
			if st := u.observe(t, launch); st.Entries == 0 {
				t.Errorf("the store of %s holds no entries after a session over a seeded MEMORY.md", root)
			}
		})
	}
}

// gitRepo makes a git repository with one commit at base/name.
func gitRepo(t *testing.T, base, name string) string {
	t.Helper()
	root := mkdir(t, base, name)
	git(t, root, "init", "-q", "-b", "main")
	writeFile(t, filepath.Join(root, "README"), "e2e\n")
	git(t, root, "add", "README")
	git(t, root, "commit", "-q", "-m", "init")
	return root
}
