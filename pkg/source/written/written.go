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
// # Records, and memories leaving the set
//
// A record's id is ID(type, title, content): the same memory written twice
// is one memory, whatever its tags or writer, and its id never depends on
// a field a parse could read differently. Records are never edited in
// place; the log only grows.
//
// A memory leaves the written set by a retire line appended after it:
//
//	{"retired":"…","reason":"promoted","at":"2026-11-26T09:00:00Z"}
//
// "promoted" when a synthesis apply put it into CLAUDE.md or AGENTS.md (its
// text lives on there, under its marker, with the same id: from then on
// the document is its home, so a sweep that archives it from there and a
// restore that gives it back move it between the document and
// docs/intermem/.archived.md like any promoted fact, never back into the
// written set), "pruned" when
// an apply took it out because a file Claude Code loads, or a solution
// document, already says it, "archived" when a sweep archived it because
// what it cites stopped holding. The log is read in order: a retire line
// takes its memory out, a record line of the same id appended later brings
// it back (a restore, or the same memory written again). Nothing is ever
// removed from the file, so whatever left the set can come back with its
// bytes. Because a later line can take back an earlier one, the source is
// parsed whole (it is not a source.Appender); the log of memories written
// by hand and by tools stays small.
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
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
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
	ID        string   `json:"id"`
	Type      string   `json:"type"`
	Title     string   `json:"title"`
	Content   string   `json:"content"`
	Tags      []string `json:"tags,omitempty"`
	Files     []string `json:"files,omitempty"`
	Source    string   `json:"source"`
	AgentID   string   `json:"agent_id,omitempty"`
	SessionID string   `json:"session_id,omitempty"`
	// ToolUseID is the id of the model's tool call that wrote it through
	// memory_write (Claude Code sends it as _meta "claudecode/toolUseId"):
	// the tool_use block of that id is in the session's transcript, or in
	// the transcript of the subagent that made the call.
	ToolUseID string    `json:"tool_use_id,omitempty"`
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
	case len(r.Source) > MaxItem, len(r.AgentID) > MaxItem, len(r.SessionID) > MaxItem, len(r.ToolUseID) > MaxItem:
		return bad("source, agent, session and tool call are at most %d bytes each", MaxItem)
	}
	for _, s := range append(append([]string{r.Title, r.Content, r.Source, r.AgentID, r.SessionID, r.ToolUseID}, r.Tags...), r.Files...) {
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
	r, err := decodeStrict[Record](line)
	if err != nil {
		return nil, err
	}
	if err := Check(r); err != nil {
		return nil, err
	}
	r.ID = ID(r.Type, r.Title, r.Content)
	return r, nil
}

// decodeStrict decodes a line of the log strictly: exactly one JSON value,
// with no field T does not have (a line someone else wrote is refused,
// not half read).
func decodeStrict[T any](line []byte) (*T, error) {
	var v T
	d := json.NewDecoder(bytes.NewReader(line))
	d.DisallowUnknownFields()
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if d.More() {
		return nil, fmt.Errorf("%w: more than one JSON value on the line", ErrInvalid)
	}
	return &v, nil
}

// Reasons a memory leaves the written set (Retire.Reason).
const (
	// Promoted: a synthesis apply put it into CLAUDE.md or AGENTS.md.
	Promoted = "promoted"
	// Pruned: an apply took it out because a file Claude Code loads, or a
	// solution document, already says it.
	Pruned = "pruned"
	// Archived: a sweep archived it because what it cites stopped holding.
	Archived = "archived"
)

// Retire is a line of the log that takes the memory Retired out of the
// written set (see the package comment).
type Retire struct {
	Retired string    `json:"retired"`
	Reason  string    `json:"reason"`
	At      time.Time `json:"at"`
}

// EncodeRetire returns the retire line of r, with its final newline.
func EncodeRetire(r *Retire) ([]byte, error) {
	if err := checkRetire(r); err != nil {
		return nil, err
	}
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encode retire line: %w", err)
	}
	return append(b, '\n'), nil
}

