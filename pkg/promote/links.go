package promote

import (
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/intermem/intermem/pkg/automem"
)

// Links in promoted text.
//
// A memory entry's relative links were written for the memory directory:
// "See [gate notes](project_gate.md)" names a file next to MEMORY.md. Copied
// verbatim into CLAUDE.md or docs/intermem/, the link points at nothing. So
// every link of a promoted block is rewritten for the document it lands in,
// to what the linked thing became, and checked:
//
//   - a link to a memory that this operation (or an earlier one) promotes
//     points to the document that memory goes to, relative to the new
//     location; when both land in the same document the label is enough;
//   - a link to a memory that stays in auto-memory becomes a plain mention,
//     "gate notes (auto-memory `project_gate.md`)": the memory directory is
//     private to one machine, so a path into it would be a broken link for
//     everyone who reads the committed document, and a model reading it
//     still learns where to look;
//   - a link to a file of the project (written relative to the memory
//     directory, or, as models often do, from the project root) is made
//     relative to the new location;
//   - a [[wikilink]] names a memory by file name or title and is treated
//     like a link to that memory;
//   - anything else relative — a memory or a file that does not exist — is
//     replaced by its label, so no broken link lands.
//
// URLs, anchors, absolute and "~/" paths are left as written. Fenced code
// and code spans are never touched.

// linker rewrites the links of the blocks of one operation.
type linker struct {
	root string
	mem  *automem.Dir
	// homes maps a memory file (slash path in the memory directory) to the
	// absolute path of the document its memory is promoted into.
	homes map[string]string
	// exists reports whether an absolute path is or will be a file once
	// the operation has run.
	exists func(string) bool
}

func newLinker(root string, mem *automem.Dir, homes map[string]string, creates map[string]bool) *linker {
	return &linker{root: root, mem: mem, homes: homes, exists: func(p string) bool {
		if creates[p] {
			return true
		}
		fi, err := os.Stat(p)
		return err == nil && fi.Mode().IsRegular()
	}}
}

// rewrite returns block with its links fixed for the document doc
// (absolute path); from is the memory file the block was written in. The
// result is checked: a relative link that still names nothing from doc is
// replaced by its label.
func (l *linker) rewrite(block, from, doc string) string {
	out := substitute(block, automem.Refs(block), func(r automem.Ref, orig string) string {
		return l.replace(r, orig, from, doc)
	})
	return substitute(out, brokenLinks(out, doc, l.exists), func(r automem.Ref, _ string) string {
		return r.Label
	})
}

// substitute replaces each ref of text (in order) by what with returns.
func substitute(text string, refs []automem.Ref, with func(automem.Ref, string) string) string {
	if len(refs) == 0 {
		return text
	}
	var b strings.Builder
	at := 0
	for _, r := range refs {
		b.WriteString(text[at:r.Start])
		b.WriteString(with(r, text[r.Start:r.End]))
		at = r.End
	}
	b.WriteString(text[at:])
	return b.String()
}

// replace returns what one link becomes.
func (l *linker) replace(r automem.Ref, orig, from, doc string) string {
	label := r.Label
	if r.Wiki {
		if f := l.memoryNamed(r.Dest); f != "" {
			return l.toMemory(f, label, doc)
		}
		return label
	}
	dest, frag := r.Dest, ""
	if k := strings.IndexByte(dest, '#'); k >= 0 {
		dest, frag = dest[:k], dest[k:]
	}
	switch {
	case dest == "", isURL(dest), strings.HasPrefix(dest, "/"), strings.HasPrefix(dest, "~"):
		return orig // an anchor, a URL, an absolute path: not relative
	}
	if label == "" {
		label = path.Base(dest)
	}
	if l.mem != nil {
		rel := path.Clean(path.Join(path.Dir(from), dest))
		if rel != ".." && !strings.HasPrefix(rel, "../") {
			if l.mem.File(rel) != nil || l.homes[rel] != "" || l.exists(filepath.Join(l.mem.Path, filepath.FromSlash(rel))) && strings.HasSuffix(strings.ToLower(rel), ".md") {
				return l.toMemory(rel, label, doc)
			}
		}
		// A project file, written relative to the memory directory.
		if abs := filepath.Join(l.mem.Path, filepath.FromSlash(path.Dir(from)), filepath.FromSlash(dest)); within(l.root, abs) && l.exists(abs) {
			return l.link(r, label, abs, frag, doc)
		}
	}
	// A project file, written from the project root.
	if abs := filepath.Join(l.root, filepath.FromSlash(dest)); within(l.root, abs) && l.exists(abs) {
		return l.link(r, label, abs, frag, doc)
	}
	return label
}

