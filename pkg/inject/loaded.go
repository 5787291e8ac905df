package inject

import (
	"bytes"
	"path/filepath"
	"sort"
	"strings"

	"github.com/intermem/intermem/pkg/targets"
)

type namedDoc struct {
	name string // relative to the root, slash separated
	d    *docData
}

// docSet is every markdown document that matters to injection.
type docSet struct {
	deps *Deps
	// loaded are the documents Claude Code loads at session start.
	loaded []*docData
	// claude and agents are the root CLAUDE.md and AGENTS.md (nil when
	// absent); details are docs/intermem/*.md, sorted by name.
	claude, agents         *docData
	claudeReal, agentsReal string
	details                []namedDoc
	same                   bool // CLAUDE.md and AGENTS.md are one file
	agentsStrict           bool // every client loads AGENTS.md (targets.Set.AgentsLoaded)
	agentsLoaded           bool // the current client loads it (also when there is no CLAUDE.md)
	agentsPath             string
}

// targets lists the distinct curated documents that can hold promoted
// entries, as targets.Set.Docs does: AGENTS.md, CLAUDE.md, then details.
func (ds *docSet) targets() []namedDoc {
	var out []namedDoc
	seen := map[string]bool{}
	add := func(name string, d *docData) {
		if d != nil && !seen[d.Path] {
			seen[d.Path] = true
			out = append(out, namedDoc{name, d})
		}
	}
	add(targets.Agents, ds.agents)
	add(targets.Claude, ds.claude)
	for _, dt := range ds.details {
		add(dt.name, dt.d)
	}
	return out
}

// docAt returns the derived record of the regular file at path (symlinks
// followed), or nil.
func docAt(ix *Index, deps *Deps, path string) *docData {
	// Most candidate paths do not exist: one lstat says so, where
	// resolving symlinks would lstat every component first.
	if _, err := deps.Lstat(path); err != nil {
		return nil
	}
	real, err := deps.EvalSymlinks(path)
	if err != nil {
		return nil
	}
	fi, err := deps.Stat(real)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxLoadedBytes {
		return nil
	}
	d, err := ix.doc(real, fi.Size(), fi.ModTime().UnixNano(), func() ([]byte, error) {
		return readLimited(real, maxLoadedBytes)
	})
	if err != nil {
		return nil
	}
	return d
}

