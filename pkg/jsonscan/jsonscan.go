// Package jsonscan validates a JSON document and reads the members of its
// top-level object without decoding the rest: what a hook needs of its
// payload (session_id, cwd, hook_event_name…) and of a settings file
// (autoMemoryDirectory).
//
// It exists so that the hook front (cmd/intermem-hook), which runs at every
// turn, links no JSON library: gjson brings tidwall/pretty and match, and
// their initialisation is paid by every process that links them. The
// rules are gjson's, which the hooks used before and which the tests hold
// this package to (a differential fuzz target):
//
//   - Valid is RFC 8259 JSON (gjson.ValidBytes): one value, surrounded by
//     optional whitespace, strings of valid escapes with no raw control
//     character.
//   - Get finds the first member of the top-level object with the key
//     (keys compared after their escapes are decoded), as gjson.GetBytes
//     does for a key without path syntax.
//   - Value.String decodes a string's escapes (a surrogate that makes no
//     pair with the escape after it becomes U+FFFD); Value.Bool is gjson's Result.Bool.
//
// Get assumes a valid document: callers check Valid first, once.
package jsonscan

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Kind is the type of a JSON value.
type Kind byte

// The kinds of value; None is a member that is not there.
const (
	None Kind = iota
	Null
	False
	True
	Number
	String
	Object
	Array
)

// Value is one JSON value as it appears in the document.
type Value struct {
	Kind Kind
	Raw  []byte // the value's bytes, quotes included for a string
}

// Valid reports whether b is one JSON value.
func Valid(b []byte) bool {
	i := skipSpace(b, 0)
	i, ok := value(b, i, 0)
	if !ok {
		return false
	}
	return skipSpace(b, i) == len(b)
}

// maxDepth bounds nesting, so a hostile document cannot exhaust the stack.
const maxDepth = 10000

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// value checks the value at b[i:] and returns the index after it.
func value(b []byte, i, depth int) (int, bool) {
	if i >= len(b) || depth > maxDepth {
		return i, false
	}
	switch c := b[i]; {
	case c == '{':
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == '}' {
			return i + 1, true
		}
		for {
			if i >= len(b) || b[i] != '"' {
				return i, false
			}
			var ok bool
			if i, ok = str(b, i); !ok {
				return i, false
			}
			i = skipSpace(b, i)
			if i >= len(b) || b[i] != ':' {
				return i, false
			}
			if i, ok = value(b, skipSpace(b, i+1), depth+1); !ok {
				return i, false
			}
			i = skipSpace(b, i)
			if i >= len(b) {
				return i, false
			}
			if b[i] == '}' {
				return i + 1, true
			}
			if b[i] != ',' {
				return i, false
			}
			i = skipSpace(b, i+1)
		}
	case c == '[':
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1, true
		}
		for {
			var ok bool
			if i, ok = value(b, i, depth+1); !ok {
				return i, false
			}
			i = skipSpace(b, i)
			if i >= len(b) {
				return i, false
			}
			if b[i] == ']' {
				return i + 1, true
			}
			if b[i] != ',' {
				return i, false
			}
			i = skipSpace(b, i+1)
		}
	case c == '"':
		return str(b, i)
	case c == '-' || (c >= '0' && c <= '9'):
		return number(b, i)
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	}
	return i, false
}

func literal(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func number(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return i, false
	case b[i] == '0':
		i++
	case isDigit(b[i]):
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return i, false
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return i, false
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	return i, true
}

// str checks the string starting at the quote b[i] and returns the index
// after its closing quote.
func str(b []byte, i int) (int, bool) {
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c < 0x20:
			return i, false
		case c == '"':
			return i + 1, true
		case c == '\\':
			i++
			if i >= len(b) {
				return i, false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(b)-i < 5 {
					return i, false
				}
				for _, h := range b[i+1 : i+5] {
					if !isHex(h) {
						return i, false
					}
				}
				i += 4
			default:
				return i, false
			}
		}
	}
	return i, false
}

func isHex(c byte) bool {
	return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// Get returns the first member key of the top-level object of the valid
// document b; Kind None when b is no object or has no such member.
func Get(b []byte, key string) Value {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return Value{}
	}
	i = skipSpace(b, i+1)
	for i < len(b) && b[i] == '"' {
		end, ok := str(b, i)
		if !ok {
			return Value{}
		}
		k := b[i:end]
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return Value{}
		}
		i = skipSpace(b, i+1)
		vend, ok := value(b, i, 1)
		if !ok {
			return Value{}
		}
		if keyIs(k, key) {
			return Value{Kind: kindOf(b[i]), Raw: b[i:vend]}
		}
		i = skipSpace(b, vend)
		if i >= len(b) || b[i] != ',' {
			return Value{}
		}
		i = skipSpace(b, i+1)
	}
	return Value{}
}

// keyIs reports whether the quoted key q is key once decoded.
func keyIs(q []byte, key string) bool {
	inner := q[1 : len(q)-1]
	for _, c := range inner {
		if c == '\\' {
			return unquote(q) == key
		}
	}
	return string(inner) == key
}

func kindOf(c byte) Kind {
	switch c {
	case 'n':
		return Null
	case 'f':
		return False
	case 't':
		return True
	case '"':
		return String
	case '{':
		return Object
	case '[':
		return Array
	}
	return Number
}

// String is a string value decoded; "" for any other kind.
func (v Value) String() string {
	if v.Kind != String {
		return ""
	}
	return unquote(v.Raw)
}

// Bool is gjson's Result.Bool: true, a string strconv.ParseBool reads as
// true, or a number other than zero.
func (v Value) Bool() bool {
	switch v.Kind {
	case True:
		return true
	case String:
		t, _ := strconv.ParseBool(v.String())
		return t
	case Number:
		f, _ := strconv.ParseFloat(string(v.Raw), 64)
		return f != 0
	}
	return false
}

// unquote decodes the valid quoted string q.
func unquote(q []byte) string {
	s := q[1 : len(q)-1]
	plain := true
	for _, c := range s {
		if c == '\\' {
			plain = false
			break
		}
	}
	if plain {
		return string(s)
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		switch s[i] {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := rune(hex4(s[i+1 : i+5]))
			i += 4
			// A surrogate takes the escape after it when the two make a
			// pair, as gjson does.
			if utf16.IsSurrogate(r) && i+6 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
				if p := utf16.DecodeRune(r, rune(hex4(s[i+3:i+7]))); p != utf8.RuneError {
					r = p
					i += 6
				}
			}
			out = utf8.AppendRune(out, r) // a lone surrogate is U+FFFD
		default: // '"', '\\', '/'
			out = append(out, s[i])
		}
	}
	return string(out)
}

func hex4(h []byte) int {
	n := 0
	for _, c := range h {
		n <<= 4
		switch {
		case c >= '0' && c <= '9':
			n |= int(c - '0')
		case c >= 'a' && c <= 'f':
			n |= int(c-'a') + 10
		default:
			n |= int(c-'A') + 10
		}
	}
	return n
}
