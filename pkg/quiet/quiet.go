// Package quiet decides a quiet Stop turn — nothing to record since the
// session's last complete pass — without opening the store. It is the one
// definition of that decision, made by the full Stop hook (package
// snapshot, which also writes the copy it reads) and by the hook front
// (package hookfront, which then starts no full hook at all), and so links
// nothing heavy.
//
// Most Stop turns have nothing to record: the session's last complete pass
// saw every memory file as it is now. snapshot.Hook tells so by comparing the
// memory directory's listing (memlist.Turn: one stat per file) with the
// fingerprint that pass recorded (store.Session.Fingerprint), and reading
// that fingerprint takes opening the store (a lock, a map, a transaction).
// Name (stop.quiet) is a copy of what that comparison reads of the store — per
// session, its recorded fingerprint, whether its end is recorded, and the
// sub-folder files pointers name (Subs) — together with the binding of
// the store file it was read at: the file's stat and the id of its last
// committed transaction (txid.go: two reads of its meta pages, no lock),
// and the stat of .intermem/config.json (ConfigStat: what a turn records
// depends on it).
// While the store file's binding is what the copy says, the store holds
// what the copy holds, and the same comparison is made from the copy: a
// stat and two small reads of the store, one small read, the listing.
//
// Invariants:
//   - The early exit's condition does not change: the listing is whole,
//     its fingerprint is the session's recorded one, the session's end is
//     recorded when this is its SessionEnd, and the spool is empty. Only
//     where the recorded values are read from does — and, for the hook
//     front's Quick alone, how the listing's fingerprint is taken: over a
//     directory of more than memlist.ChunkFiles memory files, the copy
//     also holds the listing in K parts (File.Memory, memlist.Chunked,
//     recorded by the writer as the directory is then), and a quiet turn
//     reads one part afresh, the one its turn number picks, taking the
//     others as recorded (memlist.SumChunk). The trade, and the only one:
//     a memory file rewritten in place in another part is noticed up to
//     K−1 turns late. The directory's own fingerprint (any name added,
//     removed or renamed), MEMORY.md and the sub-folder files are checked
//     at every turn; a part that does not read as recorded, or parts of
//     another directory, make the turn sum the listing whole, as before;
//     the full hook (Check, every SessionEnd, any turn handed over)
//     always lists the directory whole.
//   - The copy is written only by a turn that read those values from the
//     store (lastPass) in the transaction the binding names: the binding
//     taken before the read, and the read's transaction id the binding's.
//     Any later commit to the store (of any process: this session's next
//     pass or checkpoint, another session's, a command) has a higher
//     transaction id, whatever the clock (two commits within one tick of
//     the file's times included), and the copy is not used; a file put in
//     the store's place is another inode, or, copied over it, has another
//     change time (never set back). Likewise a config.json written,
//     replaced, removed or created has another stat, and the copy is not
//     used.
//   - It is hostile input like every file in the state directory: opened
//     with O_NOFOLLOW|O_NONBLOCK, a regular file of at most MaxBytes bytes,
//     decoded strictly (every line as expected). Anything else —
//     missing, damaged, another store's stat, a session it does not name —
//     means the full turn, which writes it anew. Forging one that matches
//     needs write access to .intermem, which holds the store itself; a
//     wrong one can only skip a turn's sightings, never write anywhere.
//   - It is a cache: written without fsync; at most MaxSessions
//     sessions, all read against the same binding of the store.

package quiet

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/intermem/intermem/pkg/config"
	"github.com/intermem/intermem/pkg/memlist"
	"github.com/intermem/intermem/pkg/statefile"
)

// Name is the quiet-turn file in the state directory.
const Name = "stop.quiet"

const (
	MaxBytes    = 64 << 10
	MaxSessions = 16
)

// File is the file's content. Its format is lines, not JSON (decoding
// JSON cost a quiet turn a tenth of its time):
//
//	intermem stop quiet v2
//	store <StoreStat>
//	[memory <directory fingerprint>
//	 chunk <start> <end> <entries> <files> <sum, hex>
//	 …]
//	session <id> TAB <fingerprint> TAB <ended: 0|1> [TAB <sub, Go-quoted>]…
//
// A session id holds no control character (hookio), so no tab. The
// memory and chunk lines are the memory directory's listing in parts
// (memlist.Chunked), present only for a directory of more than
// memlist.ChunkFiles memory files, and then at least two chunk lines
// chaining from the directory's start (memlist.Chunking.Valid).
type File struct {
	Store    string // the store's binding (StoreStat) the record was read at
	Memory   memlist.Chunking
	Sessions map[string]Session
}

// Session is what lastPass read of one session.
type Session struct {
	FP    string
	Ended bool
	Subs  []string
}

const magic = "intermem stop quiet v2\n"

