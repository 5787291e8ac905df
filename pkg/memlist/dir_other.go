//go:build !linux

package memlist

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Dir is the portable reader: each read lists the whole directory
// (names only, sorted) and the cookie is an index into it, so a read
// costs a listing of names but the stat calls stay bounded. Linux resumes
// with the filesystem's own cookie instead (dir_linux.go).
type Dir struct {
	dir string
}

func OpenDir(dir string) (*Dir, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: dir, Err: syscall.ENOTDIR}
	}
	return &Dir{dir: dir}, nil
}

func (d *Dir) Close() error { return nil }

func (d *Dir) FP() (string, error) {
	fi, err := os.Stat(d.dir)
	if err != nil {
		return "", err
	}
	var ino uint64
	var ctime int64
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		ino = uint64(st.Ino)
		ctime = Ctime(st)
	}
	return fmt.Sprintf("%d:%d:%d", ino, fi.ModTime().UnixNano(), ctime), nil
}

type Dirent struct {
	Name string
	Type fs.FileMode
	Next int64
}

const ModeUnknown = fs.ModeIrregular

func (d *Dir) Read(cookie int64, max int) (ents []Dirent, next int64, eof bool, err error) {
	des, err := os.ReadDir(d.dir)
	if err != nil {
		return nil, cookie, false, err
	}
	next = cookie
	for i := int(cookie); i < len(des) && len(ents) < max; i++ {
		next = int64(i + 1)
		ents = append(ents, Dirent{Name: des[i].Name(), Type: des[i].Type(), Next: next})
	}
	return ents, next, int(next) >= len(des), nil
}

func (d *Dir) Stat(name string, follow bool) (fs.FileInfo, error) {
	p := filepath.Join(d.dir, filepath.FromSlash(name))
	if follow {
		return os.Stat(p)
	}
	return os.Lstat(p)
}

// scan calls each with every entry Read returns.
func (d *Dir) scan(cookie int64, max int, each func(name []byte, typ fs.FileMode, next int64)) (next int64, eof bool, err error) {
	ents, next, eof, err := d.Read(cookie, max)
	for _, e := range ents {
		each([]byte(e.Name), e.Type, e.Next)
	}
	return next, eof, err
}

// look stats the directory entry name of type typ as FileOf over Stat
// would.
func (d *Dir) look(name []byte, typ fs.FileMode) facts {
	s := string(name)
	if typ == ModeUnknown {
		fi, err := d.Stat(s, false)
		if err != nil {
			return facts{skip: "cannot be read: " + ErrText(err)}
		}
		typ = fi.Mode().Type()
	}
	if !typ.IsRegular() && typ&fs.ModeSymlink == 0 {
		return facts{skip: "not a regular file"}
	}
	fi, err := d.Stat(s, typ&fs.ModeSymlink != 0)
	if err != nil {
		return facts{skip: "cannot be read: " + ErrText(err)}
	}
	return facts{ok: true, size: fi.Size(), mod: fi.ModTime(), ino: inode(fi), mode: fi.Mode()}
}

// file fingerprints the directory entry name of type typ.
func (d *Dir) file(name string, typ fs.FileMode) File { return d.fileOf([]byte(name), name, typ) }

func (d *Dir) fileOf(name []byte, s string, typ fs.FileMode) File {
	f := d.look(name, typ)
	if !f.ok {
		return File{Name: s, Skip: f.skip}
	}
	return fileFrom(s, string(f.fingerprint(nil)), f.size, f.mod, f.mode)
}

// sumScan is scan summing the memory files it meets as Sum does, one
// after the other.
func (d *Dir) sumScan(cookie int64, max int) (next int64, eof bool, p part, err error) {
	next, eof, err = d.scan(cookie, max, func(name []byte, typ fs.FileMode, _ int64) {
		p.met++
		if !memoryName(name) {
			return
		}
		p.index = p.index || string(name) == Index
		p.sum.addTerm(d.entryTerm(name, typ))
	})
	return next, eof, p, err
}

// entryTerm is the term in a listing's sum (fpSum) of the directory
// entry name of type typ, stat'ed by look: what a File of it (fileOf)
// would add.
func (d *Dir) entryTerm(name []byte, typ fs.FileMode) uint64 {
	f := d.look(name, typ)
	if !f.ok {
		return term(name, "", f.skip)
	}
	return term(name, f.fingerprint(nil), skipOf(f.size, f.mode))
}
