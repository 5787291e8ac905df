//go:build linux

package memlist

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Dir reads a memory directory a bounded number of entries at a
// time, resuming where an earlier process stopped: on Linux, getdents64
// gives each entry the offset (d_off) of the entry after it, and lseek to
// that offset on a fresh descriptor continues from there. The offset is
// the filesystem's directory cookie (a hash on ext4, an index on btrfs
// and XFS, a stable id on tmpfs since 6.6), valid for as long as the
// directory exists; the names a resumed read returns are those a single
// read would have returned while no entry is added, removed or renamed
// (sweep.go says what happens when one is).
type Dir struct {
	fd    int
	size  int64 // the directory's st_size at its fingerprint (FP)
	buf   []byte
	moved bool // the descriptor was read or sought since it was opened
	// fps holds the fingerprints of the files listed (file), each File's
	// FP a substring of it: one buffer for a listing's fingerprints, not
	// an allocation each (a Builder never changes what it has written).
	fps strings.Builder
}

// dirBuf is the getdents buffer, reused for every read of a listing:
// about 700 entries of memory-file names. The kernel fills what it
// returns, and every page it fills is a fresh page of the process's (a
// fault): a quiet turn over 401 files touches four pages of it, two more
// than an 8 KiB buffer would, for one getdents where that takes three —
// and one batch of records to share between two goroutines
// (sumRecords), where that would take three, each with its wake-up of
// a second thread.
const dirBuf = 32 << 10

func OpenDir(dir string) (*Dir, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	return &Dir{fd: fd}, nil
}

func (d *Dir) Close() error { return unix.Close(d.fd) }

// fp is the directory's own fingerprint: inode, modification and change
// times. Adding, removing or renaming an entry sets both times (POSIX
// link, unlink and rename); only the change time cannot be set back.
func (d *Dir) FP() (string, error) {
	var st unix.Stat_t
	if err := unix.Fstat(d.fd, &st); err != nil {
		return "", err
	}
	d.size = st.Size
	var buf [64]byte
	b := strconv.AppendUint(buf[:0], st.Ino, 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, st.Mtim.Nano(), 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, st.Ctim.Nano(), 10)
	return string(b), nil
}

// Dirent is one directory entry: its name, its type (fs.ModeType bits,
// or ModeUnknown), and the cookie that resumes a read after it.
type Dirent struct {
	Name string
	Type fs.FileMode
	Next int64
}

// ModeUnknown marks an entry whose type the filesystem did not give.
const ModeUnknown = fs.ModeIrregular

// Read returns up to max entries from cookie on (0: the start), the
// cookie after the last one returned, and whether the directory's end was
// reached. "." and ".." are not returned but count.
func (d *Dir) Read(cookie int64, max int) (ents []Dirent, next int64, eof bool, err error) {
	next, eof, err = d.scan(cookie, max, func(name []byte, typ fs.FileMode, off int64) {
		ents = append(ents, Dirent{Name: string(name), Type: typ, Next: off})
	})
	return ents, next, eof, err
}

// scan calls each with every entry from cookie on, up to max entries
// ("." and ".." are not given but count), in one buffer reused for every
// getdents: name is valid only during the call, and a NUL follows it in
// the buffer (so that it can be passed to the kernel as it is). It
// returns the cookie after the last entry given and whether the
// directory's end was reached.
func (d *Dir) scan(cookie int64, max int, each func(name []byte, typ fs.FileMode, next int64)) (next int64, eof bool, err error) {
	return d.batches(cookie, max, func(recs []byte, _ int) {
		for len(recs) > 0 {
			name, typ, off, n := record(recs)
			recs = recs[n:]
			if !dots(name) {
				each(name, direntType(typ), off)
			}
		}
	})
}

