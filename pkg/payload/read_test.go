package payload

import (
	"errors"
	"io"
	"strings"
	"testing"
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
// filling the space given, is read whole without the goroutine; and one
// larger than MaxInput is still reported too large.
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
