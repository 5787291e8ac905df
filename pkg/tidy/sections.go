package tidy

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/intermem/intermem/pkg/automem"
)

// TopicsTitle is the title of the index section that holds the pointers
// to moved sections. A section with this title (in any case) is never
// moved, and new pointers are appended to it.
const TopicsTitle = "Topic files"

// line is one line of content: [start,end) includes the terminator; text
// ends before "\n" and any "\r" right before it.
type line struct {
	start, text, end int
}

// splitLines splits content as automem does: only "\n" ends a line, a
// leading UTF-8 BOM belongs to no line.
func splitLines(content []byte) []line {
	start := 0
	if bytes.HasPrefix(content, []byte("\xEF\xBB\xBF")) {
		start = 3
	}
	var out []line
	for start < len(content) {
		i := bytes.IndexByte(content[start:], '\n')
		if i < 0 {
			out = append(out, line{start, len(content), len(content)})
			break
		}
		end := start + i + 1
		text := start + i
		for text > start && content[text-1] == '\r' {
			text--
		}
		out = append(out, line{start, text, end})
		start = end
	}
	return out
}

func blank(content []byte, l line) bool {
	for _, c := range content[l.start:l.text] {
		if c != ' ' && c != '\t' {
			return false
		}
	}
	return true
}

// section is a level-2 section of the index: its heading through its last
// non-blank line (first..last, 0-based line indexes) is what moves; the
// blank lines after it, up to the next heading of level 1 or 2 (gap, an
// exclusive line index), leave the index with it.
type section struct {
	title       string
	first, last int
	gap         int
	start, end  int // byte range of first..last
	hash        string
	entries     []automem.Entry
	// slug, ptitle and hook are set by describe.
	slug, ptitle, hook string
}

// sections returns the level-2 sections of a parsed index.
func sections(f *automem.File, ls []line) []section {
	var out []section
	hs := f.Headings
	for i, h := range hs {
		if h.Level != 2 || h.Line-1 >= len(ls) {
			continue
		}
		bound := len(ls)
		for _, n := range hs[i+1:] {
			if n.Level <= 2 {
				bound = n.Line - 1
				break
			}
		}
		first := h.Line - 1
		last := bound - 1
		for last > first && blank(f.Content, ls[last]) {
			last--
		}
		s := section{title: h.Title, first: first, last: last, gap: bound,
			start: ls[first].start, end: ls[last].end}
		sum := sha256.Sum256(f.Content[s.start:s.end])
		s.hash = hex.EncodeToString(sum[:])
		for _, e := range f.Entries {
			if e.StartLine-1 >= first && e.EndLine-1 <= last {
				s.entries = append(s.entries, e)
			}
		}
		out = append(out, s)
	}
	return out
}

// Section returns the bytes of the level-2 section of the index whose
// SHA-256 is hash (a Move's Hash, as a step names it), or false when the
// index holds no such section now.
func Section(index []byte, hash string) ([]byte, bool) {
	f := automem.Parse(automem.IndexName, index)
	for _, sec := range sections(f, splitLines(index)) {
		if sec.hash == hash {
			return index[sec.start:sec.end:sec.end], true
		}
	}
	return nil, false
}

// isTopics reports whether a section title names the pointers' section.
func isTopics(title string) bool {
	return strings.EqualFold(strings.TrimSpace(title), TopicsTitle)
}

// newline returns the line terminator the content uses: that of its first
// line, "\n" when it has none.
func newline(content []byte, ls []line) string {
	for _, l := range ls {
		switch {
		case l.end-l.text > 1:
			return "\r\n"
		case l.end > l.text:
			return "\n"
		}
	}
	return "\n"
}
