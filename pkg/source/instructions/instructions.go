// Package instructions is the source of the hand-written statements in the
// instruction files Claude Code loads at session start (package loaded: the
// managed file, the user's CLAUDE.md and rules, CLAUDE.md, .claude/CLAUDE.md
// and CLAUDE.local.md up the tree, the project's rules, AGENTS.md where it
// is loaded, and what they @import). These are what every session is told;
// intermem validates what they cite and makes them searchable, and never
// archives or edits them.
//
// # Files
//
// Locate runs loaded.Discover from the project root (as a session started
// there sees it), so the set is the one Claude Code loads and the one the
// plan and SessionStart judge "already loaded" against. Discovery needs
// each file's @imports, so it reads the files it finds (at most
// loaded.MaxFiles, each at most loaded.MaxBytes, regular files only);
// parsing them into entries is the catalog's, and is skipped for a file
// whose fingerprint is unchanged. A file inside the project is named by its
// path relative to the root, one under the home directory "~/…", any other
// by its absolute path (loaded.Name).
//
// # Entries
//
// One entry per statement (mdoc.Doc.Statements: a list item with what is
// nested in it, or a paragraph), outside fenced code and other tools'
// managed blocks. Left out: a statement inside an entry intermem promoted
// (it carries a marker: that is the promoted source's), a nested item
// already part of its parent's entry, and a line of @imports alone. The id
// is keyed by the file's name and the statement's normalized text
// (match.Normalize): moving a statement within its file keeps its id and
// its history, rewording it makes a new one, as it is a new instruction.
// The same statement twice in one file is one entry. Statements are
// committed (or the user's own) instructions, so they are not promotable.
package instructions

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"syscall"

	"github.com/intermem/intermem/pkg/cite"
	"github.com/intermem/intermem/pkg/loaded"
	"github.com/intermem/intermem/pkg/match"
	"github.com/intermem/intermem/pkg/mdoc"
	"github.com/intermem/intermem/pkg/source"
	"github.com/intermem/intermem/pkg/source/docrecord"
	"github.com/intermem/intermem/pkg/source/promoted"
)

// Name is the source's name.
const Name = "instructions"

// Source reads the loaded instruction files.
type Source struct{}

// Name returns "instructions".
func (Source) Name() string { return Name }

// Patterns are the project's own instruction files, for `intermem
// sources`; Locate, not the patterns, finds the files (see the package
// comment).
func (Source) Patterns() []string {
	return []string{"CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md", ".claude/rules/**/*.md", "AGENTS.md"}
}

// Locate implements source.Locator: the files Claude Code loads for a
// session started at the project root.
func (Source) Locate(env source.Env) ([]source.File, []source.Problem) {
	set := loaded.Discover(loaded.Env{Root: env.Root, Cwd: env.Root, ConfigDir: env.ConfigDir, Home: env.Home}, loaded.OS{},
		func(_, real string, fi fs.FileInfo) (struct{}, loaded.Meta, bool) {
			b, err := readBounded(real)
			if err != nil {
				return struct{}{}, loaded.Meta{}, false
			}
			var imports []string
			if bytes.IndexByte(b, '@') >= 0 {
				// (Without an '@' a file imports nothing: it is not
				// parsed for that alone, at every search.)
				imports = mdoc.Parse(b).Imports()
			}
			return struct{}{}, loaded.Meta{Imports: imports, Scoped: loaded.HasPathsKey(b)}, true
		})
	var out []source.File
	var probs []source.Problem
	seen := map[string]bool{}
	for i := range set.Files {
		f := &set.Files[i]
		name := loaded.Name(f.Path, env.Root, env.Home)
		if seen[name] {
			continue
		}
		seen[name] = true
		sf, err := source.StatFile(name, f.Real)
		if err != nil {
			probs = append(probs, source.Problem{Path: name, Message: "cannot be read: " + err.Error()})
			continue
		}
		out = append(out, sf)
	}
	return out, probs
}

// readBounded reads the file at path, at most loaded.MaxBytes, into a
// buffer sized by its stat (a file grown since is still read whole, up to
// the bound): one allocation, not a buffer grown over a dozen reads.
//
// The open does not block and the descriptor must be a regular file: a
// FIFO put in place of an instruction file is not waited on.
func readBounded(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, source.ErrNotRegular
	}
	size := 512
	if fi.Size() < loaded.MaxBytes {
		size = int(fi.Size()) + 1 // the +1 reads EOF without growing
	}
	b := make([]byte, 0, size)
	for {
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if len(b) > loaded.MaxBytes {
			return nil, source.ErrTooLarge
		}
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
		if len(b) == cap(b) {
			b = slices.Grow(b, min(len(b), loaded.MaxBytes+1-len(b)))
		}
	}
}

// Parse returns the file's hand-written statements in document order.
func (Source) Parse(p string, content []byte) ([]source.Entry, []source.Problem) {
	d := mdoc.Parse(content)
	inMarked := map[int]bool{}
	for _, m := range d.Marked() {
		first := promoted.LineAt(content, m.Start)
		last := promoted.LineAt(content, max(m.End-1, m.Start))
		for l := first; l <= last; l++ {
			inMarked[l] = true
		}
	}
	var out []source.Entry
	seen := map[string]bool{}
	covered := 0 // the last line of the latest statement kept
	for _, st := range d.Statements() {
		end := st.Line + strings.Count(strings.TrimRight(st.Text, "\n"), "\n")
		if st.Line <= covered || inMarked[st.Line] {
			continue
		}
		text := strings.TrimSpace(st.Text)
		if text == "" || importsOnly(text) || strings.Contains(text, "<!-- intermem:") {
			continue
		}
		covered = end
		norm := match.Normalize(text)
		if norm == "" || seen[norm] {
			continue
		}
		seen[norm] = true
		e := source.Entry{
			ID:      source.ID(Name, p+"\x00"+norm),
			Source:  Name,
			Kind:    source.Fact,
			Path:    p,
			Line:    st.Line,
			EndLine: end,
			Title:   source.OneLine(strings.TrimLeft(text, "#*_>| "), 120),
			Text:    text,
		}
		source.SetField(&e, "section", st.Section)
		for _, ct := range cite.Extract(text) {
			e.Citations = append(e.Citations, ct.Text)
		}
		out = append(out, e)
	}
	return out, nil
}

// importsOnly reports whether text is nothing but @imports.
func importsOnly(text string) bool {
	for _, w := range strings.Fields(text) {
		if !strings.HasPrefix(w, "@") {
			return false
		}
	}
	return true
}

// Record implements source.Recorder: what a session start needs of the
// instruction file (docrecord.Derive), stored beside its entries.
func (Source) Record(content []byte) []byte { return docrecord.Encode(docrecord.Derive(content)) }

// RecordVersion implements source.Recorder.
func (Source) RecordVersion() string { return docrecord.Magic }