// batches is scan by the buffer: batch is given each run of records
// (getdents64's linux_dirent64, checked well formed) that scan would give
// one by one, and how many of them are not "." or "..", before the buffer
// is read into again.
func (d *Dir) batches(cookie int64, max int, batch func(recs []byte, n int)) (next int64, eof bool, err error) {
	// A descriptor just opened reads from the start without a seek.
	if cookie != 0 || d.moved {
		if _, err := unix.Seek(d.fd, cookie, 0); err != nil {
			return cookie, false, fmt.Errorf("seek directory: %w", err)
		}
	}
	d.moved = true
	if d.buf == nil {
		d.buf = make([]byte, dirBuf)
	}
	next = cookie
	for n := 0; n < max; {
		m, err := unix.Getdents(d.fd, d.buf)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return next, false, fmt.Errorf("read directory: %w", err)
		}
		if m == 0 {
			return next, true, nil
		}
		// The records up to end are well formed and within max; named
		// counts those that are not dots.
		b, end, named := d.buf[:m], 0, 0
		for len(b)-end >= 19 && n < max {
			rec := b[end:]
			reclen := int(binary.NativeEndian.Uint16(rec[16:18]))
			if reclen < 19 || reclen > len(rec) || bytes.IndexByte(rec[19:reclen], 0) < 0 {
				// The kernel always ends a name with a NUL within its
				// record; one that does not is no entry to trust.
				batch(b[:end], named)
				return next, false, errors.New("read directory: malformed entry")
			}
			name, _, off, _ := record(rec)
			if !dots(name) {
				named++
			}
			end += reclen
			next = off
			n++
		}
		batch(b[:end], named)
		if n >= max {
			// What getdents returned beyond this entry is read again
			// from its cookie next time.
			return next, false, nil
		}
	}
	return next, false, nil
}

// record is the first of recs, well formed (batches checked it): its name
// (a NUL follows it), type, the cookie after it and its length.
func record(recs []byte) (name []byte, typ uint8, next int64, n int) {
	n = int(binary.NativeEndian.Uint16(recs[16:18]))
	name = recs[19:n]
	return name[:bytes.IndexByte(name, 0)], recs[18], int64(binary.NativeEndian.Uint64(recs[8:16])), n
}

// sumScan is scan summing the memory files it meets as Sum does (part):
// the records of each getdents are stat'ed by two goroutines at once when
// there are enough of them (sumRecords). The second (a helper) is started
// before the directory is read when the directory's size says it holds
// many entries (ParallelBytes): waking a second thread takes hundreds of
// microseconds on a virtual machine, about as long as reading the
// directory, so the helper is running by the time the entries are there.
// When the size does not say so but a batch of ParallelMin entries comes,
// it is started then, late.
func (d *Dir) sumScan(cookie int64, max int) (next int64, eof bool, p part, err error) {
	var h *helper
	procs := runtime.GOMAXPROCS(0)
	if d.size >= ParallelBytes && procs > 1 {
		h = &helper{d: d}
		go h.run()
	}
	next, eof, err = d.batches(cookie, max, func(recs []byte, n int) {
		p.met += n
		if h == nil && n >= ParallelMin && procs > 1 {
			// More entries than the directory's size said (a
			// filesystem whose st_size counts otherwise): the helper,
			// late.
			h = &helper{d: d}
			go h.run()
		}
		q := d.sumRecords(recs, n, h)
		p.sum.sum += q.sum.sum
		p.sum.n += q.sum.n
		p.index = p.index || q.index
	})
	if h != nil {
		h.closed.Store(true)
	}
	return next, eof, p, err
}

// chunkRecs is how many records a goroutine claims at a time: a few tens
// of microseconds of stats, so that neither waits long for the other's
// last chunk.
const chunkRecs = 8

// helper is the second goroutine of a sum (sumScan): it takes its part of
// each batch published to it, until the sum is done (closed).
type helper struct {
	d      *Dir
	batch  atomic.Pointer[shared]
	closed atomic.Bool
}

// shared is a batch of records two goroutines sum: each claims the next
// chunkRecs records from cur; the helper counts the chunks it is summing
// (inflight) and adds each chunk's part to sum, n and index before it
// counts it done, so that once cur is exhausted and inflight is zero
// every record is in one of the two parts.
type shared struct {
	recs     []byte
	count    int // records in recs, dots included
	cur      atomic.Int64
	inflight atomic.Int32
	sum, n   atomic.Uint64
	index    atomic.Bool
}

// helperSpins bounds the yields of a helper that waits for a batch:
// a few milliseconds, about the longest a directory of a few thousand
// entries takes to read; a helper still waiting then leaves the sum to
// the goroutine that reads.
const helperSpins = 4000

// run waits for each batch, yielding rather than sleeping (a thread that
// slept would take as long to wake as the batch takes to sum), and takes
// its part of it.
func (h *helper) run() {
	var last *shared
	for spins := 0; !h.closed.Load(); {
		b := h.batch.Load()
		if b == nil || b == last {
			if spins++; spins > helperSpins {
				return
			}
			yield()
			continue
		}
		last, spins = b, 0
		h.d.sumClaimed(b.recs, b.count, &b.cur, b)
	}
}

