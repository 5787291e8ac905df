package automem

import (
	"io/fs"
	"sort"

	"github.com/intermem/intermem/pkg/wire"
)

// FileCache keeps parsed memory files between scans, so that a scan of a
// directory where one file changed reads and parses (and redacts) that file
// alone. ScanCached asks Load for every file with the file's current
// FileInfo (symlinks followed); the cache answers only when it holds the
// file at that fingerprint (size, modification time, inode: the cache's
// business). Every file ScanCached reads and parses it hands to Save, before
// the directory-wide resolution of pointers changes any entry, so a cached
// file is always the parse of the file alone and resolution runs over
// cached and fresh files alike: a pointer whose file was deleted becomes a
// fact although the file holding it did not change. Save must therefore
// encode f before it returns (resolution edits f's entries afterwards).
//
// The catalog implements it over intermem's store (AppendFile and
// ReadFile are the stored form); Scan uses none.
type FileCache interface {
	Load(name string, fi fs.FileInfo) (*File, bool)
	Save(name string, fi fs.FileInfo, f *File)
}

// AppendFile appends the stored form of f as Parse returned it to b, or
// returns false when f cannot be stored: an entry whose link holds a
// secret keeps the link as written only in memory (RawLink), and the
// store never holds a secret, so such a file is parsed at every scan
// instead. The form is everything but the file's name and content, in
// package wire's values (every text in it is redacted, as Parse redacts):
//
//	safe name
//	frontmatter: present (bool); name, description, type, start, end,
//	             field count, then each key and value in key order
//	headings:    count; each level, title, line, start, end
//	entries:     count; each id, kind, file, section, text, marker,
//	             start, end, start line, end line, name, description,
//	             type, link, secret
//	warnings:    count; each text
//	load:        present (bool, MEMORY.md only); lines, chars, loaded
//	             lines, loaded chars, truncated
//
// A record's caller puts a versioned magic before it (package
// automemory's record): change both together.
func AppendFile(b []byte, f *File) ([]byte, bool) {
	for i := range f.Entries {
		if f.Entries[i].rawLink != "" {
			return nil, false
		}
	}
	b = wire.AppendString(b, f.SafeName)
	b = wire.AppendBool(b, f.Frontmatter != nil)
	if fm := f.Frontmatter; fm != nil {
		b = wire.AppendString(b, fm.Name)
		b = wire.AppendString(b, fm.Description)
		b = wire.AppendString(b, fm.Type)
		b = wire.AppendInt(b, int64(fm.Start))
		b = wire.AppendInt(b, int64(fm.End))
		keys := make([]string, 0, len(fm.Fields))
		for k := range fm.Fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b = wire.AppendUint(b, uint64(len(keys)))
		for _, k := range keys {
			b = wire.AppendString(b, k)
			b = wire.AppendString(b, fm.Fields[k])
		}
	}
	b = wire.AppendUint(b, uint64(len(f.Headings)))
	for _, h := range f.Headings {
		b = wire.AppendInt(b, int64(h.Level))
		b = wire.AppendString(b, h.Title)
		b = wire.AppendInt(b, int64(h.Line))
		b = wire.AppendInt(b, int64(h.Start))
		b = wire.AppendInt(b, int64(h.End))
	}
	b = wire.AppendUint(b, uint64(len(f.Entries)))
	for i := range f.Entries {
		en := &f.Entries[i]
		for _, s := range []string{en.ID, string(en.Kind), en.File, en.Section, en.Text, en.Marker} {
			b = wire.AppendString(b, s)
		}
		for _, n := range []int{en.Start, en.End, en.StartLine, en.EndLine} {
			b = wire.AppendInt(b, int64(n))
		}
		for _, s := range []string{en.Name, en.Description, en.Type, en.Link} {
			b = wire.AppendString(b, s)
		}
		b = wire.AppendBool(b, en.Secret)
	}
	b = wire.AppendUint(b, uint64(len(f.Warnings)))
	for _, w := range f.Warnings {
		b = wire.AppendString(b, w)
	}
	b = wire.AppendBool(b, f.Name == IndexName)
	if f.Name == IndexName {
		l := f.load
		for _, n := range []int{l.Lines, l.Chars, l.LoadedLines, l.LoadedChars} {
			b = wire.AppendInt(b, int64(n))
		}
		b = wire.AppendBool(b, l.Truncated)
	}
	return b, true
}

// ReadFile reads the File that AppendFile stored for the file called
// name; it has no Content. A failure is r's (Reader.Err): the caller
// checks once, after its whole record.
func ReadFile(r *wire.Reader, name string) *File {
	f := &File{Name: name, SafeName: r.String("safe name")}
	if r.Bool("frontmatter") {
		fm := &Frontmatter{Name: r.String("name"), Description: r.String("description"), Type: r.String("type"),
			Start: r.Small("frontmatter start", 0), End: r.Small("frontmatter end", 0)}
		if n := r.Count("fields", 2); n > 0 {
			fm.Fields = make(map[string]string, n)
			for range n {
				k := r.String("field")
				fm.Fields[k] = r.String("field value")
			}
		}
		f.Frontmatter = fm
	}
	if n := r.Count("headings", 5); n > 0 {
		f.Headings = make([]Heading, n)
		for i := range f.Headings {
			f.Headings[i] = Heading{Level: r.Small("heading level", 0), Title: r.String("heading"), Line: r.Small("heading line", 0),
				Start: r.Small("heading start", 0), End: r.Small("heading end", 0)}
		}
	}
	if n := r.Count("entries", 15); n > 0 {
		f.Entries = make([]Entry, n)
		for i := range f.Entries {
			en := &f.Entries[i]
			en.ID, en.Kind, en.File = r.String("id"), Kind(r.String("kind")), r.String("file")
			en.Section, en.Text, en.Marker = r.String("section"), r.String("text"), r.String("marker")
			en.Start, en.End = r.Small("start", -1), r.Small("end", -1)
			en.StartLine, en.EndLine = r.Small("start line", 0), r.Small("end line", 0)
			en.Name, en.Description, en.Type, en.Link = r.String("name"), r.String("description"), r.String("type"), r.String("link")
			en.Secret = r.Bool("secret")
		}
	}
	if n := r.Count("warnings", 1); n > 0 {
		f.Warnings = make([]string, n)
		for i := range f.Warnings {
			f.Warnings[i] = r.String("warning")
		}
	}
	if r.Bool("load") {
		f.load = LoadInfo{Lines: r.Small("lines", 0), Chars: r.Small("chars", 0), LoadedLines: r.Small("loaded lines", 0),
			LoadedChars: r.Small("loaded chars", 0), Truncated: r.Bool("truncated")}
	}
	return f
}
