package invoice

import "fmt"

// FormatCents is the only conversion from cents to a decimal string.
func FormatCents(c int64) string { return fmt.Sprintf("%d.%02d", c/100, c%100) }
