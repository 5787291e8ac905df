// Package targets finds and reads the curated documents intermem promotes
// into: CLAUDE.md and AGENTS.md at the project root, and the detail docs
// under docs/intermem/. It resolves symlinks (many projects make CLAUDE.md
// a link to AGENTS.md, or the reverse), so two names for one file are one
// document and writes go through to the real file, and it answers the
// question promotion must never get wrong: will Claude Code load AGENTS.md?
//
// Claude Code loads CLAUDE.md at every session start. It reads AGENTS.md
// only when the directory has no CLAUDE.md (2.1.332; 2.1.197 never reads
// it), unless CLAUDE.md imports it with a line "@AGENTS.md".
//
// Every name is judged by where a write to it would really land
// (confine.Real: links followed, a dangling link by the file it would
// create, a link under a linked directory from the real directory). A
// document whose real path is outside the project (a CLAUDE.md linking to
// ../home/u/.profile, a docs/ linking elsewhere) or inside its .intermem or
// .git is reported as such (Doc.Outside), never as "absent": plan and
// status say where it leads, and writers refuse it unless the user passes
// --allow-outside.
package targets

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/intermem/intermem/pkg/confine"
	"github.com/intermem/intermem/pkg/journal"
	"github.com/intermem/intermem/pkg/loaded"
	"github.com/intermem/intermem/pkg/mdoc"
)

// Names of the root documents.
const (
	Claude = "CLAUDE.md"
	Agents = "AGENTS.md"
	// DetailDir holds the tiered detail docs, relative to the root.
	DetailDir = "docs/intermem"
	// ArchiveName is the archive file inside DetailDir (never auto-loaded).
	ArchiveName = ".archived.md"
)

// MaxBytes bounds what is read of one document.
const MaxBytes = 8 << 20

// ErrUnusable is returned when a curated document exists but cannot be
// used: it is a directory, a FIFO or a device, a symlink loop, too large,
// or unreadable. intermem reports it and never writes into it.
var ErrUnusable = errors.New("unusable document")

// Doc is one curated document.
type Doc struct {
	Name    string // relative to the root, slash-separated ("AGENTS.md", "docs/intermem/build.md")
	Path    string // absolute path as named
	Real    string // absolute path with symlinks resolved (where writes go)
	Exists  bool
	Content []byte
	Doc     *mdoc.Doc
	Hash    string // journal.Hash of Content, "" when absent
	// Linked is set when Path leads elsewhere through a symlink (Real !=
	// Path): the name itself or a directory above it. Dangling is set when
	// the name itself is a symlink and what it leads to does not exist.
	Linked, Dangling bool
	// Outside is set when Real is not a place intermem may write without
	// --allow-outside: outside the project, or inside its .intermem or
	// .git (confine.ErrOutside).
	Outside error
	// inside is set when Real is inside the root (then Outside means its
	// .intermem or .git).
	inside bool
	// self is set when the name itself is a symlink.
	self bool
}

// Problem describes a document whose name leads out of intermem's places,
// naming where ("CLAUDE.md links to /home/u/.profile, outside this
// project"), or "".
func (d *Doc) Problem() string {
	if d.Outside == nil {
		return ""
	}
	how := "resolves to " + d.Real // through a linked directory, or not at all
	switch {
	case d.Dangling:
		how = "is a dangling link to " + d.Real
	case d.self:
		how = "links to " + d.Real
	}
	where := "outside this project"
	if d.inside {
		where = "inside the project's .intermem or .git, where intermem never writes"
	}
	return fmt.Sprintf("%s %s, %s", d.Name, how, where)
}

// Outside lists the documents whose names lead out of intermem's places
// (Doc.Outside), in a stable order: CLAUDE.md, AGENTS.md, the archive, the
// detail documents.
func (s *Set) Outside() []*Doc {
	var out []*Doc
	for _, d := range append([]*Doc{s.Claude, s.Agents, s.Archive}, s.Details...) {
		if d != nil && d.Outside != nil {
			out = append(out, d)
		}
	}
	return out
}

// Warnings are the sentences plan and status print about documents whose
// names lead out of intermem's places.
func (s *Set) Warnings() []string {
	var out []string
	for _, d := range s.Outside() {
		out = append(out, d.Problem()+": apply refuses unless --allow-outside")
	}
	return out
}

// Set is the project's curated documents.
type Set struct {
	Root    string
	Claude  *Doc
	Agents  *Doc
	Details []*Doc // docs/intermem/*.md except the archive, sorted by name
	Archive *Doc
}

