package store

import (
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The typed accessors of the records package snapshot keeps: sessions
// (BucketSessions), and in BucketFiles the state of each memory file as
// the last pass read it (FileState, under the file's name) beside the
// records of the sweeps over turns, under keys no memory file can have
// (they start with a NUL byte): the sub-folder files pointers name
// (Subs), each chunk of a sweep (Chunk, under ChunkPrefix) and where the
// removal of gone files' states stands (Gone). The bytes are what the
// snapshot package wrote before they were typed here.

// GetSession returns the session stored under id; ok is false when there
// is none, and a record that no longer decodes is an error.
func GetSession(tx *bolt.Tx, id string) (s Session, ok bool, err error) {
	ok, err = Get(tx, BucketSessions, id, &s)
	return s, ok, err
}

// PutSession stores s under id (the session's id: the key a pass read it
// by, whatever the record says).
func PutSession(tx *bolt.Tx, id string, s *Session) error { return Put(tx, BucketSessions, id, s) }

// GetFileState returns the state of the memory file stored under name;
// ok is false when there is none, and a record that no longer decodes is
// an error.
func GetFileState(tx *bolt.Tx, name string) (st FileState, ok bool, err error) {
	ok, err = Get(tx, BucketFiles, name, &st)
	return st, ok, err
}

// PutFileState stores the state of the memory file name.
func PutFileState(tx *bolt.Tx, name string, st *FileState) error {
	return Put(tx, BucketFiles, name, st)
}

// EachFileState calls fn with every record of BucketFiles that decodes as
// a FileState, with its key: the memory files' states, and the sweeps'
// records that decode as one (a key starting with a NUL byte is one of
// theirs; callers that mean the files alone skip those).
func EachFileState(tx *bolt.Tx, fn func(name string, st *FileState) error) error {
	return Each(tx, BucketFiles, fn)
}

// DeleteFileStates removes the records of BucketFiles stored under names.
func DeleteFileStates(tx *bolt.Tx, names []string) error {
	b := tx.Bucket(BucketFiles)
	if b == nil {
		return nil
	}
	for _, k := range names {
		if err := b.Delete([]byte(k)); err != nil {
			return err
		}
	}
	return nil
}

// FileKeysAfter calls fn with the keys of BucketFiles that follow after
// (every key when after is empty or absent: from the first one after its
// place), in order, at most n of them, and reports whether it reached the
// last key: a walk over many turns, a few keys a turn, that removes
// nothing while it walks. No record is read.
func FileKeysAfter(tx *bolt.Tx, after string, n int, fn func(key string)) (end bool) {
	b := tx.Bucket(BucketFiles)
	if b == nil {
		return true
	}
	c := b.Cursor()
	k, _ := c.Seek([]byte(after))
	if k != nil && string(k) == after {
		k, _ = c.Next()
	}
	for i := 0; k != nil && i < n; k, _ = c.Next() {
		fn(string(k))
		i++
	}
	return k == nil
}

// subsKey keys, in BucketFiles, the sub-folder files pointers name.
const subsKey = "\x00subs"

// GetSubs returns the sub-folder files that pointers named at the last
// pass, sorted, as PutSubs stored them.
func GetSubs(tx *bolt.Tx) ([]string, error) {
	var subs []string
	_, err := Get(tx, BucketFiles, subsKey, &subs)
	return subs, err
}

// PutSubs stores the sub-folder files that pointers name.
func PutSubs(tx *bolt.Tx, subs []string) error { return Put(tx, BucketFiles, subsKey, subs) }

// ChunkPrefix starts the keys, in BucketFiles, of a sweep's chunks: a
// chunk's key is ChunkPrefix, the fingerprint of the directory it was met
// in, a slash and its place in the sweep (package snapshot).
const ChunkPrefix = "\x00chunk/"

// Chunk is what passes stored of a sweep turn's chunk (package snapshot):
// the sum of its files' names and fingerprints, when a pass last read one
// of them, and the sessions that met them all since (the latest few).
type Chunk struct {
	Sum      string    `json:"sum"`
	At       time.Time `json:"at"`
	Sessions []string  `json:"sessions,omitempty"`
}

// GetChunk returns the chunk stored under key; ok is false when there is
// none, and a record that no longer decodes is an error.
func GetChunk(tx *bolt.Tx, key string) (c Chunk, ok bool, err error) {
	ok, err = Get(tx, BucketFiles, key, &c)
	return c, ok, err
}

// PutChunk stores c under key (ChunkPrefix…).
func PutChunk(tx *bolt.Tx, key string, c *Chunk) error { return Put(tx, BucketFiles, key, c) }

// DropOtherChunks removes the chunks met in another directory than the
// one of fingerprint dir (its names changed: their places mean nothing
// now).
func DropOtherChunks(tx *bolt.Tx, dir string) error {
	b := tx.Bucket(BucketFiles)
	if b == nil {
		return nil
	}
	var keys [][]byte
	c := b.Cursor()
	for k, _ := c.Seek([]byte(ChunkPrefix)); k != nil && strings.HasPrefix(string(k), ChunkPrefix); k, _ = c.Next() {
		if !strings.HasPrefix(string(k), ChunkPrefix+dir+"/") {
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

// goneKey keys, in BucketFiles, the removal of gone files' states.
const goneKey = "\x00gone"

// Gone is where the removal of the states of memory files that no longer
// exist stands (package snapshot, cleanGone).
type Gone struct {
	Dir    string `json:"dir"`             // the directory fingerprint of the sweep that started it
	After  string `json:"after,omitempty"` // the last state key looked at
	Active bool   `json:"active,omitempty"`
}

// GetGone returns where the removal of gone files' states stands; ok is
// false when none was started, and a record that no longer decodes is an
// error.
func GetGone(tx *bolt.Tx) (g Gone, ok bool, err error) {
	ok, err = Get(tx, BucketFiles, goneKey, &g)
	return g, ok, err
}

// PutGone stores where the removal of gone files' states stands.
func PutGone(tx *bolt.Tx, g *Gone) error { return Put(tx, BucketFiles, goneKey, g) }
