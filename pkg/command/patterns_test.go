package command

import "testing"

// The command's patterns are compiled on first use (package lazyre): each
// compiles, and matches what it is for.
func TestPatterns(t *testing.T) {
	for _, c := range []struct {
		name string
		re   interface{ MatchString(string) bool }
		s    string
		want bool
	}{
		{"hex8", hex8, "0123abcd", true},
		{"hex8", hex8, "0123abcde", false},
		{"hex16", hex16, "0123456789abcdef", true},
		{"hex16", hex16, "0123456789ABCDEF", false},
		{"exportName", exportName, "deploy-notes-0123456789abcdef.md", true},
		{"exportName", exportName, "deploy-notes.md", false},
		{"yamlKey", yamlKey, "root_cause", true},
		{"yamlKey", yamlKey, "Root-Cause", false},
	} {
		if got := c.re.MatchString(c.s); got != c.want {
			t.Errorf("%s.MatchString(%q) = %v, want %v", c.name, c.s, got, c.want)
		}
	}
}
