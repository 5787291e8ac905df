package snapshot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/memlist"
	"github.com/intermem/intermem/pkg/store"
)

// Sweeps: a memory directory too large for one turn
//
// A Stop hook must not list a directory of 100,000 files at every turn
// (listing and fingerprinting them took seconds on a loaded machine, the
// hook's whole deadline). So each session sweeps the memory files over
// turns (Turn), and a turn looks at no more than memlist.ChunkEntries directory
// entries:
//
//   - Every turn fingerprints MEMORY.md (the index every session loads,
//     where most edits land) and goes on with the session's sweep
//     (store.Session.Sweep): the next memlist.ChunkEntries directory entries from
//     the stored cookie, then the sub-folder files pointers name. Sync
//     reads the changed ones among them, as for a whole listing, and the
//     cookie is stored with what the turn did, in the same transaction: a
//     turn stopped by its budget resumes at the first file it did not
//     reach. A turn starts no more than memlist.ChunkEntries entries, so its cost
//     does not grow with the directory.
//   - Bound: a file changed in place is read within ceil(N/memlist.ChunkEntries)+1
//     turns of the change (N the directory's entries; +1 for the sub-folder
//     files), MEMORY.md at the next turn; a turn cut short by its budget
//     (a file needing work at each of more than minWork files), or between
//     two of its batches (SyncStore: a command waiting for the store, the
//     process killed), moves the bound by the turns that takes: each
//     commit stores the cookie of the first file it did not reach, so no
//     file done is done again and none is passed over. A file added or renamed is
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
//     memlist.ChunkEntries states a turn, each looked up by name; a state whose
//     name was redacted cannot be looked up and is kept, its entries still
//     recorded, nothing lost).
//   - A sweep that begins and ends in one turn — every memory directory of
//     fewer than memlist.ChunkEntries entries — is a whole listing (Listing.Whole):
//     its fingerprint is the session's "nothing changed" check, and it
//     removes gone files' states at once, exactly as before sweeps.
//
// Nothing is skipped silently: a file that is not read (not a regular
// file, too large) is logged once per fingerprint, as ever.

// resume is the sweep after a turn that reached l.Files[:n]: the turn's
// end when it reached every file, else the place after the last file it
// reached that has one. nil when the sweep is over.
func resume(l *Listing, n int) *store.Sweep {
	if n >= len(l.Files) {
		if l.Last {
			return nil
		}
		sw := l.End
		return &sw
	}
	sw := l.Start
	sw.Dirty = l.End.Dirty
	for _, f := range l.Files[:n] {
		switch f.At {
		case memlist.AtDirent:
			sw.Cookie = f.Pos
		case memlist.AtSub:
			sw.Cookie, sw.DirDone, sw.Subs = l.End.Cookie, true, l.End.Subs
			sw.Sub = int(f.Pos)
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

// chunkSessions bounds the sessions a chunk keeps.
const chunkSessions = 8

// chunk is what passes stored of a turn's chunk (store.GetChunk).
type chunk = store.Chunk

// chunkOf returns the key and sum of a sweep turn's chunk: the files it
// met in the directory and among the sub-folder files (not MEMORY.md,
// met at every turn), and where it ended. The key is "" for a whole
// listing, which the session's fingerprint covers.
func chunkOf(l *Listing) (key, sum string) {
	if l.Whole || l.Start.Dir == "" {
		return "", ""
	}
	var met []File
	for _, f := range l.Files {
		if f.At != memlist.AtNone {
			met = append(met, f)
		}
	}
	st, end := l.Start, l.End
	key = fmt.Sprintf("%s%s/%t/%d/%d", store.ChunkPrefix, st.Dir, st.DirDone, st.Cookie, st.Sub)
	sum = fmt.Sprintf("%s/%t/%d/%d/%s", memlist.ListingFP(met), end.DirDone, end.Cookie, end.Sub, end.Subs)
	return key, sum
}

// chunkState reads the chunk stored under key and reports whether it
// settles sum for session (see Chunks).
func chunkState(tx *bolt.Tx, key, sum string, sess *store.Session) (c chunk, settled bool, err error) {
	if key == "" {
		return c, false, nil
	}
	if c, _, err = store.GetChunk(tx, key); err != nil {
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
	return store.PutChunk(tx, key, &c)
}

// startGone starts the removal of gone files' states after a clean sweep
// of directory fingerprint dir, unless one already ran for it; the stored
// chunks of other directory fingerprints go (the directory's names
// changed: their places mean nothing now).
func startGone(tx *bolt.Tx, dir string) error {
	g, _, err := store.GetGone(tx)
	if err != nil {
		return err
	}
	if g.Dir == dir {
		return nil
	}
	if err := store.DropOtherChunks(tx, dir); err != nil {
		return err
	}
	return store.PutGone(tx, &store.Gone{Dir: dir, Active: true})
}

// cleanGone goes on removing the states of files that no longer exist:
// memlist.ChunkEntries states from where the last turn stopped. A top-level file
// is looked up by its name; a sub-folder file also must still be one
// pointers name (subs). A state whose key is a redacted name (the file's
// real name held a secret) cannot be looked up and is kept.
func cleanGone(tx *bolt.Tx, dir string, subs []string) error {
	g, ok, err := store.GetGone(tx)
	if err != nil || !ok || !g.Active {
		return err
	}
	named := make(map[string]bool, len(subs))
	for _, s := range subs {
		named[s] = true
	}
	var del []string
	end := store.FileKeysAfter(tx, g.After, memlist.ChunkEntries, func(key string) {
		g.After = key
		if strings.HasPrefix(key, "\x00") || strings.Contains(key, "[REDACTED") {
			return
		}
		sub := strings.Contains(key, "/")
		if sub && (!named[key] || path.Clean(key) != key || strings.HasPrefix(key, "../")) {
			del = append(del, key)
			return
		}
		if _, err := os.Lstat(dir + "/" + key); errors.Is(err, fs.ErrNotExist) {
			del = append(del, key)
		}
	})
	if end {
		g.Active, g.After = false, ""
	}
	if err := store.DeleteFileStates(tx, del); err != nil {
		return err
	}
	return store.PutGone(tx, &g)
}
