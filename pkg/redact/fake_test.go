package redact

import (
	"encoding/base64"
	"hash/fnv"
)

// Test secrets are generated at run time from a seed, so no credential-shaped literal
// appears in the source (secret scanners stay quiet) and every value is stable.
const (
	lowerA = "abcdefghijklmnopqrstuvwxyz"
	upperA = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	digitA = "0123456789"
	hexA   = "0123456789abcdef"
	alnumA = lowerA + upperA + digitA
	b64A   = alnumA + "+/"
	urlA   = alnumA + "-_"
	updA   = upperA + digitA
)

// fake returns n pseudo-random characters from alphabet, determined by seed. The first
// characters cycle through the alphabet's classes so that every value mixes them.
func fake(seed, alphabet string, n int) string {
	h := fnv.New64a()
	h.Write([]byte(seed))
	x := h.Sum64() | 1
	out := make([]byte, n)
	for i := range out {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		out[i] = alphabet[x%uint64(len(alphabet))]
	}
	// Guarantee mixed classes where the alphabet allows them.
	for i, cls := range []string{lowerA, upperA, digitA} {
		var in []byte
		for j := 0; j < len(cls); j++ {
			if containsByte(alphabet, cls[j]) {
				in = append(in, cls[j])
			}
		}
		if i < n && len(in) > 0 {
			out[i] = in[x>>uint(8*i)%uint64(len(in))]
		}
	}
	return string(out)
}

func containsByte(s string, b byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == b {
			return true
		}
	}
	return false
}

// discordToken builds a bot token whose first part is the base64 of a numeric id.
func discordToken(seed string) string {
	id := base64.RawURLEncoding.EncodeToString([]byte("81234567890123" + fake(seed, digitA, 4)))
	return id + "." + fake(seed+"t", urlA, 6) + "." + fake(seed+"h", urlA, 27)
}

func pemBlock(kind, seed string, lines int) string {
	s := "-----BEGIN " + kind + "-----\n"
	for i := range lines {
		s += fake(seed+string(rune('a'+i)), b64A, 64) + "\n"
	}
	return s + fake(seed+"z", b64A, 20) + "==\n-----END " + kind + "-----"
}
