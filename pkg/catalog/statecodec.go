package catalog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"

	"github.com/intermem/intermem/pkg/source"
)

// A source's state (sourceState) is read at every Build, by every command
// and hook, and holds a name per file and per listed directory entry:
// thousands of strings for a source of thousands of documents. It is
// stored in a binary form of its own rather than as JSON, whose decoding
// was a tenth of a search's time at 20,000 entries:
//
//	magic      "IMST" and the format version (1)
//	key        string
//	entries    uvarint
//	touched    count, then each string
//	files      count, then each string
//	problems   count, then each: path string, line uvarint, message string,
//	           unread (1 byte, 0 or 1)
//	dirs       count, then each in key order: key string, path string,
//	           fingerprint (size varint, mtime varint, inode uvarint,
//	           ctime varint), names count, then each in name order: name
//	           string, flags (1 byte: 1 a directory, 2 a link)
//
// Strings are a uvarint length and the bytes; counts and lengths are
// uvarints. Decoding copies the record once and takes every string from
// that copy, so a state of 5,000 names costs one allocation for them.
//
// The record is read as hostile: every count and length is checked
// against the bytes left, directories must come in key order and names in
// name order (as the walk lists them), and the record must end where its
// last field does. A record that is not exactly this is ErrStateCorrupt,
// and the source is then scanned in full (and its state stored again by
// the next writer), as when no state is stored. A record that starts with
// '{' is the JSON an older intermem stored, and is read as such.

// stateMagic begins an encoded source state; its last byte is the format
// version.
const stateMagic = "IMST\x01"

// ErrStateCorrupt is returned by decodeState for bytes that are not a
// source state encodeState wrote: the source is scanned again.
var ErrStateCorrupt = errors.New("source state is corrupt")

// Flags of a DirEntry in an encoded state.
const (
	stateDir  = 1
	stateLink = 2
)

// encodeState returns st in the binary form decodeState reads.
func encodeState(st *sourceState) []byte {
	b := []byte(stateMagic)
	b = appendStateString(b, st.Key)
	b = binary.AppendUvarint(b, uint64(max(st.Entries, 0)))
	b = appendStrings(b, st.Touched)
	b = appendStrings(b, st.Files)
	b = binary.AppendUvarint(b, uint64(len(st.Problems)))
	for _, p := range st.Problems {
		b = appendStateString(b, p.Path)
		b = binary.AppendUvarint(b, uint64(max(p.Line, 0)))
		b = appendStateString(b, p.Message)
		b = append(b, boolByte(p.Unread))
	}
	keys := make([]string, 0, len(st.Dirs))
	for k := range st.Dirs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b = binary.AppendUvarint(b, uint64(len(keys)))
	for _, k := range keys {
		d := st.Dirs[k]
		b = appendStateString(b, k)
		b = appendStateString(b, d.Path)
		b = binary.AppendVarint(b, d.FP.Size)
		b = binary.AppendVarint(b, d.FP.ModTime)
		b = binary.AppendUvarint(b, d.FP.Inode)
		b = binary.AppendVarint(b, d.FP.Change)
		names := d.Entries
		if !sort.SliceIsSorted(names, func(i, j int) bool { return names[i].Name < names[j].Name }) {
			names = append([]source.DirEntry(nil), names...)
			sort.SliceStable(names, func(i, j int) bool { return names[i].Name < names[j].Name })
		}
		b = binary.AppendUvarint(b, uint64(len(names)))
		for _, e := range names {
			b = appendStateString(b, e.Name)
			var flags byte
			if e.Dir {
				flags |= stateDir
			}
			if e.Link {
				flags |= stateLink
			}
			b = append(b, flags)
		}
	}
	return b
}

func appendStateString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func appendStrings(b []byte, ss []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(ss)))
	for _, s := range ss {
		b = appendStateString(b, s)
	}
	return b
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// stateReader reads an encoded state from one copy of it, remembering the
// first error.
type stateReader struct {
	s   string
	off int
	err error
}

func (r *stateReader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: bad %s at byte %d", ErrStateCorrupt, what, r.off)
	}
}

