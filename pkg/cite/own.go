package cite

import (
	"os"
	"path"
	"strings"

	"github.com/intermem/intermem/pkg/confine"
)

// ownDirs are the directories intermem itself creates in a project
// (relative to the root): the detail documents with the archive, and the
// state directory. What is in them says nothing about the project's own
// layout, so none of it is evidence when a citation is judged: a project
// whose docs/ holds only docs/intermem/ has no docs/ of its own, and a fact
// citing docs/adr/ there is as unchecked after a promotion created
// docs/intermem/ as it was before.
var ownDirs = []string{confine.DetailDir, confine.StateDir}

// own reports whether the root-relative path rel is one of ownDirs or lies
// under one.
func own(rel string) bool {
	for _, d := range ownDirs {
		if rel == d || strings.HasPrefix(rel, d+"/") {
			return true
		}
	}
	return false
}

// holdsOwn reports whether some own directory lies strictly under rel ("."
// for the root).
func holdsOwn(rel string) bool {
	for _, d := range ownDirs {
		if rel == "." || strings.HasPrefix(d, rel+"/") {
			return true
		}
	}
	return false
}

// projectHas reports whether the project itself has rel: it exists, is not
// intermem's own, and, if it is a directory on the way to one of intermem's
// own (docs/ above docs/intermem/), holds something besides it.
func (c *Checker) projectHas(rel string) bool {
	if own(rel) {
		return false
	}
	n := c.resolve(rel)
	if n.state != nodeExists {
		return false
	}
	if !n.dir || !holdsOwn(rel) {
		return true
	}
	if v, ok := c.has[rel]; ok {
		return v
	}
	v := false
	ents, err := os.ReadDir(n.real)
	if err != nil {
		v = true // cannot tell: count it, as before
	}
	for _, e := range ents {
		child := path.Join(rel, e.Name())
		if !own(child) && (!holdsOwn(child) || c.projectHas(child)) {
			v = true
			break
		}
	}
	c.has[rel] = v
	return v
}
