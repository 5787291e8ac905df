// Package confine is the one definition of where intermem may write, and the
// check every write and every journal step goes through.
//
// intermem writes into exactly four kinds of place:
//
//   - Target: the project's promotion targets, CLAUDE.md, AGENTS.md and
//     .claude/CLAUDE.md at the root;
//   - Detail: docs/intermem/** (detail documents and the archive);
//   - State: .intermem/** (store, spool, backups, log, caches);
//   - Memory: the auto-memory directory and what is below it.
//
// A path names a place lexically (absolute and clean, before any symlink is
// followed). Resolve then judges where a write to it would really land,
// because every byte of a project may be hostile: a CLAUDE.md that is a link
// to ../../home/u/.profile, a docs/ directory that is a link to /etc, a
// .intermem/log that is a link to ~/.bashrc.
//
//   - Target and Detail: symlinks are followed (a CLAUDE.md that links to
//     AGENTS.md or to docs/CLAUDE.md is common); the real path must lie
//     inside the project root, unless the caller passes AllowOutside (the
//     user's explicit --allow-outside). A dangling link is judged by where it
//     would create its file.
//   - State: nothing from .intermem down may be a symlink, and what exists
//     must be owned by the user running intermem. State is intermem's own;
//     a link there was not made by intermem.
//   - Memory: links are followed wherever they lead. The memory directory
//     lives in the user's Claude Code configuration, not in the project, so a
//     link there (MEMORY.md kept in a dotfiles repository) was made by the
//     user; writes go through it rather than replacing it.
//
// The check is lexical-then-real and holds only against content that is
// already in place (a hostile repository, a planted store); it is not a
// defence against another local user racing intermem, which file ownership
// already rules out.
package confine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Place is a kind of location intermem may write.
type Place int

// The places. None is everything else.
const (
	None Place = iota
	Target
	Detail
	State
	Memory
)

func (p Place) String() string {
	switch p {
	case Target:
		return "promotion target"
	case Detail:
		return "docs/intermem"
	case State:
		return "state directory"
	case Memory:
		return "auto-memory directory"
	}
	return "outside intermem's places"
}

// TargetNames are the promotion targets, relative to the root.
var TargetNames = []string{"CLAUDE.md", "AGENTS.md", ".claude/CLAUDE.md"}

// Relative directories of the places below the root.
const (
	DetailDir = "docs/intermem"
	StateDir  = ".intermem"
)

// ErrOutside is returned when a path is not one of intermem's places, or
// resolves out of the one it names.
var ErrOutside = errors.New("not a place intermem may write")

// ErrLink is returned when the state directory, or something in it, is a
// symlink or is not owned by the user.
var ErrLink = errors.New("not a real file or directory of this user")

// Places are one project's writable places.
type Places struct {
	Root      string // absolute project root, symlinks resolved
	MemoryDir string // absolute auto-memory directory, as configured
}

// Classify names the place a path is in, lexically. path must be absolute;
// it is cleaned first, so "docs/intermem/../../x" is not in Detail.
func (p Places) Classify(path string) Place {
	if !filepath.IsAbs(path) {
		return None
	}
	path = filepath.Clean(path)
	rel, ok := within(p.Root, path)
	if ok {
		slash := filepath.ToSlash(rel)
		for _, t := range TargetNames {
			if slash == t {
				return Target
			}
		}
		if slash == StateDir || strings.HasPrefix(slash, StateDir+"/") {
			return State
		}
		if strings.HasPrefix(slash, DetailDir+"/") {
			return Detail
		}
	}
	if p.MemoryDir != "" {
		if _, ok := within(filepath.Clean(p.MemoryDir), path); ok {
			return Memory
		}
	}
	return None
}

