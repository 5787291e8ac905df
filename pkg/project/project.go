// Package project locates the things intermem works on: the project root
// (the git main-worktree root, as Claude Code keys auto-memory by it), the
// auto-memory directory Claude Code keeps for that root, and intermem's own
// state directory.
//
// Not every directory is a project. A session started in the user's home
// directory or at / resolves to that directory itself (no git repository
// above it), and intermem would keep a state directory there and offer to
// promote into ~/CLAUDE.md for everything below it. Resolve refuses both
// (ErrNoProject) unless the directory is itself a git repository, so no
// binary creates anything there: commands say so, hooks do nothing.
//
// The state directory must be a real directory of the user's, holding
// only real files and directories of the user's (package confine): a
// .intermem that is a link to a shared directory, or a .intermem/log that
// is a link to ~/.bashrc, would make intermem write where it may not.
// CheckState enforces it before any use; EnsureStateDir before any write.
//
// Nothing here spawns git: hooks run on every turn and a fork+exec of git
// costs more than the whole hook budget. The .git file/dir layout is read
// directly instead (a linked worktree's ".git" file names its gitdir, whose
// "commondir" file names the main repository's .git directory).
package project

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf16"

	"github.com/intermem/intermem/pkg/clienv"
	"github.com/intermem/intermem/pkg/confine"
	"github.com/intermem/intermem/pkg/jsonscan"
	"github.com/intermem/intermem/pkg/statefile"
)

// StateDirName is the per-project directory holding intermem's private state.
const StateDirName = ".intermem"

// Project is one resolved project.
type Project struct {
	Root      string // absolute project root
	MemoryDir string // Claude Code's auto-memory directory for Root
	StateDir  string // Root/.intermem
}

// ErrNoProject is returned when a directory resolves to no project: to the
// filesystem root or the user's home directory, neither of them a git
// repository.
var ErrNoProject = errors.New("not inside a project")

// Resolve finds the project containing dir and its memory directory. It
// refuses (ErrNoProject) a root that is / or the user's home directory,
// unless that directory is itself a git repository.
func Resolve(env *clienv.Env, dir string) (*Project, error) {
	root, repo, err := findRoot(dir)
	if err != nil {
		return nil, err
	}
	if !repo {
		if what := noProject(env, root); what != "" {
			return nil, fmt.Errorf("%w: %s is %s, and not a git repository", ErrNoProject, root, what)
		}
	}
	mem, err := MemoryDir(env, root)
	if err != nil {
		return nil, err
	}
	return &Project{Root: root, MemoryDir: mem, StateDir: filepath.Join(root, StateDirName)}, nil
}

// ErrNoDir is returned when the starting directory does not exist.
var ErrNoDir = errors.New("project directory does not exist")

// FindRoot returns the git main-worktree root containing dir, or dir itself
// (absolute, symlinks resolved) when dir is not inside a git work tree.
// Symlinks are resolved because Claude Code sees the kernel's view of the
// working directory, and the encoded memory path must match its view.
func FindRoot(dir string) (string, error) {
	root, _, err := findRoot(dir)
	return root, err
}

// findRoot is FindRoot, also reporting whether the root is a git work tree.
func findRoot(dir string) (string, bool, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", false, fmt.Errorf("project: %w", err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", false, fmt.Errorf("%w: %s", ErrNoDir, abs)
		}
		return "", false, fmt.Errorf("project: %w", err)
	}
	st, err := os.Stat(real)
	if err != nil {
		return "", false, fmt.Errorf("project: %w", err)
	}
	if !st.IsDir() {
		return "", false, fmt.Errorf("project: %s is not a directory", real)
	}
	for d := real; ; {
		if root, ok := gitRoot(d); ok {
			return root, true, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return real, false, nil
		}
		d = parent
	}
}

// noProject says what root is when it cannot be a project ("the
// filesystem root", "your home directory"), or "". Home is compared with
// symlinks resolved, as root is.
func noProject(env *clienv.Env, root string) string {
	if filepath.Dir(root) == root {
		return "the filesystem root"
	}
	h := filepath.Clean(home(env))
	if h == root {
		return "your home directory"
	}
	if real, err := filepath.EvalSymlinks(h); err == nil && real == root {
		return "your home directory"
	}
	return ""
}

