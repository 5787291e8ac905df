package snapshot

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/source/automemory"
	"github.com/intermem/intermem/pkg/store"
)

// Re-recording memory files
//
// A memory file's stored parse (automemory.Encode) is a record of one
// version; a store an older intermem wrote holds another (JSON), and a
// record may be damaged. A session start uses neither: it parses such a
// file itself, at every start, and nothing else would replace the record
// until the file changes — a pass reads only files whose fingerprint
// changed — or a command rebuilds the catalog. So the session's end,
// which always runs the full hook, re-records them (Rerecord):
//
//   - It looks only at the files of its own listing (the pass's: the whole
//     directory, or the turn's chunk of a sweep over turns), never at a
//     path a stored key names, and only at files that have a stored parse:
//     one that cannot be stored (a link holding a secret) is not read at
//     every session end for nothing.
//   - It finds them in a read transaction, in key order (whose mapped
//     pages are given back as it reads, store/mapped.go), by decoding each
//     stored parse as the session start does; a parse that decodes as the
//     file's own is current and never rewritten.
//   - It reads each such file as a pass reads a changed one — readFile,
//     the parse stored unscreened at the fingerprint the open file had
//     before the read, racy within RacyWindow of its modification —, in
//     write transactions of at most rerecordFiles files and rerecordBytes
//     of them read, each file's record looked at again first (another
//     writer may have stored a current one meanwhile), the pages each
//     mapped given back after it.
//   - No file is started past the deadline, nor once a command waits for
//     the store; a later session end finds the rest again.

// rerecordBytes and rerecordFiles bound the bytes and the memory files
// one write transaction of Rerecord reads, so that the pages it dirties
// and maps stay few (a hook's peak resident set is held under 30 MB;
// variables for tests).
var (
	rerecordBytes = 1 << 20
	rerecordFiles = 256
)

// Rerecord stores again the parse of every file of l whose stored parse is
// of another version or does not decode, until deadline (zero: none). It
// returns how many files it re-recorded and whether it reached them all.
func Rerecord(s *store.Store, l *Listing, now, deadline time.Time, logf func(string, ...any)) (n int, all bool, err error) {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	// The files in the order of their keys: the lookups share their pages
	// (store/mapped.go: a store read at random costs a page fault a record).
	files := make([]keyed, 0, len(l.Files))
	for _, f := range l.Files {
		if f.Skip == "" {
			files = append(files, keyed{key: parseKey(f.Name), f: f})
		}
	}
	slices.SortFunc(files, func(a, b keyed) int { return strings.Compare(a.key, b.key) })
	var todo []keyed
	if err := s.View(func(tx *bolt.Tx) error {
		ct := store.Catalog(tx)
		for _, k := range files {
			if b := ct.Blob(k.key); b != nil && !currentParse(k.f.Name, b) {
				todo = append(todo, k)
			}
		}
		return nil
	}); err != nil {
		return 0, false, err
	}
	late := func() bool {
		return (!deadline.IsZero() && time.Now().After(deadline)) || s.Waited()
	}
	for len(todo) > 0 && !late() {
		if err := s.Update(func(tx *bolt.Tx) error {
			ct := store.Catalog(tx)
			read := 0
			for done := 0; len(todo) > 0 && read < rerecordBytes && done < rerecordFiles && !late(); done++ {
				k := todo[0]
				f := k.f
				todo = todo[1:]
				if b := ct.Blob(k.key); b == nil || currentParse(f.Name, b) {
					continue
				}
				content, fp, err := readFile(filepath.Join(l.Dir, filepath.FromSlash(f.Name)))
				if err != nil {
					// Gone or changed into something else since the
					// listing: a pass sees it as it is then.
					if !errors.Is(err, fs.ErrNotExist) {
						logf("memory file %s: stored parse not renewed: %v", safeName(f.Name), err)
					}
					continue
				}
				read += len(content)
				mf := automem.ParseMeasured(f.Name, content)
				blob, ok := automemory.Encode(mf, false)
				if !ok {
					continue
				}
				racy := time.Since(fp.Modified()) < RacyWindow
				if err := ct.PutParse(automemory.Name, automemory.Prefix+mf.SafeName, fp, racy, blob, now); err != nil {
					return err
				}
				n++
			}
			return nil
		}); err != nil {
			return n, false, err
		}
		// A write transaction keeps every page it read mapped: give them
		// back before the next (store.Shed).
		_ = s.View(func(tx *bolt.Tx) error { store.Shed(tx); return nil })
	}
	return n, len(todo) == 0, nil
}

// keyed is a listed file with the catalog's key of its stored parse.
type keyed struct {
	key string
	f   File
}

// parseKey is the catalog's key of the stored parse of the memory file
// called name (keepParse's: the file's redacted name).
func parseKey(name string) string {
	return store.FileKey(automemory.Name, automemory.Prefix+safeName(name))
}

// currentParse reports whether b, the stored parse of the memory file
// called name, is one a session start uses: it decodes as this version's
// and as that file's (automemory.Decode, the session start's test).
func currentParse(name string, b []byte) bool {
	f, _, _, err := automemory.Decode(name, b)
	return err == nil && f.SafeName == safeName(name)
}
