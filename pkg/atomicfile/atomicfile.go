// Package atomicfile is intermem's one way to replace a file's content so
// that a crash or a concurrent reader sees the old bytes or the new ones,
// never a torn mixture, and so that no name an attacker planted is written
// through.
//
// The algorithm (Write):
//
//  1. Create a temporary file beside the destination (rename(2) is atomic
//     only within one file system) with a name that cannot be guessed: the
//     destination's base name, a caller's tag, 16 random hex digits. It is
//     opened O_CREAT|O_EXCL|O_NOFOLLOW, so a file or link already there
//     — planted to redirect the write — makes the create fail instead of
//     being followed or truncated; a fresh random name is tried a few
//     times, then the error is returned.
//  2. Write the bytes, set the mode through the descriptor (not subject to
//     the umask, and never a path lookup), fsync.
//  3. rename(2) the temporary file over the destination. The rename
//     replaces the destination's name: a symlink there is replaced, never
//     followed.
//  4. fsync the directory, so the rename itself survives a crash.
//
// Any failure removes the temporary file. Options.NoSync skips both fsyncs
// for caches, whose loss in a crash costs nothing (the rename is still
// atomic for readers).
//
// WriteState is Write for intermem's own files: the destination must be in
// the state directory, and every existing component from the state
// directory down must be a real directory (last, a regular file) of this
// user's (confine.InState), so no planted link in .intermem redirects it.
//
// Temp is steps 1–2 alone, for writers that must decide at the last moment
// whether to rename (the journal's compare-and-swap) or that publish the
// file another way (a link(2) that must not replace an existing file).
// Tag lets such a writer find its own leftovers after a crash (Leftovers).
package atomicfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/intermem/intermem/pkg/confine"
)

// Options tune a write.
type Options struct {
	// Perm is the new file's mode; 0 means 0o600.
	Perm fs.FileMode
	// NoSync skips the fsync of the file and of its directory: for caches,
	// which a crash may lose at no cost. Readers still see old or new.
	NoSync bool
	// Tag goes into the temporary file's name between the destination's
	// base name and the random part, so a caller can find the temporary
	// files of one of its runs after a crash (Leftovers). It must not
	// contain a path separator.
	Tag string
}

// attempts bounds the names tried when a random name is already taken:
// with 64 random bits, a second collision means someone plants names.
const attempts = 4

// Write replaces path with data: a temporary file beside it, written and
// fsynced, renamed over it, and the directory fsynced (see the package
// comment). The directory must exist.
func Write(path string, data []byte, o Options) error {
	tmp, err := Temp(filepath.Dir(path), filepath.Base(path), data, o)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	if !o.NoSync {
		SyncDir(filepath.Dir(path))
	}
	return nil
}

// WriteState is Write for a file of intermem's state directory: path must
// be below stateDir, and stateDir and every existing component down to
// path must be a real directory (last, a regular file) owned by this user
// (confine.InState); otherwise nothing is written and the error says
// which entry is wrong.
func WriteState(stateDir, path string, data []byte, o Options) error {
	if err := confine.InState(stateDir, path); err != nil {
		return err
	}
	return Write(path, data, o)
}

// Temp writes data to a new file in dir whose name starts with "." + base
// + "." + o.Tag (when set) + "-" and ends with 16 random hex digits and
// ".tmp"; the file is created with O_EXCL|O_NOFOLLOW, given mode o.Perm
// and fsynced (unless o.NoSync). It returns the file's path; on error no
// file is left.
func Temp(dir, base string, data []byte, o Options) (string, error) {
	if strings.ContainsRune(o.Tag, filepath.Separator) || strings.ContainsRune(base, filepath.Separator) {
		return "", fmt.Errorf("atomicfile: bad temporary name %q, %q", base, o.Tag)
	}
	perm := o.Perm
	if perm == 0 {
		perm = 0o600
	}
	var f *os.File
	var err error
	for i := 0; i < attempts; i++ {
		var r [8]byte
		if _, err = rand.Read(r[:]); err != nil {
			return "", fmt.Errorf("atomicfile: %w", err)
		}
		name := filepath.Join(dir, prefix(base, o.Tag)+hex.EncodeToString(r[:])+".tmp")
		f, err = os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return "", err
	}
	name := f.Name()
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Chmod(perm)
	}
	if werr == nil && !o.NoSync {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(name)
		return "", werr
	}
	return name, nil
}

// prefix is the fixed start of a temporary file's name.
func prefix(base, tag string) string {
	p := "." + base + "."
	if tag != "" {
		p += tag + "-"
	}
	return p
}

// Leftovers returns the temporary files Temp may have left in dir for any
// of bases and tags (a crash between Temp and the rename), reading dir
// once: the caller removes them when it knows no run of its own is still
// using them. Only names Temp makes are returned: a prefix, 16 hex digits,
// ".tmp".
func Leftovers(dir string, bases, tags []string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var prefixes []string
	for _, b := range bases {
		for _, t := range tags {
			prefixes = append(prefixes, prefix(b, t))
		}
	}
	var out []string
	for _, e := range ents {
		n := e.Name()
		if !strings.HasSuffix(n, ".tmp") {
			continue
		}
		for _, p := range prefixes {
			if !strings.HasPrefix(n, p) {
				continue
			}
			if r := n[len(p) : len(n)-len(".tmp")]; len(r) == 16 && isHex(r) {
				out = append(out, filepath.Join(dir, n))
				break
			}
		}
	}
	return out
}

func isHex(s string) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// SyncDir fsyncs a directory so that a rename or a new name in it survives
// a crash. Errors are ignored: not every file system supports it, and the
// data itself is already durable.
func SyncDir(dir string) {
	if d, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY, 0); err == nil {
		_ = d.Sync()
		d.Close()
	}
}
