// Package interfluence reads interfluence's edit log,
// .interfluence/learnings-raw.log, which a PostToolUse:Edit hook appends to:
//
//	--- 2026-02-16T10:23:45Z | src/main.py | CONTEXT:refactor ---
//	OLD: the text before the edit
//	NEW: the text after it,
//	which may span lines
//
// Each block is one edit observation (a style correction the user made), not
// a fact: searchable, shown for the file being worked on, never promoted.
//
// # Parsing
//
// The log is read as a stream, one line at a time, so it is never held in
// memory whole. A header is a line "--- TIME | PATH | CONTEXT:WORD ---"
// (three " | "-separated fields, the last starting with "CONTEXT:"); any
// other line, even one that starts with "---", belongs to the block it is
// in. After a header, a line starting with "OLD:" opens the old text and a
// later line starting with "NEW:" the new one; every line up to the next
// header continues the text it follows, and trailing blank lines are
// dropped. TIME is RFC 3339 (a date, or a space instead of the T, is
// accepted too). PATH is data: it is kept as written, cleaned, in the "file"
// field and as the entry's one citation, and never opened.
//
// What does not fit is counted, never fatal: lines before the first header
// or between a header and its OLD, blocks with neither OLD nor NEW, times
// that do not parse, lines over MaxLine bytes (cut), texts over MaxText
// bytes (cut). Each kind is one Problem per parse, with the count and the
// first line. At most MaxEntries observations are kept per parse, the
// newest; older ones are reported, not indexed.
//
// # Resuming
//
// The source is a source.Appender: ParseFrom resumes at a Cursor, and the
// cursor it returns is the start of the last block, which a later append
// could still extend (a hook that writes a block in several writes). So a
// parse after an append costs the last block plus the appended bytes.
//
// # Ids
//
// A block never changes once written, so its id is keyed by its content
// (time, path, context, old and new text): the same block yields the same id
// whichever parse, full or resumed, reads it, and two identical blocks are
// one observation.
package interfluence

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"path"
	"strings"
	"time"

	"github.com/intermem/intermem/pkg/source"
)

// Name is the source's name.
const Name = "interfluence"

// LogPath is the log's path relative to the project root.
const LogPath = ".interfluence/learnings-raw.log"

// Limits on hostile or runaway logs.
const (
	// MaxLine is the longest line kept; the rest of a longer line is dropped.
	MaxLine = 64 << 10
	// MaxText is the most bytes kept of one block's old or new text.
	MaxText = 16 << 10
	// MaxEntries is the most observations one parse returns: the newest.
	MaxEntries = 50000
)

// Source reads the interfluence edit log.
type Source struct{}

// Name returns "interfluence".
func (Source) Name() string { return Name }

// Patterns returns the log's path.
func (Source) Patterns() []string { return []string{LogPath} }

// Parse parses a whole log held in memory.
func (s Source) Parse(p string, content []byte) ([]source.Entry, []source.Problem) {
	es, ps, _ := s.ParseFrom(p, bytes.NewReader(content), source.Cursor{})
	return es, ps
}

// ParseFrom parses the log from the cursor at; see the package comment and
// source.Appender.
func (Source) ParseFrom(p string, r io.Reader, at source.Cursor) ([]source.Entry, []source.Problem, source.Cursor) {
	ps := &parser{path: p, line: max(at.Line, 1), off: at.Offset}
	ps.run(bufio.NewReaderSize(r, 4096))
	return ps.finish(at)
}

// state is where in a block the parser is.
type state int

const (
	outside state = iota // before the first header
	header               // after a header, before OLD
	inOld
	inNew
)

type block struct {
	line, end   int
	off         int64
	when        time.Time
	file, ctx   string
	old, new    strings.Builder
	hasOld, has bool
	cut         bool
}

// tally counts one kind of problem: how many, and the first line.
type tally struct {
	n, first int
}

func (t *tally) add(line int) {
	if t.n == 0 {
		t.first = line
	}
	t.n++
}

type parser struct {
	path string
	line int   // number of the line being read
	off  int64 // offset of the line being read

	st  state
	cur *block

	entries []source.Entry
	dropped int

	// cursor candidates
	lastStart     int64 // offset of the current block's header
	lastStartLine int
	complete      int64 // offset after the last complete line when no block is open
	completeLine  int

	stray, empty, badTime, long, cutText tally
}