// discover finds the curated documents and the documents Claude Code
// loads at session start for a session in cwd (claude-code.md §4.3):
//
//   - <config>/CLAUDE.md and <config>/rules/*.md (the user's own);
//   - CLAUDE.md, .claude/CLAUDE.md and CLAUDE.local.md in cwd and every
//     parent directory (the project root's included);
//   - the project's .claude/rules/*.md (and cwd's, if different) without a
//     "paths:" frontmatter key (those load only when matching files are
//     touched);
//   - AGENTS.md when the current client loads it: CLAUDE.md imports it or
//     is the same file, or there is no CLAUDE.md (2.1.332 then reads
//     AGENTS.md; 2.1.197 never does — the health line says so);
//   - every @import of those, recursively, up to five hops.
//
// Files are read once each (by real path), at most maxLoadedDocs of them
// and maxLoadedBytes of each.
func discover(e Env, cwd string, ix *Index) *docSet {
	ds := &docSet{deps: e.Deps}
	claudePath := filepath.Join(e.Root, targets.Claude)
	ds.agentsPath = filepath.Join(e.Root, targets.Agents)
	ds.claude = docAt(ix, e.Deps, claudePath)
	ds.agents = docAt(ix, e.Deps, ds.agentsPath)
	if ds.claude != nil {
		ds.claudeReal = ds.claude.Path
	}
	if ds.agents != nil {
		ds.agentsReal = ds.agents.Path
	}
	ds.same = ds.claude != nil && ds.agents != nil && ds.claudeReal == ds.agentsReal
	ds.agentsStrict = ds.same || ds.importsAgents()
	ds.agentsLoaded = ds.agentsStrict || ds.claude == nil

	// Detail docs.
	if ents, err := e.Deps.ReadDir(filepath.Join(e.Root, filepath.FromSlash(targets.DetailDir))); err == nil {
		for _, en := range ents {
			n := en.Name()
			if !strings.HasSuffix(n, ".md") || strings.HasPrefix(n, ".") || en.IsDir() || len(ds.details) >= maxDetails {
				continue
			}
			name := targets.DetailDir + "/" + n
			if d := docAt(ix, e.Deps, filepath.Join(e.Root, filepath.FromSlash(name))); d != nil {
				ds.details = append(ds.details, namedDoc{name, d})
			}
		}
		sort.Slice(ds.details, func(i, j int) bool { return ds.details[i].name < ds.details[j].name })
	}

	// What Claude Code loads.
	type pending struct {
		path  string
		depth int
		rule  bool
	}
	var queue []pending
	push := func(p string, depth int) { queue = append(queue, pending{path: p, depth: depth}) }
	pushRules := func(dir string) {
		for _, r := range ruleFiles(e.Deps, dir) {
			queue = append(queue, pending{path: r, rule: true})
		}
	}
	if e.ConfigDir != "" {
		push(filepath.Join(e.ConfigDir, "CLAUDE.md"), 0)
		pushRules(filepath.Join(e.ConfigDir, "rules"))
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
	push(claudePath, 0)
	push(filepath.Join(e.Root, "CLAUDE.local.md"), 0)
	pushRules(filepath.Join(e.Root, ".claude", "rules"))
	if cwd != e.Root {
		pushRules(filepath.Join(cwd, ".claude", "rules"))
	}
	if ds.agents != nil && ds.agentsLoaded {
		push(ds.agentsPath, 0)
	}
	seen := map[string]bool{}
	for len(queue) > 0 && len(ds.loaded) < maxLoadedDocs {
		p := queue[0]
		queue = queue[1:]
		d := docAt(ix, e.Deps, p.path)
		if d == nil || seen[d.Path] || (p.rule && d.HasPaths) {
			continue
		}
		seen[d.Path] = true
		ds.loaded = append(ds.loaded, d)
		if p.depth >= maxImportDepth {
			continue
		}
		for _, imp := range d.Imports {
			switch {
			case strings.HasPrefix(imp, "~/"):
				if e.Home == "" {
					continue
				}
				imp = filepath.Join(e.Home, imp[2:])
			case !filepath.IsAbs(imp):
				imp = filepath.Join(filepath.Dir(d.Path), imp)
			}
			push(imp, p.depth+1)
		}
	}
	return ds
}

// importsAgents mirrors targets.Set.ImportsAgents: an import of CLAUDE.md,
// resolved against CLAUDE.md's real directory, names AGENTS.md.
func (ds *docSet) importsAgents() bool {
	if ds.claude == nil {
		return false
	}
	agentsReal := ds.agentsReal
	if agentsReal == "" {
		agentsReal = ds.agentsPath
		if real, err := ds.deps.EvalSymlinks(ds.agentsPath); err == nil {
			agentsReal = real
		}
	}
	for _, imp := range ds.claude.Imports {
		p := imp
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(ds.claudeReal), p)
		}
		if c := filepath.Clean(p); c == ds.agentsPath || c == agentsReal {
			return true
		}
	}
	return false
}

// ruleFiles lists the *.md files under a rules directory, two levels deep
// at most, sorted.
func ruleFiles(deps *Deps, dir string) []string {
	var out []string
	var walk func(d string, depth int)
	walk = func(d string, depth int) {
		ents, err := deps.ReadDir(d)
		if err != nil {
			return
		}
		for _, en := range ents {
			p := filepath.Join(d, en.Name())
			switch {
			case strings.HasPrefix(en.Name(), "."):
			case en.IsDir():
				if depth < 2 {
					walk(p, depth+1)
				}
			case strings.HasSuffix(en.Name(), ".md") && len(out) < maxLoadedDocs:
				out = append(out, p)
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
