// Package payload reads a Claude Code hook payload and writes the one
// output object a SessionStart hook prints. It is the hooks' one
// definition of both, shared by the full hooks (package hookio) and the
// hook front (package hookfront), and links no JSON library (package
// jsonscan): the front runs at every turn.
//
// Read never reads beyond MaxInput bytes; the payload is parsed
// leniently: unknown fields are ignored and only session_id, cwd and
// hook_event_name are relied on (a session_id that could not be a key or
// a file name component is ErrNoSession).
package payload

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/intermem/intermem/pkg/clienv"
	"github.com/intermem/intermem/pkg/jsonscan"
)

// MaxInput caps how much of stdin a hook reads. Real payloads are well
// under 4 KB; a Stop payload carries the last assistant message, so allow
// generously, but never let a runaway producer make a hook allocate without
// bound.
const MaxInput = 4 << 20

// Input is the part of a hook payload intermem relies on.
type Input struct {
	SessionID string
	Cwd       string
	Event     string // hook_event_name
	Source    string // SessionStart: startup|resume|clear|compact|…
	Reason    string // SessionEnd: clear|logout|prompt_input_exit|other|…
	// AgentID is set when the hook fires inside a subagent; AgentType is
	// the subagent's type (or the --agent name on the main thread).
	AgentID, AgentType string
	Raw                []byte
}

// Dir is the directory the hook works in: the payload's cwd when it is
// absolute, else CLAUDE_PROJECT_DIR (getenv's), else wd (the process's).
func (in Input) Dir(getenv func(string) string, wd string) string {
	dir := in.Cwd
	if dir == "" || !filepath.IsAbs(dir) {
		dir = getenv("CLAUDE_PROJECT_DIR")
	}
	if dir == "" {
		dir = wd
	}
	return dir
}

// Bool is the payload's top-level member key read as a boolean, as gjson
// reads one (stop_hook_active).
func (in Input) Bool(key string) bool { return jsonscan.Get(in.Raw, key).Bool() }

// Errors returned by Read and Parse.
var (
	// ErrEmpty is returned when stdin carried nothing.
	ErrEmpty = errors.New("empty hook input")
	// ErrTooLarge is returned when stdin exceeds MaxInput.
	ErrTooLarge = errors.New("hook input too large")
	// ErrNotJSON is returned when stdin is not one JSON object.
	ErrNotJSON = errors.New("hook input is not a JSON object")
	// ErrNoSession is returned when session_id is missing or unusable.
	ErrNoSession = errors.New("hook input has no usable session_id")
)

// ReadTimeout bounds how long a hook waits for the rest of its payload
// once the first read did not bring it whole, and for the drain of what
// lies beyond MaxInput.
const ReadTimeout = 2 * time.Second

// ErrIncomplete is returned by ReadInput when the payload did not arrive
// whole within ReadTimeout.
var ErrIncomplete = errors.New("hook input incomplete")

// Read reads and parses a hook payload (ReadInput, then Parse).
func Read(r io.Reader) (Input, error) {
	if r == nil {
		return Input{}, ErrEmpty
	}
	b, err := ReadInput(r)
	if err != nil {
		return Input{}, fmt.Errorf("read hook input: %w", err)
	}
	if len(b) > MaxInput {
		return Input{}, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, MaxInput)
	}
	return Parse(b)
}

