package snapshot

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/memlist"
	"github.com/intermem/intermem/pkg/redact"
	"github.com/intermem/intermem/pkg/source"
	"github.com/intermem/intermem/pkg/store"
)

// safeName is a file name as entries and logs show it: any secret in it
// redacted.
func safeName(name string) string {
	if name == memlist.Index {
		// Read at every turn: not worth building the redaction engine
		// for, on a turn that has nothing else to redact.
		return name
	}
	return redact.Name(name)
}

// readFile reads one memory file: a regular file (a link is followed),
// opened without blocking (a FIFO put there must not hang the hook), at
// most automem.MaxFileBytes, checked on the bytes read. fp is the
// catalog's fingerprint of the file (source.Fingerprint), taken from the
// open file before reading it: a parse stored under fp is trusted only
// while the file still has it, and a write during the read changes it
// (one within the clock's granularity is a racy fingerprint, trusted by
// nobody).
func readFile(p string) (b []byte, fp source.Fingerprint, err error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fp, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fp, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fp, errors.New("not a regular file")
	}
	b, err = io.ReadAll(io.LimitReader(f, automem.MaxFileBytes+1))
	if err != nil {
		return nil, fp, err
	}
	if len(b) > automem.MaxFileBytes {
		return nil, fp, fmt.Errorf("over the %d-byte limit", automem.MaxFileBytes)
	}
	return b, source.FingerprintOf(fi), nil
}

// Spoolable returns the listing's files as a spool file keeps them: by
// their redacted names. Never nil, so that an empty listing is still one.
func Spoolable(l *Listing) []File {
	out := make([]File, len(l.Files))
	for i, f := range l.Files {
		out[i] = File{Name: safeName(f.Name), FP: f.FP, Skip: f.Skip}
	}
	return out
}

// spooledListing turns the files of a spooled listing (redacted names,
// and hostile input like every spool byte) back into memory files: each
// carries the fingerprint it had when it was spooled, so Sync reads it
// only if it still has that fingerprint. A spooled name is used as a path
// only when it is a memory file's name at the top of memDir (no slash, no
// leading dot, *.md) or one of the sub-folder files the store's pointers
// name, and a file by that name exists whose redacted name it is;
// otherwise it is looked up by its redacted name among the first
// memlist.ChunkEntries entries of memDir (a file whose name held a secret). A name
// that matches no file, or two, is left out and counted in missing: the
// session's sweep reads that file in its turn.
func spooledListing(tx *bolt.Tx, memDir string, spooled []File) (l *Listing, missing int) {
	l = &Listing{Dir: memDir}
	if memDir == "" {
		return l, len(spooled)
	}
	named := map[string]bool{}
	for _, s := range Subs(tx) {
		named[s] = true
	}
	var unresolved []File
	for _, sf := range spooled {
		name := sf.Name
		direct := (memlist.MemoryName(name) && !strings.ContainsAny(name, "/\x00")) || (named[name] && path.Clean(name) == name && memlist.SubName(name))
		if direct && safeName(name) == name {
			if _, err := os.Lstat(filepath.Join(memDir, filepath.FromSlash(name))); err == nil {
				l.Files = append(l.Files, File{Name: name, FP: sf.FP, Skip: sf.Skip})
				continue
			}
		}
		unresolved = append(unresolved, sf)
	}
	if len(unresolved) == 0 {
		return l, 0
	}
	bySafe := map[string]string{}
	if d, err := memlist.OpenDir(memDir); err == nil {
		ents, _, _, _ := d.Read(0, memlist.ChunkEntries)
		d.Close()
		for _, e := range ents {
			if !memlist.MemoryName(e.Name) {
				continue
			}
			k := safeName(e.Name)
			if _, dup := bySafe[k]; dup {
				bySafe[k] = "" // two files redact alike: neither can be told
				continue
			}
			bySafe[k] = e.Name
		}
	}
	for _, sf := range unresolved {
		name := bySafe[sf.Name]
		if name == "" {
			missing++
			continue
		}
		l.Files = append(l.Files, File{Name: name, FP: sf.FP, Skip: sf.Skip})
	}
	return l, missing
}

// File is one memory file as a Stop hook lists it (memlist.File).
type File = memlist.File

// Listing is the memory directory as one Stop hook sees it
// (memlist.Listing).
type Listing = memlist.Listing

// List lists the memory files whole (memlist.List).
func List(dir string, subs []string) (*Listing, error) { return memlist.List(dir, subs) }

// Turn lists what one turn of session sweep prev (nil: a new sweep)
// looks at, without reading a file (memlist.Turn).
func Turn(dir string, subs []string, prev *store.Sweep) (*Listing, error) {
	return memlist.Turn(dir, subs, prev)
}
