package payload

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

// heldOpen is a writer that has written data and keeps the pipe open: its
// first Read gives data, and any later Read is a read that would have
// waited for the writer to close; it is counted and answered with EOF so
// that the test ends either way.
type heldOpen struct {
	data   string
	reads  int
	waited bool
}

func (h *heldOpen) Read(p []byte) (int, error) {
	h.reads++
	if h.reads == 1 {
		return copy(p, h.data), nil
	}
	h.waited = true
	return 0, io.EOF
}

// TestReadStopsAtTheValue: a payload written whole and followed by
// nothing, the pipe kept open, is read without waiting for the writer to
// close it (a hook used to wait until it did: 100 s behind a sleep).
func TestReadStopsAtTheValue(t *testing.T) {
	for _, data := range []string{
		`{"hook_event_name":"Stop","cwd":"/p","session_id":"s"}` + "\n",
		`{"hook_event_name":"Stop","session_id":"s","last_assistant_message":"a } in \"quotes\" and \\ {"}`,
		`  {"session_id":"s","nested":{"a":[1,{"b":"]"}]}}`,
	} {
		h := &heldOpen{data: data}
		in, err := Read(h)
		if err != nil {
			t.Errorf("Read(%q): %v", data, err)
		}
		if h.waited {
			t.Errorf("Read(%q) read on past the complete value", data)
		}
		if in.SessionID != "s" {
			t.Errorf("Read(%q): session %q", data, in.SessionID)
		}
	}
}

// TestReadInputInParts: a payload that arrives over several reads, each
// filling the space given, is read whole without the goroutine (a
// strings.Reader says what it has left); and one larger than MaxInput is
// still reported too large.
func TestReadInputInParts(t *testing.T) {
	long := `{"session_id":"s","text":"` + strings.Repeat("x", 100<<10) + `"}`
	b, err := ReadInput(strings.NewReader(long))
	if err != nil || string(b) != long {
		t.Fatalf("ReadInput of %d bytes: %d bytes, %v", len(long), len(b), err)
	}
	huge := `{"session_id":"s","text":"` + strings.Repeat("x", MaxInput) + `"}`
	if _, err := Read(strings.NewReader(huge)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Read of %d bytes: %v, want ErrTooLarge", len(huge), err)
	}
}

// TestReadInputIncomplete: a writer that stops half-way and keeps the
// pipe open costs ReadTimeout, not forever, and the hook is told why.
func TestReadInputIncomplete(t *testing.T) {
	pr, pw := io.Pipe()
	t.Cleanup(func() { pw.Close() })
	go pw.Write([]byte(`{"session_id":"s","cwd":`))
	b, err := ReadInput(pr)
	if !errors.Is(err, ErrIncomplete) {
		t.Errorf("ReadInput: %v, want ErrIncomplete", err)
	}
	if string(b) != `{"session_id":"s","cwd":` {
		t.Errorf("ReadInput: %q, want the bytes written", b)
	}
}

// TestReadInputRestInParts: the rest of a value written in two parts is
// read by the slow path and the value is whole.
func TestReadInputRestInParts(t *testing.T) {
	pr, pw := io.Pipe()
	t.Cleanup(func() { pw.Close() })
	go func() {
		pw.Write([]byte(`{"session_id":"s",`))
		pw.Write([]byte(`"cwd":"/p"}`))
	}()
	b, err := ReadInput(pr)
	if err != nil || string(b) != `{"session_id":"s","cwd":"/p"}` {
		t.Errorf("ReadInput: %q, %v", b, err)
	}
}

// fills are the sizes at which the reads ReadInput used to make while
// each filled its space came to the end of the space: its buffer's
// growth steps, and usual sizes of a pipe write.
var fills = []int{512, 896, 1408, 2048, 3072, 4096, 5376, 6912, 9472, 12288, 16384}

// heldCase is one read of ReadInput from a writer that keeps its end of
// the pipe open: r to read, and release to close the writer.
type heldCase struct {
	name    string
	r       io.Reader
	release func()
	check   func(b []byte, err error) error
}

// readHeldOpen runs ReadInput on every case at once (each waits up to
// ReadTimeout: in turn, they would take minutes). A case that has not
// returned after many times ReadTimeout was waiting for the writer to
// close: its writer is closed to end it, and the test fails.
func readHeldOpen(t *testing.T, cases []heldCase) {
	t.Helper()
	type result struct {
		i   int
		b   []byte
		err error
	}
	done := make(chan result, len(cases))
	for i, c := range cases {
		go func() {
			b, err := ReadInput(c.r)
			done <- result{i, b, err}
		}()
	}
	returned := make([]bool, len(cases))
	waited := make([]bool, len(cases))
	deadline := time.After(10 * ReadTimeout)
	for n := 0; n < len(cases); {
		select {
		case res := <-done:
			n++
			returned[res.i] = true
			c := cases[res.i]
			if waited[res.i] {
				t.Errorf("%s: ReadInput waited for the writer to close (then: %d bytes, %v)", c.name, len(res.b), res.err)
			} else if err := c.check(res.b, res.err); err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
		case <-deadline:
			for i, c := range cases {
				if !returned[i] {
					waited[i] = true
					c.release()
				}
			}
		}
	}
}