// ReadInput reads a payload from r as every hook reads it, the front and
// the full hooks alike: at most MaxInput+1 bytes (one more than MaxInput
// tells the payload is too large; the rest is then drained, so that the
// writer does not see EPIPE), and no further than the first complete JSON
// value. Claude Code writes one object; a writer that keeps the pipe open
// after it (a wrapper's sleep, a stuck parent) does not hold the hook
// until it closes.
//
// Only the first read is made here without a timer: it waits for the
// writer's first bytes or its close, which Claude Code writes as it starts
// the hook, and on a turn it brings the whole payload. A read after it is
// made here only for bytes known to be waiting (waiting: what the kernel
// says a pipe, a file or a terminal holds; an in-memory reader's rest),
// so it cannot block: a payload larger than the first read's space comes
// in one more read, not one per growth of the buffer. Once nothing is
// known to be waiting and the value is incomplete (the writer has not
// written the rest yet: it stopped half-way, or writes in parts), the
// rest, and the drain past MaxInput, are read by a goroutine and waited
// for at most ReadTimeout (ErrIncomplete, with the bytes read so far);
// the goroutine, left blocked in its read, ends with the process. That a
// read filled its space says nothing of what is left: an incomplete value
// may end exactly where the space did, and a plain read would then wait
// for the writer to close.
func ReadInput(r io.Reader) ([]byte, error) {
	if r == nil {
		return nil, ErrEmpty
	}
	b := make([]byte, 512)
	n, err := r.Read(b)
	b = b[:n]
	var s scan
	for {
		switch {
		case err == io.EOF:
			return b, nil
		case err != nil:
			return b, err
		case len(b) > MaxInput:
			return readRest(r, b, &s)
		case s.complete(b):
			return b, nil
		}
		avail := waiting(r)
		if avail <= 0 {
			return readRest(r, b, &s)
		}
		space := min(avail, MaxInput+1-len(b))
		b = slices.Grow(b, space)
		n, err = r.Read(b[len(b) : len(b)+space])
		b = b[:len(b)+n]
		if n == 0 && err == nil {
			return readRest(r, b, &s)
		}
	}
}

// readRest is ReadInput past a read of an incomplete value with nothing
// known to be waiting, or past MaxInput: each read made by a goroutine of
// its own, waited for until ReadTimeout has passed. s is the scan of b so
// far, carried on.
func readRest(r io.Reader, b []byte, s *scan) ([]byte, error) {
	type chunk struct {
		b   []byte
		err error
	}
	ch := make(chan chunk, 1)
	go func(total int) {
		// Its own buffers, sent whole: the caller never shares memory
		// with a read it stopped waiting for. Past MaxInput one buffer is
		// reused and nothing is sent but the end.
		var buf, discard []byte
		for {
			if total <= MaxInput {
				buf = make([]byte, 32<<10)
			} else if discard == nil {
				// Never a buffer already sent: the caller may still be
				// copying from it.
				discard = make([]byte, 32<<10)
				buf = discard
			}
			n, err := r.Read(buf)
			c := chunk{err: err}
			if total <= MaxInput {
				c.b = buf[:n]
			}
			total += n
			if c.b != nil || err != nil {
				ch <- c
			}
			if err != nil {
				return
			}
		}
	}(len(b))
	timer := time.NewTimer(ReadTimeout)
	defer timer.Stop()
	for {
		select {
		case c := <-ch:
			if len(b) <= MaxInput {
				b = append(b, c.b[:min(len(c.b), MaxInput+1-len(b))]...)
			}
			switch {
			case c.err == io.EOF:
				return b, nil
			case c.err != nil:
				return b, c.err
			case len(b) <= MaxInput && s.complete(b):
				return b, nil
			}
		case <-timer.C:
			if len(b) > MaxInput {
				return b, nil // too large either way; the drain stops here
			}
			return b, fmt.Errorf("%w after %v (%d bytes)", ErrIncomplete, ReadTimeout, len(b))
		}
	}
}

// waiting is how many bytes a read of r would return without waiting for
// a writer: what an in-memory reader has left (Len: bytes.Reader,
// strings.Reader, bytes.Buffer), or what the kernel says r's file holds
// (fileWaiting); 0 when neither is known.
func waiting(r io.Reader) int {
	if l, ok := r.(interface{ Len() int }); ok {
		return l.Len()
	}
	return fileWaiting(r)
}

