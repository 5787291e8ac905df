package clienv

// Terminal safety
//
// Memory text is written by other people and other programs, so any of it
// may hold bytes that act on whoever shows it: ESC and C1 sequences that a
// terminal obeys (ESC[8m hides what follows, OSC 52 writes the clipboard,
// CSI moves the cursor over earlier lines), carriage returns and
// backspaces that overwrite a line, bidi controls that make text read in
// another order than it runs, and characters that render as nothing
// (zero-width, tag, filler and format characters) and so hide words from
// a reader while a program or a model still sees them.
//
// Unsafe is the one definition of such a character. Every human-readable
// byte an intermem binary prints goes through a SafeWriter (Env.Safe wraps
// stdout and stderr once, at the top of each Main), and every injected
// context line through Escape, so a hostile byte is shown as an escape
// like \x1b, \u202e or \U000e0041, never as itself. JSON output stays exact
// JSON: cli.WriteJSON and EscapeJSON turn the same characters into \uXXXX
// escapes, which decode to the same string (encoding/json already escapes
// C0 controls and U+2028/U+2029, and turns invalid UTF-8 into U+FFFD).
//
// A variation selector (U+FE00–U+FE0F) right after a visible character is
// ordinary text (the emoji presentation of ⚠️); one after another selector,
// after an escaped character or at the start is escaped, since a run of
// them can carry a hidden message. Tab and newline pass; within one line
// of injected context, newlines are gone before Escape sees the text.

import (
	"io"
	"unicode"
	"unicode/utf8"
)

// Unsafe reports whether r must not reach a terminal or the model's context
// as itself: a control character other than tab and newline (C0, DEL, C1),
// a format character (bidi controls and marks, zero-width characters,
// Unicode tag characters, the BOM, the soft hyphen…), a line or paragraph
// separator, a filler that renders as nothing (Hangul fillers, U+034F,
// Khmer inherent vowels, Mongolian selectors) or a variation selector from
// the supplement (U+E0100–U+E01EF). Variation selectors U+FE00–U+FE0F
// depend on what precedes them (see the package comment).
func Unsafe(r rune) bool {
	switch {
	case r < 0x20:
		return r != '\t' && r != '\n'
	case r < 0x7F:
		return false
	case r <= 0x9F:
		return true
	case r < 0xAD:
		return false
	}
	return invisible(r)
}

// invisible reports the characters at or above U+00AD that render as
// nothing or reorder text.
func invisible(r rune) bool {
	switch r {
	case 0xAD, 0x34F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x2028, 0x2029, 0x3164, 0xFFA0:
		return true
	}
	switch {
	case r >= 0x180B && r <= 0x180F,
		r >= 0xE0100 && r <= 0xE01EF:
		return true
	case r < 0x600:
		return false
	}
	return unicode.Is(unicode.Cf, r)
}

func isSelector(r rune) bool { return r >= 0xFE00 && r <= 0xFE0F }

// needsLook marks the bytes that start something Unsafe may reject: C0
// controls other than tab and newline, DEL, and every non-ASCII byte.
var needsLook = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		t[c] = c < 0x20 && c != '\t' && c != '\n' || c >= 0x7F
	}
	return t
}()

// escaper carries the state of one stream of text: the last rune written
// (for variation selectors).
type escaper struct {
	prev rune // last rune written as itself; -1 after an escape or at the start
	json bool // escape as JSON string escapes
}

const hexDigits = "0123456789abcdef"

// appendEscape appends the escape of r (or of the invalid byte b when r is
// utf8.RuneError of size 1).
func (e *escaper) appendEscape(dst []byte, r rune, b byte, invalid bool) []byte {
	switch {
	case e.json && invalid:
		return append(dst, `\ufffd`...)
	case e.json && r > 0xFFFF:
		r1, r2 := utf16Pair(r)
		dst = appendU(dst, 'u', r1, 4)
		return appendU(dst, 'u', r2, 4)
	case e.json:
		return appendU(dst, 'u', r, 4)
	case invalid:
		return appendU(dst, 'x', rune(b), 2)
	case r < 0x80:
		return appendU(dst, 'x', r, 2)
	case r > 0xFFFF:
		return appendU(dst, 'U', r, 8)
	}
	return appendU(dst, 'u', r, 4)
}

func appendU(dst []byte, kind byte, r rune, digits int) []byte {
	dst = append(dst, '\\', kind)
	for shift := 4 * (digits - 1); shift >= 0; shift -= 4 {
		dst = append(dst, hexDigits[(r>>shift)&0xF])
	}
	return dst
}

func utf16Pair(r rune) (rune, rune) {
	r -= 0x10000
	return 0xD800 + (r>>10)&0x3FF, 0xDC00 + r&0x3FF
}

// append appends p with every unsafe character escaped. In JSON mode only
// characters at or above DEL are escaped: JSON text holds no raw C0
// control except the whitespace between tokens, which must stay.
func (e *escaper) append(dst, p []byte) []byte {
	for i := 0; i < len(p); {
		c := p[i]
		if !needsLook[c] || e.json && c < 0x7F {
			dst = append(dst, c)
			e.prev = rune(c)
			i++
			continue
		}
		r, size := rune(c), 1
		if c >= 0x80 {
			r, size = utf8.DecodeRune(p[i:])
		}
		invalid := r == utf8.RuneError && size == 1
		bad := invalid || Unsafe(r) || isSelector(r) && (e.prev < 0 || isSelector(e.prev) || e.prev == ' ' || e.prev == '\n' || e.prev == '\t')
		if bad {
			dst = e.appendEscape(dst, r, c, invalid)
			e.prev = -1
		} else {
			dst = append(dst, p[i:i+size]...)
			e.prev = r
		}
		i += size
	}
	return dst
}

