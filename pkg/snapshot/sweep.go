package snapshot

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/store"
)

// Sweeps: a memory directory too large for one turn
//
// A Stop hook must not list a directory of 100,000 files at every turn
// (listing and fingerprinting them took seconds on a loaded machine, the
// hook's whole deadline). So each session sweeps the memory files over
// turns (Turn), and a turn looks at no more than ChunkEntries directory
// entries:
//
//   - Every turn fingerprints MEMORY.md (the index every session loads,
//     where most edits land) and goes on with the session's sweep
//     (store.Session.Sweep): the next ChunkEntries directory entries from
//     the stored cookie, then the sub-folder files pointers name. Sync
//     reads the changed ones among them, as for a whole listing, and the
//     cookie is stored with what the turn did, in the same transaction: a
//     turn stopped by its budget resumes at the first file it did not
//     reach. A turn starts no more than ChunkEntries entries, so its cost
//     does not grow with the directory.
//   - Bound: a file changed in place is read within ceil(N/ChunkEntries)+1
//     turns of the change (N the directory's entries; +1 for the sub-folder
//     files), MEMORY.md at the next turn; a turn cut short by its budget
//     (a file needing work at each of more than minWork files) moves the
//     bound by the turns the budget takes. A file added or renamed is
//     found within two sweeps (the rest of the one under way, which may
//     have passed its place, and the next).
//   - The directory's own fingerprint (inode, mtime, ctime) is taken when
//     a sweep starts and at each turn. An entry added, removed or renamed
//     changes it (POSIX link, unlink, rename; the change time cannot be
//     set back). A file rewritten in place does not, which is why the
//     files themselves are fingerprinted by the sweep, never inferred from
//     the directory. A sweep during which the directory changed is dirty:
//     the filesystem's cookies need not cover an entry moved meanwhile, so
//     a dirty sweep reads what it meets but proves nothing about the rest:
//     it does not set Session.Synced and removes no state; the next sweep
//     starts at once.
//   - A clean sweep that ends sets Session.Synced to its start (every
//     file state set before then was met by a turn of the sweep and its
//     entries marked) and, when the directory's names changed since the
//     last one, starts the removal of gone files' states (cleanGone:
//     ChunkEntries states a turn, each looked up by name; a state whose
//     name was redacted cannot be looked up and is kept, its entries still
//     recorded, nothing lost).
//   - A sweep that begins and ends in one turn — every memory directory of
//     fewer than ChunkEntries entries — is a whole listing (Listing.Whole):
//     its fingerprint is the session's "nothing changed" check, and it
//     removes gone files' states at once, exactly as before sweeps.
//
// Nothing is skipped silently: a file that is not read (not a regular
// file, too large) is logged once per fingerprint, as ever.

// ChunkEntries bounds the directory entries one turn reads (a variable
// for tests).
var ChunkEntries = 4096

// File positions: where the sweep resumes after a file.
const (
	atNone   = iota // MEMORY.md or a file a pointer read this turn named
	atDirent        // pos is the directory cookie after it
	atSub           // pos is the count of sub-folder files done with it
)

// Turn lists what one turn of session sweep prev (nil: a new sweep)
// looks at, without reading a file. subs are the sub-folder files
// pointers named (Subs).
func Turn(dir string, subs []string, prev *store.Sweep) (*Listing, error) {
	l := &Listing{Dir: dir}
	d, err := openDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			l.FP, l.Whole, l.last = "none", true, true
			return l, nil
		}
		return nil, fmt.Errorf("list memory dir %s: %w", dir, err)
	}
	defer d.Close()
	dfp, err := d.fp()
	if err != nil {
		return nil, fmt.Errorf("list memory dir %s: %w", dir, err)
	}
	subsSum := sumOf(subs)
	sw := store.Sweep{Dir: dfp}
	fresh := prev == nil
	if !fresh {
		sw = *prev
		if sw.Dir != dfp {
			sw.Dirty = true
		}
	}
	l.start = sw
	left := ChunkEntries
	have := map[string]bool{}
	if !sw.DirDone {
		ents, next, eof, err := d.read(sw.Cookie, left)
		if err != nil && sw.Cookie != 0 {
			// A cookie this directory does not take (it was replaced,
			// or moved to another filesystem): a new sweep.
			sw = store.Sweep{Dir: dfp}
			fresh, l.start = true, sw
			ents, next, eof, err = d.read(0, left)
		}
		if err != nil {
			return nil, fmt.Errorf("list memory dir %s: %w", dir, err)
		}
		left -= len(ents)
		for _, e := range ents {
			if !memoryName(e.name) {
				continue
			}
			f := direntFile(d, e.name, e.typ)
			f.at, f.pos = atDirent, e.next
			have[f.Name] = true
			l.Files = append(l.Files, f)
		}
		sw.Cookie, sw.DirDone = next, eof
		if eof {
			sw.Sub, sw.Subs = 0, subsSum
		}
	}
	if sw.DirDone {
		if sw.Subs != subsSum {
			sw.Dirty, sw.Sub, sw.Subs = true, 0, subsSum
		}
		for ; sw.Sub < len(subs) && left > 0; left-- {
			s := subs[sw.Sub]
			sw.Sub++
			f, ok := subFile(dir, s)
			if !ok || have[f.Name] {
				continue
			}
			have[f.Name] = true
			f.at, f.pos = atSub, int64(sw.Sub)
			l.Files = append(l.Files, f)
		}
	}
	l.last = sw.DirDone && sw.Sub >= len(subs)
	if !have[automemIndex] {
		if fi, err := d.stat(automemIndex, false); err == nil {
			f := file(automemIndex, fi.Mode().Type(), func() (fs.FileInfo, error) {
				if fi.Mode()&fs.ModeSymlink != 0 {
					return d.stat(automemIndex, true)
				}
				return fi, nil
			})
			l.Files = append([]File{f}, l.Files...)
		}
	}
	if l.last {
		// An entry added, removed or renamed while this turn read.
		if now, err := d.fp(); err != nil || now != sw.Dir {
			sw.Dirty = true
		}
	}
	l.end = sw
	l.Whole = fresh && l.last && !sw.Dirty
	if l.Whole {
		// By name, as List sums it: a session's fingerprint stands
		// whichever way it was taken. The files stay in the directory's
		// order, which the sweep's positions follow.
		byName := slices.Clone(l.Files)
		sortFiles(byName)
		l.FP = listingFP(byName)
	}
	return l, nil
}