// gitRoot reports the main-worktree root if d holds a ".git" entry.
func gitRoot(d string) (string, bool) {
	gitPath := filepath.Join(d, ".git")
	st, err := os.Lstat(gitPath)
	if err != nil {
		return "", false
	}
	if st.IsDir() {
		return d, true
	}
	if !st.Mode().IsRegular() {
		return "", false
	}
	// A linked worktree or submodule: ".git" is a file "gitdir: <path>".
	b, err := readSmall(gitPath)
	if err != nil {
		return d, true
	}
	line, _, _ := strings.Cut(string(b), "\n")
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok {
		return d, true
	}
	gitdir = strings.TrimSpace(gitdir)
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(d, gitdir)
	}
	cd, err := readSmall(filepath.Join(gitdir, "commondir"))
	if err != nil {
		// No commondir: a submodule or a detached gitdir; its work tree is d.
		return d, true
	}
	common := strings.TrimSpace(string(cd))
	if !filepath.IsAbs(common) {
		common = filepath.Join(gitdir, common)
	}
	common = filepath.Clean(common)
	if real, err := filepath.EvalSymlinks(common); err == nil {
		common = real
	}
	if filepath.Base(common) == ".git" {
		return filepath.Dir(common), true
	}
	// A bare main repository: there is no main work tree; key by this one.
	return d, true
}

// readSmall reads the first 4 KiB of a git file (a `.git` file, HEAD, a
// ref). The open does not block and the descriptor must be a regular
// file: a FIFO in a repository's `.git` holds neither a hook nor a command.
func readSmall(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, errNotRegular
	}
	buf := make([]byte, 4096)
	n, err := f.Read(buf)
	if n == 0 && err != nil {
		return nil, err
	}
	return buf[:n], nil
}

// errNotRegular is returned by readSmall for a path that is not a
// regular file.
var errNotRegular = errors.New("not a regular file")

// maxEncoded is Claude Code's limit on an encoded project directory name.
const maxEncoded = 200

// Encode maps an absolute path to the directory name Claude Code uses under
// <config>/projects/: every UTF-16 code unit that is not an ASCII letter or
// digit becomes '-' (so an astral character such as an emoji becomes "--"),
// and a result longer than 200 units is cut to 200 and suffixed with "-"
// and the base-36 absolute value of a Java-style hash of the original
// path's UTF-16 units.
func Encode(path string) string {
	units := utf16.Encode([]rune(path))
	b := make([]byte, len(units))
	for i, u := range units {
		if u < 128 && isAlnum(byte(u)) {
			b[i] = byte(u)
		} else {
			b[i] = '-'
		}
	}
	if len(b) <= maxEncoded {
		return string(b)
	}
	var h int32
	for _, u := range units {
		h = h*31 + int32(u)
	}
	abs := int64(h)
	if abs < 0 {
		abs = -abs
	}
	return string(b[:maxEncoded]) + "-" + strconv.FormatInt(abs, 36)
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// ConfigDir returns Claude Code's configuration directory:
// CLAUDE_CONFIG_DIR when set (it replaces ~/.claude entirely), else ~/.claude.
func ConfigDir(env *clienv.Env) string {
	if d := env.Get("CLAUDE_CONFIG_DIR"); d != "" {
		return expandHome(env, d)
	}
	return filepath.Join(home(env), ".claude")
}

func home(env *clienv.Env) string {
	if h := env.Get("HOME"); h != "" {
		return h
	}
	if h, err := os.UserHomeDir(); err == nil {
		return h
	}
	return "/"
}

func expandHome(env *clienv.Env, p string) string {
	if p == "~" {
		return home(env)
	}
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		return filepath.Join(home(env), rest)
	}
	if !filepath.IsAbs(p) {
		return filepath.Join(home(env), p)
	}
	return filepath.Clean(p)
}