func (q File) Encode() []byte {
	ids := make([]string, 0, len(q.Sessions))
	for id := range q.Sessions {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	b := []byte(magic + "store " + q.Store + "\n")
	if q.Memory.Dir != "" {
		b = append(b, "memory "+q.Memory.Dir+"\n"...)
		for i := range q.Memory.Chunks {
			b = append(b, "chunk "...)
			b = memlist.AppendChunk(b, &q.Memory.Chunks[i])
			b = append(b, '\n')
		}
	}
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

// Decode parses the file strictly: any line it does not expect
// makes the whole file unusable.
func Decode(b []byte) (File, bool) {
	q := File{Sessions: map[string]Session{}}
	rest, ok := bytes.CutPrefix(b, []byte(magic))
	if !ok {
		return File{}, false
	}
	// The parts in one allocation: grown by append, a copy of 13 parts
	// took five, each of another size class, whose first use costs a
	// fresh span (page faults) in a process that lives a millisecond.
	if n := bytes.Count(rest, []byte("\nchunk ")); n > 0 {
		q.Memory.Chunks = make([]memlist.Chunk, 0, min(n, memlist.MaxChunks))
	}
	for len(rest) > 0 {
		line, after, found := bytes.Cut(rest, []byte("\n"))
		if !found {
			return File{}, false
		}
		rest = after
		switch {
		case q.Store == "" && bytes.HasPrefix(line, []byte("store ")):
			q.Store = string(line[len("store "):])
		case q.Store != "" && q.Memory.Dir == "" && len(q.Sessions) == 0 && bytes.HasPrefix(line, []byte("memory ")):
			q.Memory.Dir = string(line[len("memory "):])
			if q.Memory.Dir == "" {
				return File{}, false
			}
		case q.Memory.Dir != "" && len(q.Sessions) == 0 && bytes.HasPrefix(line, []byte("chunk ")):
			k, ok := memlist.ParseChunk(string(line[len("chunk "):]))
			if !ok || len(q.Memory.Chunks) == memlist.MaxChunks {
				return File{}, false
			}
			q.Memory.Chunks = append(q.Memory.Chunks, k)
		case q.Store != "" && bytes.HasPrefix(line, []byte("session ")):
			f := strings.Split(string(line[len("session "):]), "\t")
			if len(f) < 3 || f[0] == "" || f[1] == "" || (f[2] != "0" && f[2] != "1") {
				return File{}, false
			}
			if _, dup := q.Sessions[f[0]]; dup || len(q.Sessions) == MaxSessions {
				return File{}, false
			}
			s := Session{FP: f[1], Ended: f[2] == "1"}
			for _, quoted := range f[3:] {
				sub, err := strconv.Unquote(quoted)
				if err != nil {
					return File{}, false
				}
				s.Subs = append(s.Subs, sub)
			}
			q.Sessions[f[0]] = s
		default:
			return File{}, false
		}
	}
	if q.Store == "" || (q.Memory.Dir != "" && !q.Memory.Valid()) {
		return File{}, false
	}
	return q, true
}

// StoreStat is the binding of the store file at path that a copy is
// written and read against (the stat of the configuration file beside
// it, ConfigStat, then Binding), and the id of the store's last committed
// transaction; "" when the file is not a regular file or its transaction
// id cannot be read (the turn is a full one).
//
// The configuration is bound as well because what a turn records depends
// on it (auto-memory switched off, meta mode: nothing) while a turn that
// records nothing writes neither the store nor the copy: a copy written
// before the file changed is not used after it, so the turn after auto-
// memory is switched back on takes the whole listing (package snapshot's
// off.go), never one part of it as recorded before (Quick).
func StoreStat(path string) (binding string, txid uint64) {
	fd, err := openStore(path)
	if err != nil {
		return "", 0
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return "", 0
	}
	txid, ok := lastTxid(fd)
	if !ok {
		return "", 0
	}
	return ConfigStat(filepath.Dir(path)) + " " + Binding(&st, txid), txid
}

// ConfigStat is the stat of stateDir's configuration file (config.json)
// as a binding's part: "config inode:size:mtime:ctime" (times in
// nanoseconds), "config -" when there is none and "config ?" when it
// cannot be told. The file is read without following a link (package
// config), so the link itself is what is stat'ed.
func ConfigStat(stateDir string) string {
	var st syscall.Stat_t
	if err := syscall.Lstat(filepath.Join(stateDir, config.Name), &st); err != nil {
		if err == syscall.ENOENT {
			return "config -"
		}
		return "config ?"
	}
	b := make([]byte, 0, 80)
	b = append(b, "config "...)
	b = strconv.AppendUint(b, uint64(st.Ino), 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, st.Size, 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, memlist.Mtime(&st), 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, memlist.Ctime(&st), 10)
	return string(b)
}

// Binding is the binding of a store file of stat st whose last committed
// transaction is txid: "inode:size:mtime:ctime:txid", times in
// nanoseconds.
func Binding(st *syscall.Stat_t, txid uint64) string {
	b := make([]byte, 0, 96)
	b = strconv.AppendUint(b, uint64(st.Ino), 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, st.Size, 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, memlist.Mtime(st), 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, memlist.Ctime(st), 10)
	b = append(b, ':')
	b = strconv.AppendUint(b, txid, 10)
	return string(b)
}

// Read returns the copy's record of session when the copy is bound
// to stat.
func Read(path, stat, session string) (Session, bool) {
	q, ok := bound(path, stat)
	if !ok {
		return Session{}, false
	}
	s, ok := q.Sessions[session]
	return s, ok
}

// bound is the copy at path when it is bound to stat.
func bound(path, stat string) (File, bool) {
	if stat == "" {
		return File{}, false
	}
	q, ok := Load(path)
	if !ok || q.Store != stat {
		return File{}, false
	}
	return q, true
}

// Load reads and decodes the file: a regular file, never through a
// link, at most MaxBytes bytes (package statefile).
func Load(path string) (File, bool) {
	b, err := statefile.Read(path, MaxBytes)
	if err != nil {
		return File{}, false
	}
	return Decode(b)
}

// SpoolDir is where a Stop hook that found the store busy leaves its
// observation (package snapshot's spool).
func SpoolDir(stateDir string) string { return filepath.Join(stateDir, "spool") }

// Pending reports whether observations wait in the spool.
func Pending(stateDir string) bool {
	ents, err := os.ReadDir(SpoolDir(stateDir))
	if err != nil {
		return false
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".json") {
			return true
		}
	}
	return false
}

// Nothing is the quiet turn's condition, whichever way the session's
// record was read (from the copy or from the store): the listing l is
// whole and its fingerprint is the one the session recorded (fp), the
// session's end is recorded when this turn is its end (ending), and no
// observation waits in the spool.
func Nothing(l *memlist.Listing, fp string, ended, ending bool, stateDir string) bool {
	return nothing(l.FP, l.Whole, fp, ended, ending, stateDir)
}

// nothing is Nothing over what a listing says (memlist.Sum's, or a
// Listing's FP and Whole).
func nothing(listed string, whole bool, fp string, ended, ending bool, stateDir string) bool {
	return whole && listed == fp && (!ending || ended) && !Pending(stateDir)
}

// Early is what a Stop turn learns before it opens the store: the store
// file's binding, the copy's record of the session when the copy is bound
// to it, the listing taken to compare with it, and whether that settles
// the turn as quiet.
type Early struct {
	Stat    string
	Txid    uint64 // the store's last committed transaction, in Stat
	Copy    Session
	CopyOK  bool
	Listing *memlist.Listing // nil when the copy was not usable or the listing failed
	Quiet   bool
}

// Check makes the early decision for session in the state directory
// stateDir (the store is dbPath) over the memory directory memDir; ending
// is set for the session's SessionEnd.
func Check(stateDir, dbPath, memDir, session string, ending bool) Early {
	var e Early
	e.Stat, e.Txid = StoreStat(dbPath)
	e.Copy, e.CopyOK = Read(filepath.Join(stateDir, Name), e.Stat, session)
	if !e.CopyOK {
		return e
	}
	l, err := memlist.Turn(memDir, e.Copy.Subs, nil)
	if err != nil {
		return e
	}
	e.Listing = l
	e.Quiet = Nothing(l, e.Copy.FP, e.Copy.Ended, ending, stateDir)
	return e
}

// Quick is Check's decision of a Stop turn (not a SessionEnd) for a
// caller that needs nothing else (the hook front): the same reads, the
// listing's fingerprint taken by memlist.Sum — the new sweep's listing
// Check takes, without keeping a file of it — or, when the copy holds the
// directory's listing in parts (File.Memory) and turn is not negative,
// by memlist.SumChunk over part turn mod their number: the parts but that
// one as the copy records them, MEMORY.md, the sub-folder files and the
// directory's own fingerprint as they are now.
//
// That is the one way Quick's decision differs from Check's: a memory
// file rewritten in place (no name of the directory changed) in a part
// other than the turn's is noticed up to K−1 turns late, K the number of
// parts, when turn grows by one a turn (the hook front passes the turn
// tally's count; package memlist's chunk.go says why the rest is noticed
// at once). A directory of at most memlist.ChunkFiles memory files has no
// parts and is summed whole, and the full hook (every SessionEnd, and any
// turn the front hands over) takes the whole listing, as Check does.
func Quick(stateDir, dbPath, memDir, session string, turn int) bool {
	stat, _ := StoreStat(dbPath)
	q, ok := bound(filepath.Join(stateDir, Name), stat)
	if !ok {
		return false
	}
	c, ok := q.Sessions[session]
	if !ok {
		return false
	}
	if turn >= 0 && len(q.Memory.Chunks) > 0 {
		if fp, ok := memlist.SumChunk(memDir, c.Subs, &q.Memory, turn%len(q.Memory.Chunks)); ok {
			return nothing(fp, true, c.FP, c.Ended, false, stateDir)
		}
	}
	fp, whole, err := memlist.Sum(memDir, c.Subs)
	return err == nil && nothing(fp, whole, c.FP, c.Ended, false, stateDir)
}
