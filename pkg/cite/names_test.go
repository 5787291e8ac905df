package cite

import (
	"net/url"
	"testing"
)

// pathUnescape decodes as url.PathUnescape does, and refuses what it
// refuses.
func TestPathUnescape(t *testing.T) {
	for _, s := range []string{"", "plain/path.md", "a%20b.md", "%2e%2e/x", "%2E%2Fy", "100%", "%zz", "%4", "a+b%2Bc", "%e2%80%8b", "%ff%00"} {
		got, err := pathUnescape(s)
		want, werr := url.PathUnescape(s)
		if got != want || (err == nil) != (werr == nil) {
			t.Errorf("pathUnescape(%q) = %q, %v; url.PathUnescape: %q, %v", s, got, err, want, werr)
		}
	}
}

func FuzzPathUnescape(f *testing.F) {
	f.Add("a%20b")
	f.Add("%zz%")
	f.Fuzz(func(t *testing.T, s string) {
		got, err := pathUnescape(s)
		want, werr := url.PathUnescape(s)
		if got != want || (err == nil) != (werr == nil) {
			t.Fatalf("pathUnescape(%q) = %q, %v; url.PathUnescape: %q, %v", s, got, err, want, werr)
		}
	})
}
