package cli

import "strconv"

// Plural returns one when n is 1 and many otherwise, for the counts in
// summaries people read ("1 entry", "3 entries").
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Thousands formats n with comma thousands separators ("19,946"), the way
// the summaries print counts large enough to misread.
func Thousands(n int) string {
	s := strconv.Itoa(n)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}
