package source

import (
	"fmt"
)

// Scan reads every file of s under root and parses it whole: Find, then
// ReadFile and Parse, or ParseLog from the start for an Appender. Files it
// cannot read are problems, like the parsers' own. It is the
// non-incremental path, for tests and for a first scan; the catalog
// fingerprints the files and re-parses only those that changed.
func Scan(root string, s Source) ([]Entry, []Problem) {
	files, probs := Find(root, s)
	var entries []Entry
	for _, f := range files {
		var es []Entry
		var ps []Problem
		if a, ok := s.(Appender); ok {
			var err error
			es, ps, _, _, err = ParseLog(a, f, Cursor{})
			if err != nil {
				probs = append(probs, Problem{Path: f.Path, Message: fmt.Sprintf("cannot be read: %v", err)})
				continue
			}
		} else {
			data, err := ReadFile(f, 0)
			if err != nil {
				probs = append(probs, Problem{Path: f.Path, Message: fmt.Sprintf("cannot be read: %v", err)})
				continue
			}
			es, ps = s.Parse(f.Path, data)
		}
		entries = append(entries, es...)
		probs = append(probs, ps...)
	}
	return entries, probs
}
