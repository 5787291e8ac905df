//go:build !linux

package memlist

// Chunked records no parts where directories are not read by cookie
// (dir_other.go): quiet turns sum the listing whole.
func Chunked(dir string) (Chunking, bool) { return Chunking{}, false }

// SumChunk is never ok where Chunked records no parts: the caller sums
// the listing whole (Sum).
func SumChunk(dir string, subs []string, c *Chunking, j int) (string, bool) { return "", false }
