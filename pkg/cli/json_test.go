package cli

import (
	"bytes"
	"strings"
	"testing"
)

// TestWriteJSONBypassesEscaping: JSON written through a SafeWriter is exact
// JSON (its backslashes are not escaped again), with unsafe characters as
// \u escapes.
func TestWriteJSONBypassesEscaping(t *testing.T) {
	var out bytes.Buffer
	env := New(nil, "/", strings.NewReader(""), &out, &out).Safe()
	if err := WriteJSON(env.Stdout, map[string]string{"k": "x\u202ey <&>"}); err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"k\": \"x\\u202ey <&>\"\n}\n"
	if out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}