// Resolve checks that a write to path is allowed and returns the real path
// the write must go to. allowOutside lets a Target or Detail path resolve
// outside the root (the user asked for it explicitly); it never lets one
// resolve into the project's .intermem or .git, and never widens State or
// the set of places.
func (p Places) Resolve(path string, allowOutside bool) (string, error) {
	place := p.Classify(path)
	path = filepath.Clean(path)
	switch place {
	case None:
		return "", fmt.Errorf("%w: %s", ErrOutside, path)
	case State:
		if err := p.checkState(path); err != nil {
			return "", err
		}
		return path, nil
	case Memory:
		return Real(path)
	}
	real, err := Real(path)
	if err != nil {
		return "", err
	}
	if err := p.CheckReal(path, real); err != nil {
		// --allow-outside lets a link lead out of the project, never into
		// intermem's own state or git's inside it.
		if _, inside := within(p.Root, real); inside || !allowOutside {
			return "", err
		}
	}
	return real, nil
}

// checkState requires every existing component from the state directory
// down to path to be a real directory (or, last, a regular file) owned by
// this user.
func (p Places) checkState(path string) error {
	return InState(filepath.Join(p.Root, StateDir), path)
}

// InState requires path to be stateDir or below it, and every existing
// component from stateDir down to path (stateDir included) to be a real
// directory (or, last, a regular file) owned by this user: the rule for
// intermem's own files, for writers that know the state directory but not
// the project (package atomicfile's WriteState). A missing component ends
// the check: what is below it does not exist yet and is created by the
// caller, below a checked directory. The error wraps ErrOutside for a path
// outside stateDir, else it is a *StateError (an ErrLink).
func InState(stateDir, path string) error {
	stateDir, path = filepath.Clean(stateDir), filepath.Clean(path)
	rel, ok := within(stateDir, path)
	if !ok || !filepath.IsAbs(stateDir) {
		return fmt.Errorf("%w: %s is not in the state directory %s", ErrOutside, path, stateDir)
	}
	parts := []string{}
	if rel != "." {
		parts = strings.Split(rel, string(filepath.Separator))
	}
	cur := stateDir
	for i := -1; i < len(parts); i++ {
		if i >= 0 {
			cur = filepath.Join(cur, parts[i])
		}
		st, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // created by us, below a checked directory
		}
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrLink, cur, err)
		}
		if err := Owned(cur, st); err != nil {
			return err
		}
	}
	return nil
}

// CheckState checks the state directory as a whole: the directory itself
// (absent is fine: intermem creates it) and every entry directly in it must
// be a real file or directory owned by this user. It is what hooks and
// commands run before they touch anything there, so a planted link
// (.intermem/log to ~/.bashrc, .intermem/spool to a directory elsewhere,
// .intermem itself to a shared directory) stops them before any read or
// write. Deeper entries (spool files, backups) are checked where they are
// used. Cost: one lstat, one directory read and one lstat per entry (about
// a dozen system calls), never a walk of the tree. A state directory that
// plainly holds (plainState: every hook's case) is told so in those system
// calls alone; anything else is judged by the check below, which names
// what is wrong.
func (p Places) CheckState() error {
	dir := filepath.Join(p.Root, StateDir)
	if plainState(dir) {
		return nil
	}
	return checkStateDir(dir)
}

// checkStateDir is CheckState's check of the state directory dir.
func checkStateDir(dir string) error {
	st, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrLink, dir, err)
	}
	if err := Owned(dir, st); err != nil {
		return err
	}
	if !st.IsDir() {
		return &StateError{Path: dir, What: "a file, not a directory"}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("read state directory: %w", err)
	}
	for _, e := range ents {
		path := filepath.Join(dir, e.Name())
		info, err := e.Info() // lstat: the entry itself, never its target
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed since the listing (a spool ingest, a rotation)
		}
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrLink, path, err)
		}
		if err := Owned(path, info); err != nil {
			return err
		}
	}
	return nil
}

// StateError is returned (wrapping ErrLink) for an entry of the state
// directory that is not a real file or directory of this user. It names
// the entry and what it is instead, so the message can tell the user what
// to remove.
type StateError struct {
	Path string // absolute path of the entry
	What string // "a symlink to /home/u/.bashrc", "a FIFO", "owned by uid 1001"
	Link bool   // the entry is a symlink
}

