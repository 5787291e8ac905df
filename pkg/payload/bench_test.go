package payload

import (
	"io"
	"strings"
	"testing"
)

// trickle is a payload delivered chunk bytes per read, as a writer that
// writes in small parts leaves it in a pipe. Nothing is known to be
// waiting in it: its chunks are read by readRest's goroutine.
type trickle struct {
	data  string
	chunk int
}

func (t *trickle) Read(p []byte) (int, error) {
	if len(t.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), t.chunk)], t.data)
	t.data = t.data[n:]
	return n, nil
}

// knownTrickle is a trickle whose next chunk is known to be waiting (as
// the kernel says what a pipe holds): ReadInput reads every chunk itself.
type knownTrickle struct{ trickle }

func (t *knownTrickle) Len() int { return min(t.chunk, len(t.data)) }

// BenchmarkReadInputTrickle reads a payload of 4 MB (MaxInput less a
// little) delivered 4 KiB at a time, and one of 64 KiB delivered a byte
// at a time: the cost of deciding after every read whether the value is
// whole must grow with the payload, not with its square.
func BenchmarkReadInputTrickle(b *testing.B) {
	payload := func(size int) string {
		return `{"session_id":"s","hook_event_name":"Stop","last_assistant_message":"` +
			strings.Repeat(`x \" { [ `, (size-100)/10) + `"}`
	}
	for _, c := range []struct {
		name  string
		size  int
		chunk int
		known bool
	}{
		{"4MB/4KiB/waiting", MaxInput, 4 << 10, true},
		{"4MB/4KiB/goroutine", MaxInput, 4 << 10, false},
		{"64KiB/1B/waiting", 64 << 10, 1, true},
	} {
		data := payload(c.size)
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				var r io.Reader = &trickle{data, c.chunk}
				if c.known {
					r = &knownTrickle{trickle{data, c.chunk}}
				}
				got, err := ReadInput(r)
				if err != nil || len(got) != len(data) {
					b.Fatalf("ReadInput: %d bytes, %v; want %d", len(got), err, len(data))
				}
			}
		})
	}
}
