package automem

import (
	"encoding/json"
	"fmt"
	"io/fs"
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
// The catalog implements it over intermem's store (EncodeFile and
// DecodeFile are the stored form); Scan uses none.
type FileCache interface {
	Load(name string, fi fs.FileInfo) (*File, bool)
	Save(name string, fi fs.FileInfo, f *File)
}

// cachedFile is the stored form of a parsed File: everything but its name
// and content. Every text in it is redacted (Parse redacts), so it may be
// stored.
type cachedFile struct {
	SafeName    string       `json:"safe_name"`
	Frontmatter *Frontmatter `json:"frontmatter,omitempty"`
	Headings    []Heading    `json:"headings,omitempty"`
	Entries     []Entry      `json:"entries"`
	Warnings    []string     `json:"warnings,omitempty"`
	Load        *LoadInfo    `json:"load,omitempty"`
}

// EncodeFile returns the stored form of f as Parse returned it, or false
// when f cannot be stored: an entry whose link holds a secret keeps the
// link as written only in memory (RawLink), and the store never holds a
// secret, so such a file is parsed at every scan instead.
func EncodeFile(f *File) ([]byte, bool) {
	for i := range f.Entries {
		if f.Entries[i].rawLink != "" {
			return nil, false
		}
	}
	c := cachedFile{SafeName: f.SafeName, Frontmatter: f.Frontmatter, Headings: f.Headings,
		Entries: f.Entries, Warnings: f.Warnings}
	if f.Name == IndexName {
		load := f.load
		c.Load = &load
	}
	b, err := json.Marshal(c)
	if err != nil {
		return nil, false
	}
	return b, true
}

// DecodeFile returns the File that EncodeFile stored for the file called
// name. It has no Content.
func DecodeFile(name string, b []byte) (*File, error) {
	var c cachedFile
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("automem: cached %s: %w", c.SafeName, err)
	}
	f := &File{Name: name, SafeName: c.SafeName, Frontmatter: c.Frontmatter, Headings: c.Headings,
		Entries: c.Entries, Warnings: c.Warnings}
	if c.Load != nil {
		f.load = *c.Load
	}
	return f, nil
}
