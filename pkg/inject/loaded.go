package inject

import (
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/intermem/intermem/pkg/loaded"
	"github.com/intermem/intermem/pkg/targets"
)

// Bounds of what is read as already loaded (package loaded's).
const (
	maxLoadedBytes = loaded.MaxBytes
)

type namedDoc struct {
	name string // relative to the root, slash separated
	d    *docData
}

// docSet is every markdown document that matters to injection.
type docSet struct {
	// set is what Claude Code loads at session start (package loaded).
	set *loaded.Set[*docData]
	// claude and agents are the root CLAUDE.md and AGENTS.md (nil when
	// absent); details are docs/intermem/*.md, sorted by name.
	claude, agents *docData
	details        []namedDoc
	same           bool // CLAUDE.md and AGENTS.md are one file
	agentsStrict   bool // every client loads AGENTS.md (targets.Set.AgentsLoaded)
	agentsLoaded   bool // the current client loads it (also when there is no CLAUDE.md)
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
	if err != nil {
		return nil
	}
	d, ok := readDoc(ix, real, fi)
	if !ok {
		return nil
	}
	return d
}

// readDoc is package loaded's Read over the derived-data index.
func readDoc(ix *Index, real string, fi fs.FileInfo) (*docData, bool) {
	if !fi.Mode().IsRegular() || fi.Size() > maxLoadedBytes {
		return nil, false
	}
	d, err := ix.doc(real, fi.Size(), fi.ModTime().UnixNano(), func() ([]byte, error) {
		return readLimited(real, maxLoadedBytes)
	})
	if err != nil {
		return nil, false
	}
	return d, true
}

// discover finds the curated documents, and the documents Claude Code
// loads at session start for a session in cwd (package loaded, asked
// through the recording Deps so the render cache knows every fact the
// answer depended on).
func discover(e Env, cwd string, ix *Index) *docSet {
	ds := &docSet{}
	claudePath := filepath.Join(e.Root, targets.Claude)
	agentsPath := filepath.Join(e.Root, targets.Agents)
	ds.claude = docAt(ix, e.Deps, claudePath)
	ds.agents = docAt(ix, e.Deps, agentsPath)
	ds.same = ds.claude != nil && ds.agents != nil && ds.claude.Path == ds.agents.Path

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
	env := loaded.Env{Root: e.Root, Cwd: cwd, ConfigDir: e.ConfigDir, Home: e.Home}
	ds.set = loaded.Discover(env, e.Deps, func(real string, fi fs.FileInfo) (*docData, loaded.Meta, bool) {
		d, ok := readDoc(ix, real, fi)
		if !ok {
			return nil, loaded.Meta{}, false
		}
		return d, loaded.Meta{Imports: d.Imports, Scoped: d.HasPaths}, true
	})
	if ds.agents != nil {
		ds.agentsLoaded, ds.agentsStrict = ds.set.Loads(ds.agents.Path)
	} else if ds.claude != nil {
		// No AGENTS.md yet: one CLAUDE.md imports loads once created.
		for _, imp := range ds.claude.Imports {
			if p, ok := loaded.ImportPath(imp, ds.claude.Path, e.Home); ok && (p == agentsPath || p == filepath.Join(filepath.Dir(ds.claude.Path), targets.Agents)) {
				ds.agentsStrict = true
			}
		}
	}
	return ds
}
