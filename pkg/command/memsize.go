package command

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/confine"
	"github.com/intermem/intermem/pkg/promote"
)

// fileLines counts the lines of every memory file.
func fileLines(d *automem.Dir) int {
	if d == nil {
		return 0
	}
	n := 0
	for _, f := range d.Files {
		n += promote.Lines(f.Content)
	}
	return n
}

// memAfter rebuilds the memory view a set of simulated file contents
// would produce, without touching disk (for --dry-run reports).
func memAfter(d *automem.Dir, contents map[string][]byte, exists map[string]bool) *automem.Dir {
	if d == nil {
		return nil
	}
	out := &automem.Dir{Path: d.Path}
	for _, f := range d.Files {
		path := filepath.Join(d.Path, filepath.FromSlash(f.Name))
		if real, err := confine.Real(path); err == nil {
			path = real // the simulation is keyed by real path
		}
		nf := f
		if b, ok := contents[path]; ok {
			if !exists[path] {
				continue
			}
			nf = automem.Parse(f.Name, b)
		}
		out.Files = append(out.Files, nf)
		if f.Name == automem.IndexName {
			out.Index = nf
			out.Load = automem.Load(nf.Content)
		}
	}
	return out
}

// relTo shows path relative to root when it is inside it, else with ~
// for the home directory.
func relTo(root, path string) string {
	if r, err := filepath.Rel(root, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	if h, err := os.UserHomeDir(); err == nil && strings.HasPrefix(path, h+string(os.PathSeparator)) {
		return "~" + path[len(h):]
	}
	return path
}
