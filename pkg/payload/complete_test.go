package payload

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// completeWhole is Complete as it was before it carried its scan from one
// read to the next: every question scanned b from its start. It is the
// reference the incremental decision must agree with.
func completeWhole(b []byte) bool {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	if i == len(b) {
		return false
	}
	if b[i] != '{' && b[i] != '[' {
		return false
	}
	depth, inString := 0, false
	for ; i < len(b); i++ {
		c := b[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return true
			}
		}
	}
	return false
}

// FuzzCompleteInParts: a scan carried across reads decides as a scan of
// the whole buffer does, wherever the reads split the payload: at every
// split in two, and at every byte when it comes one byte per read. The
// seeds are the payloads the hooks are tested with, good and bad, and
// the cases of TestComplete.
func FuzzCompleteInParts(f *testing.F) {
	for _, dir := range []string{"../../testdata/payloads", "../../testdata/badinput/hook"} {
		files, err := filepath.Glob(filepath.Join(dir, "*"))
		if err != nil || len(files) == 0 {
			f.Fatalf("no payloads in %s (%v)", dir, err)
		}
		for _, p := range files {
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	for _, s := range []string{
		``, "  \n", `{`, `{}`, ` {"a":"}"`, `{"a":"\"}"`, `{"a":"\\"}`, `{"a":[{}]`,
		`{"a":[{}]}`, `[1]`, `x`, `"str"`, "\n {\"a\":1}", `{"a":"\\\"}"}`, `{"a":"\`,
		`{"a":"x\\`, `{}}`, `{]`, "\t\r\n[[]]", `{"a":"\u007d"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		whole := completeWhole(b)
		if got := Complete(b); got != whole {
			t.Fatalf("Complete(%q) = %v, the whole-buffer scan says %v", b, got, whole)
		}
		for k := 0; k <= len(b); k++ {
			var s scan
			if got, want := s.complete(b[:k]), completeWhole(b[:k]); got != want {
				t.Fatalf("scan of %q: %v, the whole-buffer scan says %v", b[:k], got, want)
			}
			if got := s.complete(b); got != whole {
				t.Fatalf("scan of %q then %q: %v, the whole-buffer scan says %v", b[:k], b[k:], got, whole)
			}
		}
		var s scan
		for k := 0; k <= len(b); k++ {
			if got, want := s.complete(b[:k]), completeWhole(b[:k]); got != want {
				t.Fatalf("scan of %q one byte at a time: %v, the whole-buffer scan says %v", b[:k], got, want)
			}
		}
	})
}

// TestReadInputWholeAllocs: a payload that arrives whole in the first
// read, as a turn's does, costs ReadInput one allocation, the buffer it
// returns: the scan that decides it is whole lives on the stack.
func TestReadInputWholeAllocs(t *testing.T) {
	data := []byte(`{"session_id":"s","cwd":"/p","hook_event_name":"UserPromptSubmit","prompt":"a \"}\" and {"}`)
	r := bytes.NewReader(data)
	var err error
	allocs := testing.AllocsPerRun(100, func() {
		r.Reset(data)
		var b []byte
		if b, err = ReadInput(r); err == nil && len(b) != len(data) {
			t.Fatalf("ReadInput: %d bytes, want %d", len(b), len(data))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if allocs != 1 {
		t.Errorf("ReadInput of a payload whole in the first read: %v allocations, want 1 (the buffer it returns)", allocs)
	}
}
