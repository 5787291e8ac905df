package memlist

import (
	"hash/fnv"
	"io"
	"strconv"
	"testing"
)

// The listing's sum is FNV-1a over name NUL fingerprint NUL skip NEWLINE
// per file: held to the standard library's FNV-1a, so that sums stored by
// earlier versions (sessions' fingerprints, the quiet copy) still match.
func TestListingFPIsFNV1a(t *testing.T) {
	files := []File{
		{Name: "MEMORY.md", FP: "120:1700000000000000000:42:644"},
		{Name: "notes/é.md", FP: "7:1:2:644", Skip: "not a regular file"},
		{Name: "", FP: "", Skip: ""},
	}
	h := fnv.New64a()
	for _, f := range files {
		io.WriteString(h, f.Name+"\x00"+f.FP+"\x00"+f.Skip+"\n")
	}
	if got, want := ListingFP(files), strconv.FormatUint(h.Sum64(), 16); got != want {
		t.Fatalf("ListingFP = %s, want %s", got, want)
	}
	if got := ListingFP(nil); got != "cbf29ce484222325" { // FNV-1a's offset basis
		t.Fatalf("ListingFP(nil) = %s", got)
	}
}
