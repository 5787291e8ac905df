package inject

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/intermem/intermem/pkg/mdoc"
	"github.com/intermem/intermem/pkg/targets"
)

// loadedDocs returns the instruction documents Claude Code loads at
// session start for a session in cwd (claude-code.md §4.3), parsed:
//
//   - <config>/CLAUDE.md and <config>/rules/*.md (the user's own);
//   - CLAUDE.md, .claude/CLAUDE.md and CLAUDE.local.md in cwd and every
//     parent directory (the project root's included);
//   - the project's .claude/rules/*.md (and cwd's, if different) without
//     a "paths:" frontmatter key (those load only when matching files are
//     touched);
//   - AGENTS.md when agentsLoaded;
//   - every @import of those, recursively, up to five hops.
//
// Files are read once each (by real path), at most maxLoadedDocs of them
// and maxLoadedBytes of each.
func loadedDocs(e Env, cwd string, ts *targets.Set, agentsLoaded bool) []*mdoc.Doc {
	type pending struct {
		path  string
		depth int
	}
	var queue []pending
	push := func(p string, depth int) { queue = append(queue, pending{p, depth}) }

	if e.ConfigDir != "" {
		push(filepath.Join(e.ConfigDir, "CLAUDE.md"), 0)
		for _, r := range rules(filepath.Join(e.ConfigDir, "rules")) {
			push(r, 0)
		}
	}
	for d, i := cwd, 0; i < 64; i++ {
		push(filepath.Join(d, "CLAUDE.md"), 0)
		push(filepath.Join(d, ".claude", "CLAUDE.md"), 0)
		push(filepath.Join(d, "CLAUDE.local.md"), 0)
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	push(filepath.Join(e.Root, "CLAUDE.md"), 0)
	push(filepath.Join(e.Root, "CLAUDE.local.md"), 0)
	ruleDirs := []string{filepath.Join(e.Root, ".claude", "rules")}
	if cwd != e.Root {
		ruleDirs = append(ruleDirs, filepath.Join(cwd, ".claude", "rules"))
	}
	for _, rd := range ruleDirs {
		for _, r := range rules(rd) {
			push(r, 0)
		}
	}

	// Reuse what targets already parsed.
	parsed := map[string]*mdoc.Doc{}
	if ts.Claude.Exists {
		parsed[ts.Claude.Real] = ts.Claude.Doc
	}
	if ts.Agents.Exists {
		parsed[ts.Agents.Real] = ts.Agents.Doc
		if agentsLoaded {
			push(ts.Agents.Path, 0)
		}
	}

	var out []*mdoc.Doc
	seen := map[string]bool{}
	for len(queue) > 0 && len(out) < maxLoadedDocs {
		p := queue[0]
		queue = queue[1:]
		real, err := filepath.EvalSymlinks(p.path)
		if err != nil || seen[real] {
			continue
		}
		seen[real] = true
		d, ok := parsed[real]
		if !ok {
			b, ok := readDoc(real)
			if !ok {
				continue
			}
			d = mdoc.Parse(b)
		}
		out = append(out, d)
		if p.depth >= maxImportDepth {
			continue
		}
		for _, imp := range d.Imports() {
			switch {
			case strings.HasPrefix(imp, "~/"):
				if e.Home == "" {
					continue
				}
				imp = filepath.Join(e.Home, imp[2:])
			case !filepath.IsAbs(imp):
				imp = filepath.Join(filepath.Dir(real), imp)
			}
			push(imp, p.depth+1)
		}
	}
	return out
}

// readDoc reads a regular file of at most maxLoadedBytes.
func readDoc(path string) ([]byte, bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxLoadedBytes {
		return nil, false
	}
	b := make([]byte, fi.Size())
	n, _ := f.Read(b)
	return b[:n], true
}

// rules lists the *.md files under a rules directory (two levels deep at
// most) that Claude Code loads at session start: those without a "paths:"
// key in their frontmatter.
func rules(dir string) []string {
	var out []string
	var walk func(d string, depth int)
	walk = func(d string, depth int) {
		ents, err := os.ReadDir(d)
		if err != nil {
			return
		}
		for _, en := range ents {
			p := filepath.Join(d, en.Name())
			switch {
			case strings.HasPrefix(en.Name(), "."):
			case en.IsDir() && depth < 2:
				walk(p, depth+1)
			case strings.HasSuffix(en.Name(), ".md") && len(out) < maxLoadedDocs:
				if b, ok := readDoc(p); ok && !hasPathsKey(b) {
					out = append(out, p)
				}
			}
		}
	}
	walk(dir, 0)
	sort.Strings(out)
	return out
}

// hasPathsKey reports whether content opens with YAML frontmatter holding
// a top-level "paths" key.
func hasPathsKey(b []byte) bool {
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
