package snapshot

import (
	"bytes"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/intermem/intermem/pkg/atomicfile"
	"github.com/intermem/intermem/pkg/store"
)

// Quiet turns: "nothing changed" decided without opening the store
//
// Most Stop turns have nothing to record: the session's last complete pass
// saw every memory file as it is now. Hook tells so by comparing the
// memory directory's listing (Turn: one stat per file) with the
// fingerprint that pass recorded (store.Session.Fingerprint), and reading
// that fingerprint takes opening the store (a lock, a map, a transaction).
// QuietName is a copy of what that comparison reads of the store — per
// session, its recorded fingerprint, whether its end is recorded, and the
// sub-folder files pointers name (Subs) — together with the stat of the
// store file taken before it was read. While the store file's stat is
// what the copy says, the store holds what the copy holds, and the same
// comparison is made from the copy: a stat of the store, one small read,
// the listing.
//
// Invariants:
//   - The early exit's condition does not change: the listing is whole,
//     its fingerprint is the session's recorded one, the session's end is
//     recorded when this is its SessionEnd, and the spool is empty. Only
//     where the recorded values are read from does.
//   - The copy is written only by a turn that read those values from the
//     store (lastPass), with the store's stat taken before that read, and
//     only when the store was last modified more than quietRacy before the
//     read: any later write to the store (a commit of any process: this
//     session's next pass, another session's, a command) then leaves a
//     different stat — size, modification and change time (never set back
//     by a writer), inode — and the copy is not used. A write within a
//     clock tick of the recorded one could leave the times as they were,
//     which the wait rules out; a file system that keeps whole seconds
//     (its times have no fraction) waits coarseRacy.
//   - It is hostile input like every file in the state directory: opened
//     with O_NOFOLLOW|O_NONBLOCK, a regular file of at most maxQuiet bytes,
//     decoded strictly (every line as expected). Anything else —
//     missing, damaged, another store's stat, a session it does not name —
//     means the full turn, which writes it anew. Forging one that matches
//     needs write access to .intermem, which holds the store itself; a
//     wrong one can only skip a turn's sightings, never write anywhere.
//   - It is a cache: written without fsync; at most maxQuietSessions
//     sessions, all read against the same stat of the store.

// QuietName is the quiet-turn file in the state directory.
const QuietName = "stop.quiet"

const (
	maxQuiet         = 64 << 10
	maxQuietSessions = 16
	quietRacy        = 50 * time.Millisecond // well beyond a kernel clock tick
	coarseRacy       = 3 * time.Second       // beyond a 2-second file system clock
)

// quiet is the file's content. Its format is lines, not JSON (decoding
// JSON cost a quiet turn a tenth of its time):
//
//	intermem stop quiet v1
//	store <storeStat>
//	session <id> TAB <fingerprint> TAB <ended: 0|1> [TAB <sub, Go-quoted>]…
//
// A session id holds no control character (hookio), so no tab.
type quiet struct {
	Store    string // storeStat before the read
	Sessions map[string]quietSession
}

// quietSession is what lastPass read of one session.
type quietSession struct {
	FP    string
	Ended bool
	Subs  []string
}

const quietMagic = "intermem stop quiet v1\n"

