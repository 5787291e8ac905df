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
// file is over MaxBytes, the full hook rewrites it compacted (Encode, the
// MaxSessions sessions most recently seen) and the front leaves the turn
// to the full hook. A last line without its newline (an append cut
// short) is ignored.
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
	"io"
	"io/fs"
	"os"
	"sort"
	"strconv"
	"syscall"
)

// Name is the turn-count file in the state directory.
const Name = "turns"

// MaxSessions bounds the sessions a compacted file remembers.
const MaxSessions = 64

// MaxBytes is the size past which the file is compacted: about 350
// counted turns (a quiet turn reads the whole tally).
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
// MaxBytes); an unusable file is an empty tally, for the full hook to
// rewrite.
func Read(path string) (m map[string]Turn, size int64, ok bool) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]Turn{}, 0, true
	}
	if err != nil {
		return map[string]Turn{}, 0, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > MaxRead {
		return map[string]Turn{}, 0, false
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxRead+1))
	if err != nil || len(b) > MaxRead {
		return map[string]Turn{}, 0, false
	}
	m, ok = Decode(b)
	if !ok {
		return map[string]Turn{}, int64(len(b)), false
	}
	return m, int64(len(b)), len(b) <= MaxBytes
}

// Decode parses a tally strictly; a last line without its newline is
// ignored.
func Decode(b []byte) (map[string]Turn, bool) {
	m := map[string]Turn{}
	rest, ok := bytes.CutPrefix(b, []byte(magic))
	if !ok {
		return nil, false
	}
	for len(rest) > 0 {
		line, after, found := bytes.Cut(rest, []byte("\n"))
		if !found {
			break // an append cut short
		}
		rest = after
		f := bytes.Split(line, []byte("\t"))
		if len(f) != 5 || len(f[0]) == 0 || (string(f[4]) != "0" && string(f[4]) != "1") {
			return nil, false
		}
		var t Turn
		var err1, err2, err3 error
		t.Turns, err1 = strconv.Atoi(string(f[1]))
		t.Last, err2 = strconv.Atoi(string(f[2]))
		t.Seen, err3 = strconv.ParseInt(string(f[3]), 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || t.Turns < 0 || t.Last < 0 {
			return nil, false
		}
		t.Ended = f[4][0] == '1'
		m[string(f[0])] = t
	}
	return m, true
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
// sure the state directory is intermem's own.
func Append(path, session string, t Turn) error {
	if !validSession(session) {
		return ErrBadSession
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("turns: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("turns: %w", err)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !fi.Mode().IsRegular() || (ok && int(st.Uid) != os.Geteuid()) {
		return ErrNotRegular
	}
	var b []byte
	if fi.Size() == 0 {
		b = append(b, magic...)
	}
	if _, err := f.Write(appendLine(b, session, t)); err != nil {
		return fmt.Errorf("turns: %w", err)
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
