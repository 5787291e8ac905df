package memlist

import "strconv"

// Chunks: the quiet turn's listing in parts
//
// A quiet turn (package quiet, the hook front) proves that nothing changed
// since the session's last pass by summing the whole listing (Sum): a stat
// per memory file, so that its cost grows with the directory. Chunked
// records the listing in parts instead, each the run of directory entries
// read from a getdents cookie until ChunkFiles memory files were met, with
// the sum of those files' terms (fpSum); SumChunk checks one part against
// a fresh read and adds up the rest as recorded. The listing's fingerprint
// it returns is Sum's when every part is as recorded, so the caller's
// comparison with the session's fingerprint does not change.
//
// What is checked at every turn:
//   - The directory's own fingerprint (inode, modification and change
//     time), before and after: an entry added, removed or renamed changes
//     it (snapshot's sweep.go says why), so while it holds the directory
//     holds the names it held when the parts were recorded, and a read
//     resumed at a recorded cookie meets the entries it met then.
//   - MEMORY.md (not in any part) and the sub-folder files pointers name,
//     each stat'ed as Sum stats them.
//   - One part, read from its cookie: its entry count, the cookie after
//     its last entry (the next part's start; the last part must reach the
//     directory's end) and its sum must all be as recorded.
//
// What is not: a memory file rewritten in place (its name kept, the
// directory untouched) in another part. The caller picks the part by a
// number that grows by one each turn (the turn tally's count), so such a
// rewrite is noticed within K turns of it, K the number of parts, and a
// session's end (the full hook, which lists the whole directory) notices
// it in any case. A name changed within the directory's timestamp
// granularity of the recording (two changes in one clock tick leave its
// times as they were) is noticed the same way: the part that held it, or
// would hold it, no longer reads as recorded.
//
// A directory of at most ChunkFiles memory files has no parts (Chunked
// reports none): its quiet turns sum it whole, as before. The parts are
// hostile input like the file that holds them: a record whose parts do not
// chain from the directory's start to its end, a cookie the directory does
// not take, a count or sum that does not match — anything but a part read
// exactly as recorded — makes SumChunk report the listing not whole, and
// a record whose parts do not add up to the session's fingerprint does
// not compare equal to it: either way the turn is a full one.

// ChunkFiles is how many memory files a part of a chunked listing holds
// (the last may hold fewer) in a directory of at most MaxChunks parts of
// it; a larger one's parts hold twice, four times… as many (halve). A
// part's read is a getdents sized to it (partBuf) and a stat a file, and
// a quiet turn's cost over a do-nothing binary is mostly system calls:
// measured at 19,905 entries (401 memory files), parts of 16 files took
// 70 µs of CPU a turn off parts of 32, which took about as much off 64
// (medians of 400 interleaved runs at load 5; a variable for tests). The
// parts are more (26 there, where 7), so a file rewritten in place in
// another part is noticed later by quiet turns alone — but a checkpoint
// turn (every tenth, package continuity) and every session's end list the
// directory whole, so that bounds it first.
var ChunkFiles = 16

// MaxChunks bounds the parts of a chunked listing: a quiet turn decodes
// every part's line of the copy (quiet.Decode).
const MaxChunks = 256

// maxRead bounds the parts Chunked reads before it halves them: a
// directory of more memory files than maxRead·ChunkFiles is not chunked.
const maxRead = 1 << 14

// halve merges neighbouring parts two by two while they are more than
// MaxChunks: a merged part reads from the first's cookie to the second's
// end, as the two were read one after the other.
func halve(ks []Chunk) []Chunk {
	for len(ks) > MaxChunks {
		n := 0
		for i := 0; i < len(ks); i += 2 {
			k := ks[i]
			if i+1 < len(ks) {
				next := &ks[i+1]
				k.End = next.End
				k.Entries += next.Entries
				k.Files += next.Files
				k.Sum += next.Sum
			}
			ks[n] = k
			n++
		}
		ks = ks[:n]
	}
	return ks
}

// Chunk is one part of a chunked listing: the directory entries read from
// cookie Start on ("." and ".." not counted) until the one whose cookie
// is End, Entries of them, among which Files memory files (MEMORY.md not
// counted) whose terms add up to Sum.
type Chunk struct {
	Start, End int64
	Entries    int
	Files      int
	Sum        uint64
}

