package inject

import (
	"path/filepath"
	"strings"
)

// gitInfo finds the git work tree holding dir and its current branch by
// reading files, never by running git: the nearest ".git" up from dir is
// either the repository directory or, in a linked worktree or submodule, a
// file "gitdir: <path>" naming it; its HEAD is "ref: refs/heads/<branch>"
// on a branch and a commit id when detached (branch "" then). A dir
// outside git gives ("", "").
func gitInfo(deps *Deps, dir string) (worktree, branch string) {
	for d, i := dir, 0; i < 128; i++ {
		gitPath := filepath.Join(d, ".git")
		if st, err := deps.Lstat(gitPath); err == nil {
			gitDir := ""
			switch {
			case st.IsDir():
				gitDir = gitPath
			case st.Mode().IsRegular():
				b, _ := deps.ReadHead(gitPath)
				line, _, _ := strings.Cut(string(b), "\n")
				if g, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:"); ok {
					g = strings.TrimSpace(g)
					if !filepath.IsAbs(g) {
						g = filepath.Join(d, g)
					}
					gitDir = g
				}
			}
			if gitDir != "" {
				return d, headBranch(deps, gitDir)
			}
			return d, ""
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	return "", ""
}

// headBranch reads gitDir/HEAD and returns the branch it names.
func headBranch(deps *Deps, gitDir string) string {
	b, err := deps.ReadHead(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(string(b), "\n")
	ref, ok := strings.CutPrefix(strings.TrimSpace(line), "ref:")
	if !ok {
		return ""
	}
	return strings.TrimPrefix(strings.TrimSpace(ref), "refs/heads/")
}
