package automem

import (
	"crypto/sha256"
	"encoding/hex"
	"path"
	"strings"
)

// Kind of a memory entry.
type Kind string

const (
	// Fact is a top-level list item (bullet -,*,+ or numbered 1. / 1)) with
	// its nested items and continuation lines, or a whole table, in a
	// fact-list file.
	Fact Kind = "fact"
	// Memory is a one-memory-per-file topic file with YAML frontmatter: the
	// whole file is one entry.
	Memory Kind = "memory"
	// Pointer is an index line whose subject is a link to a sibling memory
	// file: "- [Title](file.md) — hook", "- [t](./f.md)" or "- `f.md` — desc".
	// A pointer is not knowledge itself; the file it points to is.
	Pointer Kind = "pointer"
)

// IndexName is the name of the auto-memory index file, the only file Claude
// Code loads into a session (truncated, see [Load]).
const IndexName = "MEMORY.md"

// Entry is one unit of remembered knowledge: the thing intermem observes,
// hashes, promotes and prunes.
type Entry struct {
	// ID is 16 lowercase hex chars: the first 8 bytes of the SHA-256 of
	// NormalizeText(Text); for a Memory, of NormalizeText(Description + "\n" + Text).
	ID   string
	Kind Kind
	// File is the file name relative to the memory dir, slash-separated.
	File string
	// Section is the title of the nearest preceding heading ("" if none);
	// for a Memory, the frontmatter name or the file name without ".md".
	Section string
	// Text is the entry's text. Facts: the block with the first line's list
	// marker removed, continuation lines kept with their indentation, CRLF
	// turned into "\n" and trailing whitespace trimmed. Memory: the body
	// after the frontmatter, trimmed. Pointer: the item without its marker.
	Text string
	// Marker is a list item's marker as written ("-", "*", "3.", "10)");
	// "" for a table, a paragraph, a lead-in with its list, or a Memory.
	// A numbered item keeps its number when promoted: other notes refer to
	// "rule #3".
	Marker string
	// Start and End are the byte range [Start,End) of the entry's block in
	// the file's content, including the final line terminator of its last
	// line (if any). For a Memory they cover the whole file.
	Start, End int
	// StartLine and EndLine are 1-based and inclusive.
	StartLine, EndLine int
	// Name, Description and Type are a Memory's frontmatter fields; Type is
	// `type` or nested `metadata.type`, lower-cased.
	Name        string
	Description string
	Type        string
	// Link is the sibling memory file a Pointer (or a Fact) links to, as
	// written, with a leading "./" and any "#fragment" removed.
	Link string
	// Secret reports that pruning the entry would remove a secret from
	// auto-memory (its block, a heading its removal could take with it, its
	// file's name; for a Memory any byte of the file, and in a scanned Dir
	// any pointer to it): such an entry is never pruned. Every text field
	// above is redacted either way (see redact.go).
	Secret bool

	rawLink string // Link as written, when redaction changed it
}

// Frontmatter is the leniently parsed YAML block at the top of a topic file.
type Frontmatter struct {
	Name, Description, Type string
	// Start and End are the byte range of the frontmatter block including
	// both "---" lines (and the closing line's terminator); a UTF-8 BOM is
	// before Start.
	Start, End int
	// Fields holds every scalar key, nested maps flattened with dots
	// ("metadata.type"), lists joined with ", ".
	Fields map[string]string
}

// Heading is an ATX heading ("## Title") outside fences and frontmatter.
type Heading struct {
	Level int
	Title string
	Line  int // 1-based
	// Start and End are the byte range of the heading line including its
	// terminator.
	Start, End int
}

// File is one parsed memory file.
type File struct {
	// Name is the file's name on disk, for reading, writing and deleting
	// it; SafeName is the same with any secret redacted, which is what
	// every Entry of the file carries as its File and what may be shown or
	// stored.
	Name        string
	SafeName    string
	Content     []byte       // exactly the bytes read
	Frontmatter *Frontmatter // nil when none
	Headings    []Heading    // real headings only
	Entries     []Entry
	Warnings    []string // e.g. "line 12: unclosed ``` fence treated as text"

	load LoadInfo // of MEMORY.md, measured when it was read
}

// Parse parses one memory file. It never fails and never panics: any bytes
// are acceptable, and whatever it does not understand is left out of the
// entries but kept in Content. Every text it returns is redacted (see
// redact.go); Content and Name are the file's own.
//
// A file with frontmatter is a single Memory entry, except the index
// (MEMORY.md), which is always scanned as a fact list: treating the index as
// one memory would hide every entry in it and let pruning delete it.
func Parse(name string, content []byte) *File {
	f := &File{Name: name, Content: content}
	p := parser{
		f:     f,
		src:   string(content),
		lines: splitLines(content),
	}
	first := 0
	fm, body := p.frontmatter()
	if fm != nil {
		f.Frontmatter = fm
		first = body
	}
	if fm != nil && path.Base(name) != IndexName {
		p.scan(first, false)
		f.Entries = []Entry{p.memoryEntry(fm, first)}
	} else {
		p.scan(first, true)
	}
	p.finish()
	redactFile(f, p.src)
	return f
}

// memoryEntry builds the single entry of a one-memory-per-file topic file.
func (p *parser) memoryEntry(fm *Frontmatter, first int) Entry {
	var body string
	if first < len(p.lines) {
		text, _ := p.join(first, len(p.lines)-1, p.lines[first].start)
		body = strings.TrimSpace(text)
	}
	section := fm.Name
	if section == "" {
		section = strings.TrimSuffix(path.Base(p.f.Name), ".md")
	}
	// NormalizeText(description + "\n" + body), without building either
	// string: the two normalize separately and join with one space.
	p.norm = appendNormalized(make([]byte, 0, len(fm.Description)+1+len(body)), fm.Description)
	mark := len(p.norm)
	if mark > 0 {
		p.norm = append(p.norm, ' ')
	}
	n := len(p.norm)
	p.norm = appendNormalized(p.norm, body)
	if len(p.norm) == n {
		p.norm = p.norm[:mark] // the body normalizes to nothing: no space
	}
	sum := sha256.Sum256(p.norm)
	return Entry{
		ID:          hex.EncodeToString(sum[:8]),
		Kind:        Memory,
		File:        p.f.Name,
		Section:     section,
		Text:        body,
		Start:       0,
		End:         len(p.src),
		StartLine:   1,
		EndLine:     len(p.lines),
		Name:        fm.Name,
		Description: fm.Description,
		Type:        fm.Type,
	}
}