// clean reports whether p needs no escaping at all (the common case: ASCII
// text without controls).
func clean(p []byte) bool {
	for _, c := range p {
		if needsLook[c] {
			return false
		}
	}
	return true
}

// Escape returns s with every character Unsafe rejects (and every invalid
// UTF-8 byte) written as an escape: \x1b, \u202e, \U000e0041. Tab and
// newline are kept. It is what injected context and messages quoting
// memory text go through; a SafeWriter applies it to a stream.
func Escape(s string) string {
	i := 0
	for i < len(s) && !needsLook[s[i]] {
		i++
	}
	if i == len(s) {
		return s
	}
	e := escaper{prev: -1}
	if i > 0 {
		e.prev = rune(s[i-1])
	}
	b := make([]byte, 0, len(s)+16)
	b = append(b, s[:i]...)
	return string(e.append(b, []byte(s[i:])))
}

// Line returns s made safe to show inside one line of a listing: Escape,
// and newline and tab written as escapes too (\x0a, \x09). A file name or
// a title may hold a line break, and Escape keeps line breaks: printed as
// itself, "a\n  0123…  [promoted] …" would start a line of its own that reads
// like one of intermem's (a forged search result). Every human listing
// prints a path, a name or a title through Line; text shown as a block of
// its own (an entry's body) keeps its lines.
func Line(s string) string {
	s = Escape(s)
	i := 0
	for i < len(s) && s[i] != '\n' && s[i] != '\t' {
		i++
	}
	if i == len(s) {
		return s
	}
	b := make([]byte, 0, len(s)+8)
	b = append(b, s[:i]...)
	for ; i < len(s); i++ {
		switch s[i] {
		case '\n':
			b = append(b, `\x0a`...)
		case '\t':
			b = append(b, `\x09`...)
		default:
			b = append(b, s[i])
		}
	}
	return string(b)
}

// SafeWriter escapes everything written through it (see Escape), so that
// no byte from memory reaches a terminal as a control. A UTF-8 sequence cut
// by the end of a Write is held until the next Write or Flush.
type SafeWriter struct {
	w    io.Writer
	e    escaper
	part []byte // an incomplete UTF-8 sequence at the end of the last Write
	buf  []byte
}

// NewSafeWriter wraps w; a w that is already a SafeWriter is returned as is.
func NewSafeWriter(w io.Writer) *SafeWriter {
	if s, ok := w.(*SafeWriter); ok {
		return s
	}
	return &SafeWriter{w: w, e: escaper{prev: -1}}
}

// Write escapes p and writes it; it reports len(p) on success.
func (s *SafeWriter) Write(p []byte) (int, error) {
	n := len(p)
	if len(s.part) > 0 {
		p = append(s.part, p...)
		s.part = nil
	}
	if tail := incompleteTail(p); tail < len(p) {
		s.part = append([]byte(nil), p[tail:]...)
		p = p[:tail]
	}
	out := p
	if !clean(p) {
		s.buf = s.e.append(s.buf[:0], p)
		out = s.buf
	} else if len(p) > 0 {
		s.e.prev = rune(p[len(p)-1])
	}
	if len(out) > 0 {
		if _, err := s.w.Write(out); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// Flush writes a held incomplete sequence, escaped byte by byte.
func (s *SafeWriter) Flush() error {
	if len(s.part) == 0 {
		return nil
	}
	b := s.e.append(nil, s.part)
	s.part = nil
	_, err := s.w.Write(b)
	return err
}

// incompleteTail returns where a UTF-8 sequence that the end of p cuts
// short begins, or len(p).
func incompleteTail(p []byte) int {
	for i := len(p) - 1; i >= 0 && i >= len(p)-utf8.UTFMax+1; i-- {
		if c := p[i]; c < 0x80 {
			return len(p)
		} else if utf8.RuneStart(c) {
			if !utf8.FullRune(p[i:]) {
				return i
			}
			return len(p)
		}
	}
	return len(p)
}

// Raw returns the writer under a SafeWriter (flushing it first), or w.
func Raw(w io.Writer) io.Writer {
	if s, ok := w.(*SafeWriter); ok {
		_ = s.Flush()
		return s.w
	}
	return w
}

// Safe returns a copy of e whose Stdout and Stderr are SafeWriters. Each
// binary's Main calls it once, so that every human-readable byte it prints
// (reports, lists, errors quoting memory text, usage) is escaped; call
// Flush before returning.
func (e *Env) Safe() *Env {
	c := *e
	c.Stdout, c.Stderr = NewSafeWriter(e.Stdout), NewSafeWriter(e.Stderr)
	return &c
}

// Flush flushes the Env's SafeWriters.
func (e *Env) Flush() {
	for _, w := range []io.Writer{e.Stdout, e.Stderr} {
		if s, ok := w.(*SafeWriter); ok {
			_ = s.Flush()
		}
	}
}

// EscapeJSON returns JSON text b with every character Unsafe rejects at or
// above DEL written as a \uXXXX escape (a surrogate pair above U+FFFF), and
// any invalid UTF-8 byte as \ufffd. Such characters can only occur inside
// JSON strings, where the escape decodes to the same text, so the result
// is the same JSON value, and safe to show on a terminal.
func EscapeJSON(b []byte) []byte {
	i := 0
	for i < len(b) && b[i] < 0x7F {
		i++
	}
	if i == len(b) {
		return b
	}
	e := escaper{prev: -1, json: true}
	if i > 0 {
		e.prev = rune(b[i-1])
	}
	out := make([]byte, 0, len(b)+32)
	out = append(out, b[:i]...)
	return e.append(out, b[i:])
}
