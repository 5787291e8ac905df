package jsonscan

import (
	"testing"

	"github.com/tidwall/gjson"
)

// The hooks read their payloads with gjson before this package: held to
// it, so that no payload reads differently through the hook front.

var seeds = []string{
	`{"session_id":"abc","cwd":"/tmp/p","hook_event_name":"Stop"}`,
	`{"session_id":"a\"b\\c\u00e9\ud83d\ude00","stop_hook_active":true}`,
	`{"session_id":1,"cwd":null,"x":[1,2,{"session_id":"no"}],"session_id":"second"}`,
	`{"s\u0065ssion_id":"escaped key"}`,
	`{"stop_hook_active":"true"}`, `{"stop_hook_active":"1"}`, `{"stop_hook_active":0.5}`,
	`{"stop_hook_active":"yes"}`, `{"stop_hook_active":-0}`, `{"stop_hook_active":false}`,
	`{"a":"\ud800"}`, `{"a":"\ud800\u0041"}`, `{"a":"\udc00\ud800"}`,
	` { "a" : 1e5 , "b" : -0.5E-3 } `, `{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":-}`,
	`{"a":"x` + "\x01" + `"}`, `{"a":"\x"}`, `{"a":tru}`, `{"a":1,}`, `{,}`, `{"a" 1}`,
	`[1,2]`, `"str"`, `{}`, `{"a":{}}`, `{"a":[]}`, "{\"a\":\"\xff\"}", `{"a":1}x`,
}

func TestValidAndGetAgreeWithGJSON(t *testing.T) {
	for _, s := range seeds {
		check(t, []byte(s))
	}
}

// Hand-written expectations for what the hooks rely on.
func TestGet(t *testing.T) {
	b := []byte(`{"x":{"session_id":"inner"},"session_id":"s\u00e9","session_id":"dup","n":2,"t":true}`)
	if !Valid(b) {
		t.Fatal("not valid")
	}
	for key, want := range map[string]string{"session_id": "sé", "x": "", "missing": ""} {
		if got := Get(b, key).String(); got != want {
			t.Errorf("Get(%q) = %q, want %q", key, got, want)
		}
	}
	if !Get(b, "t").Bool() || !Get(b, "n").Bool() || Get(b, "missing").Bool() {
		t.Error("Bool")
	}
	if Get(b, "missing").Kind != None || Get(b, "x").Kind != Object {
		t.Error("Kind")
	}
}

func check(t *testing.T, b []byte) {
	t.Helper()
	if got, want := Valid(b), gjson.ValidBytes(b); got != want {
		t.Fatalf("Valid(%q) = %v, gjson %v", b, got, want)
	}
	if !Valid(b) || len(b) == 0 || b[skipSpace(b, 0)] != '{' {
		return
	}
	for _, key := range []string{"session_id", "a", "b", "stop_hook_active", "cwd", "x"} {
		v, g := Get(b, key), gjson.GetBytes(b, key)
		if (v.Kind == String) != (g.Type == gjson.String) {
			t.Fatalf("Get(%q, %q) kind %v, gjson %v", b, key, v.Kind, g.Type)
		}
		if v.Kind == String && v.String() != g.String() {
			t.Fatalf("Get(%q, %q) = %q, gjson %q", b, key, v.String(), g.String())
		}
		if v.Bool() != g.Bool() {
			t.Fatalf("Get(%q, %q).Bool() = %v, gjson %v", b, key, v.Bool(), g.Bool())
		}
	}
}

func FuzzAgreesWithGJSON(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { check(t, b) })
}
