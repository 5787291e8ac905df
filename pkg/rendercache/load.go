package rendercache

import (
	"bytes"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The render cache file is plain text with NUL-delimited fact records, so
// that reading it needs neither reflection nor unquoting (a session start
// has a few milliseconds in all; no path or recorded value contains a
// NUL, and a file that does is simply not trusted):
//
//	intermem-render 5
//	key <Key.append: the strings quoted, then resume, budget, threshold>
//	until <unix nanoseconds, 0 for none>
//	sessions <quoted SessionRule.Skipped> <quoted SessionRule.Chosen>
//	deps <n>
//	<n records, no separators between>
//	                                     (an empty line)
//	text <byte length>
//	<the rendering>
//
// A record is one of
//
//	g<dir>NUL               the directory of the stats and lstats that follow
//	s<name>NUL<value>NUL    a stat of dir/name (l: an lstat)
//	s<path>NUL<value>NUL    a stat of an absolute path (l: an lstat)
//	d<path>NUL<value>NUL    a listing (D: names in any order, r: a symlink
//	                        resolution, h: a git file's first KiB)
//
// where a dir and a path are absolute and clean, a name is one element of
// a path (not "." nor ".."), and no record is longer than recordMax. Each
// fact is recorded once; their order does not matter (all must hold).
const renderMagic = "intermem-render 5"

// MaxBytes bounds the cache file.
const MaxBytes = 4 << 20

// maxRecords bounds the records of a cache file.
const maxRecords = 200000

// bufBytes is the size of Load's one buffer, and recordMax the longest
// record (or line) it holds: a longer record is never written, and is
// refused when read.
const (
	bufBytes  = 8 << 10
	recordMax = bufBytes - 1
)

// groupMin is the fewest stats of one directory that Encode groups.
// Opening and closing the directory are two system calls more; a stat
// from its descriptor saves the walk of the directory's path (a stat of
// a cited file at 20,000 entries: 11 µs by absolute path, 8.4 µs from the
// directory, opening and closing it 15 µs, at load 10), so a group pays
// from about six stats. At 19,905 entries this leaves 23 of 38
// directories grouped, and a hit makes about 30 system calls fewer.
const groupMin = 6

// Encode is the cache file for text rendered under key k, valid until
// until (zero: no time limit) for the sessions rule holds for, while the
// facts d recorded hold; nil when it must not be written (a recorded path
// holds a secret, or a NUL, or is not absolute and clean, or a record
// would be longer than Load reads).
func Encode(k Key, until time.Time, rule SessionRule, d *Deps, text string) []byte {
	if d.secret {
		return nil // no cache rather than a secret in it
	}
	u := int64(0)
	if !until.IsZero() {
		u = until.UnixNano()
	}
	// The stats and lstats by directory, in the order their directories
	// were first met; every other fact as it is.
	var other []dep
	var dirs []string
	byDir := map[string][]dep{}
	for _, x := range d.list {
		if strings.IndexByte(x.Path, 0) >= 0 || strings.IndexByte(x.Val, 0) >= 0 ||
			!clean(x.Path) || len(x.Path)+len(x.Val)+3 > recordMax {
			return nil // cannot be recorded: no cache rather than a wrong one
		}
		if (x.Kind == 's' || x.Kind == 'l') && x.Path != "/" {
			dir := filepath.Dir(x.Path)
			if _, ok := byDir[dir]; !ok {
				dirs = append(dirs, dir)
			}
			byDir[dir] = append(byDir[dir], x)
			continue
		}
		other = append(other, x)
	}
	b := make([]byte, 0, 64*len(d.list)+len(text)+512)
	b = append(b, renderMagic+"\nkey "...)
	b = k.append(b)
	if len(b) > recordMax {
		return nil // a key line longer than Load reads
	}
	b = append(b, "\nuntil "...)
	b = strconv.AppendInt(b, u, 10)
	b = append(b, "\nsessions "...)
	b = strconv.AppendQuote(b, rule.Skipped)
	b = append(b, ' ')
	b = strconv.AppendQuote(b, rule.Chosen)
	b = append(b, "\ndeps "...)
	// A directory of few stats is not worth opening: its stats are
	// recorded by absolute path.
	groups := dirs[:0]
	for _, dir := range dirs {
		if len(byDir[dir]) >= groupMin {
			groups = append(groups, dir)
		} else {
			other = append(other, byDir[dir]...)
		}
	}
	b = strconv.AppendInt(b, int64(len(groups)+len(d.list)), 10)
	b = append(b, '\n')
	for _, x := range other {
		b = appendRecord(b, x.Kind, x.Path, x.Val)
	}
	for _, dir := range groups {
		b = append(b, 'g')
		b = append(b, dir...)
		b = append(b, 0)
		for _, x := range byDir[dir] {
			name := x.Path[len(dir)+1:]
			if dir == "/" {
				name = x.Path[1:]
			}
			b = appendRecord(b, x.Kind, name, x.Val)
		}
	}
	b = append(b, "\ntext "...)
	b = strconv.AppendInt(b, int64(len(text)), 10)
	b = append(b, '\n')
	return append(b, text...)
}

func appendRecord(b []byte, kind byte, path, val string) []byte {
	b = append(b, kind)
	b = append(b, path...)
	b = append(b, 0)
	b = append(b, val...)
	return append(b, 0)
}

// clean reports whether p is an absolute, clean path: what
// filepath.Clean leaves as it is, starting at "/".
func clean[T string | []byte](p T) bool {
	if len(p) == 0 || p[0] != '/' {
		return false
	}
	if len(p) == 1 {
		return true
	}
	if p[len(p)-1] == '/' {
		return false
	}
	// Each element after a "/" is not empty, ".", nor "..".
	for i := 0; i < len(p); {
		j := i + 1
		for j < len(p) && p[j] != '/' {
			j++
		}
		elem := p[i+1 : j]
		if len(elem) == 0 || (len(elem) == 1 && elem[0] == '.') || (len(elem) == 2 && elem[0] == '.' && elem[1] == '.') {
			return false
		}
		i = j
	}
	return true
}

// isName reports whether b is one element of a path.
func isName(b []byte) bool {
	return len(b) > 0 && bytes.IndexByte(b, '/') < 0 && !(len(b) == 1 && b[0] == '.') && !(len(b) == 2 && b[0] == '.' && b[1] == '.')
}

// Load returns the cached rendering when it is still exactly what a fresh
// one would be for the start of session with key k. The file is hostile
// input like everything in the state directory: opened without following
// a link and without blocking (a FIFO put there must not hang a session
// start), read only when it is a regular file of at most MaxBytes, and
// decoded strictly, each fact checked as it is decoded (see the package
// doc).
func Load(path string, k Key, session string, now time.Time) (string, bool) {
	if k.Exe == "" {
		return "", false
	}
	fd, size, ok := openRegular(path)
	if !ok {
		return "", false
	}
	defer syscall.Close(fd)
	rd := &reader{fd: fd, buf: heapBytes(bufBytes), left: size, dir: -1}
	defer rd.closeDir()
	if !rd.header(&k, session, now) {
		return "", false
	}
	return rd.body()
}

// openRegular opens the cache file without following a link or
// blocking, when it is a regular file of at most MaxBytes: its descriptor
// and size. (Its own frame: the stat is not held on the stack while the
// facts are checked.)
//
//go:noinline
func openRegular(path string) (int, int64, bool) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return -1, 0, false
	}
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Size > MaxBytes {
		syscall.Close(fd)
		return -1, 0, false
	}
	return fd, st.Size, true
}

