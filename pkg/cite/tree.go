package cite

import (
	"errors"
	"io/fs"
	"path"
	"strings"

	"github.com/intermem/intermem/pkg/lazy"
)

// maxWalk bounds every walk of the project tree (directory entries read).
const maxWalk = 200_000

// skipDirs are never searched: version control, dependencies and our own state.
var skipDirs = lazy.NewSet(".git", "node_modules", ".intermem", ".venv", "__pycache__")

var (
	errBudget = errors.New("search limit reached")
	errFound  = errors.New("found")
)

// walkFS hides skipDirs from directory listings and charges every entry read
// against a budget. Once the budget is spent every ReadDir fails, so a walk
// ends quickly and the caller reports the search as incomplete.
type walkFS struct {
	fsys fs.FS
	keep map[string]bool // skip names the pattern itself names
	// ownOK lets the walk into intermem's own directories (a pattern
	// under docs/intermem/ names them); otherwise they are hidden, since
	// they are not evidence about the project.
	ownOK  bool
	budget int
	over   bool
}

func (w *walkFS) Open(name string) (fs.File, error)     { return w.fsys.Open(name) }
func (w *walkFS) Stat(name string) (fs.FileInfo, error) { return fs.Stat(w.fsys, name) }

func (w *walkFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if w.budget <= 0 {
		w.over = true
		return nil, errBudget
	}
	ents, err := fs.ReadDir(w.fsys, name)
	w.budget -= len(ents) + 1
	out := ents[:0]
	for _, e := range ents {
		if e.IsDir() && skipDirs.Has(e.Name()) && !w.keep[e.Name()] {
			continue
		}
		if !w.ownOK && own(path.Join(name, e.Name())) {
			continue
		}
		out = append(out, e)
	}
	return out, err
}

// treeIndex maps base names to paths in the project, for citations written
// relative to a subdirectory or as a bare file name.
type treeIndex struct {
	byBase   map[string][]string
	complete bool
}

const maxPerBase = 64

func buildTree(fsys fs.FS) *treeIndex {
	w := &walkFS{fsys: fsys, budget: maxWalk}
	t := &treeIndex{byBase: map[string][]string{}}
	_ = fs.WalkDir(w, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return nil
		}
		b := path.Base(p)
		if len(t.byBase[b]) < maxPerBase {
			t.byBase[b] = append(t.byBase[b], p)
		}
		return nil
	})
	t.complete = !w.over
	return t
}

// candidates returns indexed paths equal to rel or ending in "/"+rel.
func (t *treeIndex) candidates(rel string) []string {
	var out []string
	for _, p := range t.byBase[path.Base(rel)] {
		if p == rel || strings.HasSuffix(p, "/"+rel) {
			out = append(out, p)
		}
	}
	return out
}
