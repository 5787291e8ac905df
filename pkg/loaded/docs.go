package loaded

import (
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/intermem/intermem/pkg/match"
	"github.com/intermem/intermem/pkg/mdoc"
)

// Override supplies a file's content in place of the disk's (the
// documents as an operation would leave them); ok false reads the disk.
type Override func(real string) (content []byte, ok bool)

// ReadAll discovers with the operating system's filesystem and parses
// every file found. The commands use it; the SessionStart hook reads
// through its own cache instead.
func ReadAll(env Env, over Override) *Set[*mdoc.Doc] {
	return Discover(env, OS{}, func(_, real string, fi fs.FileInfo) (*mdoc.Doc, Meta, bool) {
		b, ok := []byte(nil), false
		if over != nil {
			b, ok = over(real)
		}
		if !ok {
			var err error
			if b, err = readFile(real); err != nil {
				return nil, Meta{}, false
			}
		}
		d := mdoc.Parse(b)
		return d, Meta{Imports: d.Imports(), Scoped: HasPathsKey(b)}, true
	})
}

// readFile reads the regular file at path, at most MaxBytes. The open
// does not block and the descriptor must be a regular file: a FIFO put in
// place of a document after Discover stat'ed it is not waited on.
func readFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fs.ErrInvalid
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxBytes {
		return nil, fs.ErrInvalid
	}
	return b, nil
}

// Said is what the whole project's sessions already have in context:
// the exact-dedup key (match.Key) of every statement of every Strict file
// not brought in by a subdirectory, mapped to the Name of the first file
// saying it. A memory entry with one of these keys is already loaded each
// session, whatever intermem does with it.
func Said(s *Set[*mdoc.Doc]) map[uint64]string {
	out := map[uint64]string{}
	for i := range s.Files {
		f := &s.Files[i]
		if !f.Strict || f.Below(s.Env.Root) {
			continue
		}
		name := Name(f.Path, s.Env.Root, s.Env.Home)
		for _, st := range f.Doc.AllStatements() {
			k := match.Key(st.Text)
			if _, ok := out[k]; !ok {
				out[k] = name
			}
		}
	}
	return out
}
