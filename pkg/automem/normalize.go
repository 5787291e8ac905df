package automem

import (
	"crypto/sha256"
	"encoding/hex"
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
	space := false // a whitespace run is pending
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
			if space && len(dst) > 0 {
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
		if space && len(dst) > 0 {
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
