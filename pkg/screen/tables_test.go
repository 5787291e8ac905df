package screen

import (
	"strings"
	"testing"
)

// TestLeadByte holds the written-out table to the rule it was built by: the
// control bytes but tab and newline, DEL, and the lead bytes of the flagged
// characters.
func TestLeadByte(t *testing.T) {
	var want [256]bool
	for c := 0; c < 0x20; c++ {
		want[c] = c != '\t' && c != '\n'
	}
	for _, c := range []byte{0x7F, 0xC2, 0xCD, 0xD8, 0xE1, 0xE2, 0xE3, 0xEF, 0xF0, 0xF3} {
		want[c] = true
	}
	if leadByte != want {
		for c := range want {
			if leadByte[c] != want[c] {
				t.Errorf("leadByte[%#02x] = %v, want %v", c, leadByte[c], want[c])
			}
		}
	}
}

// oldControlEscaper is the replacer escapeControls replaced.
var oldControlEscaper = strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`)

func FuzzEscapeControlsAsReplacer(f *testing.F) {
	for _, s := range []string{"", "plain", "a\nb\r\n\tc", `\n`, "é\x00\t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := escapeControls(s), oldControlEscaper.Replace(s); got != want {
			t.Fatalf("escapeControls(%q) = %q, the replacer gives %q", s, got, want)
		}
	})
}
