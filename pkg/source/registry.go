package source

import (
	"errors"
	"fmt"
	"io"
	"sort"
)

// Source reads one memory system that intermem does not own.
type Source interface {
	// Name is the source's name: lower-case letters, digits and dashes,
	// starting with a letter. It is part of every id the source makes and
	// the key that switches the source off in .intermem/config.json, so it
	// never changes.
	Name() string
	// Patterns are the files the source reads: doublestar patterns
	// ("docs/solutions/**/*.md"), slash-separated and relative to the project
	// root. Find walks them.
	Patterns() []string
	// Parse turns the content of the file at path (slash-separated, relative
	// to the project root) into entries, and what it could not make sense of
	// into problems. It never fails and never panics, whatever the bytes,
	// and never opens a file.
	Parse(path string, content []byte) ([]Entry, []Problem)
}

// Appender is implemented by a source whose files are append-only logs that
// can grow large (interfluence's edit log). It parses a stream, so the log
// is never held in memory whole, and resumes where an earlier parse stopped,
// so a parse after an append costs only the appended bytes.
type Appender interface {
	Source
	// ParseFrom parses r, which holds the file from at.Offset to its end,
	// at.Offset being the start of line at.Line (the zero Cursor is the start
	// of the file). It returns the entries of the records that start in r,
	// the problems, and the cursor a later parse may resume from: the start
	// of the last record, which an append could still extend, or the end of
	// the file when no record is open. The entries of a resumed parse
	// replace those the file had at or after line at.Line; the entries
	// before it stand. Call [Seal] on the returned cursor, and [Resume]
	// before using it, to tell an append from a rewrite.
	ParseFrom(path string, r io.Reader, at Cursor) ([]Entry, []Problem, Cursor)
}

// ErrDuplicate is returned by NewRegistry when two sources share a name.
var ErrDuplicate = errors.New("two sources share a name")

// ErrBadName is returned by NewRegistry for a source whose name is not
// lower-case letters, digits and dashes starting with a letter.
var ErrBadName = errors.New("source name must be lower-case letters, digits and dashes, starting with a letter")

// Registry is the set of known sources, in name order.
type Registry struct {
	list   []Source
	byName map[string]Source
}

// NewRegistry returns a registry of srcs. Names must be valid and distinct.
func NewRegistry(srcs ...Source) (*Registry, error) {
	r := &Registry{byName: make(map[string]Source, len(srcs))}
	for _, s := range srcs {
		name := s.Name()
		if !validName(name) {
			return nil, fmt.Errorf("source %q: %w", name, ErrBadName)
		}
		if _, dup := r.byName[name]; dup {
			return nil, fmt.Errorf("source %q: %w", name, ErrDuplicate)
		}
		r.byName[name] = s
		r.list = append(r.list, s)
	}
	sort.Slice(r.list, func(i, j int) bool { return r.list[i].Name() < r.list[j].Name() })
	return r, nil
}

func validName(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// All returns every registered source, in name order.
func (r *Registry) All() []Source { return append([]Source(nil), r.list...) }

// Names returns the names of every registered source, in order.
func (r *Registry) Names() []string {
	out := make([]string, len(r.list))
	for i, s := range r.list {
		out[i] = s.Name()
	}
	return out
}

// Lookup returns the source called name.
func (r *Registry) Lookup(name string) (Source, bool) {
	s, ok := r.byName[name]
	return s, ok
}

// Enabled returns the sources that switches leaves on, in name order. A
// source is on unless switches maps its name to false, so a new source is on
// without any configuration and a config file names only what it turns off.
func (r *Registry) Enabled(switches map[string]bool) []Source {
	var out []Source
	for _, s := range r.list {
		if on, set := switches[s.Name()]; set && !on {
			continue
		}
		out = append(out, s)
	}
	return out
}

// Unknown returns the names in switches that no registered source has,
// sorted, so a misspelt name in a config file can be reported rather than
// silently switching nothing off.
func (r *Registry) Unknown(switches map[string]bool) []string {
	var out []string
	for name := range switches {
		if _, ok := r.byName[name]; !ok {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}
