package config

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// decode is json.Unmarshal(b, &File) with unknown fields disallowed
// (json.Decoder's DisallowUnknownFields) without encoding/json, which the
// hook front would otherwise link for this file alone (its start-up paid
// about thirteen page faults for the package's initialisation and size):
// the same documents accepted, the same values, and an error exactly when
// encoding/json gives one (FuzzDecode holds it to encoding/json). The
// rules it keeps:
//
//   - The document is one JSON value (RFC 8259; strings may hold invalid
//     UTF-8, which decodes to U+FFFD; nesting at most 10,000 deep), else a
//     syntax error.
//   - null is the zero File; any other value but an object is a type
//     error.
//   - A member's key matches a field whose name it equals, ignoring case
//     (bytes.EqualFold, as encoding/json's fold); members are applied in
//     order (a later one wins); a key that matches no field is an error
//     naming it and the keys there are (UnknownKeyError): skipped, a
//     misspelt key ({"source": {"auto-memory": false}}) would leave every
//     source on with nothing to say so. The names a "sources" object maps
//     are not checked here: which sources there are is package catalog's
//     (catalog.ErrUnknownSource).
//   - A string field takes a string, a bool field true or false, and null
//     leaves either as it was; sources takes an object (merged into the
//     map already decoded) of true, false or null (false), and null makes
//     it nil. Any other value is a type error, which makes the whole
//     document an error (Read keeps nothing of it).
func decode(b []byte) (File, error) {
	if err := valid(b); err != nil {
		return File{}, err
	}
	var c File
	d := decoder{b: b}
	d.space()
	switch d.b[d.i] {
	case 'n':
		return c, nil
	case '{':
	default:
		return File{}, errType
	}
	bad := false
	unknown := ""
	known := true
	d.members(func(key string) {
		switch {
		case field(key, "layout"):
			bad = !d.str(&c.Layout) || bad
		case field(key, "mode"):
			bad = !d.str(&c.Mode) || bad
		case field(key, "project"):
			bad = !d.str(&c.Project) || bad
		case field(key, "tier_claude"):
			switch d.b[d.i] {
			case 't':
				c.TierClaude = true
			case 'f':
				c.TierClaude = false
			case 'n':
			default:
				bad = true
			}
			d.skip()
		case field(key, "sources"):
			switch d.b[d.i] {
			case 'n':
				c.Sources = nil
				d.skip()
			case '{':
				if c.Sources == nil {
					c.Sources = map[string]bool{}
				}
				d.members(func(name string) {
					switch d.b[d.i] {
					case 't':
						c.Sources[name] = true
					case 'f', 'n':
						c.Sources[name] = false
					default:
						bad = true
						c.Sources[name] = false
					}
					d.skip()
				})
			default:
				bad = true
				d.skip()
			}
		default:
			if known {
				known, unknown = false, key
			}
			d.skip()
		}
	})
	switch {
	case !known:
		return File{}, &UnknownKeyError{Key: unknown}
	case bad:
		return File{}, errType
	}
	return c, nil
}

var (
	errSyntax = errors.New("not one JSON value")
	errType   = errors.New("not an object of the configuration's keys and types")
)

// Keys are the configuration's keys, as UnknownKeyError lists them.
var Keys = []string{"layout", "tier_claude", "sources", "mode", "project"}

// UnknownKeyError is a key of the file's object that names no setting
// (the first, in the file's order).
type UnknownKeyError struct {
	Key string
}

// maxKeyShown bounds the key an UnknownKeyError shows, in bytes: the file
// may hold anything up to MaxBytes.
const maxKeyShown = 64

func (e *UnknownKeyError) Error() string {
	k := e.Key
	if len(k) > maxKeyShown {
		n := maxKeyShown
		for n > 0 && !utf8.RuneStart(k[n]) {
			n--
		}
		k = k[:n] + "…"
	}
	return fmt.Sprintf("unknown key %q: the keys are %s", k, strings.Join(Keys, ", "))
}

// field reports whether key names the field name: equal, or equal but for
// case.
func field(key, name string) bool { return key == name || strings.EqualFold(key, name) }

// decoder walks a document valid has accepted.
type decoder struct {
	b []byte
	i int
}

func (d *decoder) space() {
	for d.i < len(d.b) && (d.b[d.i] == ' ' || d.b[d.i] == '\t' || d.b[d.i] == '\n' || d.b[d.i] == '\r') {
		d.i++
	}
}

// members calls each with every member's key of the object at d.i, d.i
// at its value; each consumes the value.
func (d *decoder) members(each func(key string)) {
	d.i++ // {
	for {
		d.space()
		if d.b[d.i] == '}' {
			d.i++
			return
		}
		if d.b[d.i] == ',' {
			d.i++
			d.space()
		}
		start := d.i
		d.skip()
		key := unquote(d.b[start:d.i])
		d.space()
		d.i++ // :
		d.space()
		each(key)
	}
}

// str sets *s to the string at d.i (null leaves it), and reports whether
// the value was one of those.
func (d *decoder) str(s *string) bool {
	start := d.i
	d.skip()
	switch d.b[start] {
	case '"':
		*s = unquote(d.b[start:d.i])
	case 'n':
	default:
		return false
	}
	return true
}

