package cite

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"unicode"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
)

// Status is the outcome of checking one citation.
type Status string

// The statuses Check reports.
const (
	// Valid: the path exists with the cited nature, the glob matches, the
	// symbol occurs in its file.
	Valid Status = "valid"
	// Broken: the project (or its git history) shows the citation is wrong.
	Broken Status = "broken"
	// Moved: the path is gone and git recorded it as renamed to MovedTo,
	// which exists.
	Moved Status = "moved"
	// Unchecked: the citation cannot be judged here (outside the project, not
	// evidently a project path, or an I/O problem). It is never evidence of
	// staleness.
	Unchecked Status = "unchecked"
)

// maxSymbolRead bounds how much of a file is searched for a symbol.
const maxSymbolRead = 1 << 20

// maxSymlinks bounds symlink resolution.
const maxSymlinks = 40

// Result is the outcome for one citation.
type Result struct {
	Citation
	Status Status
	// Detail explains the status for a person ("exists", "no such file",
	// "renamed to pkg/x/y.go in git history", "outside the project").
	Detail string
	// MovedTo is the current path, relative to the root, for Moved.
	MovedTo string
	// NotInProject is set on an Unchecked file, directory or glob citation
	// whose first segment the project neither has nor ever had
	// (templates/invoice.html in a project without templates/): never
	// stale, but shown, and scored below a verified one (package score).
	NotInProject bool
}

// Checker validates citations against one project root. It caches what it
// learns (stats, the tree index, git history, glob and symbol results), so
// reuse one Checker for many entries of the same project. It is safe for
// concurrent use.
type Checker struct {
	mu       sync.Mutex
	root     string // absolute, cleaned, as given
	realRoot string // root with symlinks resolved
	rootErr  error
	stats    map[string]node
	hist     *history
	tree     *treeIndex
	globs    map[string]Result
	symbols  map[[2]string]bool
	has      map[string]bool // projectHas of directories above intermem's own
}

// NewChecker returns a Checker for the project at root. A root that cannot be
// resolved makes every citation Unchecked.
func NewChecker(root string) *Checker {
	c := &Checker{stats: map[string]node{}, globs: map[string]Result{}, symbols: map[[2]string]bool{}, has: map[string]bool{}}
	abs, err := filepath.Abs(root)
	if err == nil {
		c.root = abs
		c.realRoot, err = filepath.EvalSymlinks(abs)
	}
	if err == nil {
		var fi os.FileInfo
		if fi, err = os.Stat(c.realRoot); err == nil && !fi.IsDir() {
			err = fmt.Errorf("%s is not a directory", root)
		}
	}
	c.rootErr = err
	return c
}

// Check returns one Result per citation, in order.
func (c *Checker) Check(cs []Citation) []Result {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Result, len(cs))
	for i, ct := range cs {
		out[i] = c.check(ct)
	}
	return out
}

func (c *Checker) check(ct Citation) Result {
	r := Result{Citation: ct}
	if ct.Outside {
		return r.set(Unchecked, "outside the project")
	}
	if c.rootErr != nil {
		return r.set(Unchecked, "project root unavailable: "+c.rootErr.Error())
	}
	p := ct.Path
	if strings.HasPrefix(p, "/") {
		// Written from the project root (/src/main.py) or a URL route
		// (/api/v1/users): project-relative only if the project has, or
		// had, its first segment.
		p = strings.TrimLeft(p, "/")
		first, _, _ := strings.Cut(p, "/")
		if first == "" || hasMeta(first) || !c.projectHas(first) && !c.history().tops[first] {
			return r.set(Unchecked, "leading-slash path whose first segment is not in the project (a URL route?)")
		}
	}
	p = filepath.ToSlash(filepath.Clean(filepath.FromSlash(p)))
	if p == "." || p == ".." || strings.HasPrefix(p, "../") || filepath.IsAbs(filepath.FromSlash(p)) {
		return r.set(Unchecked, "outside the project")
	}
	switch ct.Kind {
	case Glob:
		return c.checkGlob(r, p)
	case Symbol:
		fr, real := c.checkPath(r, p, File)
		if fr.Status != Valid {
			if fr.Status == Broken || fr.Status == Moved {
				fr.Detail += " (cited for symbol " + ct.Symbol + ")"
			}
			return fr
		}
		return c.checkSymbol(r, real, ct.Symbol)
	default:
		res, _ := c.checkPath(r, p, ct.Kind)
		return res
	}
}