// Complete reports whether b holds a complete JSON value after any
// leading white space: an object or array closed at its depth (strings
// and their escapes skipped). Anything else is read on to its end (or
// MaxInput), so that what is not a payload is told as before: too large,
// or not a JSON object. It decides only when a hook stops reading; Parse
// judges what was read.
func Complete(b []byte) bool {
	var s scan
	return s.complete(b)
}

// scan is Complete carried from one read to the next: ReadInput asks
// after every read whether the value is whole, and a payload that comes
// in many small reads (a writer that writes in parts, a pipe drained as
// it fills) would cost the square of its length if each question scanned
// from the start. A scan reads only the bytes it has not seen; its zero
// value has seen none.
type scan struct {
	seen     int  // bytes of b already scanned
	depth    int  // open objects and arrays
	started  bool // the first byte not white space was '{' or '['
	never    bool // it was anything else: Complete is false to the end
	whole    bool // the value closed: Complete is true from here on
	inString bool
	escaped  bool // the last byte seen was a backslash in a string
}

// complete is Complete(b), for a b that extends (or is) the one the
// scan was last given: only b[s.seen:] is read.
func (s *scan) complete(b []byte) bool {
	if s.whole || s.never {
		return s.whole
	}
	i := s.seen
	s.seen = len(b)
	if !s.started {
		for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
			i++
		}
		if i == len(b) {
			return false
		}
		if b[i] != '{' && b[i] != '[' {
			s.never = true
			return false
		}
		s.started = true
	}
	for ; i < len(b); i++ {
		c := b[i]
		if s.inString {
			switch {
			case s.escaped:
				s.escaped = false
			case c == '\\':
				s.escaped = true
			case c == '"':
				s.inString = false
			}
			continue
		}
		switch c {
		case '"':
			s.inString = true
		case '{', '[':
			s.depth++
		case '}', ']':
			s.depth--
			if s.depth == 0 {
				s.whole = true
				return true
			}
		}
	}
	return false
}

// Parse parses a payload already in memory.
func Parse(b []byte) (Input, error) {
	trimmed := bytes.TrimSpace(b)
	if len(trimmed) == 0 {
		return Input{}, ErrEmpty
	}
	if trimmed[0] != '{' || !jsonscan.Valid(trimmed) {
		return Input{}, ErrNotJSON
	}
	get := func(key string) string { return jsonscan.Get(trimmed, key).String() }
	in := Input{
		SessionID: get("session_id"),
		Cwd:       get("cwd"),
		Event:     get("hook_event_name"),
		Source:    get("source"),
		Reason:    get("reason"),
		AgentID:   get("agent_id"),
		AgentType: get("agent_type"),
		Raw:       trimmed,
	}
	if !validSessionID(in.SessionID) {
		return in, ErrNoSession
	}
	return in, nil
}

// validSessionID accepts what Claude Code sends (UUIDs) and anything
// similar, but rejects values that could not safely be a key or a file
// name component.
func validSessionID(s string) bool {
	if s == "" || len(s) > 128 || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == '/' || r == '\\' || r == 0x7f {
			return false
		}
	}
	return true
}

// SessionStartOutput builds the single JSON object SessionStart hooks print.
// Characters a terminal or a reader would not see as themselves are \u
// escapes (clienv.EscapeJSON): the same string, whoever decodes it. The
// object is written here, not by an encoder: encoding it through reflection
// (sjson stringifies with encoding/json) cost a cached session start a
// fortieth of its time.
func SessionStartOutput(context string) ([]byte, error) {
	b := make([]byte, 0, len(context)+len(outputHead)+8)
	b = append(b, outputHead...)
	b = appendJSONString(b, context)
	b = append(b, "}}"...)
	return append(clienv.EscapeJSON(b), '\n'), nil
}

const outputHead = `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":`

// appendJSONString appends s as a JSON string, as encoding/json writes it:
// quote, backslash and control characters escaped, and <, >, &, U+2028
// and U+2029 too (so the text is safe inside HTML and JavaScript); an
// invalid UTF-8 byte becomes U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