// yield lets another goroutine, then another thread of the machine, run
// on this one's processor: a goroutine that waits on the other by
// spinning must not keep it from running when the two share a processor.
func yield() {
	runtime.Gosched()
	unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
}

// sumRecords sums the memory files among recs (n records besides the
// dots). The terms add in any order (fpSum), so the records can be shared
// with the helper h (nil: none): each goroutine claims the next chunkRecs
// records by an atomic cursor, walks the buffer (read only while both
// read it) to them and sums them on its own; the two parts add up to the
// sequential sum. The buffer is not read into again before the helper's
// last chunk is done.
func (d *Dir) sumRecords(recs []byte, n int, h *helper) part {
	count := 0
	for pos := 0; pos < len(recs); count++ {
		pos += int(binary.NativeEndian.Uint16(recs[pos+16 : pos+18]))
	}
	if h == nil || n < ParallelMin {
		var cur atomic.Int64
		return d.sumClaimed(recs, count, &cur, nil)
	}
	b := &shared{recs: recs, count: count}
	h.batch.Store(b)
	p := d.sumClaimed(recs, count, &b.cur, nil)
	// The helper's chunk under way, if it has one: a few stats.
	for b.inflight.Load() != 0 {
		yield()
	}
	p.sum.sum += b.sum.Load()
	p.sum.n += b.n.Load()
	p.index = p.index || b.index.Load()
	return p
}

// sumClaimed sums the records of recs (count of them) it claims from cur,
// chunkRecs at a time, until none are left: into its result, or, for the
// helper (into non-nil), into the batch chunk by chunk. A claim past the
// last record reads nothing of recs: the helper's last claim may come
// after the buffer was read into again.
func (d *Dir) sumClaimed(recs []byte, count int, cur *atomic.Int64, into *shared) part {
	var p part
	pos, i := 0, 0 // the record at byte pos is the i-th
	for {
		if into != nil {
			into.inflight.Add(1)
		}
		start := int(cur.Add(chunkRecs)) - chunkRecs
		if start >= count {
			if into != nil {
				into.inflight.Add(-1)
			}
			return p
		}
		for ; i < start; i++ {
			pos += int(binary.NativeEndian.Uint16(recs[pos+16 : pos+18]))
		}
		var c part
		for ; i < start+chunkRecs && i < count; i++ {
			name, typ, _, n := record(recs[pos:])
			pos += n
			if dots(name) || !memoryName(name) {
				continue
			}
			c.index = c.index || string(name) == Index
			c.sum.addTerm(d.entryTerm(name, direntType(typ)))
		}
		if into == nil {
			p.sum.sum += c.sum.sum
			p.sum.n += c.sum.n
			p.index = p.index || c.index
			continue
		}
		into.sum.Add(c.sum.sum)
		into.n.Add(c.sum.n)
		if c.index {
			into.index.Store(true)
		}
		into.inflight.Add(-1)
	}
}

// dots reports whether name is "." or "..".
func dots(name []byte) bool {
	return len(name) > 0 && len(name) <= 2 && name[0] == '.' && (len(name) == 1 || name[1] == '.')
}

func direntType(t uint8) fs.FileMode {
	switch t {
	case unix.DT_REG:
		return 0
	case unix.DT_LNK:
		return fs.ModeSymlink
	case unix.DT_DIR:
		return fs.ModeDir
	case unix.DT_FIFO:
		return fs.ModeNamedPipe
	case unix.DT_SOCK:
		return fs.ModeSocket
	case unix.DT_CHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.DT_BLK:
		return fs.ModeDevice
	}
	return ModeUnknown
}

// Stat is the lstat of name (relative to the directory, slash
// separated), or its stat to follow a link.
func (d *Dir) Stat(name string, follow bool) (fs.FileInfo, error) {
	var st unix.Stat_t
	if err := d.stat(name, follow, &st); err != nil {
		return nil, err
	}
	return statInfo{name: name, st: st}, nil
}

func (d *Dir) stat(name string, follow bool, st *unix.Stat_t) error {
	for {
		err := unix.Fstatat(d.fd, name, st, statFlags(follow))
		if err == nil {
			return nil
		}
		if !errors.Is(err, unix.EINTR) {
			return &fs.PathError{Op: "stat", Path: name, Err: err}
		}
	}
}

func statFlags(follow bool) int {
	if follow {
		return 0
	}
	return unix.AT_SYMLINK_NOFOLLOW
}

