package automem

import (
	"path"
	"strings"

	"github.com/intermem/intermem/pkg/redact"
)

// Redaction is done here, once, where a memory file is parsed: every text
// an Entry carries out of the file (Text, Section, Name, Description, Type,
// File, Link), every heading title and every frontmatter value is redacted,
// so every consumer (plan, promotion, store records, the SessionStart
// context, search, status, logs) sees the same safe form and none has a
// redaction to forget. Only the two things pruning needs keep the original:
// File.Name, the name on disk, and File.Content, the exact bytes that
// File.Remove edits by the entries' ranges and ids. Ids are computed from
// the original text, so redaction never changes an identity.
//
// Algorithm. redact.Find runs once over the whole content: a secret that
// spans entries (a PEM key written one bullet per line) is found as one,
// and a file without findings costs one scan and no copy. A field is
// redacted where a finding overlaps the bytes it was read from: each line
// of the overlapping part (list marker and blanks trimmed) is replaced by
// the finding's marker where it occurs in the field; a part that does not
// occur there (the parser unquoted or folded it) replaces the whole field.
// Names, titles, types and frontmatter values are also redacted on their
// own, which catches what only their own context shows (a folded YAML
// description). File names and links go through redact.Name, which also
// knows a random word in a name for what it is; a file name that holds a
// secret is replaced by its redacted form in every entry of the file
// (File.SafeName).
//
// Entry.Secret records that pruning the entry would remove a secret from
// auto-memory, so that it never is: its block holds one, or a heading its
// removal could take with it (Remove drops a heading whose section it
// empties, up the outline), or its file name; for a one-memory file, any
// byte of the file, and (set by Scan) any index line that points to it.

// marker is what redact.String writes for a finding of kind.
func marker(kind string) string { return redact.Marker + kind + "]" }

// redactFile redacts f's entries, headings and frontmatter in place; src
// is f.Content as a string.
func redactFile(f *File, src string) {
	f.SafeName = redact.Name(f.Name)
	nameSecret := f.SafeName != f.Name
	fs := redact.Find(src)
	if len(fs) == 0 && !nameSecret && f.Frontmatter == nil {
		return // the common case: nothing to do
	}

	// Headings, and which of them hold a secret.
	headSecret := make([]bool, len(f.Headings))
	titles := map[string]string{}
	for i := range f.Headings {
		h := &f.Headings[i]
		safe := replaceParts(h.Title, src, h.Start, h.End, fs, false)
		titles[h.Title] = safe
		h.Title, headSecret[i] = safe, overlaps(fs, h.Start, h.End)
	}
	fmSecret, bodyStart := false, 0
	if fm := f.Frontmatter; fm != nil {
		bodyStart = fm.End
		field := func(key, v string) string {
			safe := redactValue(key, replaceParts(v, src, fm.Start, fm.End, fs, false))
			fmSecret = fmSecret || safe != v
			return safe
		}
		for k, v := range fm.Fields {
			fm.Fields[k] = field(k, v)
		}
		fm.Name, fm.Description, fm.Type = field("name", fm.Name), field("description", fm.Description), field("type", fm.Type)
	}

	for i := range f.Entries {
		e := &f.Entries[i]
		lo := e.Start
		if e.Kind == Memory {
			lo = bodyStart
		}
		safe := replaceParts(e.Text, src, lo, e.End, fs, true)
		if safe != e.Text {
			safe = redact.String(safe)
		}
		e.Secret = safe != e.Text || nameSecret || overlaps(fs, e.Start, e.End) ||
			underSecretHeading(f.Headings, headSecret, e.StartLine)
		e.Text, e.File = safe, f.SafeName
		if e.Link != "" {
			e.setLink(e.Link)
		}
		if e.Kind != Memory {
			if t, ok := titles[e.Section]; ok {
				e.Section = t
			}
			continue
		}
		fm := f.Frontmatter
		e.Secret = e.Secret || fmSecret
		e.Name, e.Description, e.Type = fm.Name, fm.Description, fm.Type
		e.Section = e.Name
		if e.Section == "" {
			e.Section = strings.TrimSuffix(path.Base(f.SafeName), ".md")
		}
	}
}

// replaceParts replaces, in field (read from src[lo:hi]), each line of each
// finding's part inside that range with the finding's marker. A part the
// field does not hold is left out, unless whole is set: then the field is
// src[lo:hi] itself, give or take markers and blanks, and a part it does
// not hold means the field cannot be trusted, so all of it is replaced.
func replaceParts(field, src string, lo, hi int, fs []redact.Finding, whole bool) string {
	out := field
	for _, f := range fs {
		if f.End <= lo || f.Start >= hi {
			continue
		}
		m := marker(f.Kind)
		for _, part := range strings.Split(src[max(f.Start, lo):min(f.End, hi)], "\n") {
			part = trimListMarker(strings.TrimSpace(part))
			switch {
			case part == "" || part == m:
			case strings.Contains(out, part):
				out = strings.ReplaceAll(out, part, m)
			case whole:
				return m
			}
		}
	}
	return out
}

// redactValue redacts a frontmatter value with its key as its label, as it
// is written ("api_key: …" is a secret where "…" alone may not look like
// one), and returns the value.
func redactValue(key, v string) string {
	if v == "" {
		return v
	}
	labelled := key + ": "
	r := redact.String(labelled + v)
	if strings.HasPrefix(r, labelled) {
		return r[len(labelled):]
	}
	return redact.String(v)
}

// trimListMarker drops a list marker ("- ", "* ", "+ ", "1. ", "1) ") or a
// blockquote marker at the start of s: a finding that spans list items
// holds their markers, which the items' texts do not.
func trimListMarker(s string) string {
	for {
		t := s
		switch {
		case len(s) >= 2 && strings.IndexByte("-*+>", s[0]) >= 0 && (s[1] == ' ' || s[1] == '\t'):
			s = strings.TrimSpace(s[2:])
		default:
			i := 0
			for i < len(s) && i < 9 && '0' <= s[i] && s[i] <= '9' {
				i++
			}
			if i > 0 && i+1 < len(s) && (s[i] == '.' || s[i] == ')') && (s[i+1] == ' ' || s[i+1] == '\t') {
				s = strings.TrimSpace(s[i+2:])
			}
		}
		if s == t {
			return s
		}
	}
}

func overlaps(fs []redact.Finding, lo, hi int) bool {
	for _, f := range fs {
		if f.Start < hi && f.End > lo {
			return true
		}
	}
	return false
}

// underSecretHeading reports whether a heading that encloses line (the
// nearest one above it, then each nearest one of a lower level) holds a
// secret: pruning the last entry of a section removes its heading, and
// then possibly its parents'.
func underSecretHeading(hs []Heading, secret []bool, line int) bool {
	level := 7
	for i := len(hs) - 1; i >= 0 && level > 1; i-- {
		if hs[i].Line > line || hs[i].Level >= level {
			continue
		}
		if secret[i] {
			return true
		}
		level = hs[i].Level
	}
	return false
}

// setLink sets the link as written, and Link to its redacted form.
func (e *Entry) setLink(raw string) {
	e.rawLink, e.Link = "", raw
	if safe := redact.Name(raw); safe != raw {
		e.rawLink, e.Link = raw, safe
	}
}

// RawLink returns the link of a pointer or fact as written in the file,
// for finding the file it names on disk; Link is its redacted form.
func (e *Entry) RawLink() string {
	if e.rawLink != "" {
		return e.rawLink
	}
	return e.Link
}
