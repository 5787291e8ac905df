// Package automemory is the auto-memory source: Claude Code's per-project
// memory directory (~/.claude/projects/<enc>/memory/), read by package
// automem. It is a source like the others for the catalog, with two
// differences the source abstraction carries:
//
//   - Its files live outside the project root, in Env.MemoryDir; their
//     entries' paths are "memory/<file>", the name they are shown by.
//   - It is read Whole (source.Whole): whether an index line is a pointer
//     (navigation, left out of the catalog) or a fact depends on whether the
//     file it names exists, and a pointer into a sub-folder brings that file
//     in. ScanAll runs automem.ScanCached with the catalog's cache: a file
//     whose fingerprint is unchanged is decoded from what was stored
//     (Encode), only changed files are read and parsed, and the
//     directory-wide resolution runs over all of them.
//
// Entries keep automem's ids (the hash of the normalized text), which are
// what the store has always keyed auto-memory's history by (sessions seen,
// confidence, promotion), and automem's redaction: Parse redacts every
// field, so entries are marked Redacted and the catalog does not redact
// them twice. A fact's title is its first line; a topic file's title its
// frontmatter name (else description, else file name) and its text the
// description followed by the body. Citations are those cite.Extract finds
// in the text, as validation reads them.
//
// What the store keeps of each memory file is its parse alone, unresolved,
// with every entry's screening flags or marked unscreened (Encode,
// record.go): the one form, written by catalog.Build through this
// source's cache and by the Stop hook's sweep (package snapshot) for
// every file it reads, and read by
// catalog.Build (a file at its stored fingerprint is decoded, not read)
// and by the session start (package inject), which resolves pointers
// against the directory as it lists it.
//
// Who keeps the stored entries current: commands, through catalog.Build.
// The Stop hook keeps the files' parses current, not the entries: its
// sweep meets a chunk of files a turn, while this source's entries are a
// function of the whole directory — whether an index line is a pointer
// (left out) or a fact depends on every file's name, stem and frontmatter
// name, so adding, removing or renaming one file, or editing its
// frontmatter, changes MEMORY.md's entries with MEMORY.md unchanged. The
// readers that need entries now resolve them when they read: Build over
// its scan (decoding the parses the sweep stored), the session start
// over its listing (a lookup per index line).
package automemory

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/cite"
	"github.com/intermem/intermem/pkg/redact"
	"github.com/intermem/intermem/pkg/source"
)

// Name is the source's name.
const Name = "auto-memory"

// Prefix starts the path of every auto-memory entry and file.
const Prefix = "memory/"

// Source is the auto-memory source.
type Source struct{}

// Name implements source.Source.
func (Source) Name() string { return Name }

// Patterns implements source.Source: the memory directory's markdown
// files, relative to the memory directory (see Locate).
func (Source) Patterns() []string { return []string{"*.md"} }

// Base is the directory the patterns are relative to: the memory
// directory.
func (Source) Base(env source.Env) string { return env.MemoryDir }

// Locate implements source.Locator: the top-level files of the memory
// directory. ScanAll, not Locate, is what the catalog uses: it also finds
// the files that pointers bring in from sub-folders.
func (s Source) Locate(env source.Env) ([]source.File, []source.Problem) {
	if env.MemoryDir == "" {
		return nil, nil
	}
	return source.FindUnder(env.MemoryDir, Prefix, s)
}

// Parse implements source.Source for one memory file alone, without the
// directory: every pointer stays a pointer (and is left out).
func (Source) Parse(p string, content []byte) ([]source.Entry, []source.Problem) {
	name := strings.TrimPrefix(p, Prefix)
	f := automem.Parse(name, content)
	return Entries(f.Entries), problems(f)
}

// ScanAll implements source.Whole. With a nil c it reads every file.
func (Source) ScanAll(env source.Env, c source.Cache) ([]source.Entry, []source.File, []source.Problem) {
	d, err := Scan(env, c)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, nil
		}
		return nil, nil, []source.Problem{{Path: strings.TrimSuffix(Prefix, "/"), Message: "cannot be read: " + err.Error(), Unread: true}}
	}
	if t, ok := c.(source.Toucher); ok {
		t.Touched(d.Touched)
	}
	return Entries(d.Entries()), Files(d), DirProblems(d)
}

// ScanFiles implements source.WholeByFile: ScanAll, each file's entries
// made from the scan when the catalog asks for them, and each file's
// Resolved key (resolvedKey).
func (Source) ScanFiles(env source.Env, c source.Cache) source.ByFile {
	d, err := Scan(env, c)
	if err != nil {
		none := func(string) []source.Entry { return nil }
		if errors.Is(err, fs.ErrNotExist) {
			return source.ByFile{Entries: none}
		}
		return source.ByFile{Problems: []source.Problem{{Path: strings.TrimSuffix(Prefix, "/"), Message: "cannot be read: " + err.Error(), Unread: true}},
			Entries: none}
	}
	if t, ok := c.(source.Toucher); ok {
		t.Touched(d.Touched)
	}
	// Entries are named by their file's safe name: files whose names
	// redact alike share a path, and their entries, as in ScanAll.
	byPath := make(map[string][]*automem.File, len(d.Files))
	for _, f := range d.Files {
		byPath[Prefix+f.SafeName] = append(byPath[Prefix+f.SafeName], f)
	}
	entries := func(p string) []source.Entry {
		var out []source.Entry
		for _, f := range byPath[p] {
			for _, e := range Entries(f.Entries) {
				if e.Path == p {
					out = append(out, e)
				}
			}
		}
		return out
	}
	resolved := func(p string) string {
		if fs := byPath[p]; len(fs) == 1 {
			return resolvedKey(fs[0])
		}
		return "" // two files share the path: made every time
	}
	return source.ByFile{Files: Files(d), Problems: DirProblems(d), Entries: entries, Resolved: resolved}
}

