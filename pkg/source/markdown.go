package source

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/intermem/intermem/pkg/redact"
)

// Heading is an ATX heading ("## Root Cause") outside fenced code.
type Heading struct {
	// Level is the number of "#" marks, 1 to 6.
	Level int
	// Text is the heading without its marks, trimmed.
	Text string
	// Line is the 1-based line in the file.
	Line int
	// start and end are the byte offsets in the body of the heading line
	// and of the line after it.
	start, end int
}

// Headings returns the ATX headings of body, skipping fenced code (a "# x"
// in a shell block is a comment, not a heading). firstLine is the line of
// the file that body starts at. A fence that is never closed runs to the
// end of the body, as CommonMark has it.
func Headings(body string, firstLine int) []Heading {
	var hs []Heading
	var fence byte
	fenceLen := 0
	line := firstLine
	for pos := 0; pos < len(body); line++ {
		text, next := body[pos:], len(body)
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			text, next = text[:i], pos+i+1
		}
		trimmed := strings.TrimLeft(text, " ")
		indent := len(text) - len(trimmed)
		switch {
		case indent > 3:
		case fence != 0:
			if c, n := fenceRun(trimmed); c == fence && n >= fenceLen && strings.TrimSpace(trimmed[n:]) == "" {
				fence = 0
			}
		default:
			if c, n := fenceRun(trimmed); n >= 3 && !(c == '`' && strings.ContainsRune(trimmed[n:], '`')) {
				fence, fenceLen = c, n
			} else if lvl, t, ok := atx(trimmed); ok {
				hs = append(hs, Heading{Level: lvl, Text: t, Line: line, start: pos, end: next})
			}
		}
		pos = next
	}
	return hs
}

// fenceRun returns the fence character at the start of s and how many times
// it repeats, or 0, 0.
func fenceRun(s string) (byte, int) {
	if s == "" || (s[0] != '`' && s[0] != '~') {
		return 0, 0
	}
	n := 0
	for n < len(s) && s[n] == s[0] {
		n++
	}
	return s[0], n
}

// atx parses an ATX heading line (indentation already removed).
func atx(s string) (int, string, bool) {
	n := 0
	for n < len(s) && s[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || (n < len(s) && s[n] != ' ' && s[n] != '\t') {
		return 0, "", false
	}
	t := strings.TrimSpace(s[n:])
	// A closing run of "#" preceded by a space is not part of the text.
	if end := strings.TrimRight(t, "#"); end != t && (end == "" || strings.HasSuffix(end, " ") || strings.HasSuffix(end, "\t")) {
		t = strings.TrimSpace(end)
	}
	return n, t, true
}

// Sections splits body at its headings of level: each starts a section that
// runs to the next heading of that level or a higher one (a "##" section
// holds its "###" subsections). hs are body's Headings.
func Sections(body string, hs []Heading, level int) []Section {
	var out []Section
	for i, h := range hs {
		if h.Level != level {
			continue
		}
		end := len(body)
		for _, n := range hs[i+1:] {
			if n.Level <= level {
				end = n.start
				break
			}
		}
		out = append(out, Section{Name: h.Text, Line: h.Line, Text: strings.TrimSpace(body[h.end:end])})
	}
	return out
}

// Clip returns s cut to at most n bytes at a rune boundary, with "…" added
// when it was cut.
//
// A text that must be cut is redacted first (redact.String), and the cut
// never splits a "[REDACTED:…]" marker: a secret cut in half no longer
// matches its pattern, so the catalog's redaction of the entry, which comes
// later, would keep its first part. This is the one place a source's text
// is cut; every cut of a source's text goes through it (or through
// [CutRedacted]), so an entry never holds part of a secret, whatever the
// source (the sink test in pkg/source/sources holds every registered source
// to it).
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return ClipRedacted(redact.String(s), n)
}

// ClipRedacted is Clip for a text that is already redacted (an
// auto-memory text, which automem.Parse redacted; an entry read back from
// the catalog): it cuts without redacting again. Given a text that is not
// redacted it can keep part of a secret: use Clip.
func ClipRedacted(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return CutRedacted(s, n) + "…"
}

// CutRedacted returns a redacted s cut to at most n bytes at a rune
// boundary and before any "[REDACTED:…]" marker the cut would split, without
// an ellipsis. Redact s first (redact.String) unless it is already.
func CutRedacted(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := max(n, 0)
	for i > 0 && !runeStart(s[i]) {
		i--
	}
	if j := strings.LastIndex(s[:i], redact.Marker); j >= 0 && !strings.Contains(s[j:i], "]") {
		i = j
	}
	return s[:i]
}

// Cut is Clip without the ellipsis: s redacted and cut to at most n bytes.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return CutRedacted(redact.String(s), n)
}

func runeStart(b byte) bool { return b&0xC0 != 0x80 }

// OneLine collapses s to one line of single spaces, at most n bytes; a text
// that must be cut is redacted first, as by [Clip].
func OneLine(s string, n int) string {
	return Clip(strings.Join(strings.Fields(s), " "), n)
}

// OneLineRedacted is OneLine for a text that is already redacted; see
// [ClipRedacted].
func OneLineRedacted(s string, n int) string {
	return ClipRedacted(strings.Join(strings.Fields(s), " "), n)
}

// Dedup returns the non-empty strings of in, trimmed, without repeats, in
// order of first appearance.
func Dedup(in []string) []string {
	seen := make(map[string]bool, len(in))
	var out []string
	for _, s := range in {
		s = strings.TrimSpace(s)
		if s == "" || seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, s)
	}
	return out
}

// SetField sets e.Fields[k] to v, trimmed and cut to maxField bytes; an
// empty v sets nothing.
func SetField(e *Entry, k, v string) {
	v = strings.TrimSpace(v)
	if v == "" {
		return
	}
	if e.Fields == nil {
		e.Fields = map[string]string{}
	}
	e.Fields[k] = Clip(v, maxField)
}

// maxField is the most bytes of one value SetField keeps.
const maxField = 2048

// EscapedLinks is the one Problem of a document at path whose links (as
// cite.ExtractDoc returns them in escaped) would lead out of the project
// once resolved against the document's directory: they are not followed,
// and the user is told which, at most three of them named.
func EscapedLinks(path string, escaped []string) []Problem {
	escaped = Dedup(escaped)
	if len(escaped) == 0 {
		return nil
	}
	var names []string
	for _, x := range escaped[:min(len(escaped), 3)] {
		names = append(names, strconv.Quote(Clip(redact.String(x), 80))) // problems are shown as they are
	}
	more := ""
	if len(escaped) > 3 {
		more = fmt.Sprintf(" and %d more", len(escaped)-3)
	}
	what := "a link leads"
	if len(escaped) > 1 {
		what = strconv.Itoa(len(escaped)) + " links lead"
	}
	return []Problem{{Path: path, Message: fmt.Sprintf("%s out of the project, not followed: %s%s", what, strings.Join(names, ", "), more)}}
}
