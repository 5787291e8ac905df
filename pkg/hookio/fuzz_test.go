package hookio

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/payload"
)

// FuzzParse: Parse never panics; it accepts only one JSON object; an
// accepted payload has a session id that is safe as a store key and a
// file-name component; every field it reports is the payload's string
// value (or empty); and it is deterministic.
func FuzzParse(f *testing.F) {
	for _, dir := range []string{"../../testdata/payloads", "../../testdata/badinput/hook"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*"))
		for _, p := range files {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	f.Add([]byte(`{"session_id":"a","cwd":"/p","hook_event_name":"Stop"}`))
	f.Add([]byte(`{"session_id":"a/b"}`))
	f.Add([]byte(`{"session_id":"\u0000"}`))
	f.Add([]byte(`{"session_id":5,"cwd":["x"]}`))
	f.Add([]byte("  {\"session_id\":\"x\"}  \n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		in, err := Parse(b)
		again, err2 := Parse(b)
		if (err == nil) != (err2 == nil) || in.SessionID != again.SessionID || in.Cwd != again.Cwd {
			t.Fatalf("Parse is not deterministic on %q", b)
		}
		trimmed := bytes.TrimSpace(b)
		switch {
		case len(trimmed) == 0:
			if !errors.Is(err, payload.ErrEmpty) {
				t.Fatalf("empty input: err %v, want ErrEmpty", err)
			}
			return
		case trimmed[0] != '{':
			if !errors.Is(err, payload.ErrNotJSON) {
				t.Fatalf("input not starting with '{' accepted: %q (err %v)", b, err)
			}
			return
		}
		if errors.Is(err, payload.ErrNotJSON) || errors.Is(err, payload.ErrEmpty) {
			return
		}
		// One JSON object: encoding/json agrees it is valid.
		if !json.Valid(trimmed) {
			t.Fatalf("Parse accepted invalid JSON %q", b)
		}
		if !bytes.Equal(in.Raw, trimmed) {
			t.Fatalf("Raw is %q, want the trimmed input %q", in.Raw, trimmed)
		}
		// Every reported field is the payload's own string value.
		var m map[string]any
		if json.Unmarshal(trimmed, &m) == nil {
			for key, got := range map[string]string{"cwd": in.Cwd, "hook_event_name": in.Event, "source": in.Source, "reason": in.Reason} {
				if v, ok := m[key].(string); ok && utf8.ValidString(v) && !strings.ContainsRune(v, utf8.RuneError) && got != v && !duplicateKey(trimmed, key) {
					t.Fatalf("%s = %q, the payload says %q", key, got, v)
				}
				// (Of a key given twice, encoding/json keeps the last value
				// and Parse the first: either may be the string.)
				if _, isString := m[key].(string); !isString && m[key] != nil && got != "" && !duplicateKey(trimmed, key) {
					t.Fatalf("%s = %q from a non-string value %v", key, got, m[key])
				}
			}
		}
		if err != nil {
			if !errors.Is(err, payload.ErrNoSession) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		s := in.SessionID
		if s == "" || len(s) > 128 || !utf8.ValidString(s) || strings.ContainsAny(s, "/\\\x7f") {
			t.Fatalf("accepted unsafe session id %q", s)
		}
		for _, r := range s {
			if r < 0x20 {
				t.Fatalf("accepted a session id with a control character: %q", s)
			}
		}
	})
}

// duplicateKey reports whether key may occur more than once in the
// object (the parsers may then legitimately pick different ones).
func duplicateKey(b []byte, key string) bool {
	return bytes.Count(b, []byte(key)) > 1
}

// FuzzSessionStartOutput: whatever the context, the output is exactly one
// JSON object whose additionalContext decodes to the context.
func FuzzSessionStartOutput(f *testing.F) {
	f.Add("# intermem\n- a \"quoted\" line\t<tag> & \\ \u2028")
	f.Add("")
	f.Add("\x00\x1f\x7f")
	f.Add("\u009b2J \u202e \U000E0041 \ufe0f\ufe0f")
	f.Add("bad \xff utf-8")
	f.Fuzz(func(t *testing.T, ctx string) {
		out, err := SessionStartOutput(ctx)
		if err != nil {
			t.Fatalf("SessionStartOutput: %v", err)
		}
		if want := encoded(ctx); !bytes.Equal(out, want) {
			t.Fatalf("output %q, encoding/json's %q", out, want)
		}
		if !utf8.ValidString(ctx) {
			return // an invalid byte is U+FFFD, as encoding/json writes it
		}
		if !bytes.HasSuffix(out, []byte("\n")) || bytes.Count(bytes.TrimSuffix(out, []byte("\n")), []byte("\n")) != 0 {
			t.Fatalf("output is not one line: %q", out)
		}
		dec := json.NewDecoder(bytes.NewReader(out))
		var v struct {
			HookSpecificOutput struct {
				HookEventName     string `json:"hookEventName"`
				AdditionalContext string `json:"additionalContext"`
			} `json:"hookSpecificOutput"`
		}
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("output %q is not JSON: %v", out, err)
		}
		if dec.More() {
			t.Fatalf("more than one JSON value in %q", out)
		}
		if v.HookSpecificOutput.HookEventName != "SessionStart" || v.HookSpecificOutput.AdditionalContext != ctx {
			t.Fatalf("output %q does not carry the context %q", out, ctx)
		}
		for _, r := range string(out) {
			if r != '\n' && cli.Unsafe(r) {
				t.Fatalf("output %q holds %U as itself", out, r)
			}
		}
	})
}

// encoded is the output as encoding/json writes the object, escaped as
// every hook's JSON is.
func encoded(ctx string) []byte {
	var v struct {
		HookSpecificOutput struct {
			HookEventName     string `json:"hookEventName"`
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	v.HookSpecificOutput.HookEventName = "SessionStart"
	v.HookSpecificOutput.AdditionalContext = ctx
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return append(cli.EscapeJSON(b), '\n')
}

// SessionStartOutput writes what encoding/json would, byte for byte.
func TestSessionStartOutputAsEncodingJSON(t *testing.T) {
	for _, ctx := range []string{"", "plain", "# intermem\n- a \"quoted\" line\t<tag> & \\ \u2028 \u2029",
		"\x00\x01\x08\x0c\x1f\x7f", "\u009b2J \u202e \U000E0041 \ufe0f", "bad \xff\xfe utf-8 \xe2\x80", "👩\u200d💻 é 中文"} {
		out, err := SessionStartOutput(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := encoded(ctx); !bytes.Equal(out, want) {
			t.Errorf("%q:\n got %q\nwant %q", ctx, out, want)
		}
	}
}
