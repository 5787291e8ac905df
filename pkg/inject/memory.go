package inject

import (
	"container/heap"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/match"
	"github.com/intermem/intermem/pkg/plan"
	"github.com/intermem/intermem/pkg/source"
	"github.com/intermem/intermem/pkg/source/automemory"
	"github.com/intermem/intermem/pkg/source/docrecord"
	"github.com/intermem/intermem/pkg/store"
)

// Memory files through the catalog
//
// A session start does not keep memory files' parses of its own: each
// file's parse alone (unresolved) and its screening flags are the
// catalog's, in the store (store.CatalogTx.Parse, automemory.Encode),
// written by whoever last read the file — the Stop hook's sweep at every
// turn for the files that changed, catalog.Build for every command. The
// session start lists the memory directory (the first maxMemFiles by
// name, streamed), stats each file it keeps, and takes the stored parse
// of every file still at the fingerprint it was stored for, in one short
// read transaction; a file with none (changed since the last turn, never
// read, its name or a link holding a secret, a racy fingerprint) it reads
// and parses itself, writing nothing. Whether an index line is a pointer
// or a fact — the one directory-wide question — is answered over its own
// listing (orphanPointers), so a file added, removed or renamed since the
// last turn counts as it is now.

// Bounds on what is kept of an entry's text: enough for every clip and
// for relevance, not the whole of a long memory.
const (
	keepText = 600
	keepDesc = 400
)

// memFile is what a session start takes from one memory file: a pure
// function of the file's parse alone (automemory.Decode of the catalog's
// stored parse, or the file parsed here) and its flags.
type memFile struct {
	Name    string // on disk
	Safe    string // Name with any secret redacted: what is shown
	Load    automem.LoadInfo
	Entries []memEntry
}

type memEntry struct {
	ID, Kind     string
	Line         int
	Key, DescKey uint64 // match.Key of the text and (memory) description
	Link, Type   string
	Name, Desc   string // memory name and redacted description
	Text         string // redacted, at most keepText bytes
	Cites        []string
	// Flags are what screening found in the entry's block or its file's
	// name (automemory.Screen), kept with the stored parse.
	Flags   []Flag
	hasDesc bool
	// hook: a pointer whose text says more than its file's name, so that
	// it is the memory itself when the file does not exist.
	hook bool
	// BKey and Withhold are the entry's plan.Subject: the key of the
	// entry as it would be promoted, and why its own text keeps it out
	// of every plan.
	BKey     uint64
	Withhold string
	// Secret is automem.Entry.Secret (of this file alone: a memory file
	// pointed to by an index line holding a secret is found in Gather).
	Secret bool
}

// memOf is what a session start takes of a parsed memory file; what it
// derives of each entry comes from ix's memo when the entry's fields were
// met before (Index.derive).
func memOf(f *automem.File, flags [][]automemory.Flag, ix *Index) *memFile {
	mf := &memFile{Name: f.Name, Safe: f.SafeName, Load: f.Loaded()}
	index := f.Name == automem.IndexName
	mf.Entries = make([]memEntry, 0, len(f.Entries))
	for i := range f.Entries {
		en := &f.Entries[i]
		d := ix.derive(en)
		me := memEntry{
			ID: en.ID, Kind: string(en.Kind), Line: en.StartLine, Link: en.Link, Type: en.Type,
			Name: en.Name, Key: d.key, BKey: d.bKey, Withhold: d.withhold, Secret: en.Secret,
			DescKey: d.descKey, hasDesc: d.hasDesc, Cites: d.cites,
			hook: en.Kind == automem.Pointer && automem.HasHook(en.Text, en.Link),
		}
		if i < len(flags) {
			me.Flags = flags[i]
		}
		if d.hasDesc {
			me.Desc = docrecord.Clip(en.Description, keepDesc)
		}
		// Of MEMORY.md's loaded part only identities are needed: Claude
		// Code already shows its text.
		if !index || en.StartLine > mf.Load.LoadedLines {
			me.Text = docrecord.Clip(en.Text, keepText)
		}
		mf.Entries = append(mf.Entries, me)
	}
	return mf
}

// derived is what a session start derives from a memory entry's own
// fields: normalized keys (match.Key of its text and description), its
// plan.Subject's key and withholding, and the project paths it cites.
type derived struct {
	key, descKey, bKey uint64
	hasDesc            bool
	withhold           string
	cites              []string
}

