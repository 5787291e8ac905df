package wire

import (
	"errors"
	"testing"
)

// TestRoundTrip: values read back as written, in order, with nothing left.
func TestRoundTrip(t *testing.T) {
	b := []byte("MAG\x01")
	b = AppendUint(b, 300)
	b = AppendInt(b, -5)
	b = AppendBool(b, true)
	b = AppendString(b, "héllo")
	b = AppendUint(b, 2)
	b = AppendString(b, "x")
	b = AppendStrings(b, []string{"a", "", "bc"})
	b = AppendStrings(b, nil)
	r := NewReader(b, "MAG\x01")
	if v := r.Uint("u", 1000); v != 300 {
		t.Errorf("uint %d", v)
	}
	if v := r.Int("i", -10, 10); v != -5 {
		t.Errorf("int %d", v)
	}
	if !r.Bool("b") {
		t.Error("bool false")
	}
	if s := r.String("s"); s != "héllo" {
		t.Errorf("string %q", s)
	}
	if n := r.Count("c", 1); n != 2 {
		t.Errorf("count %d", n)
	}
	if s := r.String("x"); s != "x" {
		t.Errorf("string %q", s)
	}
	if ss := r.Strings("l"); len(ss) != 3 || ss[0] != "a" || ss[1] != "" || ss[2] != "bc" {
		t.Errorf("strings %q", ss)
	}
	if ss := r.Strings("empty"); ss != nil {
		t.Errorf("empty strings %q", ss)
	}
	if err := r.Done(); err != nil {
		t.Error(err)
	}
}

// TestHostile: every out-of-range or truncated value is ErrCorrupt, and
// later reads return zero values.
func TestHostile(t *testing.T) {
	for name, c := range map[string]struct {
		b    []byte
		read func(r *Reader)
	}{
		"other magic":         {[]byte("MAG\x02"), func(r *Reader) {}},
		"string past the end": {[]byte("MAG\x01\x05abc"), func(r *Reader) { r.String("s") }},
		"huge count":          {[]byte("MAG\x01\xff\xff\xff\xff\x0f"), func(r *Reader) { r.Count("c", 1) }},
		"count of wide items": {[]byte("MAG\x01\x03abcde"), func(r *Reader) { r.Count("c", 2) }},
		"uint over limit":     {[]byte("MAG\x01\x0b"), func(r *Reader) { r.Uint("u", 10) }},
		"int out of range":    {AppendInt([]byte("MAG\x01"), 1<<40), func(r *Reader) { r.Small("n", 0) }},
		"negative small":      {AppendInt([]byte("MAG\x01"), -2), func(r *Reader) { r.Small("n", -1) }},
		"bool of 2":           {[]byte("MAG\x01\x02"), func(r *Reader) { r.Bool("b") }},
		"varint overflow":     {[]byte("MAG\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02"), func(r *Reader) { r.Uint("u", 1<<64-1) }},
		"truncated varint":    {[]byte("MAG\x01\x80"), func(r *Reader) { r.Uint("u", 1<<64-1) }},
		"bytes left over":     {[]byte("MAG\x01\x00\x00"), func(r *Reader) { r.Bool("b") }},
		"list past the end":   {[]byte("MAG\x01\x02\x01a\x05b"), func(r *Reader) { r.Strings("l") }},
	} {
		r := NewReader(c.b, "MAG\x01")
		c.read(r)
		if err := r.Done(); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
		if s := r.String("after"); s != "" {
			t.Errorf("%s: a read after the failure returned %q", name, s)
		}
	}
}

// TestStringReader: NewStringReader reads in place what NewReader reads
// from a copy; Rest takes the bytes left, after which Done holds.
func TestStringReader(t *testing.T) {
	b := AppendString([]byte("MAG\x01"), "héllo")
	b = append(b, "tail"...)
	r := NewStringReader(string(b), "MAG\x01")
	if s := r.String("s"); s != "héllo" {
		t.Errorf("string %q", s)
	}
	if rest := r.Rest(); rest != "tail" || r.Done() != nil || r.Rest() != "" {
		t.Errorf("rest %q, done %v", rest, r.Done())
	}
	if r := NewStringReader("MAG\x02", "MAG\x01"); !errors.Is(r.Err(), ErrCorrupt) || r.Rest() != "" {
		t.Errorf("another version: %v", r.Err())
	}
}
