package journal

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/intermem/intermem/pkg/atomicfile"
	"github.com/intermem/intermem/pkg/confine"
)

// ErrContended is returned when another program kept changing a file while
// the journal tried to replace it. The operation is left resumable.
var ErrContended = errors.New("a file kept changing while intermem wrote it")

// maxAttempts bounds the compare-and-swap loop of one file.
const maxAttempts = 16

// testHook, when set by a test, runs at the named points of a swap:
// "compare" just before the compare-and-swap reads the file again, "swap"
// after the compare and immediately before the rename (the window the
// late-bytes check closes).
var testHook func(point, real string)

// view is the files of a phase (or a simulation) as the operation sees
// them: each real file read once, then changed in memory step by step.
// Step paths are logical; the view keys files by the real path confine
// resolves them to, so two names of one file (CLAUDE.md linked to
// AGENTS.md) are one file.
type view struct {
	places  confine.Places
	outside bool
	files   map[string]*file
	order   []*file // by first appearance
	// apply re-applies one step (Journal.replay, or an undo) when a file
	// must be recomputed from what it holds now.
	apply Applier
}

// file is one real file of a view.
type file struct {
	name   string // the logical path that first named it
	real   string
	base   []byte // as read
	baseOK bool
	cur    []byte // after the steps applied so far
	ok     bool
	steps  []*Step
}

func newView(p confine.Places, allowOutside bool) *view {
	return &view{places: p, outside: allowOutside, files: map[string]*file{}}
}

// file returns the view's file for a logical path, reading it the first
// time. The path is judged by confine.
func (v *view) file(path string) (*file, error) {
	real, err := v.places.Resolve(path, v.outside)
	if err != nil {
		return nil, err
	}
	if f, ok := v.files[real]; ok {
		return f, nil
	}
	b, ok, err := ReadFile(real)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	f := &file{name: path, real: real, base: b, baseOK: ok, cur: b, ok: ok}
	v.files[real] = f
	v.order = append(v.order, f)
	return f, nil
}

// read is the Reader appliers get: the files of the view as the operation
// leaves them so far, other files from disk; every path judged by confine.
func (v *view) read(path string) ([]byte, bool, error) {
	real, err := v.places.Resolve(path, v.outside)
	if err != nil {
		return nil, false, err
	}
	if f, ok := v.files[real]; ok {
		return f.cur, f.ok, nil
	}
	return ReadFile(real)
}

// recompute applies f's steps, in order, to in.
func (v *view) recompute(f *file, in []byte, ok bool) ([]byte, bool, error) {
	for _, s := range f.steps {
		next, keep, err := v.apply(s, in, ok, v.read)
		if err != nil {
			return nil, false, fmt.Errorf("%w: %s %s: %v", ErrConflict, s.Action, s.Path, err)
		}
		in, ok = next, keep
	}
	return in, ok, nil
}