// heapBytes allocates n bytes on the heap. A buffer of constant size that
// does not escape would go on the stack, and a goroutine's stack, which
// starts at 2 KiB, would grow by copying into new pages to hold it: twice
// the pages a heap buffer touches.
//
//go:noinline
func heapBytes(n int) []byte { return make([]byte, n) }

// reader streams the cache file through one buffer: buf[r:w] is read and
// not yet decoded, left is what the file holds past it.
type reader struct {
	fd, r, w int
	buf      []byte
	left     int64
	// dir is the current group's directory, opened O_PATH (-1: none, or
	// it could not be opened: then its path is dirPath).
	dir     int
	dirPath string
	inGroup bool
	// n is the count of records, from the header.
	n int64
}

// field returns the bytes up to the next sep and consumes the sep. The
// bytes are in buf: valid until the next call, and followed there by sep
// (a NUL-terminated name can be handed to the kernel as it is).
func (rd *reader) field(sep byte) ([]byte, bool) {
	for {
		if i := bytes.IndexByte(rd.buf[rd.r:rd.w], sep); i >= 0 {
			f := rd.buf[rd.r : rd.r+i]
			rd.r += i + 1
			return f, true
		}
		if !rd.fill() {
			return nil, false
		}
	}
}

// fill reads more of the file into buf, moving what is not decoded yet to
// its start; false at the end of the file, on an error, or when buf holds
// a whole record-sized field with no separator.
func (rd *reader) fill() bool {
	if rd.left <= 0 {
		return false
	}
	if rd.r > 0 {
		rd.w = copy(rd.buf, rd.buf[rd.r:rd.w])
		rd.r = 0
	}
	if rd.w == len(rd.buf) {
		return false
	}
	n, err := syscall.Read(rd.fd, rd.buf[rd.w:min(int64(len(rd.buf)), int64(rd.w)+rd.left)])
	if err != nil || n <= 0 {
		return false
	}
	rd.w += n
	rd.left -= int64(n)
	return true
}