// Load reads the curated documents of the project at root. Missing files
// are Docs with Exists false; an unreadable one is an error.
func Load(root string) (*Set, error) { return LoadWith(root, nil, nil) }

// LoadWith is Load with some files replaced by given contents (keyed by
// real path; exists false means deleted): the documents as an operation
// would leave them, for reporting the effect of a dry run.
func LoadWith(root string, contents map[string][]byte, exists map[string]bool) (*Set, error) {
	s := &Set{Root: root}
	ld := func(name string) (*Doc, error) {
		d, err := load(root, name)
		if err != nil {
			return nil, err
		}
		if ok, over := exists[d.Real]; over {
			d.Exists, d.Content = ok, contents[d.Real]
			if !ok {
				d.Content = nil
			}
			d.Doc = mdoc.Parse(d.Content)
			d.Hash = ""
			if ok {
				d.Hash = journal.Hash(d.Content)
			}
		}
		return d, nil
	}
	var err error
	if s.Claude, err = ld(Claude); err != nil {
		return nil, err
	}
	if s.Agents, err = ld(Agents); err != nil {
		return nil, err
	}
	if s.Archive, err = ld(DetailDir + "/" + ArchiveName); err != nil {
		return nil, err
	}
	dir := filepath.Join(root, filepath.FromSlash(DetailDir))
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s: %v", ErrUnusable, DetailDir, err)
	}
	names := map[string]bool{}
	for _, e := range ents {
		if !e.IsDir() {
			names[e.Name()] = true
		}
	}
	for p := range exists {
		if filepath.Dir(p) == dir {
			names[filepath.Base(p)] = true
		}
	}
	var sorted []string
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	for _, n := range sorted {
		if !strings.HasSuffix(n, ".md") || strings.HasPrefix(n, ".") {
			continue
		}
		d, err := ld(DetailDir + "/" + n)
		if err != nil {
			return nil, err
		}
		if d.Exists {
			s.Details = append(s.Details, d)
		}
	}
	sort.Slice(s.Details, func(i, j int) bool { return s.Details[i].Name < s.Details[j].Name })
	return s, nil
}

func load(root, name string) (*Doc, error) {
	d := &Doc{Name: name, Path: filepath.Join(root, filepath.FromSlash(name))}
	real, err := confine.Real(d.Path)
	if err != nil {
		return nil, fmt.Errorf("%w: %s is a symlink that does not resolve", ErrUnusable, name)
	}
	d.Real, d.Linked = real, real != d.Path
	if d.Linked {
		st, err := os.Lstat(d.Path)
		d.self = err == nil && st.Mode()&fs.ModeSymlink != 0
	}
	d.Outside = confine.Places{Root: root}.CheckReal(d.Path, d.Real)
	d.inside = strings.HasPrefix(d.Real, filepath.Clean(root)+string(filepath.Separator))
	st, err := os.Stat(d.Real)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		d.Dangling = d.self
		d.Doc = mdoc.Parse(nil)
		return d, nil
	case err != nil:
		return nil, fmt.Errorf("%w: %s: %v", ErrUnusable, name, err)
	case st.IsDir():
		return nil, fmt.Errorf("%w: %s is a directory, not a file", ErrUnusable, name)
	case !st.Mode().IsRegular():
		// Reading a FIFO would block forever.
		return nil, fmt.Errorf("%w: %s is not a regular file (%v)", ErrUnusable, name, st.Mode().Type())
	case st.Size() > MaxBytes:
		return nil, fmt.Errorf("%w: %s is %d bytes, larger than intermem handles (%d)", ErrUnusable, name, st.Size(), MaxBytes)
	}
	b, err := os.ReadFile(d.Real)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrUnusable, name, err)
	}
	d.Exists, d.Content, d.Doc, d.Hash = true, b, mdoc.Parse(b), journal.Hash(b)
	return d, nil
}

// Same reports whether CLAUDE.md and AGENTS.md are one file (a symlink).
func (s *Set) Same() bool {
	return s.Claude.Exists && s.Agents.Exists && s.Claude.Real == s.Agents.Real
}

// Docs returns every distinct existing document that can hold promoted
// entries (root docs and detail docs; not the archive).
func (s *Set) Docs() []*Doc {
	var out []*Doc
	seen := map[string]bool{}
	for _, d := range append([]*Doc{s.Agents, s.Claude}, s.Details...) {
		if d.Exists && !seen[d.Real] {
			seen[d.Real] = true
			out = append(out, d)
		}
	}
	return out
}

// Target returns the root document for a target name (AGENTS.md or
// CLAUDE.md).
func (s *Set) Target(name string) *Doc {
	if name == Claude {
		return s.Claude
	}
	return s.Agents
}

