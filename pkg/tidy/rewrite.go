package tidy

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/intermem/intermem/pkg/automem"
)

// ErrChanged is returned when MEMORY.md no longer holds a section the
// operation moves, nor the pointer that replaces it: someone edited the
// section since the plan, and removing anything now could lose the edit.
var ErrChanged = errors.New("MEMORY.md changed since the plan")

// ErrNotCopied is returned when a section would leave the index while its
// topic file does not hold exactly its bytes.
var ErrNotCopied = errors.New("topic file does not hold the section")

// Moved names one moved section in a journal step: the SHA-256 of its
// bytes, its topic file (a plain name beside MEMORY.md) and the pointer
// line that replaces it (redacted, without terminator).
type Moved struct {
	Hash    string `json:"hash"`
	File    string `json:"file"`
	Pointer string `json:"pointer"`
}

// Rewrite returns the index content with every moved section that is
// still there removed (with the blank lines after it) and every pointer
// present once, under the "## Topic files" section. It is idempotent:
// applied to its own output it returns that output.
//
// holds, when not nil, reports the SHA-256 of a topic file's content ("" if
// absent); a section is removed only when its topic file holds exactly its
// bytes (ErrNotCopied otherwise). A moved section that is gone and whose
// pointer is not in the index is ErrChanged.
func Rewrite(content []byte, moves []Moved, holds func(file string) (string, error)) ([]byte, error) {
	f := automem.Parse(automem.IndexName, content)
	ls := splitLines(content)
	return rewrite(content, ls, sections(f, ls), moves, holds)
}

// rewrite is Rewrite on content already split and parsed.
func rewrite(content []byte, ls []line, secs []section, moves []Moved, holds func(file string) (string, error)) ([]byte, error) {
	drop := make([]bool, len(ls))
	used := make([]bool, len(secs))
	insert := -1 // line where a new pointers' section goes
	found := make([]bool, len(moves))
	for i, m := range moves {
		for k := range secs {
			s := &secs[k]
			if used[k] || s.hash != m.Hash || isTopics(s.title) {
				continue
			}
			if holds != nil {
				h, err := holds(m.File)
				if err != nil {
					return nil, fmt.Errorf("read %s: %w", m.File, err)
				}
				if h != m.Hash {
					return nil, fmt.Errorf("%w: %s does not hold, byte for byte, the section of MEMORY.md it was written from (line %d); the section stays", ErrNotCopied, m.File, s.first+1)
				}
			}
			used[k], found[i] = true, true
			for j := s.first; j < s.gap; j++ {
				drop[j] = true
			}
			if insert < 0 || s.first < insert {
				insert = s.first
			}
			break
		}
	}
	// Append to an existing pointers' section, after its last non-blank
	// line; otherwise open one where the first moved section was.
	// A pointer appended there becomes a sibling of the pointer that ends
	// the section; after anything else (a paragraph, a lead-in and its
	// facts) it could join what is there and change an entry, so then
	// the pointers get a section of their own.
	after := -1
	for _, s := range secs {
		if isTopics(s.title) && !drop[s.first] && endsWithPointer(s) {
			after = s.last
			break
		}
	}
	// When the end of the file leaves and the pointers do not go there,
	// the blank lines that separated it from what stays go too: no file
	// ends in blank lines because of a move.
	if n := len(ls); n > 0 && drop[n-1] {
		t := n - 1
		for t > 0 && drop[t-1] {
			t--
		}
		if after >= 0 || insert < t {
			for k := t - 1; k >= 0 && !drop[k] && blank(content, ls[k]); k-- {
				drop[k] = true
			}
		}
	}
	// The pointers already in the index (lines that stay).
	present := map[string]bool{}
	for j, l := range ls {
		if !drop[j] {
			present[string(content[l.start:l.text])] = true
		}
	}
	var add []string
	for i, m := range moves {
		switch {
		case present[m.Pointer]:
		case !found[i]:
			return nil, fmt.Errorf("%w: the section moved to %s is neither in it as planned nor replaced by its pointer", ErrChanged, m.File)
		default:
			add = append(add, m.Pointer)
			present[m.Pointer] = true
		}
	}
	if insert < 0 && len(add) == 0 {
		return content, nil
	}

	nl := newline(content, ls)
	var out bytes.Buffer
	out.Grow(len(content) + 128*len(add))
	if len(ls) > 0 {
		out.Write(content[:ls[0].start]) // a BOM
	} else {
		out.Write(content)
	}
	// writeLine copies line j, terminating it if it was the last line of a
	// file without a final newline and something follows.
	writeLine := func(j int, more bool) {
		l := ls[j]
		out.Write(content[l.start:l.end])
		if l.end == l.text && more {
			out.WriteString(nl)
		}
	}
	pointers := func() {
		for _, p := range add {
			out.WriteString(p + nl)
		}
	}
	// keptFrom[j]: some line at or after j stays.
	keptFrom := make([]bool, len(ls)+1)
	for j := len(ls) - 1; j >= 0; j-- {
		keptFrom[j] = keptFrom[j+1] || !drop[j]
	}
	kept := func(from int) bool { return keptFrom[from] }
	for j := range ls {
		if after < 0 && j == insert && len(add) > 0 {
			if prev := lastKept(drop, j); prev >= 0 && !blank(content, ls[prev]) {
				out.WriteString(nl)
			}
			out.WriteString("## " + TopicsTitle + nl)
			pointers()
			if kept(j) {
				out.WriteString(nl)
			}
		}
		if drop[j] {
			continue
		}
		writeLine(j, j == after || kept(j+1))
		if j == after {
			pointers()
		}
	}
	return out.Bytes(), nil
}

// endsWithPointer reports whether a section's last line ends a pointer
// entry.
func endsWithPointer(s section) bool {
	n := len(s.entries)
	return n > 0 && s.entries[n-1].Kind == automem.Pointer && s.entries[n-1].EndLine-1 == s.last
}

// lastKept returns the last line before j that is not dropped, or -1.
func lastKept(drop []bool, j int) int {
	for k := j - 1; k >= 0; k-- {
		if !drop[k] {
			return k
		}
	}
	return -1
}

// pointerLine is "- [title](file) — hook", or without " — hook" when the
// hook is empty.
func pointerLine(title, file, hook string) string {
	p := "- [" + title + "](" + file + ")"
	if hook != "" {
		p += " — " + hook
	}
	return p
}

// ValidName reports whether a topic file name read from a journal step is
// a plain markdown file name beside MEMORY.md.
func ValidName(name string) bool {
	return strings.HasSuffix(name, ".md") && !strings.ContainsAny(name, "/\\\x00") &&
		!strings.HasPrefix(name, ".") && !strings.EqualFold(name, automem.IndexName) && len(name) <= 255
}
