// Package turns is the Stop hook's turn counter: per session, how many
// turns it had, the turn of its last checkpoint, when it was last seen and
// whether its end was recorded (package continuity takes a checkpoint
// every settings.Interval turns). It is the one definition of the count
// and of "this turn is a checkpoint turn", used by the full Stop hook
// (continuity.Checkpoint) and by the hook front (package hookfront), which
// counts a quiet turn without starting the full hook.
//
// The file (.intermem/turns) is an append-only tally, so that counting a
// turn is one small append, not a rewrite of the file:
//
//	intermem turns v2
//	<session> TAB <turns> TAB <last> TAB <seen, unix seconds> TAB <ended: 0|1>
//	…
//
// A session's last line is its record. A writer appends one line per
// turn (O_APPEND: concurrent sessions' lines never interleave); once the
// file is over CompactBytes, the full hook rewrites it compacted (Encode,
// the MaxSessions sessions most recently seen) at its next turn (a
// checkpoint turn at least every settings.Interval turns), and a front
// that finds it over MaxBytes leaves the turn to the full hook. A last
// line without its newline (an append cut short) is ignored.
//
// The file is hostile input like every file in the state directory:
// opened with O_NOFOLLOW|O_NONBLOCK, used only when it is a regular file of
// at most MaxRead bytes; any line it does not expect makes the whole file
// unusable (the counts restart, which only shifts the next checkpoint).
// Appends go only to a regular file of the user's, never through a link.
package turns

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strconv"
	"syscall"

	"github.com/intermem/intermem/pkg/statefile"
)

// Name is the turn-count file in the state directory.
const Name = "turns"

// MaxSessions bounds the sessions a compacted file remembers.
const MaxSessions = 64

// CompactBytes is the size past which the full hook rewrites the file
// compacted (Read reports it not usable as it is): about 70 counted turns
// of one session, or the lines of about 64 sessions. The hook front reads
// the whole tally at every quiet turn, so it is kept small.
const CompactBytes = 4 << 10

// MaxBytes is the size past which the hook front leaves a turn to the full
// hook (Lookup reports the file not usable): about 350 counted turns, the
// slack between a full hook's turns that the front counts on its own.
const MaxBytes = 16 << 10

// MaxRead bounds what is read of the file: a file grown beyond it (by
// appends no full hook compacted) is unusable.
const MaxRead = 1 << 20

const magic = "intermem turns v2\n"

// Turn is what the file keeps of a session.
type Turn struct {
	Turns int   // turns counted
	Last  int   // the turn of the last checkpoint recorded
	Seen  int64 // unix seconds of the last Stop
	Ended bool  // the final checkpoint was recorded
}

// Stop is t after a counted Stop turn, and whether that turn is a
// checkpoint turn for interval (> 0): Interval turns since the last one.
func Stop(t Turn, interval int) (Turn, bool) {
	t.Turns++
	return t, t.Turns-t.Last >= interval
}

// Read reads the file at path: each session's record, the file's size,
// and whether the file is usable as it is (missing, or a tally of at most
// CompactBytes); a file that is no tally is an empty one, for the full
// hook to rewrite, and a tally past CompactBytes is returned for the full
// hook to rewrite compacted.
func Read(path string) (m map[string]Turn, size int64, ok bool) {
	b, missing, ok := read(path)
	if missing {
		return map[string]Turn{}, 0, true
	}
	if !ok {
		return map[string]Turn{}, 0, false
	}
	m, ok = Decode(b)
	if !ok {
		return map[string]Turn{}, int64(len(b)), false
	}
	return m, int64(len(b)), len(b) <= CompactBytes
}

// Lookup reads the file at path for one session: its record (the zero
// Turn when the file has none) and whether the file is usable as it is:
// missing, or a tally of at most MaxBytes, every line of it checked as
// Decode checks it (a file that is no tally to Read is none here either). It keeps
// nothing but the session's last line: no map, no allocation per line
// (the hook front counts a quiet turn with it).
func Lookup(path, session string) (Turn, bool) {
	b, missing, ok := read(path)
	if missing {
		return Turn{}, true
	}
	if !ok || len(b) > MaxBytes {
		return Turn{}, false
	}
	return Find(b, session)
}

// read reads the file as hostile input (package statefile): its content,
// whether it is missing, and whether it could be read at all.
func read(path string) (b []byte, missing, ok bool) {
	b, err := statefile.Read(path, MaxRead)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, true, true
	}
	return b, false, err == nil
}

// Decode parses a tally strictly; a last line without its newline is
// ignored.
func Decode(b []byte) (map[string]Turn, bool) {
	m := map[string]Turn{}
	ok := scan(b, func(session []byte, t Turn) { m[string(session)] = t })
	if !ok {
		return nil, false
	}
	return m, true
}

// Find is session's record in a tally (the zero Turn when it has none),
// with Decode's strictness: false when any line of b is not a record.
func Find(b []byte, session string) (Turn, bool) {
	var found Turn
	ok := scan(b, func(s []byte, t Turn) {
		if string(s) == session {
			found = t
		}
	})
	if !ok {
		return Turn{}, false
	}
	return found, true
}

// scan calls each with every record of the tally b in order (a later line
// of a session replaces an earlier one) and reports whether b is a tally
// whose every line is a record; on false the caller discards what it was
// given. A last line without its newline (an append cut short) is
// ignored.
func scan(b []byte, each func(session []byte, t Turn)) bool {
	rest, ok := bytes.CutPrefix(b, []byte(magic))
	if !ok {
		return false
	}
	for len(rest) > 0 {
		line, after, found := bytes.Cut(rest, []byte("\n"))
		if !found {
			break
		}
		rest = after
		s, t, ok := parseLine(line)
		if !ok {
			return false
		}
		each(s, t)
	}
	return true
}

