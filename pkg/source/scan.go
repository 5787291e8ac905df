package source

import (
	"fmt"
)

// Scan reads every file of s in env and parses it whole: source.Files,
// then ReadFile and Parse, or ParseLog from the start for an Appender; a
// Whole source scans itself without a cache. Files it cannot read are
// problems, like the parsers' own. It is the non-incremental path, for
// tests; the catalog fingerprints the files and re-parses only those that
// changed.
func Scan(env Env, s Source) ([]Entry, []Problem) {
	if w, ok := s.(Whole); ok {
		es, _, probs := w.ScanAll(env, nil)
		return es, probs
	}
	files, probs := Files(env, s)
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
