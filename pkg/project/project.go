// Package project locates the things intermem works on: the project root
// (the git main-worktree root, as Claude Code keys auto-memory by it), the
// auto-memory directory Claude Code keeps for that root, and intermem's own
// state directory.
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
	"unicode/utf16"

	"github.com/tidwall/gjson"

	"github.com/intermem/intermem/pkg/cli"
)

// StateDirName is the per-project directory holding intermem's private state.
const StateDirName = ".intermem"

// Project is one resolved project.
type Project struct {
	Root      string // absolute project root
	MemoryDir string // Claude Code's auto-memory directory for Root
	StateDir  string // Root/.intermem
}

// Resolve finds the project containing dir and its memory directory.
func Resolve(env *cli.Env, dir string) (*Project, error) {
	root, err := FindRoot(dir)
	if err != nil {
		return nil, err
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
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("project: %w", err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%w: %s", ErrNoDir, abs)
		}
		return "", fmt.Errorf("project: %w", err)
	}
	st, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("project: %w", err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("project: %s is not a directory", real)
	}
	for d := real; ; {
		if root, ok := gitRoot(d); ok {
			return root, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return real, nil
		}
		d = parent
	}
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

func readSmall(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, 4096)
	n, err := f.Read(buf)
	if n == 0 && err != nil {
		return nil, err
	}
	return buf[:n], nil
}

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
func ConfigDir(env *cli.Env) string {
	if d := env.Get("CLAUDE_CONFIG_DIR"); d != "" {
		return expandHome(env, d)
	}
	return filepath.Join(home(env), ".claude")
}

func home(env *cli.Env) string {
	if h := env.Get("HOME"); h != "" {
		return h
	}
	if h, err := os.UserHomeDir(); err == nil {
		return h
	}
	return "/"
}

func expandHome(env *cli.Env, p string) string {
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
func MemoryDir(env *cli.Env, root string) (string, error) {
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
// missing, unreadable or malformed file simply has none.
func settingsMemoryDir(path string) string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) > 1<<20 || !gjson.ValidBytes(b) {
		return ""
	}
	v := gjson.GetBytes(b, "autoMemoryDirectory")
	if v.Type != gjson.String {
		return ""
	}
	return strings.TrimSpace(v.String())
}

// EnsureStateDir creates Root/.intermem with mode 0700 and a ".gitignore"
// of "*" so that nothing in it is ever committed.
func (p *Project) EnsureStateDir() error {
	if err := os.MkdirAll(p.StateDir, 0o700); err != nil {
		return fmt.Errorf("create state dir: %w", err)
	}
	// MkdirAll does not change the mode of an existing directory.
	if st, err := os.Stat(p.StateDir); err == nil && st.Mode().Perm() != 0o700 {
		_ = os.Chmod(p.StateDir, 0o700)
	}
	gi := filepath.Join(p.StateDir, ".gitignore")
	if _, err := os.Stat(gi); errors.Is(err, fs.ErrNotExist) {
		if err := os.WriteFile(gi, []byte("*\n"), 0o600); err != nil {
			return fmt.Errorf("write %s: %w", gi, err)
		}
	}
	return nil
}

// Path returns a path inside the state directory.
func (p *Project) Path(elem ...string) string {
	return filepath.Join(append([]string{p.StateDir}, elem...)...)
}