// automemIndex is the memory directory's index file.
const automemIndex = "MEMORY.md"

// memoryName reports whether a directory entry is a memory file as
// automem.Scan reads them: *.md, no leading dot.
func memoryName(name string) bool {
	return strings.HasSuffix(name, ".md") && !strings.HasPrefix(name, ".")
}

// direntFile fingerprints the directory entry name of type typ.
func direntFile(d *dirReader, name string, typ fs.FileMode) File {
	if typ == modeUnknown {
		fi, err := d.stat(name, false)
		if err != nil {
			return File{Name: name, Skip: "cannot be read: " + errText(err)}
		}
		typ = fi.Mode().Type()
	}
	return file(name, typ, func() (fs.FileInfo, error) {
		if typ&fs.ModeSymlink != 0 {
			return d.stat(name, true)
		}
		return d.stat(name, false)
	})
}

// listingFP sums every file's name, fingerprint and skip: equal sums mean
// no file changed.
func listingFP(files []File) string {
	h := fnv.New64a()
	for _, f := range files {
		io.WriteString(h, f.Name)
		h.Write([]byte{0})
		io.WriteString(h, f.FP)
		h.Write([]byte{0})
		io.WriteString(h, f.Skip)
		h.Write([]byte{'\n'})
	}
	return strconv.FormatUint(h.Sum64(), 16)
}

