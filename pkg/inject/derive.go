package inject

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/intermem/intermem/pkg/atomicfile"
	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/cite"
	"github.com/intermem/intermem/pkg/loaded"
	"github.com/intermem/intermem/pkg/match"
	"github.com/intermem/intermem/pkg/mdoc"
	"github.com/intermem/intermem/pkg/plan"
	"github.com/intermem/intermem/pkg/redact"
	"github.com/intermem/intermem/pkg/targets"
	"github.com/intermem/intermem/pkg/tier"
)

// IndexName is the file under .intermem/ holding what the hook derived
// from each memory file and document at its last run (see Index).
const IndexName = "context.index"

// indexMagic versions the derivation: change it whenever what is derived
// from a file changes, and every cached record is recomputed.
const indexMagic = "intermem context index v8\n"

// Bounds on what is kept of an entry's text: enough for every clip and
// for relevance, not the whole of a long memory.
const (
	keepText = 600
	keepDesc = 400
	keepMark = 300
)

// memFile is what is derived from one memory file: a pure function of its
// name and bytes.
type memFile struct {
	Name      string // on disk, the cache key
	Safe      string // Name with any secret redacted: what is shown
	Size, Mod int64  // identity of the bytes it was derived from
	Load      automem.LoadInfo
	Entries   []memEntry
	used      bool // by this run
}

