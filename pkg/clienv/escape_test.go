package clienv

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

func TestEscape(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain ASCII, tabs\tand\nnewlines", "plain ASCII, tabs\tand\nnewlines"},
		{"CJK 中文, Hangul 한국어, emoji ✅ ⚠️ 🙂, é", "CJK 中文, Hangul 한국어, emoji ✅ ⚠️ 🙂, é"},
		{"a\x1b[8mhidden", `a\x1b[8mhidden`},
		{"\x1b]52;c;aGVsbG8=\x07clip", `\x1b]52;c;aGVsbG8=\x07clip`},
		{"over\rwrite\bx", `over\x0dwrite\x08x`},
		{"del\x7f", `del\x7f`},
		{"c1 \u009b2J and \u0085", `c1 \u009b2J and \u0085`},
		{"raw \x9b byte", `raw \x9b byte`},
		{"cut \xe2\x80", `cut \xe2\x80`},
		{"bidi \u202eevil\u202c \u2066x\u2069 \u200f", `bidi \u202eevil\u202c \u2066x\u2069 \u200f`},
		{"zero\u200bwidth\u200c\u200d\u2060\ufeff", `zero\u200bwidth\u200c\u200d\u2060\ufeff`},
		{"soft\u00adhyphen \u034f \u3164 \u115f \u180e", `soft\u00adhyphen \u034f \u3164 \u115f \u180e`},
		{"tag \U000E0041\U000E007F", `tag \U000e0041\U000e007f`},
		{"vs supplement x\U000E0100", `vs supplement x\U000e0100`},
		{"sep\u2028para\u2029", `sep\u2028para\u2029`},
		{"run x\ufe0f\ufe0f\ufe01", "run x\ufe0f" + `\ufe0f\ufe01`},
		{"\ufe0f at start", `\ufe0f at start`},
		{"after space \ufe0f", `after space \ufe0f`},
		{"", ""},
	}
	for _, c := range cases {
		if got := Escape(c.in); got != c.want {
			t.Errorf("Escape(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestLine: a line of a listing escapes what Escape does and line breaks
// and tabs too, so a name cannot start a line of its own.
func TestLine(t *testing.T) {
	cases := []struct{ in, want string }{
		{"docs/solutions/a.md", "docs/solutions/a.md"},
		{"a\n  0123  [promoted] x\n.md", `a\x0a  0123  [promoted] x\x0a.md`},
		{"tab\there", `tab\x09here`},
		{"cr\r\n\x1b[2J", `cr\x0d\x0a\x1b[2J`},
		{"bidi \u202e and 中文\n", `bidi \u202e and 中文\x0a`},
		{"", ""},
	}
	for _, c := range cases {
		if got := Line(c.in); got != c.want {
			t.Errorf("Line(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestSafeWriter: the writer escapes like Escape, whatever the Write
// boundaries, including a character cut in two.
func TestSafeWriter(t *testing.T) {
	in := "é \x1b[31mred\u202e 中 \U000E0041 \u009b end\xff"
	want := `é \x1b[31mred\u202e 中 \U000e0041 \u009b end\xff`
	for step := 1; step <= len(in); step++ {
		var out bytes.Buffer
		w := NewSafeWriter(&out)
		for i := 0; i < len(in); i += step {
			n, err := w.Write([]byte(in[i:min(len(in), i+step)]))
			if err != nil || n != min(len(in), i+step)-i {
				t.Fatalf("step %d: Write = %d, %v", step, n, err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Errorf("step %d: %q, want %q", step, out.String(), want)
		}
	}
	// An incomplete sequence at the very end is escaped by Flush.
	var out bytes.Buffer
	w := NewSafeWriter(&out)
	w.Write([]byte("x\xe4\xb8"))
	if out.String() != "x" {
		t.Fatalf("before Flush: %q", out.String())
	}
	w.Flush()
	if out.String() != `x\xe4\xb8` {
		t.Fatalf("after Flush: %q", out.String())
	}
	if NewSafeWriter(w) != w {
		t.Error("a SafeWriter is wrapped twice")
	}
}

// TestEscapeJSON: the escaped JSON decodes to exactly the same value and
// holds no byte a terminal would act on.
func TestEscapeJSON(t *testing.T) {
	s := "a\u009b2J\x1b]52;c;x\x07 \u202e\x7f\U000E0041\u2028\u2029 中 ✅ ⚠️ \ufe0f\ufe0f q\"\\"
	raw, err := json.Marshal(map[string]string{"text": s, "bad": "x\xffy"})
	if err != nil {
		t.Fatal(err)
	}
	got := EscapeJSON(raw)
	want := `{"bad":"x\ufffdy","text":"a\u009b2J\u001b]52;c;x\u0007 \u202e\u007f\udb40\udc41\u2028\u2029 中 ✅ ⚠️ \ufe0f\ufe0f q\"\\"}`
	if string(got) != want {
		t.Errorf("EscapeJSON = %s\nwant          %s", got, want)
	}
	var back map[string]string
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	if back["text"] != s || back["bad"] != "x\uFFFDy" {
		t.Errorf("round trip: %q", back)
	}
	for _, r := range string(got) {
		if Unsafe(r) {
			t.Errorf("EscapeJSON left %U", r)
		}
	}
}

func FuzzEscape(f *testing.F) {
	f.Add("a\x1b[8m\u202e\U000E0041\ufe0f\ufe0f\xff\xe2\x80")
	f.Fuzz(func(t *testing.T, s string) {
		got := Escape(s)
		if !utf8.ValidString(got) {
			t.Fatalf("Escape(%q) = %q: invalid UTF-8", s, got)
		}
		prev := rune(-1)
		for _, r := range got {
			if Unsafe(r) {
				t.Fatalf("Escape(%q) = %q holds %U", s, got, r)
			}
			if isSelector(r) && (prev < 0 || isSelector(prev)) {
				t.Fatalf("Escape(%q) = %q holds a selector run", s, got)
			}
			prev = r
		}
		// Writing it in two pieces gives the same bytes.
		var out bytes.Buffer
		w := NewSafeWriter(&out)
		h := len(s) / 2
		w.Write([]byte(s[:h]))
		w.Write([]byte(s[h:]))
		w.Flush()
		if out.String() != got {
			t.Fatalf("SafeWriter(%q) = %q, Escape = %q", s, out.String(), got)
		}
	})
}
