package catalog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/intermem/intermem/pkg/source"
	"github.com/intermem/intermem/pkg/wire"
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
// Values are package wire's: strings are a uvarint length and the bytes,
// counts and lengths uvarints, sizes and times zig-zag varints, flags a
// uvarint of one byte. Decoding copies the record once and takes every
// string from that copy, so a state of 5,000 names costs one allocation
// for them.
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

// filesSection returns where the file list of the encoded state b lies
// (its count to the end of its last string), checking every count and
// length as wire's Reader would; false when one does not fit.
func filesSection(b []byte) (from, to int, ok bool) {
	uvarint := func(off int) (uint64, int, bool) {
		v, n := binary.Uvarint(b[off:])
		return v, off + n, n > 0
	}
	str := func(off int) (int, bool) {
		n, off, ok := uvarint(off)
		if !ok || n > uint64(len(b)-off) {
			return 0, false
		}
		return off + int(n), true
	}
	strs := func(off int) (int, bool) {
		n, off, ok := uvarint(off)
		if !ok || n > uint64(len(b)-off) {
			return 0, false
		}
		for range n {
			if off, ok = str(off); !ok {
				return 0, false
			}
		}
		return off, true
	}
	off, ok := str(len(stateMagic)) // key
	if ok {
		_, off, ok = uvarint(off) // entries
	}
	if ok {
		off, ok = strs(off) // touched
	}
	if !ok {
		return 0, 0, false
	}
	to, ok = strs(off)
	return off, to, ok
}

// files returns st's files, decoding them if decodeState kept them
// encoded.
func (st *sourceState) files() []string {
	if st.Files == nil && st.filesAt != nil {
		st.Files = decodeFiles(st.filesAt)
	}
	return st.Files
}

// decodeFiles decodes a file list decodeState checked and kept encoded.
func decodeFiles(b []byte) []string {
	return wire.NewReader(b, "").Strings("file")
}

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
	b = wire.AppendString(b, st.Key)
	b = wire.AppendUint(b, uint64(max(st.Entries, 0)))
	b = wire.AppendStrings(b, st.Touched)
	if st.Files == nil && st.filesAt != nil {
		b = append(b, st.filesAt...) // as decodeState found them
	} else {
		b = wire.AppendStrings(b, st.Files)
	}
	b = wire.AppendUint(b, uint64(len(st.Problems)))
	for _, p := range st.Problems {
		b = wire.AppendString(b, p.Path)
		b = wire.AppendUint(b, uint64(max(p.Line, 0)))
		b = wire.AppendString(b, p.Message)
		b = wire.AppendBool(b, p.Unread)
	}
	keys := make([]string, 0, len(st.Dirs))
	for k := range st.Dirs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b = wire.AppendUint(b, uint64(len(keys)))
	for _, k := range keys {
		d := st.Dirs[k]
		b = wire.AppendString(b, k)
		b = wire.AppendString(b, d.Path)
		b = wire.AppendInt(b, d.FP.Size)
		b = wire.AppendInt(b, d.FP.ModTime)
		b = wire.AppendUint(b, d.FP.Inode)
		b = wire.AppendInt(b, d.FP.Change)
		names := d.Entries
		if !sort.SliceIsSorted(names, func(i, j int) bool { return names[i].Name < names[j].Name }) {
			names = append([]source.DirEntry(nil), names...)
			sort.SliceStable(names, func(i, j int) bool { return names[i].Name < names[j].Name })
		}
		b = wire.AppendUint(b, uint64(len(names)))
		for _, e := range names {
			b = wire.AppendString(b, e.Name)
			var flags uint64
			if e.Dir {
				flags |= stateDir
			}
			if e.Link {
				flags |= stateLink
			}
			b = wire.AppendUint(b, flags) // one byte
		}
	}
	return b
}

// decodeState reads a state encodeState wrote; any other bytes are
// ErrStateCorrupt. It never panics on hostile bytes.
//
// The files are not decoded: a source found unchanged passes them on to
// SourceInfo, which only `intermem sources` lists, and a state of
// thousands of files would cost every search their copy. decodeState
// checks their lengths, copies the record without them and keeps them
// encoded, in b (filesAt: b must stay unchanged while the state is used,
// as a record does inside its transaction); sourceState.files decodes
// them when asked.
func decodeState(b []byte) (sourceState, error) {
	if !wire.HasPrefix(b, stateMagic) {
		return sourceState{}, fmt.Errorf("%w: not a state of this version", ErrStateCorrupt)
	}
	from, to, ok := filesSection(b)
	if !ok {
		return sourceState{}, fmt.Errorf("%w: bad file list", ErrStateCorrupt)
	}
	var rec strings.Builder // the record with no files: one copy
	rec.Grow(len(b) - (to - from) + 1)
	rec.Write(b[:from])
	rec.WriteByte(0)
	rec.Write(b[to:])
	r := wire.NewStringReader(rec.String(), stateMagic)
	var st sourceState
	if to-from > 1 {
		st.filesAt = b[from:to:to]
	}
	st.Key = r.String("key")
	st.Entries = int(r.Uint("entry count", math.MaxInt32))
	st.Touched = r.Strings("touched path")
	r.Strings("file") // none: kept encoded (filesAt)
	if n := r.Count("problem count", 1); r.Err() == nil && n > 0 {
		st.Problems = make([]source.Problem, 0, n)
		for range n {
			var p source.Problem
			p.Path = r.String("problem path")
			p.Line = int(r.Uint("problem line", math.MaxInt32))
			p.Message = r.String("problem message")
			p.Unread = r.Bool("problem flag")
			if r.Err() != nil {
				break
			}
			st.Problems = append(st.Problems, p)
		}
	}
	var order error
	if n := r.Count("directory count", 1); r.Err() == nil && n > 0 {
		st.Dirs = make(source.Dirs, n)
		prev := ""
	dirs:
		for i := range n {
			key := r.String("directory key")
			if i > 0 && key <= prev {
				order = errors.New("directory order")
				break
			}
			prev = key
			var d source.DirList
			d.Path = r.String("directory path")
			d.FP.Size = r.Int("directory size", math.MinInt64, math.MaxInt64)
			d.FP.ModTime = r.Int("directory mtime", math.MinInt64, math.MaxInt64)
			d.FP.Inode = r.Uint("directory inode", math.MaxUint64)
			d.FP.Change = r.Int("directory ctime", math.MinInt64, math.MaxInt64)
			m := r.Count("name count", 1)
			if r.Err() != nil {
				break
			}
			d.Entries = make([]source.DirEntry, 0, m)
			for j := range m {
				e := source.DirEntry{Name: r.String("name")}
				flags := r.Uint("name flags", stateDir|stateLink)
				e.Dir, e.Link = flags&stateDir != 0, flags&stateLink != 0
				if r.Err() != nil {
					break dirs
				}
				if j > 0 && e.Name <= d.Entries[j-1].Name {
					order = errors.New("name order")
					break dirs
				}
				d.Entries = append(d.Entries, e)
			}
			st.Dirs[key] = d
		}
	}
	if order != nil {
		return sourceState{}, fmt.Errorf("%w: %v", ErrStateCorrupt, order)
	}
	if err := r.Done(); err != nil {
		return sourceState{}, fmt.Errorf("%w: %w", ErrStateCorrupt, err)
	}
	return st, nil
}