// derive returns what is derived from en, from the memo when the fields
// it depends on (kind, marker, section, name, description, text) hash as
// an entry met before: normalizing and citation extraction (whose
// patterns compile on first use) cost more than the rest of a session
// start whose memory barely changed. A false match would need a 64-bit
// hash collision of two strings of equal length.
func (ix *Index) derive(en *automem.Entry) *derived {
	k := keyOf(string(en.Kind) + "\x00" + en.Marker + "\x00" + en.Section + "\x00" + en.Name + "\x00" + en.Description + "\x00" + en.Text)
	if d, ok := ix.der[k]; ok {
		ix.dused[k] = true
		return d
	}
	subj := plan.SubjectOf(*en)
	d := &derived{key: match.Key(en.Text), bKey: subj.Key, withhold: subj.Withhold}
	if en.Kind == automem.Memory && strings.TrimSpace(en.Description) != "" {
		d.descKey, d.hasDesc = match.Key(en.Description), true
	}
	// Citations: for ranking (topic files) and for readiness (all). A
	// pointer's are needed when its file does not exist (orphanPointers):
	// then it is the memory itself, judged by what its text cites, as
	// plan.Ready judges it.
	if en.Kind != automem.Pointer || automem.HasHook(en.Text, en.Link) {
		text := en.Text
		if en.Kind == automem.Memory {
			text = en.Description + "\n" + en.Text
		}
		d.cites = plan.CitePaths(text)
	}
	ix.der[k], ix.dused[k], ix.dirty = d, true, true
	return d
}

// memSet is the memory files a session start reads, and what it knows of
// those past maxMemFiles, which it does not read: how many there are and
// their names (to tell a pointer to one from a pointer to no file).
type memSet struct {
	files  []*memFile
	beyond int
	names  nameSet // every listed memory file, read or not
	// docs are the catalog's records of documents, taken in the same read
	// transaction as the memory files' parses (loaded.go).
	docs docRecords
	// parsed counts the files parsed here, with no stored parse to use.
	parsed int
	// cut is set when derive stopped before the last of the listed files
	// (its stop said so): files holds those before it, which is not the
	// memory.
	cut    bool
	listed int
}

// memList is a listing of the memory directory (listMem): the files a
// session start reads, each with its stat and, once looked up (stored),
// its parse from the store.
type memList struct {
	dir    string
	files  []listedFile
	beyond int
	names  nameSet
}

type listedFile struct {
	name string
	fp   source.Fingerprint
	blob []byte // the stored parse at fp (a copy), when there is one
}

// listChunk is how many directory entries one read of the memory
// directory returns: a listing of 100,000 files is streamed, never held.
const listChunk = 512

// racyDir is how recently before a listing the memory directory may have
// changed for its modification time to stand for its names in the render
// cache: a directory's time advances in ticks, so two changes within one
// tick can leave it as it was.
const racyDir = 2 * time.Second

// memFiles lists the memory directory (listMem), takes the stored parses
// and the documents' records (storedDocs) from the store open returns
// (nil: none) in one read transaction, and parses the rest of the memory
// files, through ix's memos (screening, derivation), until stop (nil:
// never) says to stop (memSet.cut).
func memFiles(deps *Deps, dir string, open func() (*store.Store, func(), error), ix *Index, stop func() bool) (*memSet, error) {
	ml, err := listMem(deps, dir)
	if err != nil {
		return nil, err
	}
	var docs docRecords
	if open != nil {
		if s, release, err := open(); err == nil && s != nil {
			_ = s.View(func(tx *bolt.Tx) error {
				ct := store.Catalog(tx)
				ml.stored(ct)
				docs = storedDocs(ct)
				return nil
			})
			release()
		}
	}
	ms := ml.derive(deps, ix, stop)
	ms.docs = docs
	return ms, nil
}

