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
// outside the root (the user asked for it explicitly); it never widens State
// or the set of places.
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
	if !allowOutside {
		if _, ok := within(p.Root, real); !ok {
			return "", fmt.Errorf("%w: %s resolves to %s, outside the project", ErrOutside, path, real)
		}
		// Inside the project, but never into intermem's state or git's.
		if rel, _ := within(p.Root, real); isUnder(rel, StateDir) || isUnder(rel, ".git") {
			return "", fmt.Errorf("%w: %s resolves to %s", ErrOutside, path, real)
		}
	}
	return real, nil
}

// checkState requires every existing component from the state directory
// down to path to be a real directory (or, last, a regular file) owned by
// this user.
func (p Places) checkState(path string) error {
	rel, _ := within(p.Root, path)
	parts := strings.Split(filepath.ToSlash(rel), "/")
	cur := p.Root
	for _, part := range parts {
		cur = filepath.Join(cur, part)
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

// Owned reports whether st (from Lstat of path) is a regular file or a
// directory owned by the current user, and not a symlink.
func Owned(path string, st fs.FileInfo) error {
	if st.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%w: %s is a symlink", ErrLink, path)
	}
	if !st.IsDir() && !st.Mode().IsRegular() {
		return fmt.Errorf("%w: %s is a %v", ErrLink, path, st.Mode().Type())
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Geteuid() {
		return fmt.Errorf("%w: %s is owned by uid %d", ErrLink, path, sys.Uid)
	}
	return nil
}

// Real returns where a write to path lands: every symlink resolved,
// including a dangling last link (whose target the write would create) and
// links inside a not-yet-existing tail.
func Real(path string) (string, error) {
	path = filepath.Clean(path)
	for hops := 0; hops < 40; hops++ {
		real, err := filepath.EvalSymlinks(path)
		if err == nil {
			return real, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("resolve %s: %w", path, err)
		}
		// Something is missing. If path itself is a dangling link, follow it
		// by hand; otherwise resolve the parent and keep the name.
		if target, lerr := os.Readlink(path); lerr == nil {
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(path), target)
			}
			path = filepath.Clean(target)
			continue
		}
		dir, name := filepath.Dir(path), filepath.Base(path)
		if dir == path {
			return path, nil
		}
		realDir, err := Real(dir)
		if err != nil {
			return "", err
		}
		return filepath.Join(realDir, name), nil
	}
	return "", fmt.Errorf("resolve %s: too many links", path)
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