func sumOf(subs []string) string {
	if len(subs) == 0 {
		return ""
	}
	h := fnv.New64a()
	for _, s := range subs {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return strconv.FormatUint(h.Sum64(), 16)
}

// resume is the sweep after a turn that reached l.Files[:n]: the turn's
// end when it reached every file, else the place after the last file it
// reached that has one. nil when the sweep is over.
func (l *Listing) resume(n int) *store.Sweep {
	if n >= len(l.Files) {
		if l.last {
			return nil
		}
		sw := l.end
		return &sw
	}
	sw := l.start
	sw.Dirty = l.end.Dirty
	for _, f := range l.Files[:n] {
		switch f.at {
		case atDirent:
			sw.Cookie = f.pos
		case atSub:
			sw.Cookie, sw.DirDone, sw.Subs = l.end.Cookie, true, l.end.Subs
			sw.Sub = int(f.pos)
		}
	}
	return &sw
}

// Chunks: a turn of a sweep that met its files all recorded (nothing
// racy, none stopped) stores, under the chunk's place in the sweep, the
// sum of their names and fingerprints, when a pass last read one of them
// (At), and the sessions that met them all since (Sessions, the latest
// few). A later turn meeting the same sum has nothing to do with them —
// no name redacted, no state read — for a session in Sessions (it marked
// every entry of theirs), or whose last clean sweep began at or after At
// (every state then was set at or before At, so the sweep marked it). A
// state changes only when its file is read — because its fingerprint
// changed, which changes the sum, or because it was racy, which stores no
// chunk — or when the file is gone, which changes the directory's names.

// chunkPrefix starts the keys of chunks in BucketFiles.
const chunkPrefix = "\x00chunk/"

// chunkSessions bounds the sessions a chunk keeps.
const chunkSessions = 8

// chunk is what passes stored of a turn's chunk.
type chunk struct {
	Sum      string    `json:"sum"`
	At       time.Time `json:"at"`
	Sessions []string  `json:"sessions,omitempty"`
}

// chunkOf returns the key and sum of a sweep turn's chunk: the files it
// met in the directory and among the sub-folder files (not MEMORY.md,
// met at every turn), and where it ended. The key is "" for a whole
// listing, which the session's fingerprint covers.
func chunkOf(l *Listing) (key, sum string) {
	if l.Whole || l.start.Dir == "" {
		return "", ""
	}
	var met []File
	for _, f := range l.Files {
		if f.at != atNone {
			met = append(met, f)
		}
	}
	st, end := l.start, l.end
	key = fmt.Sprintf("%s%s/%t/%d/%d", chunkPrefix, st.Dir, st.DirDone, st.Cookie, st.Sub)
	sum = fmt.Sprintf("%s/%t/%d/%d/%s", listingFP(met), end.DirDone, end.Cookie, end.Sub, end.Subs)
	return key, sum
}

// chunkState reads the chunk stored under key and reports whether it
// settles sum for session (see Chunks).
func chunkState(tx *bolt.Tx, key, sum string, sess *store.Session) (c chunk, settled bool, err error) {
	if key == "" {
		return c, false, nil
	}
	if _, err := store.Get(tx, store.BucketFiles, key, &c); err != nil {
		return c, false, err
	}
	if c.Sum != sum {
		return chunk{}, false, nil
	}
	return c, slices.Contains(c.Sessions, sess.ID) || (!sess.Synced.IsZero() && !c.At.After(sess.Synced)), nil
}

// putChunk stores that session met every file of the chunk at at;
// changed is set when the pass read one of them.
func putChunk(tx *bolt.Tx, key, sum string, old chunk, changed bool, session string, at time.Time) error {
	c := old
	if changed || c.Sum != sum {
		c = chunk{Sum: sum, At: at}
	}
	if slices.Contains(c.Sessions, session) {
		return nil
	}
	c.Sessions = append(c.Sessions, session)
	if n := len(c.Sessions); n > chunkSessions {
		c.Sessions = c.Sessions[n-chunkSessions:]
	}
	return store.Put(tx, store.BucketFiles, key, &c)
}

// dropChunks removes the stored chunks of other directory fingerprints
// than dir (the directory's names changed: their places mean nothing
// now).
func dropChunks(tx *bolt.Tx, dir string) error {
	b := tx.Bucket(store.BucketFiles)
	if b == nil {
		return nil
	}
	var keys [][]byte
	c := b.Cursor()
	for k, _ := c.Seek([]byte(chunkPrefix)); k != nil && strings.HasPrefix(string(k), chunkPrefix); k, _ = c.Next() {
		if !strings.HasPrefix(string(k), chunkPrefix+dir+"/") {
			keys = append(keys, append([]byte(nil), k...))
		}
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// goneKey keys, in BucketFiles, the removal of gone files' states
// (cleanGone): a key no memory file can have.
const goneKey = "\x00gone"

// gone is where the removal of gone files' states stands.
type gone struct {
	Dir    string `json:"dir"`             // the directory fingerprint of the sweep that started it
	After  string `json:"after,omitempty"` // the last state key looked at
	Active bool   `json:"active,omitempty"`
}

// startGone starts the removal of gone files' states after a clean sweep
// of directory fingerprint dir, unless one already ran for it.
func startGone(tx *bolt.Tx, dir string) error {
	var g gone
	if _, err := store.Get(tx, store.BucketFiles, goneKey, &g); err != nil {
		return err
	}
	if g.Dir == dir {
		return nil
	}
	if err := dropChunks(tx, dir); err != nil {
		return err
	}
	return store.Put(tx, store.BucketFiles, goneKey, &gone{Dir: dir, Active: true})
}

// cleanGone goes on removing the states of files that no longer exist:
// ChunkEntries states from where the last turn stopped. A top-level file
// is looked up by its name; a sub-folder file also must still be one
// pointers name (subs). A state whose key is a redacted name (the file's
// real name held a secret) cannot be looked up and is kept.
func cleanGone(tx *bolt.Tx, dir string, subs []string) error {
	var g gone
	if ok, err := store.Get(tx, store.BucketFiles, goneKey, &g); err != nil || !ok || !g.Active {
		return err
	}
	b := tx.Bucket(store.BucketFiles)
	if b == nil {
		return nil
	}
	named := make(map[string]bool, len(subs))
	for _, s := range subs {
		named[s] = true
	}
	c := b.Cursor()
	k, _ := c.Seek([]byte(g.After))
	if k != nil && string(k) == g.After {
		k, _ = c.Next()
	}
	var del []string
	n := 0
	for ; k != nil && n < ChunkEntries; k, _ = c.Next() {
		key := string(k)
		g.After = key
		n++
		if strings.HasPrefix(key, "\x00") || strings.Contains(key, "[REDACTED") {
			continue
		}
		sub := strings.Contains(key, "/")
		if sub && (!named[key] || path.Clean(key) != key || strings.HasPrefix(key, "../")) {
			del = append(del, key)
			continue
		}
		if _, err := os.Lstat(dir + "/" + key); errors.Is(err, fs.ErrNotExist) {
			del = append(del, key)
		}
	}
	if k == nil {
		g.Active, g.After = false, ""
	}
	for _, key := range del {
		if err := b.Delete([]byte(key)); err != nil {
			return err
		}
	}
	return store.Put(tx, store.BucketFiles, goneKey, &g)
}
