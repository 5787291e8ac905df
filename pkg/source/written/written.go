// Package written is the source of the memories other tools and the model
// write through intermem (`intermem write`, the MCP tool memory_write): an
// append-only log of JSON records, one a line, at .intermem/written.jsonl.
//
//	{"id":"…","type":"decision","title":"…","content":"…","tags":["…"],"files":["…"],
//	 "source":"compound","agent_id":"…","session_id":"…","created_at":"2026-11-26T09:00:00Z"}
//
// # Why a file in the state directory, and not store records
//
// The store is a cache of what intermem derived (the catalog, the search
// index) plus history; a user who deletes a damaged store must lose no
// memory, and the catalog must be able to rebuild every source from files.
// So a written memory lives in a file, and the store only indexes it like
// every other source. The file is intermem's own (it is only ever replaced
// through the journal, by the "write" operation of package ops), but it is
// read back as hostile like every source file: the state directory may be
// copied with a project or edited by hand. Parsing never trusts a record's
// id (it is recomputed from the content), drops records that are not
// well-formed, and the catalog redacts and screens every entry it keeps
// from here, as it does for every source but auto-memory.
//
// # Records
//
// A record's id is ID(type, title, content): the same memory written twice
// is one memory, whatever its tags or writer, and its id never depends on
// a field a parse could read differently. Records are never edited in
// place; the log only grows, so it is a source.Appender: a parse after a
// write costs the appended line.
//
// Mapping to an entry: Title, Text (the content), Tags, Created
// (created_at); Citations are the files the writer named plus the paths
// and symbols cite.Extract finds in the content; Fields hold type, source,
// agent_id, session_id and files. Kind is Solution for a solution, Learning
// for a learning, Fact for an insight, a decision or a style rule. A
// written memory is promotable: it lives in no document a session loads.
package written

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/intermem/intermem/pkg/cite"
	"github.com/intermem/intermem/pkg/source"
)

// Name is the source's name.
const Name = "written"

// LogPath is the log's path relative to the project root.
const LogPath = ".intermem/written.jsonl"

// FileName is the log's name in the state directory.
const FileName = "written.jsonl"

// Limits of one record, enforced when writing and when reading back.
const (
	// MaxTitle is the longest title, in bytes.
	MaxTitle = 200
	// MaxContent is the longest content, in bytes.
	MaxContent = 64 << 10
	// MaxList is the most tags, and the most files, of one record.
	MaxList = 32
	// MaxItem is the longest tag, file or name, in bytes.
	MaxItem = 256
	// MaxLine is the longest line read back; a longer one is not a record.
	MaxLine = 1 << 20
)

// Types are the types of memory a writer may give, in the order help
// lists them.
var Types = []string{"solution", "learning", "insight", "decision", "style"}

