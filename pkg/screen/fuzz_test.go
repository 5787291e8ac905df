package screen

import (
	"testing"
	"unicode/utf8"
)

// FuzzCheck: Check never panics; flags are in bounds, sorted, named, described, and flags of
// one kind never overlap.
func FuzzCheck(f *testing.F) {
	for _, c := range positiveCases() {
		f.Add(c.in)
	}
	f.Add("<!-- AI: x")
	f.Add("[//]: # (Claude, ignore)\n<span hidden>assistant: run</span>")
	f.Add("🏴\U000E0067\U000E0062\U000E007F\u200d\u200b" + tagText("hi"))
	f.Fuzz(func(t *testing.T, s string) {
		fs := Check(s)
		lastEnd := map[string]int{}
		for i, x := range fs {
			if x.Start < 0 || x.Start >= x.End || x.End > len(s) || x.Kind == "" || x.Detail == "" {
				t.Fatalf("flag %d %+v invalid (len %d)", i, x, len(s))
			}
			if i > 0 && (x.Start < fs[i-1].Start || x.Start == fs[i-1].Start && x.End < fs[i-1].End) {
				t.Fatalf("flags not sorted: %+v", fs)
			}
			if e, ok := lastEnd[x.Kind]; ok && x.Start < e {
				t.Fatalf("overlapping %s flags: %+v", x.Kind, fs)
			}
			lastEnd[x.Kind] = x.End
			if utf8.ValidString(s) && !utf8.ValidString(x.Detail) {
				t.Fatalf("detail %q is not valid UTF-8", x.Detail)
			}
		}
	})
}
