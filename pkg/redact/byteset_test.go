package redact

import "testing"

// TestByteSets holds the sets written as constants to the ranges they name,
// and the bit layout to a [256]bool built byte by byte.
func TestByteSets(t *testing.T) {
	for _, c := range []struct {
		name   string
		set    *byteSet
		ranges []string
	}{
		{"alnum", alnum, []string{"a-z", "A-Z", "0-9"}},
		{"word", word, []string{"a-z", "A-Z", "0-9", "_"}},
		{"tokenish", tokenish, []string{"a-z", "A-Z", "0-9", "_-"}},
		{"base64ch", base64ch, []string{"a-z", "A-Z", "0-9", "+/"}},
	} {
		var want [256]bool
		for _, r := range c.ranges {
			if len(r) == 3 && r[1] == '-' {
				for b := r[0]; b <= r[2]; b++ {
					want[b] = true
				}
				continue
			}
			for i := 0; i < len(r); i++ {
				want[r[i]] = true
			}
		}
		built := newByteSet(c.ranges...)
		for b := 0; b < 256; b++ {
			if got := c.set.has(byte(b)); got != want[b] {
				t.Errorf("%s.has(%q) = %v, want %v", c.name, rune(b), got, want[b])
			}
			if got := built.has(byte(b)); got != want[b] {
				t.Errorf("newByteSet(%q).has(%q) = %v, want %v", c.ranges, rune(b), got, want[b])
			}
		}
	}
}