// Record is one written memory, as one line of the log.
type Record struct {
	ID        string    `json:"id"`
	Type      string    `json:"type"`
	Title     string    `json:"title"`
	Content   string    `json:"content"`
	Tags      []string  `json:"tags,omitempty"`
	Files     []string  `json:"files,omitempty"`
	Source    string    `json:"source"`
	AgentID   string    `json:"agent_id,omitempty"`
	SessionID string    `json:"session_id,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// ErrInvalid is returned by Check for a record that breaks a rule of the
// format; the error says which.
var ErrInvalid = errors.New("invalid memory")

// ID returns the id of the memory of type typ with title and content: the
// source's id (source.ID) keyed by the three, NUL-separated.
func ID(typ, title, content string) string {
	return source.ID(Name, typ+"\x00"+title+"\x00"+content)
}

// Check reports what makes r not a record of the log: an unknown type, an
// empty or multi-line title, empty content, text that is not UTF-8, or a
// field over its limit. It does not look at r.ID.
func Check(r *Record) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, a...))
	}
	switch {
	case !slices.Contains(Types, r.Type):
		return bad("type %q is not one of %s", r.Type, strings.Join(Types, ", "))
	case strings.TrimSpace(r.Title) == "":
		return bad("the title is empty")
	case strings.ContainsAny(r.Title, "\r\n"):
		return bad("the title is more than one line")
	case len(r.Title) > MaxTitle:
		return bad("the title is %d bytes long; at most %d", len(r.Title), MaxTitle)
	case strings.TrimSpace(r.Content) == "":
		return bad("the content is empty")
	case len(r.Content) > MaxContent:
		return bad("the content is %d bytes long; at most %d", len(r.Content), MaxContent)
	case len(r.Tags) > MaxList, len(r.Files) > MaxList:
		return bad("at most %d tags and %d files", MaxList, MaxList)
	case len(r.Source) > MaxItem, len(r.AgentID) > MaxItem, len(r.SessionID) > MaxItem:
		return bad("source, agent and session are at most %d bytes each", MaxItem)
	}
	for _, s := range append(append([]string{r.Title, r.Content, r.Source, r.AgentID, r.SessionID}, r.Tags...), r.Files...) {
		if !utf8.ValidString(s) {
			return bad("text that is not UTF-8")
		}
	}
	for _, s := range append(append([]string{}, r.Tags...), r.Files...) {
		if strings.TrimSpace(s) == "" || len(s) > MaxItem || strings.ContainsAny(s, "\r\n") {
			return bad("a tag or file must be one non-empty line of at most %d bytes", MaxItem)
		}
	}
	return nil
}

// Encode returns r as one line of the log, with its final newline; r.ID
// is set to its id first. The encoding is deterministic (fields in
// declaration order, no HTML escaping).
func Encode(r *Record) ([]byte, error) {
	if err := Check(r); err != nil {
		return nil, err
	}
	r.ID = ID(r.Type, r.Title, r.Content)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return nil, fmt.Errorf("encode memory: %w", err)
	}
	return b.Bytes(), nil
}

// Decode reads one line of the log (without its newline): a record that
// passes Check, its id recomputed from its content whatever the line says.
func Decode(line []byte) (*Record, error) {
	var r Record
	d := json.NewDecoder(bytes.NewReader(line))
	d.DisallowUnknownFields()
	if err := d.Decode(&r); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if d.More() {
		return nil, fmt.Errorf("%w: more than one JSON value on the line", ErrInvalid)
	}
	if err := Check(&r); err != nil {
		return nil, err
	}
	r.ID = ID(r.Type, r.Title, r.Content)
	return &r, nil
}

// Holds reports whether a complete line of the log content (one ending in
// a newline: a parse indexes no other) is a record with id.
func Holds(log []byte, id string) bool {
	for {
		i := bytes.IndexByte(log, '\n')
		if i < 0 {
			return false
		}
		line := log[:i]
		log = log[i+1:]
		// The id is recomputed; the cheap test only skips lines that cannot
		// be it.
		if bytes.Contains(line, []byte(id)) {
			if r, err := Decode(bytes.TrimSuffix(line, []byte("\r"))); err == nil && r.ID == id {
				return true
			}
		}
	}
}

// Records returns every record of the log content, in order, and how many
// lines were not records.
func Records(log []byte) (rs []*Record, bad int) {
	_, _, _, bad = parse(LogPath, bytes.NewReader(log), source.Cursor{}, func(r *Record) { rs = append(rs, r) })
	return rs, bad
}

// Source reads the log of written memories.
type Source struct{}

// Name returns "written".
func (Source) Name() string { return Name }

// Patterns returns the log's path.
func (Source) Patterns() []string { return []string{LogPath} }

// Parse parses a whole log held in memory.
func (Source) Parse(p string, content []byte) ([]source.Entry, []source.Problem) {
	es, ps, _, _ := parse(p, bytes.NewReader(content), source.Cursor{}, nil)
	return es, ps
}

// ParseFrom parses the log from the cursor at (source.Appender). The
// cursor returned is the end of the last complete line: a line without its
// newline is a record still being written, parsed again next time.
func (Source) ParseFrom(p string, r io.Reader, at source.Cursor) ([]source.Entry, []source.Problem, source.Cursor) {
	es, ps, next, _ := parse(p, r, at, nil)
	return es, ps, next
}

// parse reads complete lines from r (the log from at), calling each for
// every record. A line over MaxLine is never held in memory whole.
func parse(p string, r io.Reader, at source.Cursor, each func(*Record)) (es []source.Entry, ps []source.Problem, next source.Cursor, bad int) {
	br := bufio.NewReaderSize(r, 64<<10)
	line, off := max(at.Line, 1), at.Offset
	next = source.Cursor{Offset: off, Line: line}
	var buf []byte
	var size int64
	long, first := false, 0
	for {
		chunk, err := br.ReadSlice('\n')
		size += int64(len(chunk))
		if !long {
			if len(buf)+len(chunk) > MaxLine+1 {
				long, buf = true, buf[:0]
			} else {
				buf = append(buf, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil { // the end: an incomplete last line stays open
			break
		}
		text := bytes.TrimRight(buf, "\r\n")
		if long || len(bytes.TrimSpace(text)) > 0 {
			rec, derr := (*Record)(nil), error(nil)
			if !long {
				rec, derr = Decode(text)
			}
			if !long && derr == nil {
				if each != nil {
					each(rec)
				}
				es = append(es, entry(p, line, rec))
			} else {
				bad++
				if first == 0 {
					first = line
				}
			}
		}
		off += size
		line++
		next = source.Cursor{Offset: off, Line: line}
		buf, size, long = buf[:0], 0, false
	}
	if bad > 0 {
		what := "line is"
		if bad > 1 {
			what = "lines are"
		}
		ps = append(ps, source.Problem{Path: p, Line: first, Message: fmt.Sprintf("%d %s not a written memory; ignored", bad, what)})
	}
	return es, ps, next, bad
}

func entry(p string, line int, r *Record) source.Entry {
	kind := source.Fact
	switch r.Type {
	case "solution":
		kind = source.Solution
	case "learning":
		kind = source.Learning
	}
	e := source.Entry{
		ID: r.ID, Source: Name, Kind: kind, Path: p, Line: line, EndLine: line,
		Title: r.Title, Text: r.Content, Tags: source.Dedup(r.Tags), Created: r.CreatedAt.UTC(),
		Fields:     map[string]string{"type": r.Type},
		Promotable: true,
	}
	set := func(k, v string) {
		if v != "" {
			e.Fields[k] = v
		}
	}
	set("source", r.Source)
	set("agent_id", r.AgentID)
	set("session_id", r.SessionID)
	set("files", strings.Join(r.Files, ", "))
	e.Citations = append(e.Citations, r.Files...)
	for _, c := range cite.Extract(r.Content) {
		e.Citations = append(e.Citations, c.Text)
	}
	e.Citations = source.Dedup(e.Citations)
	return e
}
