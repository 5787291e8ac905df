// Package loaded is the one definition of the instruction files Claude
// Code loads into a session's context when it starts (as the real client
// was observed to load them), and of what loaded text costs. The plan
// uses it to tell a memory that repeats something already loaded (offered
// for pruning, never for promotion) from one worth promoting; the
// SessionStart hook uses it to inject nothing Claude Code already shows;
// targets uses it to answer "will Claude Code load AGENTS.md?".
//
// # Discovery
//
// For a session whose working directory is Cwd, in this order:
//
//  1. the managed file /etc/claude-code/CLAUDE.md;
//  2. the user's <config>/CLAUDE.md and <config>/rules/**/*.md, config
//     being $CLAUDE_CONFIG_DIR or ~/.claude;
//  3. for every directory from the outermost parent of Cwd down to Cwd:
//     CLAUDE.md, .claude/CLAUDE.md and CLAUDE.local.md;
//  4. the .claude/rules/**/*.md of the project root and of Cwd, except a
//     rule whose frontmatter has a "paths:" key (Claude Code loads it only
//     when a matching file is touched);
//  5. every @import of those, recursively, resolved against the importing
//     file's directory (or absolute, or "~/"), at most MaxImportDepth hops
//     (observed: CLAUDE.md → c1 → c2 → c3 → c4 loaded, c5 dropped);
//  6. then, for every directory of step 3 that has no CLAUDE.md, its
//     AGENTS.md and what it imports: Claude Code 2.1.332 reads AGENTS.md
//     only there, and 2.1.197 never does. These files are not Strict.
//
// Files of steps 1–5 are Strict: every client loads them. An AGENTS.md
// reached by an import (CLAUDE.md saying "@AGENTS.md") is Strict too.
// Child directories' CLAUDE.md files load lazily, when Claude Code reads a
// file there, so they are not part of the set.
//
// # Invariants
//
// A file is read once, by real path (symlinks resolved), however many
// names reach it; the first (shallowest, Strict first) reach is the one
// recorded. Only regular files of at most MaxBytes are read; at most
// MaxFiles files are listed. Every filesystem question goes through FS, so
// a caller can record what the answer depended on (the SessionStart render
// cache does), and reading goes through the caller's read function, so a
// caller can serve derived data from its own cache.
package loaded

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Bounds on discovery, whatever the filesystem holds.
const (
	MaxFiles       = 64      // files in a set
	MaxBytes       = 1 << 20 // bytes of one file read
	MaxImportDepth = 4       // @import hops Claude Code follows
	maxParents     = 64      // directories walked up from Cwd
	maxRuleDepth   = 2       // subdirectory levels of a rules directory
)

// ManagedPath is the managed (organisation-wide) instruction file.
const ManagedPath = "/etc/claude-code/CLAUDE.md"

// Kind says why a file is loaded.
type Kind string

// The kinds of loaded files.
const (
	Managed      Kind = "managed"
	User         Kind = "user"          // <config>/CLAUDE.md
	UserRule     Kind = "user rule"     // <config>/rules/**/*.md
	Project      Kind = "project"       // CLAUDE.md or .claude/CLAUDE.md of Cwd or a parent
	ProjectLocal Kind = "project local" // CLAUDE.local.md
	ProjectRule  Kind = "project rule"  // .claude/rules/**/*.md
	Agents       Kind = "agents"        // AGENTS.md of a directory without CLAUDE.md
	Import       Kind = "import"        // @import of another loaded file
)

// Env says where a session runs.
type Env struct {
	Root      string // project root (git main worktree)
	Cwd       string // the session's working directory; "" means Root
	ConfigDir string // Claude Code's config dir; "" skips the user's files
	Home      string // for "~/" imports; "" skips them
	// NoManaged leaves out the managed file (for questions about the
	// project alone).
	NoManaged bool
}

// FS answers the filesystem questions discovery asks. os answers them
// for OS; the SessionStart hook passes a recorder.
type FS interface {
	Lstat(path string) (fs.FileInfo, error)
	Stat(path string) (fs.FileInfo, error)
	EvalSymlinks(path string) (string, error)
	ReadDir(path string) ([]fs.DirEntry, error)
}

// OS is the operating system's filesystem.
type OS struct{}

// Lstat is os.Lstat.
func (OS) Lstat(p string) (fs.FileInfo, error) { return os.Lstat(p) }

// Stat is os.Stat.
func (OS) Stat(p string) (fs.FileInfo, error) { return os.Stat(p) }