func (q quiet) encode() []byte {
	ids := make([]string, 0, len(q.Sessions))
	for id := range q.Sessions {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	b := []byte(quietMagic + "store " + q.Store + "\n")
	for _, id := range ids {
		s := q.Sessions[id]
		ended := "0"
		if s.Ended {
			ended = "1"
		}
		b = append(b, "session "+id+"\t"+s.FP+"\t"+ended...)
		for _, sub := range s.Subs {
			b = append(b, '\t')
			b = strconv.AppendQuote(b, sub)
		}
		b = append(b, '\n')
	}
	return b
}

// decodeQuiet parses the file strictly: any line it does not expect
// makes the whole file unusable.
func decodeQuiet(b []byte) (quiet, bool) {
	q := quiet{Sessions: map[string]quietSession{}}
	rest, ok := bytes.CutPrefix(b, []byte(quietMagic))
	if !ok {
		return quiet{}, false
	}
	for len(rest) > 0 {
		line, after, found := bytes.Cut(rest, []byte("\n"))
		if !found {
			return quiet{}, false
		}
		rest = after
		switch {
		case q.Store == "" && bytes.HasPrefix(line, []byte("store ")):
			q.Store = string(line[len("store "):])
		case q.Store != "" && bytes.HasPrefix(line, []byte("session ")):
			f := strings.Split(string(line[len("session "):]), "\t")
			if len(f) < 3 || f[0] == "" || f[1] == "" || (f[2] != "0" && f[2] != "1") {
				return quiet{}, false
			}
			if _, dup := q.Sessions[f[0]]; dup || len(q.Sessions) == maxQuietSessions {
				return quiet{}, false
			}
			s := quietSession{FP: f[1], Ended: f[2] == "1"}
			for _, quoted := range f[3:] {
				sub, err := strconv.Unquote(quoted)
				if err != nil {
					return quiet{}, false
				}
				s.Subs = append(s.Subs, sub)
			}
			q.Sessions[f[0]] = s
		default:
			return quiet{}, false
		}
	}
	return q, q.Store != ""
}

// storeStat is the store file's stat as the copy is bound to it, and
// whether it is settled (last modified long enough ago); "" when the file
// is not a regular file or its change time cannot be read.
func storeStat(path string, now time.Time) (stat string, settled bool) {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", false
	}
	mod, ctime := fi.ModTime(), time.Unix(0, ctimeOf(st))
	b := make([]byte, 0, 80)
	b = strconv.AppendUint(b, uint64(st.Ino), 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, fi.Size(), 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, mod.UnixNano(), 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, ctime.UnixNano(), 10)
	last := mod
	if ctime.After(last) {
		last = ctime
	}
	wait := quietRacy
	if mod.Nanosecond() == 0 && ctime.Nanosecond() == 0 {
		wait = coarseRacy
	}
	return string(b), now.Sub(last) > wait
}

// readQuiet returns the copy's record of session when the copy is bound
// to stat.
func readQuiet(path, stat, session string) (quietSession, bool) {
	if stat == "" {
		return quietSession{}, false
	}
	q, ok := loadQuiet(path)
	if !ok || q.Store != stat {
		return quietSession{}, false
	}
	s, ok := q.Sessions[session]
	return s, ok
}

// loadQuiet reads and decodes the file: a regular file, never through a
// link, at most maxQuiet bytes.
func loadQuiet(path string) (quiet, bool) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return quiet{}, false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() > maxQuiet {
		return quiet{}, false
	}
	b, err := io.ReadAll(io.LimitReader(f, maxQuiet+1))
	if err != nil || len(b) > maxQuiet {
		return quiet{}, false
	}
	return decodeQuiet(b)
}

// saveQuiet records what lastPass read of session at the store's stat
// (taken before the read, and settled), keeping the other sessions the
// copy holds for the same stat. A failure costs the next turn the store's
// read, nothing else: it is not reported.
func saveQuiet(stateDir, stat, session string, sess store.Session, subs []string) {
	if stat == "" || sess.Fingerprint == "" || sess.Sweep != nil {
		return
	}
	path := stateDir + string(os.PathSeparator) + QuietName
	rec := quietSession{FP: sess.Fingerprint, Ended: sess.Ended, Subs: subs}
	q, ok := loadQuiet(path)
	if !ok || q.Store != stat {
		q = quiet{Store: stat}
	}
	if q.Sessions == nil {
		q.Sessions = map[string]quietSession{}
	}
	q.Sessions[session] = rec
	if len(q.Sessions) > maxQuietSessions {
		// Keep this session and the first others by id: the copy is a
		// cache, a session left out only reads the store.
		ids := make([]string, 0, len(q.Sessions))
		for id := range q.Sessions {
			if id != session {
				ids = append(ids, id)
			}
		}
		sort.Strings(ids)
		for _, id := range ids[maxQuietSessions-1:] {
			delete(q.Sessions, id)
		}
	}
	b := q.encode()
	if len(b) > maxQuiet {
		return
	}
	_ = atomicfile.WriteState(stateDir, path, b, atomicfile.Options{NoSync: true})
}