// entriesForm names the form Entry makes a catalog entry in from a parsed
// automem entry (and the catalog stores it in: its redaction and
// screening): a change to either, or to the citations cite.Extract finds,
// must change it, so that the entries of unchanged files are made again
// once, by the first scan of the new form.
const entriesForm = "am1"

// resolvedKey is the source.ByFile Resolved key of f, scanned: the form
// of its entries, and what the directory-wide resolution (automem's
// resolve and markPointedSecrets) decided of each — whether an index line
// is a pointer (left out) or a fact, whether a memory is a secret — which
// is all that the rest of the directory changes of what a file's entries
// are: their ids, texts, lines and names are the file's parse alone.
func resolvedKey(f *automem.File) string {
	b := make([]byte, 0, len(entriesForm)+12*len(f.Entries))
	b = append(b, entriesForm...)
	for i := range f.Entries {
		e := &f.Entries[i]
		secret := byte(0)
		if e.Secret {
			secret = 1
		}
		b = append(append(append(b, 0), e.Kind...), 0, secret)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12])
}

// Scan scans the memory directory with cache c (nil: none). A missing
// directory is an error wrapping fs.ErrNotExist, as automem.Scan returns.
func Scan(env source.Env, c source.Cache) (*automem.Dir, error) {
	if env.MemoryDir == "" {
		return nil, fs.ErrNotExist
	}
	var fc automem.FileCache
	if c != nil {
		fc = fileCache{c}
	}
	return automem.ScanCached(env.MemoryDir, fc)
}

// Files returns the files of d as the catalog fingerprints them. A file
// whose name holds a secret is named by its redacted form.
func Files(d *automem.Dir) []source.File {
	out := make([]source.File, 0, len(d.Files))
	for _, f := range d.Files {
		sf, err := source.StatFile(Prefix+f.SafeName, filepath.Join(d.Path, filepath.FromSlash(f.Name)))
		if err != nil {
			continue // gone since the scan: the next scan tombstones it
		}
		out = append(out, sf)
	}
	return out
}

// DirProblems are the directory's skipped files and the files' parse
// warnings, as problems.
func DirProblems(d *automem.Dir) []source.Problem {
	var out []source.Problem
	for _, w := range d.Warnings {
		out = append(out, source.Problem{Path: strings.TrimSuffix(Prefix, "/"), Message: w})
	}
	for _, f := range d.Files {
		out = append(out, problems(f)...)
	}
	return out
}

func problems(f *automem.File) []source.Problem {
	var out []source.Problem
	for _, w := range f.Warnings {
		out = append(out, source.Problem{Path: Prefix + f.SafeName, Message: w})
	}
	return out
}

// Entries turns automem's entries into the catalog's, leaving pointers
// out: an index line is not knowledge; the file it points to is.
func Entries(es []automem.Entry) []source.Entry {
	out := make([]source.Entry, 0, len(es))
	for i := range es {
		if es[i].Kind == automem.Pointer {
			continue
		}
		out = append(out, Entry(&es[i]))
	}
	return out
}

// Entry is the catalog entry of one (non-pointer) automem entry.
func Entry(m *automem.Entry) source.Entry {
	e := source.Entry{ID: m.ID, Source: Name, Kind: source.Fact, Path: Prefix + m.File,
		Line: m.StartLine, EndLine: m.EndLine, Text: m.Text, Promotable: true,
		Redacted: true, Secret: m.Secret}
	if m.Kind == automem.Memory {
		e.Kind = source.Memory
		e.Title = firstOf(m.Name, m.Description, strings.TrimSuffix(path.Base(m.File), ".md"))
		if m.Description != "" {
			e.Text = m.Description + "\n\n" + m.Text
		}
		source.SetField(&e, "type", m.Type)
		source.SetField(&e, "name", m.Name)
	} else {
		e.Title = source.OneLineRedacted(strings.TrimLeft(m.Text, "#*_ "), 120) // m.Text is redacted (automem.Parse)
		source.SetField(&e, "section", m.Section)
	}
	for _, ct := range cite.Extract(m.Text) {
		e.Citations = append(e.Citations, ct.Text)
	}
	return e
}

func firstOf(ss ...string) string {
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			return s
		}
	}
	return ""
}

// fileCache adapts the catalog's cache to automem's: files are keyed by
// the path the catalog knows them by, "memory/" and the name redacted
// (the store never holds a secret, not even in a key).
type fileCache struct{ c source.Cache }

func (fc fileCache) Load(name string, fi fs.FileInfo) (*automem.File, bool) {
	b, ok := fc.c.Load(Prefix+redact.Name(name), source.FingerprintOf(fi))
	if !ok {
		return nil, false
	}
	f, _, _, err := Decode(name, b)
	if err != nil {
		return nil, false
	}
	return f, true
}

func (fc fileCache) Save(name string, fi fs.FileInfo, f *automem.File) {
	if b, ok := Encode(f, true); ok {
		fc.c.Keep(Prefix+f.SafeName, source.FingerprintOf(fi), b)
	}
	if k, ok := fc.c.(source.ContentKeeper); ok && f.SafeName == name {
		// (A name holding a secret is not kept, not even summed.)
		k.KeepContent(name, sha256.Sum256(f.Content))
	}
}