// EvalSymlinks is filepath.EvalSymlinks.
func (OS) EvalSymlinks(p string) (string, error) { return filepath.EvalSymlinks(p) }

// ReadDir is os.ReadDir.
func (OS) ReadDir(p string) ([]fs.DirEntry, error) { return os.ReadDir(p) }

// Meta is what discovery must know of a file's content.
type Meta struct {
	Imports []string // @imports as written (Imports of package mdoc)
	// Scoped is set for a file whose frontmatter has a "paths:" key
	// (HasPathsKey): a rule that loads only on demand.
	Scoped bool
}

// File is one loaded file and the caller's data for it.
type File[D any] struct {
	Path   string // as reached (an import resolved against its importer)
	Real   string // symlinks resolved
	Kind   Kind
	Depth  int    // @import hops from a file of steps 1–4 or 6
	Via    string // directory whose file brought it in ("" for the managed and user files)
	Strict bool   // every client loads it
	Doc    D
}

// Read returns the caller's data for a regular file (reached at path,
// real path real, at most MaxBytes) and its Meta; ok false leaves the file
// out.
type Read[D any] func(path, real string, fi fs.FileInfo) (doc D, meta Meta, ok bool)

// Set is what Claude Code loads at session start.
type Set[D any] struct {
	Env   Env
	Files []File[D]
}

type pending struct {
	path  string
	kind  Kind
	depth int
	via   string
	rule  bool
}