// MemoryDir returns the auto-memory directory for root: INTERMEM_MEMORY_DIR
// when set; else autoMemoryDirectory from the project's local settings or
// the user's settings (Claude Code ignores it in checked-in project
// settings, so we do too); else <config>/projects/<Encode(root)>/memory.
func MemoryDir(env *clienv.Env, root string) (string, error) {
	if d := env.Get("INTERMEM_MEMORY_DIR"); d != "" {
		return expandHome(env, d), nil
	}
	cfg := ConfigDir(env)
	for _, settings := range []string{
		filepath.Join(root, ".claude", "settings.local.json"),
		filepath.Join(cfg, "settings.json"),
	} {
		if d := settingsMemoryDir(settings); d != "" {
			return expandHome(env, d), nil
		}
	}
	return filepath.Join(cfg, "projects", Encode(root), "memory"), nil
}

// settingsMemoryDir reads autoMemoryDirectory from a settings file; a
// missing, unreadable or malformed file simply has none. The file may be a
// link (a dotfiles repository's), but what it leads to is read only when
// it is a regular file of at most 1 MiB, never waited on: a project's
// .claude/settings.local.json is the repository's, and a link there to a
// FIFO or to /dev/zero would hold or fill every hook.
func settingsMemoryDir(path string) string {
	b, err := statefile.ReadLinked(path, 1<<20)
	if err != nil || !jsonscan.Valid(b) {
		return ""
	}
	return strings.TrimSpace(jsonscan.Get(b, "autoMemoryDirectory").String())
}

// Places returns the project's writable places (package confine).
func (p *Project) Places() confine.Places {
	return confine.Places{Root: p.Root, MemoryDir: p.MemoryDir}
}

// CheckState checks that the state directory, if it exists, is a real
// directory of this user's and that every entry directly in it is a real
// file or directory of this user's (confine.CheckState). Hooks and commands
// run it before touching anything there; the error is a
// *confine.StateError when something there is not.
func (p *Project) CheckState() error { return p.Places().CheckState() }

// EnsureStateDir makes Root/.intermem a directory intermem may write: it
// creates it (mode 0700) when absent, with a ".gitignore" of "*" so that
// nothing in it is ever committed, and otherwise requires it to be a real
// directory of this user's (never a link: it is opened with O_NOFOLLOW and
// its mode set through that descriptor, so a link to a shared directory is
// never chmodded or written into), then checks every entry in it
// (CheckState). The error is a *confine.StateError for anything that is
// not intermem's own.
func (p *Project) EnsureStateDir() error {
	f, err := openDir(p.StateDir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.Mkdir(p.StateDir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create state dir: %w", err)
		}
		f, err = openDir(p.StateDir)
	}
	if err != nil {
		// A link (ELOOP), a file (ENOTDIR): say which.
		if st, lerr := os.Lstat(p.StateDir); lerr == nil {
			if oerr := confine.Owned(p.StateDir, st); oerr != nil {
				return oerr
			}
			if !st.IsDir() {
				return &confine.StateError{Path: p.StateDir, What: "a file, not a directory"}
			}
		}
		return fmt.Errorf("open state dir: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("state dir: %w", err)
	}
	if err := confine.Owned(p.StateDir, st); err != nil {
		return err
	}
	if st.Mode().Perm() != 0o700 {
		if err := f.Chmod(0o700); err != nil {
			return fmt.Errorf("state dir: %w", err)
		}
	}
	gi := filepath.Join(p.StateDir, ".gitignore")
	// O_EXCL fails on anything already there, a link included: an existing
	// .gitignore is CheckState's to judge, never written through.
	g, err := os.OpenFile(gi, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	switch {
	case err == nil:
		_, err = g.WriteString("*\n")
		if cerr := g.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("write %s: %w", gi, err)
		}
	case !errors.Is(err, fs.ErrExist):
		return fmt.Errorf("write %s: %w", gi, err)
	}
	return p.CheckState()
}

// openDir opens a directory without following a final symlink.
func openDir(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
}

// Path returns a path inside the state directory.
func (p *Project) Path(elem ...string) string {
	if len(elem) == 1 { // every hook's case, without a slice made for Join
		return filepath.Join(p.StateDir, elem[0])
	}
	return filepath.Join(append([]string{p.StateDir}, elem...)...)
}