// commit writes f's new content with a compare-and-swap loop. Each attempt
// opens the file and reads it; if it no longer holds what the steps were
// applied to, they are re-applied to what it holds now. The new content is
// written to the temporary file and fsynced; immediately before the rename
// the file must still be the same inode holding the bytes read — or those
// bytes and more after them: another program appended, as another Claude
// Code session appends to MEMORY.md — else the attempt starts over.
//
// After the rename, the replaced inode (still open) is read again. Bytes
// appended to it after the read (before the compare, or racing the rename)
// are appended to the new file with O_APPEND, the one write that cannot
// lose another appender's bytes, so however fast another program appends
// the file is rewritten once. A change that is not an append goes through
// the loop again (the steps re-applied to it when the new file is still
// ours); bytes that cannot be merged are kept beside the operation's
// backups, with a log line.
func (j *Journal) commit(opID string, v *view, f *file) error {
	var carry *lateChange
	for attempt := 0; attempt < maxAttempts; attempt++ {
		old, cur, exists, err := openRead(f.real)
		if err != nil {
			return fmt.Errorf("%w: read %s: %v", ErrConflict, f.name, err)
		}
		in, inOK := cur, exists
		if carry != nil {
			if m, mOK, merged := carry.merge(cur, exists); merged {
				in, inOK = m, mOK
			} else {
				j.keepLate(opID, f, carry.late)
				carry = nil
			}
		}
		next, keep := f.cur, f.ok
		if carry != nil || exists != f.baseOK || !bytes.Equal(cur, f.base) {
			// Changed since the phase read it, or a late change to take:
			// the steps again, on what it holds now.
			next, keep, err = v.recompute(f, in, inOK)
			if err != nil {
				// The steps no longer apply. A late change still goes in,
				// as it is, or beside the backups.
				if carry != nil {
					if ok, _ := j.swap(opID, f, old, cur, exists, in, inOK); !ok {
						j.keepLate(opID, f, carry.late)
					}
				}
				closeFile(old)
				return err
			}
		}
		if keep == exists && bytes.Equal(next, cur) {
			closeFile(old)
			return nil // nothing to write
		}
		swapped, err := j.swap(opID, f, old, cur, exists, next, keep)
		if err != nil || !swapped {
			closeFile(old)
			if err != nil {
				if carry != nil {
					j.keepLate(opID, f, carry.late)
				}
				return err
			}
			continue // changed under us: read again
		}
		f.base, f.baseOK, f.cur, f.ok = next, keep, next, keep
		carry = nil
		if old == nil {
			return nil
		}
		late, err := settled(old)
		closeFile(old)
		if err != nil || bytes.Equal(late, cur) {
			return nil
		}
		if keep && len(late) > len(cur) && bytes.HasPrefix(late, cur) {
			if err := appendFile(f.real, late[len(cur):]); err != nil {
				j.keepLate(opID, f, late)
			}
			return nil
		}
		carry = &lateChange{late: late, wrote: next, keep: keep}
	}
	if carry != nil {
		j.keepLate(opID, f, carry.late)
	}
	return fmt.Errorf("%w: %s", ErrContended, f.name)
}

// lateChange is a change another program made to a replaced file after the
// read that was not an append: we put wrote in its place (or deleted it,
// !keep), and the old inode then held late.
type lateChange struct {
	late, wrote []byte
	keep        bool
}

// merge brings the late change into base, what the file holds now: it is
// taken whole when the file still holds what we wrote (or is still gone).
// merged is false when the file changed again since.
func (c *lateChange) merge(base []byte, ok bool) (out []byte, outOK, merged bool) {
	if !ok && !c.keep || ok && c.keep && bytes.Equal(base, c.wrote) {
		return c.late, true, true
	}
	return nil, false, false
}

// appendFile appends b to an existing file, fsynced.
func appendFile(real string, b []byte) error {
	f, err := os.OpenFile(real, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// unlinkGone removes the links in the memory directory that named f once
// the phase has left f absent: a memory file kept elsewhere and the link
// that names it are one memory, and a link left dangling would read as a
// pointer to a missing file. Only a link that leads nowhere now is
// removed, so running it again after a crash (the steps not yet marked
// done) finishes the job and changes nothing else.
func (j *Journal) unlinkGone(f *file) error {
	if f.ok {
		return nil
	}
	seen := map[string]bool{}
	for _, s := range f.steps {
		path := filepath.Clean(s.Path)
		if seen[path] || j.Places.Classify(path) != confine.Memory {
			continue
		}
		seen[path] = true
		if st, err := os.Lstat(path); err != nil || st.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
			continue // it leads somewhere: not what the phase deleted
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("journal: remove the link %s: %w", s.Path, err)
		}
		atomicfile.SyncDir(filepath.Dir(path))
	}
	return nil
}

// swap replaces f (which held cur, through the open old) with next, or
// deletes it when !keep, provided it still holds cur. It reports false
// when the file changed and nothing was done.
func (j *Journal) swap(opID string, f *file, old *os.File, cur []byte, exists bool, next []byte, keep bool) (bool, error) {
	var tmp string
	if keep {
		mode := fs.FileMode(0o644)
		if old != nil {
			if st, err := old.Stat(); err == nil {
				mode = st.Mode().Perm()
			}
		}
		if err := os.MkdirAll(filepath.Dir(f.real), 0o755); err != nil {
			return false, fmt.Errorf("journal: %w", err)
		}
		var err error
		tmp, err = atomicfile.Temp(filepath.Dir(f.real), filepath.Base(f.real), next, atomicfile.Options{Perm: mode, Tag: tempTag(opID)})
		if err != nil {
			return false, fmt.Errorf("journal: write %s: %w", f.name, err)
		}
	}
	if testHook != nil {
		testHook("compare", f.real)
	}
	same, appended, err := unchanged(f.real, old, cur, exists)
	if err != nil || !(same || appended && keep) {
		if tmp != "" {
			os.Remove(tmp)
		}
		return false, err
	}
	if testHook != nil {
		testHook("swap", f.real)
	}
	if keep {
		if err := os.Rename(tmp, f.real); err != nil {
			os.Remove(tmp)
			return false, fmt.Errorf("journal: write %s: %w", f.name, err)
		}
	} else if err := os.Remove(f.real); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("journal: remove %s: %w", f.name, err)
	}
	atomicfile.SyncDir(filepath.Dir(f.real))
	return true, nil
}