// uvarint reads an unsigned varint of at most limit.
func (r *stateReader) uvarint(what string, limit uint64) uint64 {
	if r.err != nil {
		return 0
	}
	var v uint64
	var shift uint
	for i := 0; ; i++ {
		if r.off+i >= len(r.s) || i == binary.MaxVarintLen64 {
			r.fail(what)
			return 0
		}
		c := r.s[r.off+i]
		if i == binary.MaxVarintLen64-1 && c > 1 {
			r.fail(what)
			return 0
		}
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			r.off += i + 1
			break
		}
		shift += 7
	}
	if v > limit {
		r.fail(what)
		return 0
	}
	return v
}

func (r *stateReader) varint(what string) int64 {
	u := r.uvarint(what, 1<<64-1)
	return int64(u>>1) ^ -int64(u&1)
}

// count reads a count of items of at least one byte each: no more than
// the bytes left.
func (r *stateReader) count(what string) int {
	n := r.uvarint(what, uint64(len(r.s)))
	if r.err == nil && n > uint64(len(r.s)-r.off) {
		r.fail(what)
	}
	return int(n)
}

func (r *stateReader) str(what string) string {
	n := r.uvarint(what, uint64(len(r.s)))
	if r.err == nil && n > uint64(len(r.s)-r.off) {
		r.fail(what)
	}
	if r.err != nil {
		return ""
	}
	s := r.s[r.off : r.off+int(n)]
	r.off += int(n)
	return s
}

func (r *stateReader) byte(what string, limit byte) byte {
	if r.err != nil {
		return 0
	}
	if r.off >= len(r.s) || r.s[r.off] > limit {
		r.fail(what)
		return 0
	}
	c := r.s[r.off]
	r.off++
	return c
}

func (r *stateReader) strings(what string) []string {
	n := r.count(what + " count")
	if r.err != nil || n == 0 {
		return nil
	}
	out := make([]string, 0, n)
	for range n {
		out = append(out, r.str(what))
		if r.err != nil {
			return nil
		}
	}
	return out
}

// decodeState reads a state encodeState wrote; any other bytes are
// ErrStateCorrupt. It never panics on hostile bytes.
func decodeState(b []byte) (sourceState, error) {
	if len(b) < len(stateMagic) || string(b[:len(stateMagic)]) != stateMagic {
		return sourceState{}, fmt.Errorf("%w: not a state of this version", ErrStateCorrupt)
	}
	r := &stateReader{s: string(b), off: len(stateMagic)}
	var st sourceState
	st.Key = r.str("key")
	st.Entries = int(r.uvarint("entry count", 1<<31-1))
	st.Touched = r.strings("touched path")
	st.Files = r.strings("file")
	if n := r.count("problem count"); r.err == nil && n > 0 {
		st.Problems = make([]source.Problem, 0, n)
		for range n {
			var p source.Problem
			p.Path = r.str("problem path")
			p.Line = int(r.uvarint("problem line", 1<<31-1))
			p.Message = r.str("problem message")
			p.Unread = r.byte("problem flag", 1) == 1
			if r.err != nil {
				break
			}
			st.Problems = append(st.Problems, p)
		}
	}
	if n := r.count("directory count"); r.err == nil && n > 0 {
		st.Dirs = make(source.Dirs, n)
		prev := ""
		for i := range n {
			key := r.str("directory key")
			if i > 0 && key <= prev {
				r.fail("directory order")
			}
			prev = key
			var d source.DirList
			d.Path = r.str("directory path")
			d.FP.Size = r.varint("directory size")
			d.FP.ModTime = r.varint("directory mtime")
			d.FP.Inode = r.uvarint("directory inode", 1<<64-1)
			d.FP.Change = r.varint("directory ctime")
			m := r.count("name count")
			if r.err != nil {
				break
			}
			d.Entries = make([]source.DirEntry, 0, m)
			for j := range m {
				e := source.DirEntry{Name: r.str("name")}
				flags := r.byte("name flags", stateDir|stateLink)
				e.Dir, e.Link = flags&stateDir != 0, flags&stateLink != 0
				if j > 0 && e.Name <= d.Entries[j-1].Name {
					r.fail("name order")
				}
				if r.err != nil {
					break
				}
				d.Entries = append(d.Entries, e)
			}
			if r.err != nil {
				break
			}
			st.Dirs[key] = d
		}
	}
	if r.err == nil && r.off != len(r.s) {
		r.fail("end")
	}
	if r.err != nil {
		return sourceState{}, r.err
	}
	return st, nil
}
