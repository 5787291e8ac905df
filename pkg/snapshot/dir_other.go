//go:build !linux

package snapshot

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// dirReader is the portable reader: each read lists the whole directory
// (names only, sorted) and the cookie is an index into it, so a read
// costs a listing of names but the stat calls stay bounded. Linux resumes
// with the filesystem's own cookie instead (dir_linux.go).
type dirReader struct {
	dir string
}

func openDir(dir string) (*dirReader, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: dir, Err: syscall.ENOTDIR}
	}
	return &dirReader{dir: dir}, nil
}

func (d *dirReader) Close() error { return nil }

func (d *dirReader) fp() (string, error) {
	fi, err := os.Stat(d.dir)
	if err != nil {
		return "", err
	}
	var ino uint64
	var ctime int64
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		ino = uint64(st.Ino)
		ctime = ctimeOf(st)
	}
	return fmt.Sprintf("%d:%d:%d", ino, fi.ModTime().UnixNano(), ctime), nil
}

type dirent struct {
	name string
	typ  fs.FileMode
	next int64
}

const modeUnknown = fs.ModeIrregular

func (d *dirReader) read(cookie int64, max int) (ents []dirent, next int64, eof bool, err error) {
	des, err := os.ReadDir(d.dir)
	if err != nil {
		return nil, cookie, false, err
	}
	next = cookie
	for i := int(cookie); i < len(des) && len(ents) < max; i++ {
		next = int64(i + 1)
		ents = append(ents, dirent{name: des[i].Name(), typ: des[i].Type(), next: next})
	}
	return ents, next, int(next) >= len(des), nil
}

func (d *dirReader) stat(name string, follow bool) (fs.FileInfo, error) {
	p := filepath.Join(d.dir, filepath.FromSlash(name))
	if follow {
		return os.Stat(p)
	}
	return os.Lstat(p)
}