// unchanged reports whether real is still the file old (the same inode)
// holding cur, or still absent when it was; appended, whether it is the
// same inode holding cur followed by more bytes.
func unchanged(real string, old *os.File, cur []byte, exists bool) (same, appended bool, err error) {
	now, err := os.Open(real)
	if errors.Is(err, fs.ErrNotExist) {
		return !exists, false, nil
	}
	if err != nil {
		return false, false, fmt.Errorf("%w: read %s: %v", ErrConflict, real, err)
	}
	defer now.Close()
	if !exists || old == nil {
		return false, false, nil
	}
	a, err1 := old.Stat()
	b, err2 := now.Stat()
	if err1 != nil || err2 != nil || !os.SameFile(a, b) {
		return false, false, nil
	}
	content, err := io.ReadAll(now)
	if err != nil {
		return false, false, fmt.Errorf("%w: read %s: %v", ErrConflict, real, err)
	}
	if bytes.Equal(content, cur) {
		return true, false, nil
	}
	return false, len(content) > len(cur) && bytes.HasPrefix(content, cur), nil
}

// keepLate saves bytes another program wrote that could not be merged,
// beside the operation's backups, so nothing is lost.
func (j *Journal) keepLate(opID string, f *file, late []byte) {
	dir := j.BackupDir(opID)
	dst := filepath.Join(dir, backupName(f.real)+".late")
	for i := 2; ; i++ {
		if _, err := os.Lstat(dst); errors.Is(err, fs.ErrNotExist) {
			break
		}
		dst = filepath.Join(dir, fmt.Sprintf("%s.late-%d", backupName(f.real), i))
	}
	err := j.checkState(dst)
	if err == nil {
		err = os.MkdirAll(dir, 0o700)
	}
	if err == nil {
		err = atomicfile.WriteState(j.StateDir, dst, late, atomicfile.Options{})
	}
	if err != nil {
		j.logf("%s changed while intermem replaced it and the change could not be kept: %v", f.name, err)
		return
	}
	j.logf("%s changed while intermem replaced it; the other program's version is kept in %s", f.name, dst)
}

// openRead opens real and reads it; old is nil when it does not exist.
func openRead(real string) (old *os.File, content []byte, exists bool, err error) {
	f, err := os.Open(real)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, false, nil
	}
	if err != nil {
		return nil, nil, false, err
	}
	if st, err := f.Stat(); err == nil && !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, false, fmt.Errorf("%s is not a regular file", real)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		f.Close()
		return nil, nil, false, err
	}
	return f, b, true, nil
}

// A writer that opened the replaced file before the rename may not have
// written yet: on a busy machine it can be descheduled between its open and
// its write for longer than the rename takes. So the late bytes are taken
// once no process holds the old file open for writing (noWriters), waiting
// at most writersWait; where that cannot be known, once the file has stayed
// unchanged for settle.
const (
	writersWait = 2 * time.Second
	settle      = 10 * time.Millisecond
)

// settled reads the replaced file old once no writer can add to it.
func settled(old *os.File) ([]byte, error) {
	deadline := time.Now().Add(writersWait)
	for {
		none, ok := noWriters(old)
		if !ok {
			break
		}
		if none || time.Now().After(deadline) {
			return readAll(old)
		}
		time.Sleep(time.Millisecond)
	}
	late, err := readAll(old)
	for i := 0; err == nil && i < maxAttempts; i++ {
		time.Sleep(settle)
		var again []byte
		if again, err = readAll(old); err == nil && bytes.Equal(again, late) {
			break
		}
		late = again
	}
	return late, err
}

// readAll reads an open file again from its start.
func readAll(f *os.File) ([]byte, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return io.ReadAll(f)
}

func closeFile(f *os.File) {
	if f != nil {
		f.Close()
	}
}