func (r Result) set(s Status, detail string) Result {
	r.Status, r.Detail = s, detail
	return r
}

// node is what resolution learned about one root-relative path.
type node struct {
	state int // nodeExists, nodeMissing, nodeOutside, nodeError
	dir   bool
	real  string
	note  string
}

const (
	nodeExists = iota
	nodeMissing
	nodeOutside
	nodeError
)

func (c *Checker) resolve(rel string) node {
	if n, ok := c.stats[rel]; ok {
		return n
	}
	n := c.walk(rel)
	c.stats[rel] = n
	return n
}

// within reports whether the real path p is the root or inside it.
func (c *Checker) within(p string) bool {
	return p == c.realRoot || strings.HasPrefix(p, c.realRoot+string(filepath.Separator))
}

// walk resolves rel one component at a time from the real root, following
// symlinks by reading them (never by opening through them) and stopping as
// soon as the real path would leave the root.
func (c *Checker) walk(rel string) node {
	cur := c.realRoot
	todo := strings.Split(rel, "/")
	links := 0
	viaLink := false
	for len(todo) > 0 {
		name := todo[0]
		todo = todo[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			if !c.within(cur) {
				return node{state: nodeOutside}
			}
			continue
		}
		next := filepath.Join(cur, name)
		fi, err := os.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				n := node{state: nodeMissing}
				if viaLink {
					n.note = " (through a symlink)"
				}
				return n
			}
			return node{state: nodeError, note: err.Error()}
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			if !fi.IsDir() && len(todo) > 0 && strings.Join(todo, "") != "" {
				return node{state: nodeMissing}
			}
			continue
		}
		links++
		if links > maxSymlinks {
			return node{state: nodeError, note: "too many symlinks"}
		}
		target, err := os.Readlink(next)
		if err != nil {
			return node{state: nodeError, note: err.Error()}
		}
		viaLink = true
		target = filepath.ToSlash(target)
		if filepath.IsAbs(filepath.FromSlash(target)) {
			t := filepath.Clean(filepath.FromSlash(target))
			var inside string
			switch {
			case t == c.realRoot || strings.HasPrefix(t, c.realRoot+string(filepath.Separator)):
				inside = strings.TrimPrefix(t, c.realRoot)
			case t == c.root || strings.HasPrefix(t, c.root+string(filepath.Separator)):
				inside = strings.TrimPrefix(t, c.root)
			default:
				return node{state: nodeOutside}
			}
			cur = c.realRoot
			target = filepath.ToSlash(inside)
		}
		todo = append(strings.Split(target, "/"), todo...)
	}
	fi, err := os.Stat(cur)
	if err != nil {
		return node{state: nodeError, note: err.Error()}
	}
	return node{state: nodeExists, dir: fi.IsDir(), real: cur}
}

// checkPath judges a file, directory or path citation and returns the real
// path of what it found.
func (c *Checker) checkPath(r Result, p string, kind Kind) (Result, string) {
	n := c.resolve(p)
	switch n.state {
	case nodeOutside:
		return r.set(Unchecked, "resolves outside the project through a symlink"), ""
	case nodeError:
		return r.set(Unchecked, "cannot check: "+n.note), ""
	case nodeExists:
		if n.dir && holdsOwn(p) && !c.projectHas(p) {
			// docs/ holding nothing but docs/intermem/: intermem made it.
			return c.missing(r, p, kind, "")
		}
		if res, ok := natureMismatch(r, n, kind); !ok {
			return res, ""
		}
		if n.dir {
			return r.set(Valid, "directory exists"), n.real
		}
		return r.set(Valid, "exists"), n.real
	}
	return c.missing(r, p, kind, n.note)
}

