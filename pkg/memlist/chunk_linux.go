//go:build linux

package memlist

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"

	"golang.org/x/sys/unix"
)

// chunkBuf bounds the getdents buffer of a part's read (partBuf).
const chunkBuf = 8 << 10

// partBuf is the getdents buffer of a part's read (readChunk) of n
// entries, and of its recording (Chunked: a part of ChunkFiles files and
// what entries lie between them, read on in another getdents if more): about the part itself (a record is 24 bytes and the name,
// rounded up to 8; entryBytes is a name of up to 40 bytes), between 1 and
// 8 KiB. A getdents fills the whole buffer it is given if the directory
// has the entries, and on an indexed (htree) ext4 directory every entry it
// returns is hashed, allocated and sorted by the kernel: measured on the
// 401-file directory of 19,905 entries, one read of 8 KiB cost 50–120 µs,
// of 2 KiB 22–30 µs, about a tenth of a quiet turn's excess over a do-nothing
// binary. A part whose names are longer is read in more than one
// getdents, each going on where the last stopped.
func partBuf(n int) int {
	const entryBytes = 64
	return min(max(n*entryBytes, 1<<10), chunkBuf)
}

// Chunked records the memory directory dir in parts (chunk.go): each read
// from the cookie its predecessor ended at, on the descriptor that reads
// the next part, as SumChunk will read it; parts more than MaxChunks are
// merged two by two (halve) until they are not. ok is false for a
// directory of one part at most (its quiet turns sum it whole), of more
// than maxRead parts, one that changed while it was read, or any error.
func Chunked(dir string) (c Chunking, ok bool) {
	d, err := OpenDir(dir)
	if err != nil {
		return Chunking{}, false
	}
	defer d.Close()
	if c.Dir, err = d.FP(); err != nil {
		return Chunking{}, false
	}
	for cookie := int64(0); len(c.Chunks) <= maxRead; {
		k := Chunk{Start: cookie}
		eof, err := d.walk(cookie, partBuf(ChunkFiles), func(name []byte, typ fs.FileMode, next int64) bool {
			k.Entries++
			k.End = next
			if memoryName(name) && string(name) != Index {
				k.Files++
				k.Sum += d.entryTerm(name, typ)
			}
			return k.Files < ChunkFiles
		})
		if err != nil {
			return Chunking{}, false
		}
		switch n := len(c.Chunks); {
		case k.Entries == 0:
		case k.Files == 0 && n > 0:
			// Entries after the last memory file: the last part's, read
			// on to the directory's end.
			c.Chunks[n-1].Entries += k.Entries
			c.Chunks[n-1].End = k.End
		default:
			c.Chunks = append(c.Chunks, k)
		}
		if eof {
			break
		}
		cookie = k.End
	}
	c.Chunks = halve(c.Chunks)
	if now, err := d.FP(); err != nil || now != c.Dir || !c.Valid() {
		return Chunking{}, false
	}
	return c, true
}

// SumChunk is Sum's fingerprint of dir's listing with the parts of c
// but the j-th taken as recorded (chunk.go): ok when the directory's
// fingerprint is c's before and after, and the j-th part reads exactly as
// recorded. MEMORY.md and the sub-folder files of subs are stat'ed as Sum
// stats them. Otherwise ok is false and the caller sums the listing whole
// (Sum).
func SumChunk(dir string, subs []string, c *Chunking, j int) (fp string, ok bool) {
	if j < 0 || j >= len(c.Chunks) || !c.Valid() {
		return "", false
	}
	d, err := OpenDir(dir)
	if err != nil {
		return "", false
	}
	defer d.Close()
	if !d.same(c.Dir) || !d.readChunk(&c.Chunks[j], j == len(c.Chunks)-1) {
		return "", false
	}
	s := c.total()
	d.indexTerm(&s)
	if len(subs) > 0 {
		subTerms(dir, subs, &s)
	}
	if !d.same(c.Dir) {
		return "", false
	}
	return s.String(), true
}

// same reports whether the directory's fingerprint is fp.
func (d *Dir) same(fp string) bool {
	now, err := d.FP()
	return err == nil && now == fp
}

// readChunk reads the part k from its cookie and reports whether it
// holds what k says: its entries, the cookie after the last, its memory
// files and their sum; the last part (last) must end at the directory's
// end.
//
//go:noinline
func (d *Dir) readChunk(k *Chunk, last bool) bool {
	var got Chunk
	over := false
	eof, err := d.walk(k.Start, partBuf(k.Entries), func(name []byte, typ fs.FileMode, next int64) bool {
		if got.Entries == k.Entries {
			over = true // an entry past the part's end
			return false
		}
		got.Entries++
		got.End = next
		if memoryName(name) && string(name) != Index {
			got.Files++
			got.Sum += d.entryTerm(name, typ)
		}
		return last || got.Entries < k.Entries
	})
	if err != nil || over || (last && !eof) {
		return false
	}
	return got.Entries == k.Entries && got.End == k.End && got.Files == k.Files && got.Sum == k.Sum
}

// indexTerm adds MEMORY.md's term to s, as Sum adds it when the directory
// holds it: an lstat, a stat for a link.
//
//go:noinline
func (d *Dir) indexTerm(s *fpSum) {
	var z [len(Index) + 1]byte
	copy(z[:], Index)
	name := z[:len(Index)]
	var st unix.Stat_t
	if err := d.statz(name, false, &st); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return // no index: no term, as in Sum
		}
		s.addTerm(term(name, "", "cannot be read: "+err.Error()))
		return
	}
	if typ := ModeOf(st.Mode).Type(); !typ.IsRegular() {
		s.addTerm(d.entryTerm(name, typ)) // a link's stat, or the skip
		return
	}
	s.addTerm(statTerm(name, &st))
}

// subTerms adds the terms of the sub-folder files of subs to s, as Sum
// adds them (subFiles).
//
//go:noinline
func subTerms(dir string, subs []string, s *fpSum) {
	var sw Sweep
	subFiles(dir, subs, &sw, len(subs), func(f File) { s.add(f.Name, f.FP, f.Skip) })
}

// walk reads the directory's entries from cookie on (a descriptor just
// opened reads from the start without a seek) into d.buf, of size bytes
// (a buffer of at least that size kept from a walk before is reused),
// giving each but "." and ".." to each with the cookie after it, until
// each returns false or the directory's end is reached (eof).
func (d *Dir) walk(cookie int64, size int, each func(name []byte, typ fs.FileMode, next int64) bool) (eof bool, err error) {
	if cookie != 0 || d.moved {
		if _, err := unix.Seek(d.fd, cookie, 0); err != nil {
			return false, fmt.Errorf("seek directory: %w", err)
		}
	}
	d.moved = true
	if len(d.buf) < size {
		d.buf = make([]byte, size)
	}
	for {
		m, err := unix.Getdents(d.fd, d.buf[:size])
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return false, fmt.Errorf("read directory: %w", err)
		}
		if m == 0 {
			return true, nil
		}
		for b := d.buf[:m]; len(b) >= 19; {
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < 19 || reclen > len(b) || bytes.IndexByte(b[19:reclen], 0) < 0 {
				return false, errors.New("read directory: malformed entry")
			}
			name, typ, off, n := record(b)
			b = b[n:]
			if !dots(name) && !each(name, direntType(typ), off) {
				return false, nil
			}
		}
	}
}
