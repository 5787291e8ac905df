package inject

import (
	"strings"
	"testing"
)

// oldEscaper is the strings.Replacer esc replaced (a package-level
// replacer is built at every process's start).
var oldEscaper = strings.NewReplacer(`\`, `\\`, "\t", `\t`, "\n", `\n`, "\r", `\r`)

func FuzzEscAsReplacer(f *testing.F) {
	for _, s := range []string{"", "plain", `a\b`, "tab\there", "line\nbreak\r\n", `\\t`, "é\t\x00\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, want := esc(s), oldEscaper.Replace(s)
		if got != want {
			t.Fatalf("esc(%q) = %q, the replacer gives %q", s, got, want)
		}
		if back := unesc(got); back != s {
			t.Fatalf("unesc(esc(%q)) = %q", s, back)
		}
	})
}
