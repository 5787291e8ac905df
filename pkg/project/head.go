package project

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// maxPackedRefs bounds how much of packed-refs Head reads.
const maxPackedRefs = 4 << 20

// Head returns the commit the git repository at root has checked out (the
// hex object name HEAD resolves to), or "" when it cannot tell: no
// repository, an unborn branch, a ref it cannot read. It reads .git/HEAD,
// the loose ref and packed-refs directly, never running git, and trusts
// nothing it reads: a ref name must stay under refs/, an object name must
// be hex of SHA-1 or SHA-256 length.
func Head(root string) string {
	gitDir := filepath.Join(root, ".git")
	if fi, err := os.Lstat(gitDir); err != nil {
		return ""
	} else if fi.Mode().IsRegular() {
		b, err := readSmall(gitDir)
		if err != nil {
			return ""
		}
		line, _, _ := strings.Cut(string(b), "\n")
		d, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
		if !ok {
			return ""
		}
		d = strings.TrimSpace(d)
		if !filepath.IsAbs(d) {
			d = filepath.Join(root, d)
		}
		gitDir = d
	} else if !fi.IsDir() {
		return ""
	}
	b, err := readSmall(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return ""
	}
	head := strings.TrimSpace(string(b))
	ref, isRef := strings.CutPrefix(head, "ref:")
	if !isRef {
		return objectName(head)
	}
	ref = strings.TrimSpace(ref)
	if !strings.HasPrefix(ref, "refs/") || strings.Contains(ref, "..") || strings.ContainsAny(ref, "\\\x00") {
		return ""
	}
	// A linked worktree keeps its refs in the main repository (commondir).
	dirs := []string{gitDir}
	if cd, err := readSmall(filepath.Join(gitDir, "commondir")); err == nil {
		c := strings.TrimSpace(string(cd))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		dirs = append(dirs, filepath.Clean(c))
	}
	for _, d := range dirs {
		if b, err := readSmall(filepath.Join(d, filepath.FromSlash(ref))); err == nil {
			return objectName(strings.TrimSpace(string(b)))
		}
	}
	for _, d := range dirs {
		if h := packedRef(filepath.Join(d, "packed-refs"), ref); h != "" {
			return h
		}
	}
	return ""
}

// packedRef finds ref in a packed-refs file.
func packedRef(path, ref string) string {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() > maxPackedRefs {
		return ""
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := bytes.Cut(sc.Bytes(), []byte(" "))
		if ok && string(rest) == ref {
			return objectName(string(name))
		}
	}
	return ""
}

// objectName returns s when it is a git object name (40 or 64 lower-case
// hex digits), else "".
func objectName(s string) string {
	if len(s) != 40 && len(s) != 64 {
		return ""
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return ""
		}
	}
	return s
}