// Chunking is a memory directory's listing in parts (Chunked): the
// directory's fingerprint (Dir.FP) and its parts, in the order of a read.
type Chunking struct {
	Dir    string
	Chunks []Chunk
}

// Valid reports whether the parts chain as Chunked records them: from
// the directory's start, each beginning at the cookie its predecessor
// ended at, each of at least one entry, between 2 and MaxChunks of them.
// Whether they hold what they say is for SumChunk to see.
func (c *Chunking) Valid() bool {
	if c.Dir == "" || len(c.Chunks) < 2 || len(c.Chunks) > MaxChunks {
		return false
	}
	start := int64(0)
	for i := range c.Chunks {
		k := &c.Chunks[i]
		if k.Start != start || k.Entries < 1 || k.Files < 0 || k.Files > k.Entries {
			return false
		}
		start = k.End
	}
	return true
}

// total is the sum of the recorded parts.
func (c *Chunking) total() fpSum {
	var s fpSum
	for i := range c.Chunks {
		s.sum += c.Chunks[i].Sum
		s.n += uint64(c.Chunks[i].Files)
	}
	return s
}

// AppendChunk appends k's fields as stop.quiet holds them: start, end,
// entries, files, sum in hex, separated by spaces.
func AppendChunk(b []byte, k *Chunk) []byte {
	b = strconv.AppendInt(b, k.Start, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, k.End, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(k.Entries), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(k.Files), 10)
	b = append(b, ' ')
	return strconv.AppendUint(b, k.Sum, 16)
}

// ParseChunk parses AppendChunk's fields strictly: anything but what
// AppendChunk would write is refused (a sign but a start's or end's
// minus, a leading zero, upper-case hex, a value out of its range).
// It is written by hand, its frame small: a quiet turn decodes the copy a
// few kilobytes deep in the hook front's main goroutine, whose stack
// strconv.ParseInt's frames would grow (FuzzParseChunk holds it to
// strconv).
func ParseChunk(s string) (k Chunk, ok bool) {
	var v [5]uint64
	var neg [2]bool
	for i := range v {
		n := len(s)
		if i < len(v)-1 {
			n = -1
			for j := 0; j < len(s); j++ {
				if s[j] == ' ' {
					n = j
					break
				}
			}
			if n < 0 {
				return Chunk{}, false
			}
		}
		f := s[:n]
		if i < len(neg) && len(f) > 1 && f[0] == '-' {
			neg[i], f = true, f[1:]
		}
		if v[i], ok = parseField(f, i == len(v)-1); !ok {
			return Chunk{}, false
		}
		if n < len(s) {
			n++
		}
		s = s[n:]
	}
	for i := range neg {
		lim := uint64(1<<63 - 1)
		if neg[i] {
			lim++
		}
		if v[i] > lim || (neg[i] && v[i] == 0) {
			return Chunk{}, false
		}
	}
	if v[2] > 1<<31-1 || v[3] > 1<<31-1 {
		return Chunk{}, false
	}
	k = Chunk{Start: int64(v[0]), End: int64(v[1]), Entries: int(v[2]), Files: int(v[3]), Sum: v[4]}
	if neg[0] {
		k.Start = -k.Start
	}
	if neg[1] {
		k.End = -k.End
	}
	return k, true
}

// parseField is an unsigned decimal, or lower-case hex, without a leading
// zero (but "0" itself) and within 64 bits.
func parseField(f string, hex bool) (uint64, bool) {
	if f == "" || (len(f) > 1 && f[0] == '0') {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(f); i++ {
		c := f[i]
		var d uint64
		switch {
		case '0' <= c && c <= '9':
			d = uint64(c - '0')
		case hex && 'a' <= c && c <= 'f':
			d = uint64(c-'a') + 10
		default:
			return 0, false
		}
		if hex {
			if v>>60 != 0 {
				return 0, false
			}
			v = v<<4 | d
			continue
		}
		if v > (1<<64-1)/10 || v*10 > 1<<64-1-d {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}