func natureMismatch(r Result, n node, kind Kind) (Result, bool) {
	switch {
	case kind == File && n.dir:
		return r.set(Broken, "is a directory, cited as a file"), false
	case kind == Dir && !n.dir:
		return r.set(Broken, "is a file, cited as a directory"), false
	}
	return r, true
}

func noSuch(kind Kind) string {
	switch kind {
	case File:
		return "no such file"
	case Dir:
		return "no such directory"
	}
	return "no such file or directory"
}

// missing judges a citation whose path does not exist under the root.
func (c *Checker) missing(r Result, p string, kind Kind, note string) (Result, string) {
	h := c.history()
	if !strings.Contains(p, "/") {
		// A bare name (conftest.py, .env, a sibling memory file) names a file
		// somewhere, not necessarily at the root.
		if res, real, ok := c.findElsewhere(r, p, kind); ok {
			return res, real
		}
		if res, ok := c.fromHistory(r, p, kind); ok {
			return res, ""
		}
		for _, old := range h.byBase[p] {
			if res, ok := c.fromHistory(r, old, kind); ok {
				return res, ""
			}
		}
		if !c.treeIndex().complete {
			return r.set(Unchecked, "not at the project root; search limit reached"), ""
		}
		return r.set(Unchecked, "not in the project tree or its git history"), ""
	}
	if res, ok := c.fromHistory(r, p, kind); ok {
		return res, ""
	}
	if res, real, ok := c.findElsewhere(r, p, kind); ok {
		return res, real
	}
	first, _, _ := strings.Cut(p, "/")
	if c.projectHas(first) || h.tops[first] {
		return r.set(Broken, noSuch(kind)+note), ""
	}
	if kind == Path {
		// `owner/repo`, `feat/x`: not evidently a path at all.
		return r.set(Unchecked, "not a project path: no "+first+" in the project or its git history"), ""
	}
	return r.notInProject(first), ""
}

// notInProject marks a citation that reads as a project path (a file with an
// extension, a directory, a glob) under a top-level name the project does
// not have and never had: it cannot be checked here, which is not evidence
// that it is wrong (it may be about another repository), but it is not
// verified either, and a person should see it.
func (r Result) notInProject(first string) Result {
	r.NotInProject = true
	return r.set(Unchecked, "not in this project: no "+first+" here or in its git history")
}

// fromHistory reports what git knows about the gone path old.
func (c *Checker) fromHistory(r Result, old string, kind Kind) (Result, bool) {
	h := c.history()
	if final, ok := h.follow(old); ok {
		n := c.resolve(final)
		if n.state == nodeExists {
			if res, ok := natureMismatch(r, n, kind); !ok {
				return res, true
			}
			r.MovedTo = final
			return r.set(Moved, "renamed to "+final+" in git history"), true
		}
		return r.set(Broken, "renamed to "+final+" in git history, which no longer exists"), true
	}
	if kind != File {
		if to, ok := h.dirMove(old); ok && c.resolve(to).dir {
			r.MovedTo = to
			return r.set(Moved, "renamed to "+to+" in git history"), true
		}
		if h.goneUnder(old) && !h.gone[old] {
			return r.set(Broken, noSuch(kind)+"; its files were removed in git history"), true
		}
	}
	if h.gone[old] {
		if old != r.Path {
			return r.set(Broken, noSuch(kind)+" (deleted from "+old+" in git history)"), true
		}
		return r.set(Broken, noSuch(kind)+" (deleted in git history)"), true
	}
	return r, false
}

// findElsewhere looks for p under a subdirectory (a path written relative to
// a subproject, or a bare file name).
func (c *Checker) findElsewhere(r Result, p string, kind Kind) (Result, string, bool) {
	for _, cand := range c.treeIndex().candidates(p) {
		if !c.projectHas(cand) {
			continue
		}
		n := c.resolve(cand)
		if _, ok := natureMismatch(r, n, kind); !ok {
			continue
		}
		return r.set(Valid, "found at "+cand), n.real, true
	}
	return r, "", false
}

