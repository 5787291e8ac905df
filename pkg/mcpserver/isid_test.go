package mcpserver

import (
	"regexp"
	"testing"
)

// oldIDRE is the pattern isID replaced.
var oldIDRE = regexp.MustCompile(`^[0-9a-f]{16}$`)

func FuzzIsIDAsRegexp(f *testing.F) {
	for _, s := range []string{"", "0123456789abcdef", "0123456789ABCDEF", "0123456789abcdeg", "0123456789abcde", "0123456789abcdef0", "0123456789abcdef\n", "é123456789abcde"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := isID(s), oldIDRE.MatchString(s); got != want {
			t.Fatalf("isID(%q) = %v, the regexp says %v", s, got, want)
		}
	})
}