// Discover finds the files Claude Code loads for a session in env.Cwd.
func Discover[D any](env Env, fsys FS, read Read[D]) *Set[D] {
	if fsys == nil {
		fsys = OS{}
	}
	cwd := env.Cwd
	if cwd == "" {
		cwd = env.Root
	}
	s := &Set[D]{Env: env}
	seen := map[string]bool{}
	// Directories from the outermost parent down to cwd.
	var dirs []string
	for d, i := filepath.Clean(cwd), 0; i < maxParents; i++ {
		dirs = append(dirs, d)
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	for i, j := 0, len(dirs)-1; i < j; i, j = i+1, j-1 {
		dirs[i], dirs[j] = dirs[j], dirs[i]
	}

	var queue []pending
	push := func(p pending) { queue = append(queue, p) }
	pushRules := func(dir string, kind Kind, via string) {
		for _, r := range ruleFiles(fsys, dir) {
			push(pending{path: r, kind: kind, via: via, rule: true})
		}
	}
	if !env.NoManaged {
		push(pending{path: ManagedPath, kind: Managed})
	}
	if env.ConfigDir != "" {
		push(pending{path: filepath.Join(env.ConfigDir, "CLAUDE.md"), kind: User})
		pushRules(filepath.Join(env.ConfigDir, "rules"), UserRule, "")
	}
	hasClaude := map[string]bool{}
	for _, d := range dirs {
		p := filepath.Join(d, "CLAUDE.md")
		hasClaude[d] = usable(fsys, p)
		push(pending{path: p, kind: Project, via: d})
		push(pending{path: filepath.Join(d, ".claude", "CLAUDE.md"), kind: Project, via: d})
		push(pending{path: filepath.Join(d, "CLAUDE.local.md"), kind: ProjectLocal, via: d})
	}
	root := filepath.Clean(env.Root)
	if env.Root != "" {
		pushRules(filepath.Join(root, ".claude", "rules"), ProjectRule, root)
	}
	if c := filepath.Clean(cwd); c != root {
		pushRules(filepath.Join(c, ".claude", "rules"), ProjectRule, c)
	}
	s.drain(env, fsys, read, queue, seen, true)

	// AGENTS.md of directories without CLAUDE.md: newer clients only.
	queue = queue[:0]
	for _, d := range dirs {
		if !hasClaude[d] {
			push(pending{path: filepath.Join(d, "AGENTS.md"), kind: Agents, via: d})
		}
	}
	s.drain(env, fsys, read, queue, seen, false)
	return s
}

// drain reads the queued files breadth first, so a file is recorded at
// its shallowest reach, and queues their imports.
func (s *Set[D]) drain(env Env, fsys FS, read Read[D], queue []pending, seen map[string]bool, strict bool) {
	for len(queue) > 0 && len(s.Files) < MaxFiles {
		p := queue[0]
		queue = queue[1:]
		real, fi, ok := resolve(fsys, p.path)
		if !ok || seen[real] {
			continue
		}
		doc, meta, ok := read(p.path, real, fi)
		if !ok || (p.rule && meta.Scoped) {
			continue
		}
		seen[real] = true
		s.Files = append(s.Files, File[D]{Path: p.path, Real: real, Kind: p.kind, Depth: p.depth, Via: p.via, Strict: strict, Doc: doc})
		if p.depth >= MaxImportDepth {
			continue
		}
		for _, imp := range meta.Imports {
			if path, ok := ImportPath(imp, real, env.Home); ok {
				queue = append(queue, pending{path: path, kind: Import, depth: p.depth + 1, via: p.via})
			}
		}
	}
}

// ImportPath resolves an @import written in the file at real: relative to
// its directory, absolute, or under home for "~/". ok is false for a "~/"
// import without a home.
func ImportPath(imp, real, home string) (string, bool) {
	switch {
	case strings.HasPrefix(imp, "~/"):
		if home == "" {
			return "", false
		}
		return filepath.Join(home, imp[2:]), true
	case filepath.IsAbs(imp):
		return filepath.Clean(imp), true
	}
	return filepath.Join(filepath.Dir(real), imp), true
}

// resolve returns the real path and file info of a regular file of at
// most MaxBytes at path, symlinks followed.
func resolve(fsys FS, path string) (string, fs.FileInfo, bool) {
	// Most candidate paths do not exist: one lstat says so, where
	// resolving symlinks would lstat every component first.
	if _, err := fsys.Lstat(path); err != nil {
		return "", nil, false
	}
	real, err := fsys.EvalSymlinks(path)
	if err != nil {
		return "", nil, false
	}
	fi, err := fsys.Stat(real)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > MaxBytes {
		return "", nil, false
	}
	return real, fi, true
}

// usable reports whether path is a regular file discovery would read.
func usable(fsys FS, path string) bool {
	_, _, ok := resolve(fsys, path)
	return ok
}

// ruleFiles lists the *.md files under a rules directory, maxRuleDepth
// levels of subdirectories deep at most, sorted.
func ruleFiles(fsys FS, dir string) []string {
	var out []string
	var walk func(d string, depth int)
	walk = func(d string, depth int) {
		ents, err := fsys.ReadDir(d)
		if err != nil {
			return
		}
		for _, en := range ents {
			p := filepath.Join(d, en.Name())
			switch {
			case strings.HasPrefix(en.Name(), "."):
			case en.IsDir():
				if depth < maxRuleDepth {
					walk(p, depth+1)
				}
			case strings.HasSuffix(en.Name(), ".md") && len(out) < MaxFiles:
				out = append(out, p)
			}
		}
	}
	walk(dir, 0)
	sort.Strings(out)
	return out
}

// HasPathsKey reports whether content opens with YAML frontmatter holding
// a top-level "paths" key.
func HasPathsKey(b []byte) bool {
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	if !bytes.HasPrefix(b, []byte("---\n")) && !bytes.HasPrefix(b, []byte("---\r\n")) {
		return false
	}
	lines := bytes.Split(b, []byte("\n"))
	for _, l := range lines[1:] {
		l = bytes.TrimRight(l, "\r")
		if string(bytes.TrimSpace(l)) == "---" {
			return false
		}
		if bytes.HasPrefix(l, []byte("paths:")) || bytes.HasPrefix(l, []byte("paths :")) {
			return true
		}
	}
	return false
}

// Loads reports whether the set holds the file whose real path is real,
// and whether every client loads it.
func (s *Set[D]) Loads(real string) (loaded, strict bool) {
	for _, f := range s.Files {
		if f.Real == real {
			return true, f.Strict
		}
	}
	return false, false
}

// Below reports whether f came from a directory strictly below the
// project root (the session started in a subdirectory): what the whole
// project shares excludes it.
func (f *File[D]) Below(root string) bool {
	root = filepath.Clean(root)
	return f.Via != "" && f.Via != root && strings.HasPrefix(f.Via, root+string(filepath.Separator))
}

// Name is how a person knows a loaded file: relative to the project root
// when inside it, "~/…" under the home directory, else absolute.
func Name(path, root, home string) string {
	if root != "" {
		if rel, err := filepath.Rel(root, path); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
			return filepath.ToSlash(rel)
		}
	}
	if home != "" {
		if rel, err := filepath.Rel(home, path); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
			return "~/" + filepath.ToSlash(rel)
		}
	}
	return path
}