// skip moves d.i past the value there.
func (d *decoder) skip() {
	depth := 0
	for {
		switch c := d.b[d.i]; c {
		case '"':
			d.i++
			for d.b[d.i] != '"' {
				if d.b[d.i] == '\\' {
					d.i++
				}
				d.i++
			}
			d.i++
		case '{', '[':
			depth++
			d.i++
		case '}', ']':
			depth--
			d.i++
		case ',', ':', ' ', '\t', '\n', '\r':
			d.i++
		default: // a number or a literal
			for d.i < len(d.b) && !strings.ContainsRune(",:]} \t\n\r", rune(d.b[d.i])) {
				d.i++
			}
		}
		if depth == 0 {
			return
		}
	}
}

// unquote is a valid JSON string's text as encoding/json decodes it:
// escapes decoded, a \u surrogate without its pair and every byte of
// invalid UTF-8 as U+FFFD.
func unquote(q []byte) string {
	s := q[1 : len(q)-1]
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			switch s[i+1] {
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r := hex4(s[i+2:])
				i += 6
				if utf16.IsSurrogate(r) {
					r2 := rune(-1)
					if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
						r2 = hex4(s[i+2:])
					}
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						b.WriteRune(dec)
						i += 6
						continue
					}
					r = utf8.RuneError
				}
				b.WriteRune(r)
				continue
			default: // " \ /
				b.WriteByte(s[i+1])
			}
			i += 2
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			i++
		default:
			r, n := utf8.DecodeRune(s[i:])
			b.WriteRune(r)
			i += n
		}
	}
	return b.String()
}

// hex4 is the four hexadecimal digits at the start of h, or -1.
func hex4(h []byte) rune {
	if len(h) < 4 {
		return -1
	}
	var r rune
	for _, c := range h[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// maxDepth is encoding/json's limit on nesting.
const maxDepth = 10000

// valid checks that b is one JSON value as encoding/json's scanner does.
func valid(b []byte) error {
	v := validator{b: b}
	v.space()
	if !v.value(0) {
		return errSyntax
	}
	v.space()
	if v.i != len(b) {
		return errSyntax
	}
	return nil
}

type validator struct {
	b []byte
	i int
}

func (v *validator) space() {
	for v.i < len(v.b) && (v.b[v.i] == ' ' || v.b[v.i] == '\t' || v.b[v.i] == '\n' || v.b[v.i] == '\r') {
		v.i++
	}
}

func (v *validator) peek() byte {
	if v.i < len(v.b) {
		return v.b[v.i]
	}
	return 0
}

func (v *validator) value(depth int) bool {
	switch c := v.peek(); {
	case c == '{' || c == '[':
		if depth+1 > maxDepth {
			return false
		}
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		v.i++
		v.space()
		if v.peek() == end {
			v.i++
			return true
		}
		for {
			if c == '{' {
				if v.peek() != '"' || !v.str() {
					return false
				}
				v.space()
				if v.peek() != ':' {
					return false
				}
				v.i++
				v.space()
			}
			if !v.value(depth + 1) {
				return false
			}
			v.space()
			switch v.peek() {
			case ',':
				v.i++
				v.space()
			case end:
				v.i++
				return true
			default:
				return false
			}
		}
	case c == '"':
		return v.str()
	case c == '-' || '0' <= c && c <= '9':
		return v.number()
	case c == 't':
		return v.literal("true")
	case c == 'f':
		return v.literal("false")
	case c == 'n':
		return v.literal("null")
	}
	return false
}

func (v *validator) literal(lit string) bool {
	if len(v.b)-v.i < len(lit) || string(v.b[v.i:v.i+len(lit)]) != lit {
		return false
	}
	v.i += len(lit)
	return true
}

func (v *validator) str() bool {
	v.i++ // "
	for v.i < len(v.b) {
		c := v.b[v.i]
		switch {
		case c == '"':
			v.i++
			return true
		case c < 0x20:
			return false
		case c == '\\':
			v.i++
			switch v.peek() {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				v.i++
			case 'u':
				if hex4(v.b[v.i+1:]) < 0 {
					return false
				}
				v.i += 5
			default:
				return false
			}
		default:
			v.i++
		}
	}
	return false
}

func (v *validator) digits() int {
	n := 0
	for v.i < len(v.b) && '0' <= v.b[v.i] && v.b[v.i] <= '9' {
		v.i++
		n++
	}
	return n
}

func (v *validator) number() bool {
	if v.peek() == '-' {
		v.i++
	}
	switch c := v.peek(); {
	case c == '0':
		v.i++
	case '1' <= c && c <= '9':
		v.digits()
	default:
		return false
	}
	if v.peek() == '.' {
		v.i++
		if v.digits() == 0 {
			return false
		}
	}
	if c := v.peek(); c == 'e' || c == 'E' {
		v.i++
		if c := v.peek(); c == '+' || c == '-' {
			v.i++
		}
		if v.digits() == 0 {
			return false
		}
	}
	return true
}