// heldPipe is an os.Pipe holding data (written by a goroutine: more than
// the pipe holds waits for the reader), its writer kept open until the
// test ends or release.
func heldPipe(t *testing.T, data ...[]byte) (*os.File, func()) {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pw.Close(); pr.Close() })
	go func() {
		for _, d := range data {
			pw.Write(d)
		}
	}()
	return pr, func() { pw.Close() }
}

// incomplete is n bytes of a value that never ends.
func incomplete(n int) []byte {
	const head = `{"session_id":"`
	return []byte(head + strings.Repeat("a", n-len(head)))
}

// TestReadInputIncompleteAtAFill: an incomplete value that ends exactly
// where a read's space did, the pipe held open, costs ReadTimeout like
// any other (ErrIncomplete with every byte written): the read after a
// full one is bounded too. It used to wait for the writer to close, at
// every one of fills.
func TestReadInputIncompleteAtAFill(t *testing.T) {
	var cases []heldCase
	for _, fill := range fills {
		for _, n := range []int{fill - 1, fill, fill + 1} {
			data := incomplete(n)
			want := func(b []byte, err error) error {
				if !errors.Is(err, ErrIncomplete) || string(b) != string(data) {
					return fmt.Errorf("ReadInput: %d bytes, %v; want the %d bytes written and ErrIncomplete", len(b), err, n)
				}
				return nil
			}
			pr, release := heldPipe(t, data)
			cases = append(cases, heldCase{fmt.Sprintf("os.Pipe, %d bytes", n), pr, release, want})
			if n == fill {
				ipr, ipw := io.Pipe()
				t.Cleanup(func() { ipw.Close() })
				go ipw.Write(data)
				cases = append(cases, heldCase{fmt.Sprintf("io.Pipe, %d bytes", n), ipr, func() { ipw.Close() }, want})
			}
		}
	}
	readHeldOpen(t, cases)
}

// TestReadInputWaiting: a whole value larger than the first read's space,
// written at once or in parts, the pipe held open, is read whole (what
// the kernel says is waiting is read directly; what is not written yet,
// through the goroutine).
func TestReadInputWaiting(t *testing.T) {
	var sizes []int
	for _, fill := range fills {
		sizes = append(sizes, fill-1, fill, fill+1)
	}
	sizes = append(sizes, 5108, 200<<10) // 200 KiB: more than a pipe holds
	var cases []heldCase
	for _, n := range sizes {
		data := append(incomplete(n-2), '"', '}')
		want := func(b []byte, err error) error {
			if err != nil || string(b) != string(data) {
				return fmt.Errorf("ReadInput: %d bytes, %v; want the %d-byte value", len(b), err, n)
			}
			return nil
		}
		pr, release := heldPipe(t, data)
		cases = append(cases, heldCase{fmt.Sprintf("%d bytes at once", n), pr, release, want})
		pr, release = heldPipe(t, data[:n/2], data[n/2:])
		cases = append(cases, heldCase{fmt.Sprintf("%d bytes in two writes", n), pr, release, want})
	}
	readHeldOpen(t, cases)
}

func TestComplete(t *testing.T) {
	for _, c := range []struct {
		in   string
		want bool
	}{
		{``, false},
		{"  \n", false},
		{`{`, false},
		{`{}`, true},
		{` {"a":"}"`, false},
		{`{"a":"\"}"`, false},
		{`{"a":"\\"}`, true},
		{`{"a":[{}]`, false},
		{`{"a":[{}]}`, true},
		{`[1]`, true},
		{`x`, false},
		{`"str"`, false},
		{"\n {\"a\":1}", true},
	} {
		if got := Complete([]byte(c.in)); got != c.want {
			t.Errorf("Complete(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

// chunked is a reader of three times MaxInput bytes that are no JSON
// value (read to their end), as much as each read asks for.
type chunked struct{ sent int }

func (c *chunked) Read(p []byte) (int, error) {
	n := len(p)
	for i := range n {
		p[i] = 'x'
	}
	c.sent += n
	if c.sent > 3*MaxInput {
		return n, io.EOF
	}
	return n, nil
}

// TestReadPastMaxInput: input that goes on past MaxInput is read to its
// end by readRest's goroutine, whose buffers past MaxInput are never one it
// sent (under -race, a buffer read into again while the caller copies from
// it is a data race), and what is kept is MaxInput and a byte.
func TestReadPastMaxInput(t *testing.T) {
	b, _ := ReadInput(&chunked{})
	if len(b) != MaxInput+1 {
		t.Fatalf("kept %d bytes, want MaxInput+1 = %d", len(b), MaxInput+1)
	}
}
