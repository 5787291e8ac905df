package automem

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math/bits"
	"strings"
	"unicode"
	"unicode/utf8"
)

// NormalizeText is the identity normalization of an entry's text: it
// removes intermem's own "<!-- intermem:<hex> -->" markers (so a promoted
// entry keeps its identity), treats CRLF as LF, collapses every run of
// Unicode whitespace to one space and trims. It is case-sensitive and keeps
// invalid UTF-8 bytes as they are.
func NormalizeText(s string) string {
	return string(appendNormalized(make([]byte, 0, len(s)), s))
}

// ID returns the 16-hex-digit identity of normalized text: the first 8 bytes
// of its SHA-256. Eight hex digits collide in practice; sixteen do not.
func ID(normalized string) string {
	sum := sha256.Sum256([]byte(normalized))
	return hex.EncodeToString(sum[:8])
}

// appendNormalized appends NormalizeText(s) to dst. It copies runs of
// ordinary bytes in bulk and decodes only the UTF-8 sequences whose lead
// byte can start a non-ASCII space (U+0085, U+00A0, U+1680, U+2000–U+205F,
// U+3000), so ordinary prose, CJK included, is copied a word run at a time.
func appendNormalized(dst []byte, s string) []byte {
	start := len(dst) // no space before the first character appended
	space := false    // a whitespace run is pending
	for i := 0; i < len(s); {
		// A run is ordinary bytes and the single spaces between them.
		j := i
		for j < len(s) {
			if c := s[j]; normSpecial[c] && (c != ' ' || j == i || j+1 == len(s) || normSpecial[s[j+1]]) {
				break
			}
			j++
		}
		if j > i {
			if space && len(dst) > start {
				dst = append(dst, ' ')
			}
			space = false
			dst = append(dst, s[i:j]...)
			i = j
			continue
		}
		c := s[i]
		size := 1
		switch {
		case c == '<':
			if n := markerLen(s[i:]); n > 0 {
				i += n
				continue
			}
		case c < utf8.RuneSelf: // ASCII whitespace
			space = true
			i++
			continue
		default:
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			if size > 1 && unicode.IsSpace(r) {
				space = true
				i += size
				continue
			}
		}
		if space && len(dst) > start {
			dst = append(dst, ' ')
		}
		space = false
		dst = append(dst, s[i:i+size]...)
		i += size
	}
	return dst
}

// normSpecial marks the bytes appendNormalized must look at one by one:
// ASCII whitespace, the "<" of a marker, and lead bytes of non-ASCII spaces.
var normSpecial = [256]bool{
	' ': true, '\t': true, '\n': true, '\v': true, '\f': true, '\r': true,
	'<':  true,
	0xC2: true, 0xE1: true, 0xE2: true, 0xE3: true,
}

// markerLen returns the length of the intermem marker "<!-- intermem:<hex> -->"
// (any spaces around the payload) at the start of s, or 0.
func markerLen(s string) int {
	if !strings.HasPrefix(s, "<!--") {
		return 0
	}
	i := skipSpace(s, 4)
	if !strings.HasPrefix(s[i:], "intermem:") {
		return 0
	}
	i += len("intermem:")
	h := i
	for i < len(s) && isHex(s[i]) {
		i++
	}
	if i == h {
		return 0
	}
	i = skipSpace(s, i)
	if !strings.HasPrefix(s[i:], "-->") {
		return 0
	}
	return i + 3
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// isNormalized reports whether NormalizeText(string(b)) == string(b) for the
// common case of single-line text with single spaces, so that such text can
// be hashed in place. It may report false for text that is in fact
// normalized; it never reports true for text that is not. Eight bytes are
// checked at a time, and only the flagged bytes are looked at one by one: a
// byte below 0x20, a '<', a possible lead byte of a Unicode space, the
// first of two spaces.
func isNormalized(b []byte) bool {
	n := len(b)
	if n == 0 {
		return true
	}
	if b[0] == ' ' || b[n-1] == ' ' {
		return false
	}
	const ones = 0x0101010101010101
	i := 0
	for ; i+8 <= n; i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		sp := zeroBytes(x ^ (' ' * ones))
		odd := zeroBytes(x&(0xE0*ones)) | // below 0x20
			zeroBytes(x^('<'*ones)) |
			zeroBytes(x^(0xC2*ones)) |
			zeroBytes((x&(0xFC*ones))^(0xE0*ones)) | // 0xE0..0xE3
			sp&(sp>>8) // two spaces in this word
		if sp&0x80 != 0 && i > 0 && b[i-1] == ' ' {
			return false // two spaces across words
		}
		for ; odd != 0; odd &= odd - 1 { // each flagged byte
			if !plainAt(b, i+bits.TrailingZeros64(odd)/8) {
				return false
			}
		}
	}
	// The tail, from the last byte of the last word: a space there may
	// start a pair with the tail's first byte.
	for k := max(i-1, 0); k < n; k++ {
		if !plainAt(b, k) {
			return false
		}
	}
	return true
}

// zeroBytes returns 0x80 in each byte position where x has a zero byte and
// 0 elsewhere, exactly (no borrow crosses bytes).
func zeroBytes(x uint64) uint64 {
	const lo7 = 0x7F7F7F7F7F7F7F7F
	return ^((x&lo7 + lo7) | x | lo7)
}

// plainAt reports whether b[k] is left as it is by normalization.
func plainAt(b []byte, k int) bool {
	switch c := b[k]; {
	case c == ' ':
		return k+1 < len(b) && b[k+1] != ' '
	case c >= '\t' && c <= '\r':
		return false
	case c == '<':
		return !bytes.HasPrefix(b[k:], []byte("<!--"))
	case c == 0xC2 || c >= 0xE0 && c <= 0xE3:
		r, size := utf8.DecodeRune(b[k:])
		return size == 1 || !unicode.IsSpace(r)
	}
	return true
}