// line returns the next line if it starts with prefix, without it.
func (rd *reader) line(prefix string) ([]byte, bool) {
	l, ok := rd.field('\n')
	if !ok || len(l) < len(prefix) || string(l[:len(prefix)]) != prefix {
		return nil, false
	}
	return l[len(prefix):], true
}

// header reads the lines before the facts and reports whether they
// hold for k, session and now; rd.n is then the count of records.
//
//go:noinline
func (rd *reader) header(k *Key, session string, now time.Time) bool {
	if l, ok := rd.line(renderMagic); !ok || len(l) != 0 {
		return false
	}
	if l, ok := rd.line("key "); !ok || !bytes.Equal(l, k.append(make([]byte, 0, 256))) {
		return false
	}
	l, ok := rd.line("until ")
	if !ok {
		return false
	}
	until, ok := number(l)
	if !ok || (until != 0 && now.UnixNano() >= until) {
		return false
	}
	if l, ok = rd.line("sessions "); !ok || !sessionsHold(string(l), session) {
		return false
	}
	if l, ok = rd.line("deps "); !ok {
		return false
	}
	rd.n, ok = number(l)
	return ok && rd.n <= maxRecords
}

// body checks the records and returns the rendering after them. What it
// calls has small frames (header's, openRegular's and each kind's are
// their own), so that the deepest check stays within the 4 KiB a
// goroutine's stack grows to first: a growth to 8 KiB costs a hit about
// six page faults.
func (rd *reader) body() (string, bool) {
	for range rd.n {
		if !rd.record() {
			return "", false
		}
	}
	rd.closeDir()
	if l, ok := rd.line(""); !ok || len(l) != 0 {
		return "", false
	}
	l, ok := rd.line("text ")
	if !ok {
		return "", false
	}
	size, ok := number(l)
	if !ok || size != int64(rd.w-rd.r)+rd.left {
		return "", false
	}
	return rd.rest(size)
}

// rest reads the size bytes left, the rendering, into their own
// allocation, which the string returned shares (nothing else holds it).
func (rd *reader) rest(size int64) (string, bool) {
	if size == 0 {
		return "", true
	}
	text := make([]byte, size)
	got := copy(text, rd.buf[rd.r:rd.w])
	for got < len(text) {
		n, err := syscall.Read(rd.fd, text[got:])
		if err != nil || n <= 0 {
			return "", false
		}
		got += n
	}
	return unsafe.String(&text[0], len(text)), true
}

