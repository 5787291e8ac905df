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
	"github.com/intermem/intermem/pkg/loaded"
	"github.com/intermem/intermem/pkg/match"
	"github.com/intermem/intermem/pkg/mdoc"
	"github.com/intermem/intermem/pkg/redact"
	"github.com/intermem/intermem/pkg/rendercache"
	"github.com/intermem/intermem/pkg/targets"
	"github.com/intermem/intermem/pkg/tier"
)

// IndexName is the file under .intermem/ holding what the hook derived
// from each document Claude Code may load at its last run, and its memos
// of redaction and screening (see Index). What is derived from memory
// files is not here: the catalog keeps each file's parse in the store.
const IndexName = "context.index"

// indexMagic versions the derivation: change it whenever what is derived
// from a file changes, and every cached record is recomputed. An index of
// an older version (v8 and before also held memory files) is ignored and
// replaced at the next save.
const indexMagic = "intermem context index v9\n"

// keepMark bounds what is kept of a document's title, section or marked
// text: enough for every clip.
const keepMark = 300

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

// Index caches what is derived from the documents Claude Code may load by
// their identity (real path, size and modification time), so a hook whose
// inputs barely changed re-derives only what did. A record whose file
// changed size or time is derived again; a record no file used is dropped
// on save. The cache holds redacted text only, owner-readable, under the
// state directory. (Memory files' entries are not here: their parse is the
// catalog's, in the store — see memory.go; only memos of what is derived
// from an entry's fields are.)
//
// It also remembers which strings redact.String leaves unchanged (see
// Index.Redact), so that a session start whose lines were all printed
// before never builds the redaction engine, which costs more than the
// rest of the hook. Everything in the index is tied to the executable
// that wrote it (path, size, modification time): a new build, with
// possibly different parsing or redaction rules, starts from nothing.
type Index struct {
	docs  map[string]*docData
	fixed map[memoKey]bool // strings redact.String returns unchanged
	fused map[memoKey]bool // … of which used in this run
	clean map[memoKey]bool // strings screen.Check flags nothing in
	cused map[memoKey]bool // … of which used in this run
	// der memoizes what a session start derives from a memory entry's
	// fields (Index.derive, memory.go), by those fields' hash.
	der   map[memoKey]*derived
	dused map[memoKey]bool // … of which used in this run
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
	return &Index{docs: map[string]*docData{}, fixed: map[memoKey]bool{}, fused: map[memoKey]bool{},
		clean: map[memoKey]bool{}, cused: map[memoKey]bool{}, der: map[memoKey]*derived{}, dused: map[memoKey]bool{}}
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
		if p, err := os.Executable(); err == nil {
			exeVal = rendercache.ExeID(p)
		}
	})
	return exeVal
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

// keep redacts text and keeps at most n bytes of it, at a character
// boundary. Redaction reads more than is kept, so a secret straddling the
// cut is still recognised.
func keep(text string, n int) string {
	if len(text) > 4*n {
		text = text[:4*n]
	}
	return clipBytes(redact.String(text), n)
}

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
	for _, d := range ix.docs {
		stale = stale || !d.used
	}
	for k := range ix.fixed {
		stale = stale || !ix.fused[k]
	}
	for k := range ix.clean {
		stale = stale || !ix.cused[k]
	}
	for k := range ix.der {
		stale = stale || !ix.dused[k]
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
//	D path size mod haspaths title topicindex
//	K key,key,…        (statement keys of the document before)
//	M id section text  (a marker of the document before)
//	I import           (an @import of the document before)
//	T path             (a detail document its managed index lists)
//	R hash length      (a fixed point of redact.String)
//	S hash length      (a string screen.Check flags nothing in)
//	E hash length key desckey hasdesc bkey withhold cite…
//	                   (what a session start derives from a memory entry)
//
// after a first line "X <executable identity>".
func (ix *Index) encode(w *bytes.Buffer) {
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
	for _, k := range sortedKeys(ix.dused) {
		d := ix.der[k]
		fs := []string{hex(k.h), itoa(k.n), hex(d.key), hex(d.descKey), bit(d.hasDesc), hex(d.bKey), esc(d.withhold)}
		for _, c := range d.cites {
			fs = append(fs, esc(c))
		}
		fields(w, "E", fs...)
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
		case "D":
			if n != 6 {
				return bad()
			}
			d = &docData{Path: unesc(fs[0]), Size: atoi64(fs[1]), Mod: atoi64(fs[2]), HasPaths: fs[3] == "1", Title: unesc(fs[4]), TopicIdx: fs[5] == "1"}
			ix.docs[d.Path] = d
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
		case "E":
			if n < 7 || n > 7+maxCitesPerItem {
				return bad()
			}
			d := &derived{key: unhex(fs[2]), descKey: unhex(fs[3]), hasDesc: fs[4] == "1", bKey: unhex(fs[5]), withhold: unesc(fs[6])}
			for _, c := range fs[7:n] {
				d.cites = append(d.cites, unesc(c))
			}
			ix.der[memoKey{unhex(fs[0]), atoi(fs[1])}] = d
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
