package continuity

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Git reads the branch and HEAD commit of the git working tree holding dir
// from its files, never by running git (hooks never run git): the nearest
// ".git" up from dir is the repository directory or, in a linked worktree,
// a file "gitdir: <path>"; HEAD is "ref: refs/heads/<branch>" (the commit
// is then the loose ref, else its line in packed-refs, both in the common
// directory a linked worktree's "commondir" names) or a detached commit.
// Everything read is bounded and only regular files are opened. Outside
// git, or on anything unreadable, it returns what it found ("" for the
// rest).
func Git(dir string) (branch, commit string) {
	gitDir := findGitDir(dir)
	if gitDir == "" {
		return "", ""
	}
	head := firstLine(readSmall(filepath.Join(gitDir, "HEAD"), 1024))
	ref, isRef := strings.CutPrefix(head, "ref:")
	if !isRef {
		if isCommit(head) {
			return "", head
		}
		return "", ""
	}
	ref = strings.TrimSpace(ref)
	if !strings.HasPrefix(ref, "refs/") || !validRef(ref) {
		return "", ""
	}
	branch = strings.TrimPrefix(ref, "refs/heads/")
	common := gitDir
	if c := firstLine(readSmall(filepath.Join(gitDir, "commondir"), 1024)); c != "" {
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		common = filepath.Clean(c)
	}
	for _, d := range []string{gitDir, common} {
		if c := firstLine(readSmall(filepath.Join(d, filepath.FromSlash(ref)), 1024)); isCommit(c) {
			return branch, c
		}
	}
	return branch, packedRef(filepath.Join(common, "packed-refs"), ref)
}

// findGitDir returns the git directory of the working tree holding dir.
func findGitDir(dir string) string {
	for d, i := filepath.Clean(dir), 0; i < 128; i++ {
		p := filepath.Join(d, ".git")
		if st, err := os.Lstat(p); err == nil {
			switch {
			case st.IsDir():
				return p
			case st.Mode().IsRegular():
				g, ok := strings.CutPrefix(firstLine(readSmall(p, 1024)), "gitdir:")
				if !ok {
					return ""
				}
				g = strings.TrimSpace(g)
				if !filepath.IsAbs(g) {
					g = filepath.Join(d, g)
				}
				return filepath.Clean(g)
			}
			return ""
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	return ""
}

// packedRef finds ref in a packed-refs file, reading at most 8 MiB.
func packedRef(path, ref string) string {
	f := openRegular(path)
	if f == nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 8<<20))
	sc.Buffer(make([]byte, 4096), 4096)
	for sc.Scan() {
		id, name, ok := strings.Cut(sc.Text(), " ")
		if ok && name == ref && isCommit(id) {
			return id
		}
	}
	return ""
}

// validRef reports whether ref is a name git itself accepts for a ref
// (git check-ref-format's rules, at most 255 bytes): no control
// character, space or any of ~^:?*[\, no "..", "@{" or "//", no component
// starting with "." or ending with ".lock", not ending with "/" or ".".
// A branch name read from a repository's files or from continuity.jsonl
// reaches the model's context and the terminal: anything else (an escape
// sequence, a line break, a path) is not a branch.
func validRef(ref string) bool {
	if ref == "" || len(ref) > 255 || strings.Contains(ref, "..") || strings.Contains(ref, "@{") ||
		strings.Contains(ref, "//") || strings.HasSuffix(ref, "/") || strings.HasSuffix(ref, ".") || ref == "@" {
		return false
	}
	for i := 0; i < len(ref); i++ {
		if c := ref[i]; c <= ' ' || c == 0x7f || strings.IndexByte("~^:?*[\\", c) >= 0 {
			return false
		}
	}
	for _, part := range strings.Split(ref, "/") {
		if part == "" || part[0] == '.' || strings.HasSuffix(part, ".lock") {
			return false
		}
	}
	return true
}

// checkpointGit returns the branch and commit of a checkpoint read back
// from continuity.jsonl, each "" unless well-formed (a branch git would
// accept, a full hex commit id).
func checkpointGit(branch, commit string) (string, string) {
	if !validRef("refs/heads/" + branch) {
		branch = ""
	}
	if !isCommit(commit) {
		commit = ""
	}
	return branch, commit
}

func isCommit(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// openRegular opens path for reading when it is a regular file (a FIFO
// would block a hook).
func openRegular(path string) *os.File {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil
	}
	return f
}

// readSmall reads at most max bytes of a regular file.
func readSmall(path string, max int) []byte {
	f := openRegular(path)
	if f == nil {
		return nil
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, int64(max)))
	return b
}

func firstLine(b []byte) string {
	line, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimSpace(line)
}