// parseLine parses one record, its newline cut: five tab-separated fields,
// a non-empty session, two counts (non-negative), a time in unix seconds
// and 0 or 1. It allocates nothing: a number's field is at most a few
// dozen bytes, converted on the stack.
func parseLine(line []byte) (session []byte, t Turn, ok bool) {
	var f [5][]byte
	for i := range f {
		if i == len(f)-1 {
			if bytes.IndexByte(line, '\t') >= 0 {
				return nil, Turn{}, false
			}
			f[i] = line
			break
		}
		field, after, found := bytes.Cut(line, []byte("\t"))
		if !found {
			return nil, Turn{}, false
		}
		f[i], line = field, after
	}
	if len(f[0]) == 0 || (string(f[4]) != "0" && string(f[4]) != "1") {
		return nil, Turn{}, false
	}
	var err1, err2, err3 error
	t.Turns, err1 = atoi(f[1])
	t.Last, err2 = atoi(f[2])
	t.Seen, err3 = parseInt(f[3])
	if err1 != nil || err2 != nil || err3 != nil || t.Turns < 0 || t.Last < 0 {
		return nil, Turn{}, false
	}
	t.Ended = f[4][0] == '1'
	return f[0], t, true
}

// maxNumber bounds a number's field as it is converted (the conversion's
// buffer stays on the stack): an int64 has at most 19 digits and a sign,
// and a longer field is a number strconv takes only with leading zeros,
// which short drops first.
const maxNumber = 32

var errNumber = errors.New("turns: not a number")

func atoi(b []byte) (int, error) {
	var buf [maxNumber]byte
	b, ok := short(b, &buf)
	if !ok {
		return 0, errNumber
	}
	return strconv.Atoi(string(b))
}

func parseInt(b []byte) (int64, error) {
	var buf [maxNumber]byte
	b, ok := short(b, &buf)
	if !ok {
		return 0, errNumber
	}
	return strconv.ParseInt(string(b), 10, 64)
}

// short is b when it is at most maxNumber bytes, else b's sign and digits
// without their leading zeros (one kept of all zeros) in buf: the same
// number to strconv, false when that is still longer (no number an int64
// holds).
func short(b []byte, buf *[maxNumber]byte) ([]byte, bool) {
	if len(b) <= maxNumber {
		return b, true
	}
	sign := 0
	if b[0] == '+' || b[0] == '-' {
		sign = 1
	}
	i := sign
	for i < len(b)-1 && b[i] == '0' {
		i++
	}
	if b[i] < '0' || b[i] > '9' || sign+len(b)-i > maxNumber {
		return nil, false // a sign after the zeros is none strconv takes
	}
	n := copy(buf[:], b[:sign])
	n += copy(buf[n:], b[i:])
	return buf[:n], true
}

// appendLine appends session's record as one line.
func appendLine(b []byte, session string, t Turn) []byte {
	b = append(b, session...)
	b = append(b, '\t')
	b = strconv.AppendInt(b, int64(t.Turns), 10)
	b = append(b, '\t')
	b = strconv.AppendInt(b, int64(t.Last), 10)
	b = append(b, '\t')
	b = strconv.AppendInt(b, t.Seen, 10)
	if t.Ended {
		return append(b, "\t1\n"...)
	}
	return append(b, "\t0\n"...)
}

// ErrBadSession is returned for a session id that cannot be a record's
// key (empty, or holding a tab or a newline; hook payloads never do).
var ErrBadSession = errors.New("turns: unusable session id")

// ErrNotRegular is returned when the file is not a regular file of the
// user's.
var ErrNotRegular = errors.New("turns: not a regular file of the user's")

func validSession(s string) bool {
	return s != "" && !bytes.ContainsAny([]byte(s), "\t\n")
}

// Append records session's turn t: one line appended to the file at
// path, which is created with its header when missing. The caller made
// sure the state directory is intermem's own. The descriptor is the
// system call's own, not an os.File (package statefile says why).
func Append(path, session string, t Turn) error {
	if !validSession(session) {
		return ErrBadSession
	}
	var fd int
	var err error
	for {
		fd, err = syscall.Open(path, syscall.O_WRONLY|syscall.O_APPEND|syscall.O_CREAT|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0o600)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("turns: %w", &fs.PathError{Op: "open", Path: path, Err: err})
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return fmt.Errorf("turns: %w", &fs.PathError{Op: "fstat", Path: path, Err: err})
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG || int(st.Uid) != os.Geteuid() {
		return ErrNotRegular
	}
	var buf [160]byte
	b := buf[:0]
	if st.Size == 0 {
		b = append(b, magic...)
	}
	b = appendLine(b, session, t)
	for len(b) > 0 {
		n, err := syscall.Write(fd, b)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("turns: %w", &fs.PathError{Op: "write", Path: path, Err: err})
		}
		b = b[n:]
	}
	return nil
}

// Encode is the compacted file: the MaxSessions sessions most recently
// seen, in a stable order.
func Encode(m map[string]Turn) []byte {
	ids := make([]string, 0, len(m))
	for id := range m {
		if validSession(id) {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool {
		if m[ids[i]].Seen != m[ids[j]].Seen {
			return m[ids[i]].Seen > m[ids[j]].Seen
		}
		return ids[i] < ids[j]
	})
	if len(ids) > MaxSessions {
		ids = ids[:MaxSessions]
	}
	sort.Strings(ids)
	b := []byte(magic)
	for _, id := range ids {
		b = appendLine(b, id, m[id])
	}
	return b
}
