package cite

import (
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// MaxBlob bounds the files Blob hashes: a larger file is not hashed.
const MaxBlob = 32 << 20

// ErrNotBlob is returned by Blob for what it does not hash: not a regular
// file, or larger than MaxBlob.
var ErrNotBlob = errors.New("not a regular file of at most 32 MiB")

// BlobHash returns the git object name of a blob holding data: the hex
// SHA-1 of "blob <len>\x00" followed by data, what `git hash-object`
// prints for a file with these bytes (no clean filter or line-end
// conversion configured). It is how intermem tells that cited code
// changed since an entry was validated without running git.
func BlobHash(data []byte) string {
	h := sha1.New()
	h.Write([]byte("blob " + strconv.Itoa(len(data)) + "\x00"))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// Blob returns BlobHash of the file rel (slash-separated, relative to
// root). Links are followed, as a citation's check follows them; callers
// hash only paths a Checker found Valid, so inside the project.
func Blob(root, rel string) (string, error) {
	f, fi, err := openRegular(filepath.Join(root, filepath.FromSlash(rel)))
	if errors.Is(err, errNotRegular) {
		return "", fmt.Errorf("%s: %w", rel, ErrNotBlob)
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	if fi.Size() > MaxBlob {
		return "", fmt.Errorf("%s: %w", rel, ErrNotBlob)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxBlob+1))
	if err != nil {
		return "", err
	}
	if len(data) > MaxBlob {
		return "", fmt.Errorf("%s: %w", rel, ErrNotBlob)
	}
	return BlobHash(data), nil
}

// Blobs returns the blob hash of every file a Valid result names (a file
// citation, or the file a symbol is cited in), by path; a file it cannot
// hash is left out.
func Blobs(root string, results []Result) map[string]string {
	out := map[string]string{}
	for _, r := range results {
		if r.Status != Valid || r.Kind != File && r.Kind != Symbol && r.Kind != Path {
			continue
		}
		if _, done := out[r.Path]; done {
			continue
		}
		if h, err := Blob(root, r.Path); err == nil {
			out[r.Path] = h
		}
	}
	return out
}

// errNotRegular is returned by openRegular for a path that leads to
// anything but a regular file.
var errNotRegular = errors.New("not a regular file")

// openRegular opens the file at path for reading, following links (a
// citation's check follows them, inside the project), and returns it only
// when the descriptor is a regular file. The open does not block: a FIFO
// cited by an entry, or put in place of a cited file, opens at once
// without a writer and is refused by its fstat, where a plain open would
// wait for a writer forever (and a read of a device would never end).
func openRegular(path string) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, errNotRegular
	}
	return f, fi, nil
}