// look stats the directory entry name (as scan gives it: a NUL follows
// it) of type typ as FileOf over Stat would — its lstat, its stat when it
// is a link, its type from an lstat when the directory did not give it —
// without an fs.FileInfo or a copy of the name (whose every value would
// be an allocation: a quiet turn looks at every memory file).
func (d *Dir) look(name []byte, typ fs.FileMode) facts {
	var st unix.Stat_t
	if skip, ok := d.lookStat(name, typ, &st); !ok {
		return facts{skip: skip}
	}
	return facts{ok: true, size: st.Size, mod: time.Unix(st.Mtim.Unix()), ino: st.Ino, mode: ModeOf(st.Mode)}
}

// lookStat is look's stat into st, or why the entry is skipped without
// one (ok false).
func (d *Dir) lookStat(name []byte, typ fs.FileMode, st *unix.Stat_t) (skip string, ok bool) {
	if typ == ModeUnknown {
		if err := d.statz(name, false, st); err != nil {
			return "cannot be read: " + err.Error(), false
		}
		typ = ModeOf(st.Mode).Type()
	}
	if !typ.IsRegular() && typ&fs.ModeSymlink == 0 {
		return "not a regular file", false
	}
	if err := d.statz(name, typ&fs.ModeSymlink != 0, st); err != nil {
		return "cannot be read: " + err.Error(), false
	}
	return "", true
}

// entryTerm is the term in a listing's sum (fpSum) of the directory
// entry name of type typ: what a File of it (fileOf, over look) would
// add. It runs on a goroutine of its own when the stats are shared
// (sumRecords), whose stack begins at two kilobytes: its frame holds the
// stat and the fingerprint's bytes, and nothing more.
func (d *Dir) entryTerm(name []byte, typ fs.FileMode) uint64 {
	var st unix.Stat_t
	if skip, ok := d.lookStat(name, typ, &st); !ok {
		return term(name, "", skip)
	}
	return statTerm(name, &st)
}

// statTerm is the term of the entry name whose stat (its lstat, or its
// stat when it is a link) is st.
func statTerm(name []byte, st *unix.Stat_t) uint64 {
	var buf [64]byte
	size, mode := st.Size, ModeOf(st.Mode)
	return term(name, appendFingerprint(buf[:0], size, time.Unix(st.Mtim.Unix()), st.Ino, mode), skipOf(size, mode))
}

// statz is fstatat of name relative to the directory: name[:len(name)+1]
// is name and its NUL.
func (d *Dir) statz(name []byte, follow bool, st *unix.Stat_t) error {
	z := name[:len(name)+1]
	if z[len(name)] != 0 {
		return unix.EINVAL
	}
	for {
		err := fstatatz(d.fd, z, st, statFlags(follow))
		if err != unix.EINTR {
			return err
		}
	}
}

// file fingerprints the directory entry name of type typ (look), as
// FileOf over Stat would.
func (d *Dir) file(name string, typ fs.FileMode) File {
	z := append([]byte(name), 0)
	return d.fileOf(z[:len(name)], name, typ)
}

// fileOf is the File of the entry name (look's) named s, its fingerprint
// a substring of d.fps: one buffer for a listing's fingerprints, not an
// allocation each.
func (d *Dir) fileOf(name []byte, s string, typ fs.FileMode) File {
	f := d.look(name, typ)
	if !f.ok {
		return File{Name: s, Skip: f.skip}
	}
	var buf [64]byte
	start := d.fps.Len()
	d.fps.Write(f.fingerprint(buf[:0]))
	return fileFrom(s, d.fps.String()[start:], f.size, f.mod, f.mode)
}

// statInfo is an fs.FileInfo over a unix.Stat_t, with the mode as package
// os reports it, so that fingerprints taken either way are equal.
type statInfo struct {
	name string
	st   unix.Stat_t
}

func (s statInfo) Name() string       { return s.name }
func (s statInfo) Size() int64        { return s.st.Size }
func (s statInfo) ModTime() time.Time { return time.Unix(s.st.Mtim.Unix()) }
func (s statInfo) IsDir() bool        { return s.Mode().IsDir() }
func (s statInfo) Sys() any           { return s.st.Ino }
func (s statInfo) Mode() fs.FileMode  { return ModeOf(s.st.Mode) }

// ModeOf is a stat's st_mode as package os reports it (os.Lstat's
// FileInfo.Mode), for a stat taken by a system call without an
// os.FileInfo: here and in package catalog's walk.
func ModeOf(mode uint32) fs.FileMode {
	m := fs.FileMode(mode & 0o777)
	switch mode & unix.S_IFMT {
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	}
	if mode&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if mode&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if mode&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}