func (c *Checker) history() *history {
	if c.hist == nil {
		c.hist = loadHistory(c.realRoot)
	}
	return c.hist
}

func (c *Checker) treeIndex() *treeIndex {
	if c.tree == nil {
		c.tree = buildTree(os.DirFS(c.realRoot))
	}
	return c.tree
}

func hasMeta(s string) bool { return strings.ContainsAny(s, "*?[{") }

// checkGlob walks the project for the first path matching the pattern.
func (c *Checker) checkGlob(r Result, pattern string) Result {
	if res, ok := c.globs[pattern]; ok {
		res.Citation = r.Citation
		return res
	}
	res := c.globOnce(r, pattern)
	c.globs[pattern] = res
	return res
}

func (c *Checker) globOnce(r Result, pattern string) Result {
	if !doublestar.ValidatePattern(pattern) {
		return r.set(Unchecked, "malformed pattern")
	}
	root, err := os.OpenRoot(c.realRoot)
	if err != nil {
		return r.set(Unchecked, "cannot check: "+err.Error())
	}
	defer root.Close()
	keep := map[string]bool{}
	for _, s := range strings.Split(pattern, "/") {
		keep[s] = true
	}
	base, _ := doublestar.SplitPattern(pattern)
	w := &walkFS{fsys: root.FS(), keep: keep, ownOK: own(base), budget: maxWalk}
	match := ""
	err = doublestar.GlobWalk(w, pattern, func(p string, d fs.DirEntry) error {
		if d.Type()&fs.ModeSymlink != 0 && c.resolve(p).state != nodeExists {
			return nil
		}
		match = p
		return errFound
	}, doublestar.WithNoFollow())
	switch {
	case match != "":
		return r.set(Valid, "matches "+match)
	case w.over:
		return r.set(Unchecked, "matches nothing within the search limit")
	case err != nil && !errors.Is(err, errFound):
		return r.set(Unchecked, "cannot check: "+err.Error())
	}
	first, _, _ := strings.Cut(pattern, "/")
	h := c.history()
	for g := range h.gone {
		if own(g) && !w.ownOK {
			continue
		}
		if ok, _ := doublestar.Match(pattern, g); ok {
			return r.set(Broken, "matches nothing (matched "+g+" before it was removed in git history)")
		}
	}
	if base != "." && !c.projectHas(base) && !hasMeta(first) && !c.projectHas(first) && !h.tops[first] {
		return r.notInProject(first)
	}
	return r.set(Broken, "matches nothing")
}

// checkSymbol looks for sym as a whole word in the first MiB of the file.
func (c *Checker) checkSymbol(r Result, real, sym string) Result {
	rel, _ := filepath.Rel(c.realRoot, real)
	rel = filepath.ToSlash(rel)
	k := [2]string{real, sym}
	found, ok := c.symbols[k]
	if !ok {
		f, _, err := openRegular(real)
		if err != nil {
			return r.set(Unchecked, "cannot read "+rel+": "+err.Error())
		}
		data, err := io.ReadAll(io.LimitReader(f, maxSymbolRead))
		f.Close()
		if err != nil {
			return r.set(Unchecked, "cannot read "+rel+": "+err.Error())
		}
		found = containsWord(data, sym)
		c.symbols[k] = found
	}
	if found {
		return r.set(Valid, "symbol "+sym+" found in "+rel)
	}
	return r.set(Broken, "symbol "+sym+" not found in "+rel)
}

// containsWord reports whether w occurs in data with no identifier character
// immediately before or after it.
func containsWord(data []byte, w string) bool {
	if w == "" {
		return false
	}
	wb := []byte(w)
	for i := 0; i <= len(data)-len(wb); {
		k := bytes.Index(data[i:], wb)
		if k < 0 {
			return false
		}
		k += i
		end := k + len(wb)
		before, _ := utf8.DecodeLastRune(data[:k])
		after, _ := utf8.DecodeRune(data[end:])
		if (k == 0 || !isIdentRune(before)) && (end == len(data) || !isIdentRune(after)) {
			return true
		}
		i = k + 1
	}
	return false
}

func isIdentRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}
