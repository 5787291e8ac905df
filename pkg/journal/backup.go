package journal

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/atomicfile"
	"github.com/intermem/intermem/pkg/store"
)

// BackupDir returns where an Op's backups live.
func (j *Journal) BackupDir(opID string) string {
	return filepath.Join(j.StateDir, "backups", opID)
}

// backupName keeps the file's base name and a short hash of its real
// directory, so files from different directories cannot collide.
func backupName(real string) string {
	return Hash([]byte(filepath.Dir(real)))[:8] + "-" + filepath.Base(real)
}

// checkState requires a path under the state directory to be intermem's
// own (no symlink, owned by the user; package confine). Without Places (a
// journal outside a project, in tests) the state directory is trusted.
func (j *Journal) checkState(path string) error {
	if j.Places.Root == "" {
		return nil
	}
	_, err := j.Places.Resolve(path, false)
	return err
}

// backup copies f's bytes as the phase read them into the Op's backup
// directory once.
func (j *Journal) backup(opID string, f *file) error {
	if !f.baseOK {
		return nil
	}
	dir := j.BackupDir(opID)
	dst := filepath.Join(dir, backupName(f.real))
	if err := j.checkState(dst); err != nil {
		return fmt.Errorf("journal: backup: %w", err)
	}
	if _, err := os.Lstat(dst); err == nil {
		return nil // already backed up by an earlier attempt: keep the oldest bytes
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("journal: backup: %w", err)
	}
	if err := atomicfile.WriteState(j.StateDir, dst, f.base, atomicfile.Options{}); err != nil {
		return fmt.Errorf("journal: backup: %w", err)
	}
	return nil
}

// trimBackups keeps the newest KeepBacks backup directories, newest by the
// creation order recorded in the store; directories the store does not
// know (made by an older intermem) count as older than every recorded one.
// The directory of protect (the Op just run) is never deleted, nor is the
// newest recorded one.
func (j *Journal) trimBackups(protect string) {
	keep := j.KeepBacks
	if keep <= 0 {
		keep = DefaultKeepBackups
	}
	root := filepath.Join(j.StateDir, "backups")
	if err := j.checkState(root); err != nil {
		j.logf("backups not trimmed: %v", err)
		return
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		return
	}
	present := map[string]bool{}
	for _, e := range ents {
		if e.IsDir() {
			present[e.Name()] = true
		}
	}
	if len(present) <= keep {
		return
	}
	var recorded []string
	keys := map[string][]string{}
	_ = j.Store.View(func(tx *bolt.Tx) error {
		recs, err := store.Backups(tx)
		for _, r := range recs {
			if keys[r.OpID] == nil {
				recorded = append(recorded, r.OpID)
			}
			keys[r.OpID] = append(keys[r.OpID], r.Key)
		}
		return err
	})
	var unknown, known []string
	for id := range present {
		if keys[id] == nil {
			unknown = append(unknown, id)
		}
	}
	sort.Strings(unknown)
	for _, id := range recorded {
		if present[id] {
			known = append(known, id)
		}
	}
	newest := ""
	if len(known) > 0 {
		newest = known[len(known)-1]
	}
	var gone []string
	excess := len(present) - keep
	for _, id := range append(unknown, known...) {
		if excess <= 0 {
			break
		}
		if id == protect || id == newest {
			continue
		}
		if err := os.RemoveAll(filepath.Join(root, id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			j.logf("removing old backup %s: %v", id, err)
			continue
		}
		gone = append(gone, id)
		excess--
	}
	// Forget what is gone, including records of directories removed by hand.
	for id := range keys {
		if !present[id] {
			gone = append(gone, id)
		}
	}
	if len(gone) == 0 {
		return
	}
	var forget []string
	for _, id := range gone {
		forget = append(forget, keys[id]...)
	}
	_ = j.Store.Update(func(tx *bolt.Tx) error { return store.ForgetBackups(tx, forget) })
}