// DecodeRetire reads one retire line (without its newline).
func DecodeRetire(line []byte) (*Retire, error) {
	r, err := decodeStrict[Retire](line)
	if err != nil {
		return nil, err
	}
	if err := checkRetire(r); err != nil {
		return nil, err
	}
	return r, nil
}

func checkRetire(r *Retire) error {
	if !isID(r.Retired) {
		return fmt.Errorf("%w: %q is not a memory id", ErrInvalid, r.Retired)
	}
	switch r.Reason {
	case Promoted, Pruned, Archived:
		return nil
	}
	return fmt.Errorf("%w: %q is not a reason a memory leaves the written set", ErrInvalid, r.Reason)
}

// isID reports whether s is an id: 16 lowercase hex digits.
func isID(s string) bool {
	if len(s) != 16 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// line is one line of the log read back: a record or a retire line.
type line struct {
	rec    *Record
	retire *Retire
}

// decodeLine reads a line of either kind. Only a line naming "retired"
// is tried as a retire line: a record's fields never include it.
func decodeLine(b []byte) (line, error) {
	if bytes.Contains(b, []byte(`"retired"`)) {
		if r, err := DecodeRetire(b); err == nil {
			return line{retire: r}, nil
		}
	}
	r, err := Decode(b)
	if err != nil {
		return line{}, err
	}
	return line{rec: r}, nil
}

// Holds reports whether the memory id is in the written set at the end
// of the log content, reading only its complete lines (those ending in a
// newline: a parse reads no other): its last record line comes after its
// last retire line.
func Holds(log []byte, id string) bool {
	rec, retired := last(log, id)
	return rec != nil && !retired
}

// Last returns the last record of the memory id in the log content and
// whether a retire line came after it (nil: the log never held it).
func Last(log []byte, id string) (rec *Record, retired bool) { return last(log, id) }

func last(log []byte, id string) (rec *Record, retired bool) {
	for {
		i := bytes.IndexByte(log, '\n')
		if i < 0 {
			return rec, retired
		}
		b := log[:i]
		log = log[i+1:]
		// Every line is decoded: a record's id is recomputed, and JSON may
		// spell an id with escapes, so no byte test can skip a line.
		l, err := decodeLine(bytes.TrimSuffix(b, []byte("\r")))
		switch {
		case err != nil:
		case l.retire != nil && l.retire.Retired == id:
			retired = rec != nil
		case l.rec != nil && l.rec.ID == id:
			rec, retired = l.rec, false
		}
	}
}

// Left is a memory out of the written set at the end of the log: its last
// record and the retire line that took it out.
type Left struct {
	Record *Record
	Retire *Retire
}

// Out returns the memories out of the written set at the end of the log
// content (complete lines only), in the order of their retire lines.
func Out(log []byte) []Left {
	last := map[string]*Record{}
	out := map[string]*Retire{}
	var order []string
	for len(log) > 0 {
		i := bytes.IndexByte(log, '\n')
		if i < 0 {
			break
		}
		b := bytes.TrimSuffix(log[:i], []byte("\r"))
		log = log[i+1:]
		if len(b) > MaxLine {
			continue
		}
		l, err := decodeLine(b)
		switch {
		case err != nil:
		case l.rec != nil:
			last[l.rec.ID] = l.rec
			delete(out, l.rec.ID)
		case last[l.retire.Retired] != nil && out[l.retire.Retired] == nil:
			out[l.retire.Retired] = l.retire
			order = append(order, l.retire.Retired)
		}
	}
	var ls []Left
	seen := map[string]bool{}
	for i := len(order) - 1; i >= 0; i-- { // the last retire of each
		id := order[i]
		if r := out[id]; r != nil && !seen[id] {
			seen[id] = true
			ls = append(ls, Left{Record: last[id], Retire: r})
		}
	}
	slices.Reverse(ls)
	return ls
}

// Records returns every record in the written set at the end of the log
// content, in the order of the line that last wrote each, and how many
// lines were neither records nor retire lines.
func Records(log []byte) (rs []*Record, bad int) {
	live, _, bad := replay(bytes.NewReader(log))
	for _, l := range live {
		rs = append(rs, l.rec)
	}
	return rs, bad
}

// Source reads the log of written memories.
type Source struct{}

// Name returns "written".
func (Source) Name() string { return Name }

// Patterns returns the log's path.
func (Source) Patterns() []string { return []string{LogPath} }

// Parse parses a whole log: the memories in the written set at its end.
func (Source) Parse(p string, content []byte) ([]source.Entry, []source.Problem) {
	live, first, bad := replay(bytes.NewReader(content))
	es := make([]source.Entry, 0, len(live))
	for _, l := range live {
		es = append(es, entry(p, l.n, l.rec))
	}
	var ps []source.Problem
	if bad > 0 {
		what := "line is"
		if bad > 1 {
			what = "lines are"
		}
		ps = append(ps, source.Problem{Path: p, Line: first, Message: fmt.Sprintf("%d %s not a written memory; ignored", bad, what)})
	}
	return es, ps
}

// numbered is a record with the number of the line that last wrote it.
type numbered struct {
	rec *Record
	n   int
}

// replay reads the complete lines of r in order (a last line without its
// newline is a record still being written) and returns the memories in
// the written set at the end, in the order of the line that last wrote
// each, with the first bad line and how many lines were bad. A line over
// MaxLine is never held in memory whole.
func replay(r io.Reader) (live []numbered, first, bad int) {
	br := bufio.NewReaderSize(r, 64<<10)
	at := map[string]int{} // id → the line that last wrote it, while live
	var recs []numbered
	var buf []byte
	long := false
	for n := 1; ; {
		chunk, err := br.ReadSlice('\n')
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
		if err != nil { // the end: an incomplete last line is not read
			break
		}
		text := bytes.TrimRight(buf, "\r\n")
		if long || len(bytes.TrimSpace(text)) > 0 {
			l, derr := line{}, error(nil)
			if !long {
				l, derr = decodeLine(text)
			}
			switch {
			case long || derr != nil:
				bad++
				if first == 0 {
					first = n
				}
			case l.retire != nil:
				delete(at, l.retire.Retired)
			default:
				at[l.rec.ID] = n
				recs = append(recs, numbered{rec: l.rec, n: n})
			}
		}
		n++
		buf, long = buf[:0], false
	}
	for _, r := range recs {
		if at[r.rec.ID] == r.n {
			live = append(live, r)
		}
	}
	return live, first, bad
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
	set("tool_use_id", r.ToolUseID)
	set("files", strings.Join(r.Files, ", "))
	e.Citations = append(e.Citations, r.Files...)
	for _, c := range cite.Extract(r.Content) {
		e.Citations = append(e.Citations, c.Text)
	}
	e.Citations = source.Dedup(e.Citations)
	return e
}

// MaxLog is the largest log ReadLog reads.
const MaxLog = 64 << 20

// ErrNotLog is returned by ReadLog for a log that is not a regular file
// (a link, a FIFO, a directory) or is over MaxLog.
var ErrNotLog = errors.New("not a readable log of written memories")

// ReadLog reads the log in the state directory stateDir: nil when there is
// none. It never follows a link (O_NOFOLLOW) nor blocks on a FIFO.
func ReadLog(stateDir string) ([]byte, error) {
	path := filepath.Join(stateDir, FileName)
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %v", path, ErrNotLog, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w", path, ErrNotLog)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxLog+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > MaxLog {
		return nil, fmt.Errorf("%s: %w (over %d bytes)", path, ErrNotLog, MaxLog)
	}
	return b, nil
}