// number parses a non-negative decimal int64 (no sign, no leading zero
// but "0").
func number(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 19 || (b[0] == '0' && len(b) > 1) {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	if n > math.MaxInt64 {
		return 0, false
	}
	return int64(n), true
}

// sessionsHold decodes the sessions line (two quoted strings) and
// reports whether its rule holds for session.
func sessionsHold(l, session string) bool {
	q1, err := strconv.QuotedPrefix(l)
	if err != nil || len(l) < len(q1)+1 || l[len(q1)] != ' ' {
		return false
	}
	q2 := l[len(q1)+1:]
	var r SessionRule
	if r.Skipped, err = strconv.Unquote(q1); err != nil {
		return false
	}
	if r.Chosen, err = strconv.Unquote(q2); err != nil {
		return false
	}
	return r.Holds(session)
}

// record decodes one record and reports whether it is well formed and
// its fact still holds. Each kind is checked in a function of its own,
// so that none holds another's locals on the stack.
func (rd *reader) record() bool {
	if rd.r == rd.w && !rd.fill() {
		return false
	}
	kind := rd.buf[rd.r]
	rd.r++
	switch kind {
	case 'g':
		return rd.group()
	case 's', 'l':
		return rd.stat(kind)
	case 'r':
		return rd.resolution()
	case 'd', 'D', 'h':
		return rd.content(kind)
	}
	return false
}

// group opens the directory of the stats that follow.
//
//go:noinline
func (rd *reader) group() bool {
	dir, ok := rd.field(0)
	if !ok || !clean(dir) {
		return false
	}
	rd.closeDir()
	rd.inGroup = true
	if fd, err := openPath(dir, true); err == nil {
		rd.dir = fd
	} else {
		// What cannot be opened (a missing directory, a file, a
		// directory that cannot be searched, no descriptor left) is
		// checked by its paths, as recorded.
		rd.dirPath = string(dir)
	}
	return true
}

// stat checks a stat (kind 's') or lstat ('l') of a name in the group's
// directory or of an absolute path.
//
//go:noinline
func (rd *reader) stat(kind byte) bool {
	name, ok := rd.field(0)
	if !ok {
		return false
	}
	flags := 0
	if kind == 'l' {
		flags = unix.AT_SYMLINK_NOFOLLOW
	}
	var st syscall.Stat_t
	var err error
	switch {
	case len(name) > 0 && name[0] == '/':
		if !clean(name) {
			return false
		}
		err = fstatat(unix.AT_FDCWD, name, &st, flags)
	case !rd.inGroup || !isName(name):
		return false
	case rd.dir >= 0:
		err = fstatat(rd.dir, name, &st, flags)
	default:
		p := []byte(rd.dirPath + "/" + string(name) + "\x00")
		if rd.dirPath == "/" {
			p = p[1:]
		}
		err = fstatat(unix.AT_FDCWD, p[:len(p)-1], &st, flags)
	}
	val, ok := rd.field(0)
	if !ok {
		return false
	}
	if err != nil {
		return string(val) == "!"
	}
	var buf [64]byte
	return bytes.Equal(statVal(buf[:0], &st), val)
}

// resolution checks a symlink resolution: confirmed by the kernel's name
// of the path (resolvedTo), else by filepath.EvalSymlinks.
//
//go:noinline
func (rd *reader) resolution() bool {
	p, ok := rd.field(0)
	if !ok || !clean(p) {
		return false
	}
	fd, err := openPath(p, false)
	path := string(p)
	val, ok := rd.field(0)
	if !ok {
		if err == nil {
			syscall.Close(fd)
		}
		return false
	}
	if err == nil {
		same := resolvedTo(fd, val)
		syscall.Close(fd)
		if same {
			return true
		}
	}
	return string(val) == holdsNow('r', path)
}

// content checks a listing ('d'), a directory's names ('D') or a git
// file's first KiB ('h').
//
//go:noinline
func (rd *reader) content(kind byte) bool {
	p, ok := rd.field(0)
	if !ok || !clean(p) {
		return false
	}
	now := holdsNow(kind, string(p))
	val, ok := rd.field(0)
	return ok && string(val) == now
}

// holdsNow is what the fact of kind says of path now, as recorded.
func holdsNow(kind byte, path string) string {
	switch kind {
	case 'd':
		return listing(path)
	case 'D':
		return namesVal(path)
	case 'r':
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			return "!"
		}
		return real
	default: // 'h'
		b, err := readHead(path, heapBytes(headBytes))
		if err != nil {
			return "!"
		}
		return string(b)
	}
}

func (rd *reader) closeDir() {
	if rd.dir >= 0 {
		syscall.Close(rd.dir)
	}
	rd.dir, rd.dirPath, rd.inGroup = -1, "", false
}
