package inject

import (
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/intermem/intermem/pkg/loaded"
	"github.com/intermem/intermem/pkg/source"
	"github.com/intermem/intermem/pkg/source/docrecord"
	"github.com/intermem/intermem/pkg/source/instructions"
	"github.com/intermem/intermem/pkg/source/promoted"
	"github.com/intermem/intermem/pkg/store"
	"github.com/intermem/intermem/pkg/targets"
)

// Documents through the catalog
//
// What a session start needs of a document Claude Code may load, or one
// intermem curates, is its docrecord.Record: a pure function of its bytes,
// which catalog.Build stores beside the file's entries for the
// instructions and promoted sources (source.Recorder) — at every command
// and at SessionEnd (snapshot.RefreshCatalog). The session start takes
// every stored record in the short read transaction that takes the memory
// files' parses (storedDocs), and uses a file's record only while the file
// has the fingerprint it was stored at (the store's records at a racy
// fingerprint are not taken); any other document — changed since, never
// stored, under a cwd the sources do not look at, its record not kept for
// a secret in a path — it reads and derives itself (docrecord.Derive, the
// same function), writing nothing to the store; the derivation is
// memoized in context.index by the document's bytes (docmemo.go), so the
// session starts before the next session end or command stores a record
// read the document but derive it once. Either way it reads the same.

// Bounds of what is read as already loaded (package loaded's).
const (
	maxLoadedBytes = loaded.MaxBytes
)

// docData is what a session start knows of one document: its real path
// and its record.
type docData struct {
	Path string // real path
	*docrecord.Record
}

// docRecords are the records the catalog stored of documents, by the name
// the sources give a file (loaded.Name of the path it was reached by), each
// with the fingerprint it was stored at.
type docRecords map[string][]storedRecord

type storedRecord struct {
	fp   source.Fingerprint
	blob []byte
}

// storedDocs copies out of ct the records of the instructions and
// promoted sources' files (a file both read has one in each).
func storedDocs(ct *store.CatalogTx) docRecords {
	out := docRecords{}
	for _, src := range []string{instructions.Name, promoted.Name} {
		ct.Records(src, func(path string, fp source.Fingerprint, blob []byte) {
			out[path] = append(out[path], storedRecord{fp, slices.Clone(blob)})
		})
	}
	return out
}

// lookup returns the stored record of the file called name at fingerprint
// fp, or nil.
func (dr docRecords) lookup(name string, fp source.Fingerprint) *docrecord.Record {
	for _, sr := range dr[name] {
		if sr.fp != fp {
			continue
		}
		if rec, err := docrecord.Decode(sr.blob); err == nil {
			return rec
		}
	}
	return nil
}

// docReader reads the documents of one session start, each real path
// once: from its stored record when there is one at the file's
// fingerprint, else from its bytes.
type docReader struct {
	recs       docRecords
	root, home string
	ix         *Index // redaction and documents' records, memoized
	read       map[string]readDocument
	// derived counts the documents derived from their bytes.
	derived int
}

type readDocument struct {
	fp source.Fingerprint
	d  *docData
}

func newDocReader(recs docRecords, root, home string, ix *Index) *docReader {
	if ix == nil {
		ix = NewIndex()
	}
	return &docReader{recs: recs, root: root, home: home, ix: ix, read: map[string]readDocument{}}
}

// doc is package loaded's Read: the document reached at path, whose real
// path real has FileInfo fi.
func (r *docReader) doc(path, real string, fi fs.FileInfo) (*docData, bool) {
	if !fi.Mode().IsRegular() || fi.Size() > maxLoadedBytes {
		return nil, false
	}
	fp := source.FingerprintOf(fi)
	if rd, ok := r.read[real]; ok && rd.fp == fp {
		return rd.d, true
	}
	rec := r.recs.lookup(loaded.Name(path, r.root, r.home), fp)
	if rec == nil && real != path {
		rec = r.recs.lookup(loaded.Name(real, r.root, r.home), fp)
	}
	if rec == nil {
		b, err := readLimited(real, maxLoadedBytes)
		if err != nil {
			return nil, false
		}
		var derived bool
		if rec, derived = r.ix.docRecord(b); derived {
			r.derived++
		}
	}
	d := &docData{Path: real, Record: rec}
	r.read[real] = readDocument{fp, d}
	return d, true
}

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

// docAt returns the document at path (symlinks followed, a regular file),
// or nil.
func docAt(r *docReader, deps *Deps, path string) *docData {
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
	d, ok := r.doc(path, real, fi)
	if !ok {
		return nil
	}
	return d
}

// discover finds the curated documents, and the documents Claude Code
// loads at session start for a session in cwd (package loaded, asked
// through the recording Deps so the render cache knows every fact the
// answer depended on), reading each through r.
func discover(e Env, cwd string, r *docReader) *docSet {
	ds := &docSet{}
	claudePath := filepath.Join(e.Root, targets.Claude)
	agentsPath := filepath.Join(e.Root, targets.Agents)
	ds.claude = docAt(r, e.Deps, claudePath)
	ds.agents = docAt(r, e.Deps, agentsPath)
	ds.same = ds.claude != nil && ds.agents != nil && ds.claude.Path == ds.agents.Path

	// Detail docs.
	if ents, err := e.Deps.ReadDir(filepath.Join(e.Root, filepath.FromSlash(targets.DetailDir))); err == nil {
		for _, en := range ents {
			n := en.Name()
			if !strings.HasSuffix(n, ".md") || strings.HasPrefix(n, ".") || en.IsDir() || len(ds.details) >= maxDetails {
				continue
			}
			name := targets.DetailDir + "/" + n
			if d := docAt(r, e.Deps, filepath.Join(e.Root, filepath.FromSlash(name))); d != nil {
				ds.details = append(ds.details, namedDoc{name, d})
			}
		}
		sort.Slice(ds.details, func(i, j int) bool { return ds.details[i].name < ds.details[j].name })
	}

	// What Claude Code loads.
	env := loaded.Env{Root: e.Root, Cwd: cwd, ConfigDir: e.ConfigDir, Home: e.Home}
	ds.set = loaded.Discover(env, e.Deps, func(path, real string, fi fs.FileInfo) (*docData, loaded.Meta, bool) {
		d, ok := r.doc(path, real, fi)
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
