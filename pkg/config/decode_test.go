package config

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

var decodeSeeds = []string{
	`{"layout":"tiered","tier_claude":true,"sources":{"interfluence":false,"compound":true},"mode":"meta","project":"p"}`,
	`{}`, `null`, ` null `, `[]`, `"x"`, `1`, `true`, ``, ` `, `{`, `{"mode":}`, `{"mode":"meta",}`,
	`{"MODE":"meta"}`, `{"Mode":"x","mode":"y"}`, `{"tier_Claude":false}`, `{"ſources":{"a":true}}`,
	`{"\u006dode":"meta"}`, `{"mode":"m\u00e9ta\ud83d\ude00"}`, `{"mode":"\ud800x"}`, `{"mode":"\udc00\ud800"}`,
	`{"mode":"\ud83d\u0041"}`, "{\"mode\":\"\xff\xfe\"}", "{\"mo\xffde\":\"meta\"}",
	`{"mode":null}`, `{"mode":1}`, `{"mode":true}`, `{"mode":{}}`, `{"mode":[]}`,
	`{"tier_claude":"true"}`, `{"tier_claude":null}`, `{"tier_claude":0}`,
	`{"sources":null}`, `{"sources":{"a":true},"sources":{"b":false}}`, `{"sources":{"a":true},"sources":null}`,
	`{"sources":{"a":null}}`, `{"sources":{"a":1}}`, `{"sources":[]}`, `{"sources":"x"}`, `{"sources":{}}`,
	`{"other":[1,2,{"a":[true,false,null,-0.5e+10]}],"mode":"meta"}`, `{"x":01}`, `{"x":-}`, `{"x":1.}`,
	`{"x":1e}`, `{"x":"\x"}`, "{\"x\":\"\t\"}", `{"x":"\u12"}`, `{"a":1}x`, `{"a" 1}`, `{"a":1 "b":2}`,
	`{"mode":"meta"} `, "\t\r\n{\"mode\" : \"meta\" }\n", `{,"mode":"meta"}`, `{"mode":"meta",,}`,
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001), `{"x":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`,
	`{"x":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
}

// FuzzDecode holds decode to json.Unmarshal: the same documents accepted,
// the same File, an error exactly when it gives one.
func FuzzDecode(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var want File
		werr := json.Unmarshal(b, &want)
		got, gerr := decode(b)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("decode(%q): error %v, json.Unmarshal's %v", b, gerr, werr)
		}
		if werr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("decode(%q) = %#v, json.Unmarshal's %#v", b, got, want)
		}
	})
}

// TestDecode: the seeds by hand where it matters most — what the hook
// front reads (mode) and what makes a document unusable.
func TestDecode(t *testing.T) {
	for doc, mode := range map[string]string{
		`{"mode":"meta"}`:                     "meta",
		`{"MODE":"meta"}`:                     "meta",
		`{"mode":"x","Mode":"meta"}`:          "meta",
		`{"mode":"meta","mode":null}`:         "meta",
		`{"\u006dode":"m\u0065ta"}`:           "meta",
		`{"modes":"meta"}`:                    "",
		`null`:                                "",
		`{"mode":"meta","other":[1,{"a":2}]}`: "meta",
	} {
		c, err := decode([]byte(doc))
		if err != nil || c.Mode != mode {
			t.Errorf("decode(%s) = mode %q, %v; want %q", doc, c.Mode, err, mode)
		}
	}
	for _, doc := range []string{`{"mode":"meta","layout":1}`, `{"mode":"meta","sources":{"a":"no"}}`, `[]`, `{"mode":"meta"`, `{"mode":"meta"}}`, ``} {
		if c, err := decode([]byte(doc)); err == nil {
			t.Errorf("decode(%s) = %+v, no error", doc, c)
		}
	}
}
