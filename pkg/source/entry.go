package source

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
)

// Kind says what sort of knowledge an entry is.
type Kind string

// The kinds of entry sources produce.
const (
	// Fact is a statement in an instruction file or in auto-memory.
	Fact Kind = "fact"
	// Memory is a one-memory topic file of auto-memory.
	Memory Kind = "memory"
	// Solution is a compound-engineering solution document: a problem, its
	// root cause, its fix and how to prevent it.
	Solution Kind = "solution"
	// Learning is a short, confirmed claim about the code with evidence
	// (a clavain learning).
	Learning Kind = "learning"
	// Observation is something seen happen (an edit and its correction), not
	// a claim: searchable and shown, never promoted.
	Observation Kind = "observation"
)

// Section is one addressable part of a compound document: a "## Name"
// heading and the text up to the next heading of the same or a higher level.
type Section struct {
	// Name is the heading text as written, without the "#" marks.
	Name string `json:"name"`
	// Line is the 1-based line of the heading in the file.
	Line int `json:"line"`
	// Text is the section's body, without its heading, trimmed.
	Text string `json:"text,omitempty"`
}

// Entry is one unit of knowledge a source found in a file.
type Entry struct {
	// ID is stable across runs and unique across sources; see [ID].
	ID string `json:"id"`
	// Source is the name of the source that produced the entry.
	Source string `json:"source"`
	// Kind is what sort of knowledge the entry is.
	Kind Kind `json:"kind"`
	// Path is the file the entry lives in, slash-separated and relative to
	// the project root.
	Path string `json:"path"`
	// Line and EndLine are the 1-based, inclusive line range of the entry in
	// Path.
	Line    int `json:"line"`
	EndLine int `json:"end_line"`
	// Title is a one-line name for the entry.
	Title string `json:"title"`
	// Text is the entry's body as written (line ends normalized to "\n").
	Text string `json:"text"`
	// Tags are the entry's tags as written, without duplicates.
	Tags []string `json:"tags,omitempty"`
	// Symptoms are what a reader would observe when the entry applies (an
	// error message, a misbehaviour), as written.
	Symptoms []string `json:"symptoms,omitempty"`
	// Created, Updated and Confirmed are the dates the source records, zero
	// when it records none: when the knowledge was written, last changed,
	// and last confirmed to still hold.
	Created   time.Time `json:"created,omitzero"`
	Updated   time.Time `json:"updated,omitzero"`
	Confirmed time.Time `json:"confirmed,omitzero"`
	// Citations are the files, lines and symbols the entry cites as its
	// evidence, each exactly as written ("middleware/auth.go:47-52",
	// "handleRequest()"). They are data: nothing in a source opens them.
	Citations []string `json:"citations,omitempty"`
	// Sections are the addressable parts of a compound document, in order.
	Sections []Section `json:"sections,omitempty"`
	// Fields holds the source's other named values (component, module,
	// problem_type, root_cause, severity, provenance, the file an
	// observation concerns, …); a list value is joined with ", ".
	Fields map[string]string `json:"fields,omitempty"`
	// Promotable says whether intermem may promote the entry into an
	// instruction file. Entries that already live in a committed document,
	// and observations, are not.
	Promotable bool `json:"promotable,omitempty"`
	// Redacted says the source redacted every text of the entry itself
	// (auto-memory's are redacted by automem.Parse), so the catalog must
	// not redact it again; Secret then says whether a secret was found.
	// For every other source the catalog redacts and sets Secret.
	Redacted bool `json:"-"`
	Secret   bool `json:"secret,omitempty"`
}

// Section returns the entry's first section whose name equals name, ignoring
// case and surrounding space.
func (e *Entry) Section(name string) (Section, bool) {
	name = strings.TrimSpace(name)
	for _, s := range e.Sections {
		if strings.EqualFold(strings.TrimSpace(s.Name), name) {
			return s, true
		}
	}
	return Section{}, false
}

// Date is the entry's most recent known date: the latest of Created,
// Updated and Confirmed, or zero.
func (e *Entry) Date() time.Time {
	d := e.Created
	if e.Updated.After(d) {
		d = e.Updated
	}
	if e.Confirmed.After(d) {
		d = e.Confirmed
	}
	return d
}

// ID returns the id of the entry that source keys by key: the first 16 hex
// digits of the SHA-256 of source, a NUL byte and key. See the package
// comment for how sources choose their keys.
func ID(source, key string) string {
	h := sha256.New()
	h.Write([]byte(source))
	h.Write([]byte{0})
	h.Write([]byte(key))
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0])[:8])
}

// Problem is something a source could not make sense of in one file. It is
// never fatal: the rest of the file is still read.
type Problem struct {
	// Path is the file, slash-separated and relative to the project root.
	Path string
	// Line is the 1-based line the problem starts at, or 0 for the whole
	// file.
	Line int
	// Message says what is wrong, in words for the user.
	Message string
	// Unread is set when the problem kept the source from reading its
	// place at all (the memory directory is a file, a base directory
	// cannot be opened): the source's entries are missing from every
	// result, not one file's. Readers of the catalog warn of it.
	Unread bool `json:",omitempty"`
}

func (p Problem) String() string {
	if p.Line > 0 {
		return p.Path + ":" + strconv.Itoa(p.Line) + ": " + p.Message
	}
	return p.Path + ": " + p.Message
}