type memEntry struct {
	ID, Kind     string
	Line         int
	Key, DescKey uint64 // match.Key of the text and (memory) description
	Link, Type   string
	Name, Desc   string // memory name and redacted description
	Text         string // redacted, at most keepText bytes
	Cites        []string
	// Flags are what screening found in the entry's block (or its file's
	// name); only entries the context may show are screened.
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

// docData is what is derived from one markdown document Claude Code may
// load: a pure function of its bytes.
type docData struct {
	Path      string // real path
	Size, Mod int64
	HasPaths  bool // frontmatter "paths:" (a rule loaded only on demand)
	TopicIdx  bool // holds intermem's managed index of detail documents
	// Indexed are the detail documents (root-relative, slash separated)
	// that managed index lists.
	Indexed []string
	Title   string   // first heading or first line of text
	Keys    []uint64 // match.Key of every statement
	Marks   []mark
	Imports []string
	used    bool // by this run
}

type mark struct {
	ID, Section, Text string
}

// Index caches derived records by file identity (name or real path, size
// and modification time, as snapshot.Fingerprint identifies memory files),
// so a hook whose inputs barely changed re-derives only what did: parsing,
// normalizing and citation extraction cost more than everything else the
// hook does. A record whose file changed size or time is derived again; a
// record no file used is dropped on save. The cache holds redacted text
// only, owner-readable, under the state directory.
//
// It also remembers which strings redact.String leaves unchanged (see
// Index.Redact), so that a session start whose lines were all printed
// before never builds the redaction engine, which costs more than the
// rest of the hook. Everything in the index is tied to the executable
// that wrote it (path, size, modification time): a new build, with
// possibly different parsing or redaction rules, starts from nothing.
type Index struct {
	mem   map[string]*memFile
	docs  map[string]*docData
	fixed map[memoKey]bool // strings redact.String returns unchanged
	fused map[memoKey]bool // … of which used in this run
	clean map[memoKey]bool // strings screen.Check flags nothing in
	cused map[memoKey]bool // … of which used in this run
	dirty bool
}

// memoKey identifies a string by its length and 64-bit FNV-1a hash.
type memoKey struct {
	h uint64
	n int
}

func keyOf(s string) memoKey {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return memoKey{h, len(s)}
}

// NewIndex returns an empty index.
func NewIndex() *Index {
	return &Index{mem: map[string]*memFile{}, docs: map[string]*docData{}, fixed: map[memoKey]bool{}, fused: map[memoKey]bool{},
		clean: map[memoKey]bool{}, cused: map[memoKey]bool{}}
}

// Redact returns redact.String(s). A string this executable already found
// to be a fixed point of redact.String (one it returned unchanged, or one
// it produced: its output always is) is returned without running the
// detector again. A false match would need a 64-bit hash collision of two
// strings of equal length.
func (ix *Index) Redact(s string) string {
	k := keyOf(s)
	if ix.fixed[k] {
		ix.fused[k] = true
		return s
	}
	r := redact.String(s)
	if r != s {
		k = keyOf(r)
	}
	ix.fixed[k], ix.fused[k], ix.dirty = true, true, true
	return r
}

var (
	exeOnce sync.Once
	exeVal  string
)

// exeID identifies the running executable; "" when it cannot be known
// (then no index is trusted).
func exeID() string {
	exeOnce.Do(func() {
		p, err := os.Executable()
		if err != nil {
			return
		}
		fi, err := os.Stat(p)
		if err != nil {
			return
		}
		exeVal = fmt.Sprintf("%s %d %d", p, fi.Size(), fi.ModTime().UnixNano())
	})
	return exeVal
}

// memFile returns the derived record of a memory file, computing it (and
// reading the file through read) when the cached one is for other bytes.
func (ix *Index) memFile(name string, size, mod int64, read func() ([]byte, error)) (*memFile, error) {
	if ix == nil {
		ix = NewIndex()
	}
	if f, ok := ix.mem[name]; ok && f.Size == size && f.Mod == mod {
		f.used = true
		return f, nil
	}
	b, err := read()
	if err != nil {
		return nil, err
	}
	f := deriveMem(name, b, size, mod)
	f.used = true
	ix.mem[name], ix.dirty = f, true
	return f, nil
}

// doc returns the derived record of a document.
func (ix *Index) doc(real string, size, mod int64, read func() ([]byte, error)) (*docData, error) {
	if ix == nil {
		ix = NewIndex()
	}
	if d, ok := ix.docs[real]; ok && d.Size == size && d.Mod == mod {
		d.used = true
		return d, nil
	}
	b, err := read()
	if err != nil {
		return nil, err
	}
	d := deriveDoc(real, b, size, mod)
	d.used = true
	ix.docs[real], ix.dirty = d, true
	return d, nil
}

func deriveMem(name string, content []byte, size, mod int64) *memFile {
	f := automem.Parse(name, content)
	mf := &memFile{Name: name, Safe: f.SafeName, Size: size, Mod: mod}
	index := name == automem.IndexName
	if index {
		mf.Load = automem.Load(content)
	}
	mf.Entries = make([]memEntry, 0, len(f.Entries))
	var nameFlags []Flag
	if !index {
		nameFlags = screenName(name)
	}
	for _, en := range f.Entries {
		subj := plan.SubjectOf(en)
		me := memEntry{
			ID: en.ID, Kind: string(en.Kind), Line: en.StartLine, Link: en.Link, Type: en.Type,
			Name: en.Name, Key: match.Key(en.Text), BKey: subj.Key, Withhold: subj.Withhold, Secret: en.Secret,
			hook: en.Kind == automem.Pointer && automem.HasHook(en.Text, en.Link),
		}
		if en.Kind == automem.Memory && strings.TrimSpace(en.Description) != "" {
			me.DescKey, me.hasDesc = match.Key(en.Description), true
			me.Desc = keepMemory(en.Description, keepDesc)
		}
		// Of MEMORY.md's loaded part only identities are needed: Claude
		// Code already shows its text.
		if !index || en.StartLine > mf.Load.LoadedLines {
			me.Text = keepMemory(en.Text, keepText)
		}
		// What the context may show is screened: MEMORY.md past its load
		// cap, and the facts and one-memory files of topic files.
		if index && en.StartLine > mf.Load.LoadedLines || !index && en.Kind != automem.Pointer {
			if en.Start >= 0 && en.Start <= en.End && en.End <= len(content) {
				me.Flags = screenBlock(string(content[en.Start:en.End]), en.StartLine, nameFlags)
			}
		}
		// Citations: for ranking (topic files) and for readiness (all).
		if en.Kind != automem.Pointer {
			text := en.Text
			if en.Kind == automem.Memory {
				text = en.Description + "\n" + en.Text
			}
			me.Cites = citePaths(text)
		}
		mf.Entries = append(mf.Entries, me)
	}
	return mf
}

// keep redacts text and keeps at most n bytes of it, at a character
// boundary. Redaction reads more than is kept, so a secret straddling the
// cut is still recognised.
func keep(text string, n int) string {
	if len(text) > 4*n {
		text = text[:4*n]
	}
	return clipBytes(redact.String(text), n)
}

// keepMemory keeps at most n bytes of a memory entry's text, at a character
// boundary: automem.Parse has redacted the whole of it already.
func keepMemory(text string, n int) string { return clipBytes(text, n) }

func clipBytes(text string, n int) string {
	if len(text) <= n {
		return text
	}
	cut := n
	for cut > 0 && text[cut]&0xC0 == 0x80 {
		cut--
	}
	return text[:cut]
}

// citePaths lists the project paths text cites that can be stat'ed: files,
// directories, paths and the files of symbols, relative, inside the
// project, at most maxCitesPerItem.
func citePaths(text string) []string {
	var out []string
	for _, c := range cite.Extract(text) {
		if len(out) >= maxCitesPerItem {
			break
		}
		switch c.Kind {
		case cite.File, cite.Dir, cite.Path, cite.Symbol:
		default:
			continue
		}
		p := c.Path
		if c.Outside || p == "" || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") || strings.HasPrefix(p, "..") ||
			strings.ContainsAny(p, "\t\n\r") {
			continue
		}
		dup := false
		for _, q := range out {
			dup = dup || q == p
		}
		if !dup {
			out = append(out, p)
		}
	}
	return out
}

func deriveDoc(real string, content []byte, size, mod int64) *docData {
	d := mdoc.Parse(content)
	dd := &docData{Path: real, Size: size, Mod: mod, HasPaths: loaded.HasPathsKey(content), Title: keep(docTitle(d), keepMark),
		TopicIdx: bytes.Contains(content, []byte(tier.IndexBegin))}
	if dd.TopicIdx {
		dd.Indexed = indexedDocs(content)
	}
	for _, s := range d.AllStatements() {
		dd.Keys = append(dd.Keys, match.Key(s.Text))
	}
	for _, m := range d.Marked() {
		dd.Marks = append(dd.Marks, mark{ID: m.ID, Section: keep(m.Section, keepMark), Text: keep(m.Text, keepMark)})
	}
	dd.Imports = d.Imports()
	return dd
}

// LoadIndex reads an index file; any problem, or an index written by
// another executable, gives an empty index.
func LoadIndex(path string) *Index {
	ix := NewIndex()
	src, err := readString(path)
	if err != nil || !strings.HasPrefix(src, indexMagic) {
		return ix
	}
	src = src[len(indexMagic):]
	exe, rest, ok := strings.Cut(src, "\n")
	if id := exeID(); !ok || id == "" || exe != "X\t"+esc(id) {
		return ix
	}
	if err := ix.decode(rest); err != nil {
		return NewIndex()
	}
	return ix
}

// readString reads a file into a string without the copy a []byte to
// string conversion makes: the decoded records are substrings of it.
func readString(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var sb strings.Builder
	if fi, err := f.Stat(); err == nil && fi.Size() < 64<<20 {
		sb.Grow(int(fi.Size()) + 1)
	}
	if _, err := io.Copy(&sb, io.LimitReader(f, 64<<20)); err != nil {
		return "", err
	}
	return sb.String(), nil
}

// Save writes the records used since the index was loaded, atomically,
// when anything changed: a record was derived, or one went unused.
func (ix *Index) Save(path string) error {
	if ix == nil {
		return nil
	}
	stale := false
	for _, f := range ix.mem {
		stale = stale || !f.used
	}
	for _, d := range ix.docs {
		stale = stale || !d.used
	}
	for k := range ix.fixed {
		stale = stale || !ix.fused[k]
	}
	for k := range ix.clean {
		stale = stale || !ix.cused[k]
	}
	id := exeID()
	if (!ix.dirty && !stale) || id == "" {
		return nil
	}
	var buf bytes.Buffer
	buf.WriteString(indexMagic)
	fields(&buf, "X", esc(id))
	ix.encode(&buf)
	if err := atomicfile.WriteState(filepath.Dir(path), path, buf.Bytes(), atomicfile.Options{NoSync: true}); err != nil {
		return fmt.Errorf("write context index: %w", err)
	}
	ix.dirty = false
	return nil
}

// The file is one record a line, fields separated by tabs, with "\\",
// "\t", "\n" and "\r" escaped:
//
//	F name size mod lines chars loadedLines loadedChars truncated entries
//	E id kind line key link type name desc desckey hasdesc text hook bkey withhold secret
//	C path…            (citations of the entry before)
//	D path size mod haspaths title topicindex
//	K key,key,…        (statement keys of the document before)
//	M id section text  (a marker of the document before)
//	I import           (an @import of the document before)
//	T path             (a detail document its managed index lists)
//	W kind line detail (a screening flag of the entry before)
//	R hash length      (a fixed point of redact.String)
//	S hash length      (a string screen.Check flags nothing in)
//
// after a first line "X <executable identity>".
func (ix *Index) encode(w *bytes.Buffer) {
	names := make([]string, 0, len(ix.mem))
	for n, f := range ix.mem {
		// A file whose name holds a secret is derived again at every run
		// rather than have its name written here.
		if f.used && f.Safe == f.Name {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		f := ix.mem[n]
		l := f.Load
		fields(w, "F", esc(f.Name), i64(f.Size), i64(f.Mod), itoa(l.Lines), itoa(l.Chars), itoa(l.LoadedLines), itoa(l.LoadedChars), bit(l.Truncated), itoa(len(f.Entries)))
		for _, e := range f.Entries {
			fields(w, "E", e.ID, e.Kind, itoa(e.Line), hex(e.Key), esc(e.Link), esc(e.Type), esc(e.Name), esc(e.Desc), hex(e.DescKey), bit(e.hasDesc), esc(e.Text), bit(e.hook), hex(e.BKey), esc(e.Withhold), bit(e.Secret))
			if len(e.Cites) > 0 {
				cs := make([]string, len(e.Cites))
				for i, c := range e.Cites {
					cs[i] = esc(c)
				}
				fields(w, "C", cs...)
			}
			for _, fl := range e.Flags {
				fields(w, "W", esc(fl.Kind), itoa(fl.Line), esc(fl.Detail))
			}
		}
	}
	paths := make([]string, 0, len(ix.docs))
	for p, d := range ix.docs {
		if d.used {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	for _, k := range sortedKeys(ix.fused) {
		fields(w, "R", hex(k.h), itoa(k.n))
	}
	for _, k := range sortedKeys(ix.cused) {
		fields(w, "S", hex(k.h), itoa(k.n))
	}
	for _, p := range paths {
		d := ix.docs[p]
		fields(w, "D", esc(d.Path), i64(d.Size), i64(d.Mod), bit(d.HasPaths), esc(d.Title), bit(d.TopicIdx))
		if len(d.Keys) > 0 {
			var b strings.Builder
			for i, k := range d.Keys {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(hex(k))
			}
			fields(w, "K", b.String())
		}
		for _, m := range d.Marks {
			fields(w, "M", m.ID, esc(m.Section), esc(m.Text))
		}
		for _, imp := range d.Imports {
			fields(w, "I", esc(imp))
		}
		for _, p := range d.Indexed {
			fields(w, "T", esc(p))
		}
	}
}

// sortedKeys returns the keys of m in order.
func sortedKeys(m map[memoKey]bool) []memoKey {
	keys := make([]memoKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].h != keys[j].h {
			return keys[i].h < keys[j].h
		}
		return keys[i].n < keys[j].n
	})
	return keys
}

func (ix *Index) decode(src string) error {
	// Every field is a substring of the file's one string, so decoding
	// allocates little beyond the records themselves.
	var fs [16]string
	var f *memFile
	var d *docData
	for len(src) > 0 {
		line := src
		if i := strings.IndexByte(src, '\n'); i >= 0 {
			line, src = src[:i], src[i+1:]
		} else {
			src = ""
		}
		tag, rest, _ := strings.Cut(line, "\t")
		n := 0
		for n < len(fs) {
			i := strings.IndexByte(rest, '\t')
			if i < 0 {
				fs[n] = rest
				n++
				break
			}
			fs[n], rest = rest[:i], rest[i+1:]
			n++
		}
		bad := func() error { return fmt.Errorf("context index: bad %q record", tag) }
		switch tag {
		case "F":
			if n != 9 {
				return bad()
			}
			name := unesc(fs[0])
			f = &memFile{Name: name, Safe: name, Size: atoi64(fs[1]), Mod: atoi64(fs[2]), Entries: make([]memEntry, 0, max(0, min(atoi(fs[8]), 1<<16)))}
			f.Load = automem.LoadInfo{Lines: atoi(fs[3]), Chars: atoi(fs[4]), LoadedLines: atoi(fs[5]), LoadedChars: atoi(fs[6]), Truncated: fs[7] == "1"}
			ix.mem[f.Name], d = f, nil
		case "E":
			if f == nil || n != 15 {
				return bad()
			}
			f.Entries = append(f.Entries, memEntry{
				ID: fs[0], Kind: fs[1], Line: atoi(fs[2]), Key: unhex(fs[3]), Link: unesc(fs[4]), Type: unesc(fs[5]),
				Name: unesc(fs[6]), Desc: unesc(fs[7]), DescKey: unhex(fs[8]), hasDesc: fs[9] == "1", Text: unesc(fs[10]),
				hook: fs[11] == "1", BKey: unhex(fs[12]), Withhold: unesc(fs[13]), Secret: fs[14] == "1",
			})
		case "C":
			if f == nil || len(f.Entries) == 0 || n >= len(fs) {
				return bad()
			}
			e := &f.Entries[len(f.Entries)-1]
			e.Cites = make([]string, n)
			for i, c := range fs[:n] {
				e.Cites[i] = unesc(c)
			}
		case "D":
			if n != 6 {
				return bad()
			}
			d = &docData{Path: unesc(fs[0]), Size: atoi64(fs[1]), Mod: atoi64(fs[2]), HasPaths: fs[3] == "1", Title: unesc(fs[4]), TopicIdx: fs[5] == "1"}
			ix.docs[d.Path], f = d, nil
		case "K":
			if d == nil || n != 1 {
				return bad()
			}
			ks := fs[0]
			d.Keys = make([]uint64, 0, strings.Count(ks, ",")+1)
			for ks != "" {
				k := ks
				if i := strings.IndexByte(ks, ','); i >= 0 {
					k, ks = ks[:i], ks[i+1:]
				} else {
					ks = ""
				}
				d.Keys = append(d.Keys, unhex(k))
			}
		case "M":
			if d == nil || n != 3 {
				return bad()
			}
			d.Marks = append(d.Marks, mark{ID: fs[0], Section: unesc(fs[1]), Text: unesc(fs[2])})
		case "T":
			if d == nil || n != 1 {
				return bad()
			}
			d.Indexed = append(d.Indexed, unesc(fs[0]))
		case "I":
			if d == nil || n != 1 {
				return bad()
			}
			d.Imports = append(d.Imports, unesc(fs[0]))
		case "W":
			if f == nil || len(f.Entries) == 0 || n != 3 {
				return bad()
			}
			e := &f.Entries[len(f.Entries)-1]
			e.Flags = append(e.Flags, Flag{Kind: unesc(fs[0]), Line: atoi(fs[1]), Detail: unesc(fs[2])})
		case "R":
			if n != 2 {
				return bad()
			}
			ix.fixed[memoKey{unhex(fs[0]), atoi(fs[1])}] = true
		case "S":
			if n != 2 {
				return bad()
			}
			ix.clean[memoKey{unhex(fs[0]), atoi(fs[1])}] = true
		default:
			return bad()
		}
	}
	return nil
}

func fields(w *bytes.Buffer, tag string, fs ...string) {
	w.WriteString(tag)
	for _, f := range fs {
		w.WriteByte('\t')
		w.WriteString(f)
	}
	w.WriteByte('\n')
}

var escaper = strings.NewReplacer(`\`, `\\`, "\t", `\t`, "\n", `\n`, "\r", `\r`)

func esc(s string) string {
	if !strings.ContainsAny(s, "\\\t\n\r") {
		return s
	}
	return escaper.Replace(s)
}

func unesc(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			i++
			switch s[i] {
			case 't':
				c = '\t'
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			default:
				c = s[i]
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

func itoa(n int) string     { return strconv.Itoa(n) }
func i64(n int64) string    { return strconv.FormatInt(n, 10) }
func hex(k uint64) string   { return strconv.FormatUint(k, 16) }
func atoi(s string) int     { n, _ := strconv.Atoi(s); return n }
func atoi64(s string) int64 { n, _ := strconv.ParseInt(s, 10, 64); return n }
func unhex(s string) uint64 { n, _ := strconv.ParseUint(s, 16, 64); return n }

func bit(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// indexedDocs lists the detail documents named by the managed topic index
// in content: each line of the block ends "→ docs/intermem/<slug>.md"
// (tier.RenderIndex).
func indexedDocs(content []byte) []string {
	_, rest, ok := bytes.Cut(content, []byte(tier.IndexBegin))
	if !ok {
		return nil
	}
	block, _, _ := bytes.Cut(rest, []byte(tier.IndexEnd))
	var out []string
	for _, line := range bytes.Split(block, []byte("\n")) {
		_, p, ok := bytes.Cut(line, []byte("→ "))
		if !ok {
			continue
		}
		if p := strings.TrimSpace(string(p)); strings.HasPrefix(p, targets.DetailDir+"/") && len(out) < maxDetails {
			out = append(out, p)
		}
	}
	return out
}

// docTitle is a document's first heading, or its first line of text.
func docTitle(d *mdoc.Doc) string {
	for _, s := range d.Sections {
		if s.Level > 0 && s.Title != "" {
			return s.Title
		}
	}
	for _, s := range d.AllStatements() {
		first, _, _ := strings.Cut(s.Text, "\n")
		if t := strings.TrimSpace(first); t != "" {
			return t
		}
	}
	return ""
}
