package store

import (
	"encoding/binary"

	bolt "go.etcd.io/bbolt"
)

// The typed accessors of the records other packages keep here: the
// continuity records' lookups (continuity), the per-user registry of
// projects, rejections (ops), the backups' creation order (journal) and
// the journal's own records, which only the journal decodes: it must see
// a record that no longer decodes as one (Journal.Scan), so it is handed
// the raw bytes (EachJournal), as the plan is stored as the plan
// package's type (PutPlan, GetPlan).

// HasLongTerm reports whether tx holds a head, a phase, a decision or a
// scoped memory: a cursor a bucket, nothing decoded.
func HasLongTerm(tx *bolt.Tx) bool {
	for _, b := range [][]byte{BucketHead, BucketPhases, BucketDecided, BucketMemories} {
		if bk := tx.Bucket(b); bk != nil {
			if k, _ := bk.Cursor().First(); k != nil {
				return true
			}
		}
	}
	return false
}

// HasCheckpoint reports whether a checkpoint is stored under id, whether
// or not it decodes.
func HasCheckpoint(tx *bolt.Tx, id string) bool {
	b := tx.Bucket(BucketCheckpoints)
	return b != nil && b.Get([]byte(id)) != nil
}

// DeleteCheckpoint removes the checkpoint id.
func DeleteCheckpoint(tx *bolt.Tx, id string) error { return Delete(tx, BucketCheckpoints, id) }

// GetDecided returns the decision stored under id; ok is false when there
// is none, and a record that no longer decodes is an error.
func GetDecided(tx *bolt.Tx, id string) (d PhaseDecision, ok bool, err error) {
	ok, err = Get(tx, BucketDecided, id, &d)
	return d, ok, err
}

// GetMemory returns the scoped memory stored under id; ok is false when
// there is none, and a record that no longer decodes is an error.
func GetMemory(tx *bolt.Tx, id string) (m ScopedMemory, ok bool, err error) {
	ok, err = Get(tx, BucketMemories, id, &m)
	return m, ok, err
}

// GetUserProject returns the per-user registry's record of the project at
// root; ok is false when there is none, and a record that no longer
// decodes is an error.
func GetUserProject(tx *bolt.Tx, root string) (p UserProject, ok bool, err error) {
	ok, err = Get(tx, BucketProjects, root, &p)
	return p, ok, err
}

// PutUserProject stores p under its root.
func PutUserProject(tx *bolt.Tx, p *UserProject) error { return Put(tx, BucketProjects, p.Root, p) }

// EachUserProject calls fn with every record of the per-user registry
// that decodes, with the key it is stored under.
func EachUserProject(tx *bolt.Tx, fn func(root string, p *UserProject) error) error {
	return Each(tx, BucketProjects, fn)
}

// PutRejection records that the plan's entry d.ID was rejected.
func PutRejection(tx *bolt.Tx, d *Decision) error { return Put(tx, BucketDecisions, d.ID, d) }

// RecordBackup records, in creation order, that the operation opID has
// (or is about to have) a backup directory. The order is the bucket's
// sequence, so a clock that jumps back cannot make a new backup look old.
func RecordBackup(tx *bolt.Tx, opID string) error {
	b, err := tx.CreateBucketIfNotExists(BucketBackups)
	if err != nil {
		return err
	}
	seq, err := b.NextSequence()
	if err != nil {
		return err
	}
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], seq)
	return b.Put(k[:], []byte(opID))
}

// BackupRecord is one record of RecordBackup: Key is where it is stored,
// for ForgetBackups.
type BackupRecord struct {
	Key  string
	OpID string
}

// Backups returns the backup records in creation order (an operation
// may have more than one: one a run that backed up).
func Backups(tx *bolt.Tx) ([]BackupRecord, error) {
	var out []BackupRecord
	err := EachRaw(tx, BucketBackups, func(k string, v []byte) error {
		out = append(out, BackupRecord{Key: k, OpID: string(v)})
		return nil
	})
	return out, err
}

// ForgetBackups deletes the backup records stored under keys (as Backups
// gave them).
func ForgetBackups(tx *bolt.Tx, keys []string) error {
	for _, k := range keys {
		if err := Delete(tx, BucketBackups, k); err != nil {
			return err
		}
	}
	return nil
}

// EachJournal calls fn with every journal record, raw, in id order: the
// journal decodes its own records (a record that no longer decodes is a
// problem it reports, not one to skip).
func EachJournal(tx *bolt.Tx, fn func(id string, raw []byte) error) error {
	return EachRaw(tx, BucketJournal, fn)
}

// PutJournal stores the journal record op (the journal's Op) under id.
func PutJournal(tx *bolt.Tx, id string, op any) error { return Put(tx, BucketJournal, id, op) }

// DeleteJournal removes the journal record id.
func DeleteJournal(tx *bolt.Tx, id string) error { return Delete(tx, BucketJournal, id) }
