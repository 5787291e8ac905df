package inject

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/intermem/intermem/pkg/atomicfile"
	"github.com/intermem/intermem/pkg/redact"
	"github.com/intermem/intermem/pkg/rendercache"
)

// IndexName is the file under .intermem/ holding the hook's memos of pure
// functions: redaction, screening, what is derived from a memory entry's
// fields, and the record of a document the catalog holds none of, by its
// bytes (see Index). Files' contents are not here: the catalog keeps each
// memory file's parse and each document's record in the store.
const IndexName = "context.index"

// indexMagic versions the memos: change it whenever what is memoized
// changes, and every record is recomputed. An index of an older version
// (v9 and before also held documents, v8 and before memory files) is
// ignored and replaced at the next save; v10 held no documents' records.
const indexMagic = "intermem context index v11\n"

// Index holds memos of pure functions a session start would otherwise
// run again for strings it met before: which strings redact.String leaves
// unchanged (Index.Redact), so that a session start whose lines were all
// printed before never builds the redaction engine, which costs more than
// the rest of the hook; which strings screen.Check flags nothing in
// (Index.Screen); what is derived from a memory entry's fields
// (Index.derive, memory.go); and docrecord.Derive of a document's bytes
// that the catalog stored no current record of (docmemo.go). A memo no
// run used is dropped on save. It holds hashes and redacted, derived
// values only (a document's record only when docrecord keeps it: no path
// in it holds a secret), owner-readable, under the state directory;
// files' contents are the catalog's (memory.go, loaded.go). Everything in the index is tied to the executable that
// wrote it (path, size, modification time): a new build, with possibly
// different redaction or screening rules, starts from nothing.
type Index struct {
	fixed map[memoKey]bool // strings redact.String returns unchanged
	fused map[memoKey]bool // … of which used in this run
	clean map[memoKey]bool // strings screen.Check flags nothing in
	cused map[memoKey]bool // … of which used in this run
	// der memoizes what a session start derives from a memory entry's
	// fields (Index.derive, memory.go), by those fields' hash.
	der   map[memoKey]*derived
	dused map[memoKey]bool // … of which used in this run
	// docs memoizes docrecord.Derive of a document without a stored
	// record, by its bytes' key (docmemo.go).
	docs    map[memoKey]*docMemo
	docUsed map[memoKey]bool // … of which used in this run
	dirty   bool
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
	return &Index{fixed: map[memoKey]bool{}, fused: map[memoKey]bool{},
		clean: map[memoKey]bool{}, cused: map[memoKey]bool{}, der: map[memoKey]*derived{}, dused: map[memoKey]bool{},
		docs: map[memoKey]*docMemo{}, docUsed: map[memoKey]bool{}}
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
// The open neither blocks nor follows a link, and the descriptor must be a
// regular file.
func readString(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fs.ErrInvalid
	}
	var sb strings.Builder
	if fi.Size() < 64<<20 {
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
	for k := range ix.fixed {
		stale = stale || !ix.fused[k]
	}
	for k := range ix.clean {
		stale = stale || !ix.cused[k]
	}
	for k := range ix.der {
		stale = stale || !ix.dused[k]
	}
	for k := range ix.docs {
		stale = stale || !ix.docUsed[k]
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
//	R hash length      (a fixed point of redact.String)
//	S hash length      (a string screen.Check flags nothing in)
//	E hash length key desckey hasdesc bkey withhold cite…
//	                   (what a session start derives from a memory entry)
//	D hash length record redact
//	                   (a document's record, by its bytes: hex of
//	                   docrecord.Encode, and the R memos its derivation
//	                   used; docmemo.go)
//
// after a first line "X <executable identity>".
func (ix *Index) encode(w *bytes.Buffer) {
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
	for _, k := range sortedKeys(ix.docUsed) {
		m := ix.docs[k]
		fields(w, "D", hex(k.h), itoa(k.n), m.rec, encodeKeys(m.redact))
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
		case "D":
			if n != 4 {
				return bad()
			}
			red, ok := decodeKeys(fs[3])
			if !ok {
				return bad()
			}
			ix.docs[memoKey{unhex(fs[0]), atoi(fs[1])}] = &docMemo{rec: fs[2], redact: red}
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

// esc writes a backslash, tab, newline and carriage return as \\, \t, \n
// and \r (unesc reverses it).
func esc(s string) string {
	if !strings.ContainsAny(s, "\\\t\n\r") {
		return s
	}
	b := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b = append(b, '\\', '\\')
		case '\t':
			b = append(b, '\\', 't')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		default:
			b = append(b, c)
		}
	}
	return string(b)
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
func hex(k uint64) string   { return strconv.FormatUint(k, 16) }
func atoi(s string) int     { n, _ := strconv.Atoi(s); return n }
func unhex(s string) uint64 { n, _ := strconv.ParseUint(s, 16, 64); return n }

func bit(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