// toMemory is what a link to the memory file f becomes in doc.
func (l *linker) toMemory(f, label, doc string) string {
	if home := l.homes[f]; home != "" {
		if home == doc {
			return label
		}
		if rel, err := filepath.Rel(filepath.Dir(doc), home); err == nil {
			return "[" + label + "](" + filepath.ToSlash(rel) + ")"
		}
		return label
	}
	if l.mem != nil && (l.mem.File(f) != nil || l.exists(filepath.Join(l.mem.Path, filepath.FromSlash(f)))) {
		if sameName(label, f) {
			return "auto-memory `" + f + "`"
		}
		return label + " (auto-memory `" + f + "`)"
	}
	return label
}

// link renders a link to the project file abs, relative to doc.
func (l *linker) link(r automem.Ref, label, abs, frag, doc string) string {
	rel, err := filepath.Rel(filepath.Dir(doc), abs)
	if err != nil {
		return label
	}
	s := "[" + label + "](" + filepath.ToSlash(rel) + frag + ")"
	if r.Image {
		s = "!" + s
	}
	return s
}

// memoryNamed finds the memory file a wikilink target names: by file name
// (with or without ".md"), then case-insensitively, then by frontmatter
// name.
func (l *linker) memoryNamed(target string) string {
	if l.mem == nil || target == "" {
		return ""
	}
	name := target
	if !strings.HasSuffix(strings.ToLower(name), ".md") {
		name += ".md"
	}
	for _, f := range l.mem.Files {
		if f.Name == name {
			return f.Name
		}
	}
	for _, f := range l.mem.Files {
		if strings.EqualFold(f.Name, name) || f.Frontmatter != nil && strings.EqualFold(strings.TrimSpace(f.Frontmatter.Name), target) {
			return f.Name
		}
	}
	for f := range l.homes {
		if strings.EqualFold(f, name) {
			return f
		}
	}
	return ""
}

// brokenLinks returns the relative links of text that name nothing from
// the document doc: what must never land.
func brokenLinks(text, doc string, exists func(string) bool) []automem.Ref {
	var out []automem.Ref
	for _, r := range automem.Refs(text) {
		if r.Wiki {
			out = append(out, r)
			continue
		}
		dest := r.Dest
		if k := strings.IndexByte(dest, '#'); k >= 0 {
			dest = dest[:k]
		}
		if dest == "" || isURL(dest) || strings.HasPrefix(dest, "/") || strings.HasPrefix(dest, "~") {
			continue
		}
		if !exists(filepath.Join(filepath.Dir(doc), filepath.FromSlash(dest))) {
			out = append(out, r)
		}
	}
	return out
}

// isURL reports whether a destination has a scheme ("https:", "mailto:").
func isURL(dest string) bool {
	k := strings.IndexByte(dest, ':')
	if k <= 0 {
		return false
	}
	for _, c := range dest[:k] {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// within reports whether p is root or below it (lexically).
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// sameName reports whether a link label is just the file's name.
func sameName(label, file string) bool {
	norm := func(s string) string {
		s = strings.ToLower(strings.Trim(strings.TrimSpace(s), "`*_"))
		s = strings.TrimSuffix(s, ".md")
		return strings.NewReplacer("_", " ", "-", " ").Replace(s)
	}
	return norm(label) == norm(path.Base(file))
}