func (ps *parser) run(r *bufio.Reader) {
	ps.complete, ps.completeLine = ps.off, ps.line
	for {
		raw, n, terminated, err := readLine(r)
		if n == 0 && err != nil {
			break
		}
		if len(raw) < n-boolInt(terminated) {
			ps.long.add(ps.line)
		}
		ps.handle(strings.TrimSuffix(string(raw), "\r"))
		ps.off += int64(n)
		ps.line++
		if terminated && ps.cur == nil {
			ps.complete, ps.completeLine = ps.off, ps.line
		}
		if err != nil {
			break
		}
	}
	ps.close()
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// readLine reads one line, keeping at most MaxLine bytes of it. n is the
// number of bytes consumed, terminator included.
func readLine(r *bufio.Reader) (line []byte, n int, terminated bool, err error) {
	for {
		chunk, e := r.ReadSlice('\n')
		n += len(chunk)
		if room := MaxLine - len(line); room > 0 {
			keep := chunk
			if len(keep) > room {
				keep = keep[:room]
			}
			line = append(line, keep...)
		}
		switch e {
		case nil:
			line = bytes.TrimSuffix(line, []byte("\n"))
			return dropCutWord(line, n-1), n, true, nil
		case bufio.ErrBufferFull:
			continue
		default:
			return dropCutWord(line, n), n, false, e
		}
	}
}

// dropCutWord drops the last word of a line cut at MaxLine (of was bytes
// long): the rest of the line is never read, so a secret the cut split
// could not be recognised by redaction, and its first part would be kept.
// The word goes back to the last blank; a line with none is dropped whole.
func dropCutWord(line []byte, was int) []byte {
	if was <= len(line) {
		return line
	}
	return line[:bytes.LastIndexAny(line, " \t")+1]
}

func (ps *parser) handle(line string) {
	if when, file, ctx, ok := parseHeader(line); ok {
		ps.close()
		if when.IsZero() {
			ps.badTime.add(ps.line)
		}
		ps.cur = &block{line: ps.line, end: ps.line, off: ps.off, when: when, file: file, ctx: ctx}
		ps.lastStart, ps.lastStartLine = ps.off, ps.line
		ps.st = header
		return
	}
	b := ps.cur
	switch {
	case ps.st == header && strings.HasPrefix(line, "OLD:"):
		ps.st, b.hasOld = inOld, true
		b.appendTo(&b.old, strings.TrimPrefix(strings.TrimPrefix(line, "OLD:"), " "), false)
	case (ps.st == header || ps.st == inOld) && strings.HasPrefix(line, "NEW:"):
		ps.st, b.has = inNew, true
		b.appendTo(&b.new, strings.TrimPrefix(strings.TrimPrefix(line, "NEW:"), " "), false)
	case ps.st == inOld:
		b.appendTo(&b.old, line, true)
	case ps.st == inNew:
		b.appendTo(&b.new, line, true)
	default: // outside a block, or between a header and OLD
		if strings.TrimSpace(line) != "" {
			ps.stray.add(ps.line)
		}
		return
	}
	if strings.TrimSpace(line) != "" {
		b.end = ps.line
	}
}

// appendTo adds a line to a block's text, up to MaxText bytes.
func (b *block) appendTo(sb *strings.Builder, line string, newline bool) {
	if newline {
		line = "\n" + line
	}
	if room := MaxText - sb.Len(); len(line) > room {
		if room > 0 {
			sb.WriteString(source.Clip(line, room))
		}
		b.cut = true
		return
	}
	sb.WriteString(line)
}

// parseHeader parses "--- TIME | PATH | CONTEXT:WORD ---".
func parseHeader(line string) (when time.Time, file, ctx string, ok bool) {
	t := strings.TrimSpace(line)
	if !strings.HasPrefix(t, "--- ") || !strings.HasSuffix(t, " ---") || len(t) < 8 {
		return
	}
	parts := strings.Split(t[4:len(t)-4], " | ")
	if len(parts) != 3 {
		return
	}
	c := strings.TrimSpace(parts[2])
	if !strings.HasPrefix(c, "CONTEXT:") {
		return
	}
	file = strings.TrimSpace(parts[1])
	if file == "" {
		return
	}
	if f := path.Clean(strings.ReplaceAll(file, "\\", "/")); f != "." {
		file = f
	}
	return source.ParseDate(parts[0]), file, strings.TrimSpace(strings.TrimPrefix(c, "CONTEXT:")), true
}

// close turns the open block, if any, into an entry.
func (ps *parser) close() {
	b := ps.cur
	ps.cur, ps.st = nil, outside
	if b == nil {
		return
	}
	if !b.hasOld && !b.has {
		ps.empty.add(b.line)
		return
	}
	if b.cut {
		ps.cutText.add(b.line)
	}
	old := strings.TrimRight(b.old.String(), " \t\n")
	nw := strings.TrimRight(b.new.String(), " \t\n")
	stamp := ""
	if !b.when.IsZero() {
		stamp = b.when.Format(time.RFC3339Nano)
	}
	e := source.Entry{
		ID:        source.ID(Name, strings.Join([]string{stamp, b.file, b.ctx, old, nw}, "\x00")),
		Source:    Name,
		Kind:      source.Observation,
		Path:      ps.path,
		Line:      b.line,
		EndLine:   b.end,
		Title:     title(b.file, old, nw),
		Text:      "OLD: " + old + "\nNEW: " + nw,
		Created:   b.when,
		Citations: []string{b.file},
	}
	source.SetField(&e, "file", b.file)
	source.SetField(&e, "context", b.ctx)
	e.Fields["old"] = old
	e.Fields["new"] = nw
	ps.entries = append(ps.entries, e)
	if len(ps.entries) >= 2*MaxEntries {
		drop := len(ps.entries) - MaxEntries
		ps.dropped += drop
		ps.entries = append(ps.entries[:0], ps.entries[drop:]...)
	}
}

// title shows an observation on one line: "file: old → new", or with only
// the side that exists for an insertion or a deletion.
func title(file, old, nw string) string {
	switch {
	case old == "":
		return file + ": + " + source.OneLine(nw, 120)
	case nw == "":
		return file + ": − " + source.OneLine(old, 120)
	}
	return file + ": " + source.OneLine(old, 60) + " → " + source.OneLine(nw, 60)
}

func (ps *parser) finish(at source.Cursor) ([]source.Entry, []source.Problem, source.Cursor) {
	if len(ps.entries) > MaxEntries {
		drop := len(ps.entries) - MaxEntries
		ps.dropped += drop
		ps.entries = ps.entries[drop:]
	}
	var probs []source.Problem
	report := func(t tally, one, many, rest string) {
		if t.n > 0 {
			what := one
			if t.n > 1 {
				what = many
			}
			probs = append(probs, source.Problem{Path: ps.path, Line: t.first, Message: fmt.Sprintf("%d %s %s", t.n, what, rest)})
		}
	}
	report(ps.stray, "line", "lines", "outside an OLD:/NEW: block; ignored")
	report(ps.empty, "block", "blocks", "with neither OLD: nor NEW:; ignored")
	report(ps.badTime, "block header", "block headers", "with a time that is not RFC 3339; kept without a date")
	report(ps.long, "line", "lines", fmt.Sprintf("over %d KiB; cut", MaxLine>>10))
	report(ps.cutText, "block", "blocks", fmt.Sprintf("with an OLD or NEW text over %d KiB; cut", MaxText>>10))
	if ps.dropped > 0 {
		probs = append(probs, source.Problem{Path: ps.path, Message: fmt.Sprintf("%d older observations beyond the newest %d are not indexed", ps.dropped, MaxEntries)})
	}
	next := source.Cursor{Offset: ps.complete, Line: ps.completeLine}
	if ps.lastStartLine > 0 {
		next = source.Cursor{Offset: ps.lastStart, Line: ps.lastStartLine}
	}
	if next.Offset < at.Offset {
		next = source.Cursor{Offset: at.Offset, Line: max(at.Line, 1)}
	}
	return ps.entries, probs, next
}