// listMem lists the memory files the way automem.Scan does (top-level
// *.md regular files or symlinks to them, no dot files, at most
// automem.MaxFileBytes) and keeps MEMORY.md and the first others by name,
// up to maxMemFiles, each stat'ed; the rest are counted and their names
// hashed, never stat'ed. The listing is streamed in chunks, keeping only
// the first names (a bounded heap), so its memory does not grow with the
// directory. What the render cache records of it is the directory's
// stat, taken before the listing (a directory's modification time moves
// whenever a name is added, removed or renamed in it), and the stat of
// each file kept — not the listing itself, which at 100,000 files costs
// more than the rest of a session start — unless the directory changed
// within racyDir of now: then its names are recorded too (Deps.Names).
func listMem(deps *Deps, dir string) (*memList, error) {
	out := &memList{dir: dir}
	if dir == "" {
		return out, nil // auto-memory switched off (EnvFor): nothing to list
	}
	di, err := deps.Stat(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return out, nil
		}
		return nil, err
	}
	if time.Since(di.ModTime()) < racyDir {
		// Within a tick of a change, the time may not show the next one:
		// the names themselves are recorded.
		deps.Names(dir)
	}
	f, err := os.Open(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return out, nil
		}
		return nil, err
	}
	defer f.Close()
	var index fs.DirEntry
	first := &firstNames{max: maxMemFiles - 1}
	for {
		des, err := f.ReadDir(listChunk)
		for _, de := range des {
			name := de.Name()
			if !strings.HasSuffix(name, ".md") || strings.HasPrefix(name, ".") {
				continue
			}
			if t := de.Type(); !t.IsRegular() && t&fs.ModeSymlink == 0 {
				continue
			}
			out.names = append(out.names, nameKey(name))
			if name == automem.IndexName {
				index = de
			} else if !first.add(de) {
				out.beyond++
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	out.names.sort()
	kept := first.sorted()
	if index != nil {
		kept = append([]fs.DirEntry{index}, kept...)
	}
	for _, de := range kept {
		name := de.Name()
		path := filepath.Join(dir, name)
		var fi fs.FileInfo
		var err error
		if de.Type().IsRegular() {
			fi, err = deps.Info(path, de)
		} else {
			fi, err = deps.Stat(path) // a link is followed
		}
		if err != nil || !fi.Mode().IsRegular() || fi.Size() > automem.MaxFileBytes {
			continue
		}
		out.files = append(out.files, listedFile{name: name, fp: source.FingerprintOf(fi)})
	}
	return out, nil
}

// stored takes from the catalog the parse of every listed file stored at
// the fingerprint it has now. A file is looked up by its name as it is:
// the store keys a file whose name holds a secret by its redacted name,
// which such a lookup never finds (the file is parsed instead, as it must
// be: its name is needed to read it). The bytes are copied: decoding
// them is left for after the transaction, which holds the store's lock.
func (ml *memList) stored(ct *store.CatalogTx) {
	for i := range ml.files {
		lf := &ml.files[i]
		if b, ok := ct.Parse(automemory.Name, automemory.Prefix+lf.name, lf.fp); ok {
			lf.blob = slices.Clone(b)
		}
	}
}

// derive returns the memory set: each file from its stored parse when it
// decodes as the file's own (its name holds no secret) — screened against
// the file's bytes when the Stop hook stored it unscreened — else read
// and parsed here (nothing written). A file whose name holds a secret
// marks deps, so that no render cache records its path. stop (nil: never)
// is asked before each file: when it says so, the set is cut there, and
// what ix memoized of the files before is kept for the next session
// start (Hook).
func (ml *memList) derive(deps *Deps, ix *Index, stop func() bool) *memSet {
	out := &memSet{beyond: ml.beyond, names: ml.names, listed: len(ml.files)}
	for i := range ml.files {
		if stop != nil && stop() {
			out.cut = true
			break
		}
		lf := &ml.files[i]
		if mf := lf.fromStore(ml.dir, ix); mf != nil {
			out.files = append(out.files, mf)
			continue
		}
		b, _, _, err := readFP(filepath.Join(ml.dir, lf.name))
		if err != nil {
			continue
		}
		f := automem.ParseMeasured(lf.name, b)
		out.parsed++
		if f.SafeName != f.Name && deps != nil {
			deps.MarkSecret()
		}
		out.files = append(out.files, memOf(f, automemory.ScreenWith(f, ix.Screen), ix))
	}
	return out
}

// fromStore is the file's stored parse, or nil when there is none to use.
// A parse stored unscreened is screened against the file's bytes, which
// must be the bytes it was parsed from: the file is read only while it
// keeps the stored fingerprint, before and after the read (else it is
// parsed anew from what was read); a file found clean is remembered by
// its name and fingerprint in the screening memo.
func (lf *listedFile) fromStore(dir string, ix *Index) *memFile {
	if lf.blob == nil {
		return nil
	}
	f, flags, screened, err := automemory.Decode(lf.name, lf.blob)
	lf.blob = nil
	if err != nil || f.SafeName != lf.name {
		return nil
	}
	if !screened {
		// The screening memo knows a file found clean at this very
		// fingerprint (any write changes it): the file is not read again.
		memo := fmt.Sprintf("memory file\x00%s\x00%+v", lf.name, lf.fp)
		if !ix.knownClean(memo) {
			b, before, after, err := readFP(filepath.Join(dir, lf.name))
			if err != nil || before != lf.fp || after != lf.fp {
				return nil
			}
			f.Content = b
			flags = automemory.ScreenWith(f, ix.Screen)
			f.Content = nil
			if flags == nil {
				ix.setClean(memo)
			}
		}
	}
	return memOf(f, flags, ix)
}

// readFP reads a memory file of at most automem.MaxFileBytes (a link
// followed), with the fingerprints of the open file before and after the
// read.
func readFP(path string) (b []byte, before, after source.Fingerprint, err error) {
	return readBounded(path, automem.MaxFileBytes)
}

// firstNames keeps the max first directory entries by name: a max-heap on
// name, whose top is evicted when a smaller name comes.
type firstNames struct {
	max int
	h   []fs.DirEntry
}

func (f *firstNames) Len() int           { return len(f.h) }
func (f *firstNames) Less(i, j int) bool { return f.h[i].Name() > f.h[j].Name() }
func (f *firstNames) Swap(i, j int)      { f.h[i], f.h[j] = f.h[j], f.h[i] }
func (f *firstNames) Push(x any)         { f.h = append(f.h, x.(fs.DirEntry)) }
func (f *firstNames) Pop() any {
	x := f.h[len(f.h)-1]
	f.h = f.h[:len(f.h)-1]
	return x
}

// add keeps de when it is among the first names so far; false means one
// entry (de or an evicted one) is past the bound.
func (f *firstNames) add(de fs.DirEntry) bool {
	if len(f.h) < f.max {
		heap.Push(f, de)
		return true
	}
	if f.max == 0 || de.Name() >= f.h[0].Name() {
		return false
	}
	f.h[0] = de
	heap.Fix(f, 0)
	return false
}

// sorted returns the kept entries by name.
func (f *firstNames) sorted() []fs.DirEntry {
	out := slices.Clone(f.h)
	slices.SortFunc(out, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return out
}

// nameSet holds names as the 64-bit FNV-1a hashes of their lower case,
// sorted: 8 bytes a name, whatever its length.
type nameSet []uint64

func nameKey(name string) uint64 { return keyOf(strings.ToLower(name)).h }

func (s nameSet) sort() { slices.Sort(s) }

func (s nameSet) has(name string) bool {
	_, ok := slices.BinarySearch(s, nameKey(name))
	return ok
}

// orphanPointers returns the ids of the pointers whose file is not in the
// memory directory but whose text says something: the hook is the only copy
// of that memory, so it counts as a fact (automem.Dir.resolve is the same
// rule for every other command). A pointer into a sub-folder is taken to
// name a file: the hook reads only the top level. Files past
// maxMemFiles (listed in names, unread) exist all the same; a pointer
// whose name only collides in hash with a listed file (one in 2^64) is
// taken as a pointer.
func orphanPointers(mem []*memFile, names nameSet) map[string]bool {
	have := make(map[string]bool, len(mem))
	for _, f := range mem {
		have[strings.ToLower(f.Safe)] = true // links are redacted like names
		for _, en := range f.Entries {
			if en.Kind == string(automem.Memory) && en.Name != "" {
				have[strings.ToLower(en.Name)+".md"] = true
			}
		}
	}
	var out map[string]bool
	for _, f := range mem {
		for _, en := range f.Entries {
			if en.Kind != string(automem.Pointer) || !en.hook || strings.Contains(en.Link, "/") || have[strings.ToLower(en.Link)] || names.has(en.Link) {
				continue
			}
			if out == nil {
				out = make(map[string]bool)
			}
			out[en.ID] = true
		}
	}
	return out
}

// readLimited reads a regular file of at most limit bytes.
func readLimited(path string, limit int64) ([]byte, error) {
	b, _, _, err := readBounded(path, limit)
	return b, err
}

// readBounded reads a regular file of at most limit bytes (a link
// followed), with the fingerprints of the open file before and after the
// read. O_NONBLOCK: a FIFO put in a file's place (or behind its link)
// since the listing must not hold the session start until its deadline.
func readBounded(path string, limit int64) (b []byte, before, after source.Fingerprint, err error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, before, after, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, before, after, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > limit {
		return nil, before, after, errors.New("not a regular file of acceptable size")
	}
	before = source.FingerprintOf(fi)
	b, err = io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, before, after, err
	}
	if int64(len(b)) > limit {
		return nil, before, after, errors.New("file grew past the limit")
	}
	if fi, err = f.Stat(); err != nil {
		return nil, before, after, err
	}
	return b, before, source.FingerprintOf(fi), nil
}
