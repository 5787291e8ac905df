package snapshot

import (
	"os"
	"sort"

	"github.com/intermem/intermem/pkg/atomicfile"
	"github.com/intermem/intermem/pkg/memlist"
	"github.com/intermem/intermem/pkg/quiet"
	"github.com/intermem/intermem/pkg/store"
)

// saveQuiet records what lastPass read of session at the store's binding
// stat (taken before the read, and naming the transaction read), keeping
// the other sessions the copy holds for the same binding, with the memory
// directory memDir's listing in parts as it is now (memlist.Chunked; none
// for a small directory). A failure costs the next turn the store's
// read, nothing else: it is not reported.
func saveQuiet(stateDir, memDir, stat, session string, sess store.Session, subs []string) {
	if stat == "" || sess.Fingerprint == "" || sess.Sweep != nil {
		return
	}
	path := stateDir + string(os.PathSeparator) + quiet.Name
	rec := quiet.Session{FP: sess.Fingerprint, Ended: sess.Ended, Subs: subs}
	q, ok := quiet.Load(path)
	if !ok || q.Store != stat {
		q = quiet.File{Store: stat}
	}
	if q.Sessions == nil {
		q.Sessions = map[string]quiet.Session{}
	}
	q.Sessions[session] = rec
	q.Memory, _ = memlist.Chunked(memDir)
	if len(q.Sessions) > quiet.MaxSessions {
		// Keep this session and the first others by id: the copy is a
		// cache, a session left out only reads the store.
		ids := make([]string, 0, len(q.Sessions))
		for id := range q.Sessions {
			if id != session {
				ids = append(ids, id)
			}
		}
		sort.Strings(ids)
		for _, id := range ids[quiet.MaxSessions-1:] {
			delete(q.Sessions, id)
		}
	}
	b := q.Encode()
	if len(b) > quiet.MaxBytes {
		return
	}
	_ = atomicfile.WriteState(stateDir, path, b, atomicfile.Options{NoSync: true})
}

// QuietName is the quiet-turn file in the state directory (quiet.Name).
const QuietName = quiet.Name