func (e *StateError) Error() string {
	return fmt.Sprintf("state directory: %s is %s", e.Path, e.What)
}

// Unwrap makes a StateError an ErrLink.
func (e *StateError) Unwrap() error { return ErrLink }

// Hint says what the user should do about the entry, naming it relative
// to root when it lies below it.
func (e *StateError) Hint(root string) string {
	name := e.Path
	if rel, ok := within(root, e.Path); ok && rel != "." {
		name = filepath.ToSlash(rel)
	}
	if e.Link {
		return fmt.Sprintf("remove the symlink %s; intermem keeps its state in real files", name)
	}
	return fmt.Sprintf("move %s away; intermem keeps its state in real files and directories of its own", name)
}

// Owned reports whether st (from Lstat of path) is a regular file or a
// directory owned by the current user, and not a symlink. The error is a
// *StateError.
func Owned(path string, st fs.FileInfo) error {
	if st.Mode()&fs.ModeSymlink != 0 {
		what := "a symlink"
		if target, err := os.Readlink(path); err == nil {
			what += " to " + target
		}
		return &StateError{Path: path, What: what, Link: true}
	}
	if !st.IsDir() && !st.Mode().IsRegular() {
		return &StateError{Path: path, What: "a " + typeName(st.Mode())}
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Geteuid() {
		return &StateError{Path: path, What: fmt.Sprintf("owned by uid %d, not by you (uid %d)", sys.Uid, os.Geteuid())}
	}
	return nil
}

// typeName names a file type for a message.
func typeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "special file (" + m.Type().String() + ")"
}

// Real returns where a write to path lands: every symlink resolved,
// including a dangling last link (whose target the write would create) and
// links inside a not-yet-existing tail. A relative link target is resolved
// against the real directory holding the link, as the kernel does, not
// against the name it was reached by: with docs linked to /a/b/docs, a
// docs/intermem/x.md linking to ../../y lands in /a/b/y.
func Real(path string) (string, error) {
	hops := 0
	return realPath(filepath.Clean(path), &hops)
}

// maxHops bounds the links followed by one resolution, as the kernel does.
const maxHops = 40

func realPath(path string, hops *int) (string, error) {
	real, err := filepath.EvalSymlinks(path)
	if err == nil {
		return real, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("resolve %s: %w", path, err)
	}
	// Something is missing: resolve the directory, then judge the name in
	// the real directory.
	dir, name := filepath.Dir(path), filepath.Base(path)
	if dir == path {
		return path, nil
	}
	realDir, err := realPath(dir, hops)
	if err != nil {
		return "", err
	}
	at := filepath.Join(realDir, name)
	target, err := os.Readlink(at)
	if err != nil {
		return at, nil // absent: the write creates it here
	}
	if *hops++; *hops > maxHops {
		return "", fmt.Errorf("resolve %s: too many links", path)
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(realDir, target)
	}
	return realPath(filepath.Clean(target), hops)
}

// CheckReal judges the real path a Target or Detail path resolves to: it
// must lie inside the root and not in intermem's state or git's. The error
// wraps ErrOutside and names both paths.
func (p Places) CheckReal(path, real string) error {
	rel, ok := within(p.Root, real)
	if !ok {
		return fmt.Errorf("%w: %s resolves to %s, outside the project", ErrOutside, path, real)
	}
	if isUnder(rel, StateDir) || isUnder(rel, ".git") {
		return fmt.Errorf("%w: %s resolves to %s", ErrOutside, path, real)
	}
	return nil
}

// within reports whether path is base or below it, and the relative path.
func within(base, path string) (string, bool) {
	rel, err := filepath.Rel(base, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return rel, true
}

func isUnder(rel, dir string) bool {
	rel = filepath.ToSlash(rel)
	return rel == dir || strings.HasPrefix(rel, dir+"/")
}