// ImportsAgents reports whether CLAUDE.md imports AGENTS.md.
func (s *Set) ImportsAgents() bool {
	if !s.Claude.Exists {
		return false
	}
	for _, imp := range s.Claude.Doc.Imports() {
		p := imp
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(s.Claude.Real), p)
		}
		if filepath.Clean(p) == s.Agents.Path || filepath.Clean(p) == s.Agents.Real {
			return true
		}
	}
	return false
}

// AgentsLoaded reports whether every Claude Code client loads AGENTS.md
// for a session at the project root, and if not, a sentence saying why.
// The answer is package loaded's (the one definition of what Claude Code
// loads), over the project's own files as this Set holds them: CLAUDE.md
// may import AGENTS.md directly or through other imports.
func (s *Set) AgentsLoaded() (bool, string) {
	switch {
	case s.Same():
		return true, ""
	case s.ImportsAgents() || s.loadsAgents():
		return true, ""
	case s.Claude.Exists:
		return false, "CLAUDE.md exists and does not import AGENTS.md, so Claude Code never loads AGENTS.md"
	case s.Claude.Dangling:
		return false, "CLAUDE.md is a dangling link to " + s.Claude.Real + ", so Claude Code loads no CLAUDE.md: 2.1.332 then loads AGENTS.md, but 2.1.197 and older never do"
	default:
		return false, "there is no CLAUDE.md: Claude Code 2.1.332 then loads AGENTS.md, but 2.1.197 and older never do"
	}
}

// loadsAgents asks package loaded whether a session at the root loads
// AGENTS.md from a file every client reads, the root documents read as
// this Set holds them.
func (s *Set) loadsAgents() bool {
	if !s.Agents.Exists {
		return false
	}
	over := func(real string) ([]byte, bool) {
		for _, d := range []*Doc{s.Claude, s.Agents} {
			if d.Real == real {
				return d.Content, true // nil when the Set holds it deleted
			}
		}
		return nil, false
	}
	set := loaded.ReadAll(loaded.Env{Root: s.Root, NoManaged: true}, over)
	_, strict := set.Loads(s.Agents.Real)
	return strict
}

// AddImport returns CLAUDE.md's content with an "@AGENTS.md" import line
// added (after the document's "# Title" when it opens with one, else at
// the top), preserving every other byte and the file's line endings. It is
// idempotent. Never under a "##" heading: the import would read as part of
// that section (as it did in a CLAUDE.md apply created, which opens with
// the section of its first promoted entry).
func AddImport(claude []byte) []byte {
	d := mdoc.Parse(claude)
	for _, imp := range d.Imports() {
		if filepath.Clean(imp) == Agents {
			return claude
		}
	}
	eol := d.EOL
	line := []byte("@" + Agents + eol)
	if len(claude) == 0 {
		return line
	}
	// After the title when the document opens with one.
	if len(d.Sections) > 1 && d.Sections[1].Level == 1 && d.Sections[1].Start == firstNonBlank(claude) {
		end := bytes.IndexByte(claude[d.Sections[1].Start:], '\n')
		if end >= 0 {
			at := d.Sections[1].Start + end + 1
			out := append([]byte{}, claude[:at]...)
			out = append(out, []byte(eol)...)
			out = append(out, line...)
			return append(out, claude[at:]...)
		}
	}
	return append(append(line, []byte(eol)...), claude...)
}

func firstNonBlank(b []byte) int {
	for i, c := range b {
		if c != '\n' && c != '\r' && c != ' ' && c != '\t' {
			// back to the start of the line
			for i > 0 && b[i-1] != '\n' {
				i--
			}
			return i
		}
	}
	return len(b)
}

// RemoveImport undoes AddImport: it removes a line that is exactly
// "@AGENTS.md" together with the blank line AddImport added beside it.
func RemoveImport(claude []byte) []byte {
	lines := bytes.SplitAfter(claude, []byte("\n"))
	blank := func(i int) bool {
		return i >= 0 && i < len(lines) && len(bytes.TrimSpace(lines[i])) == 0 && len(lines[i]) > 0
	}
	for i, l := range lines {
		if string(bytes.TrimRight(l, "\r\n")) != "@"+Agents {
			continue
		}
		from, to := i, i
		switch {
		case blank(i - 1):
			from = i - 1
		case blank(i + 1):
			to = i + 1
		}
		var out []byte
		for j, x := range lines {
			if j < from || j > to {
				out = append(out, x...)
			}
		}
		return out
	}
	return claude
}
