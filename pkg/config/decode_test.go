package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
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

// strict is json.Unmarshal(b, v) with unknown fields disallowed: the
// document checked whole as Unmarshal checks it (a Decoder reads only the
// first value), then decoded by a Decoder that disallows them.
func strict(b []byte, v *File) error {
	if err := json.Unmarshal(b, v); err != nil {
		return err
	}
	*v = File{}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	return d.Decode(v)
}

// FuzzDecode holds decode to encoding/json, unknown fields disallowed:
// the same documents accepted, the same File, an error exactly when it
// gives one.
func FuzzDecode(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var want File
		werr := strict(b, &want)
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
		`{"mode":"meta"}`:              "meta",
		`{"MODE":"meta"}`:              "meta",
		`{"mode":"x","Mode":"meta"}`:   "meta",
		`{"mode":"meta","mode":null}`:  "meta",
		`{"\u006dode":"m\u0065ta"}`:    "meta",
		`{"ſources":{},"mode":"meta"}`: "meta",
		`null`:                         "",
	} {
		c, err := decode([]byte(doc))
		if err != nil || c.Mode != mode {
			t.Errorf("decode(%s) = mode %q, %v; want %q", doc, c.Mode, err, mode)
		}
	}
	for _, doc := range []string{`{"modes":"meta"}`, `{"mode":"meta","other":[1,{"a":2}]}`, `{"mode":"meta","layout":1}`, `{"mode":"meta","sources":{"a":"no"}}`, `[]`, `{"mode":"meta"`, `{"mode":"meta"}}`, ``} {
		if c, err := decode([]byte(doc)); err == nil {
			t.Errorf("decode(%s) = %+v, no error", doc, c)
		}
	}
}

// TestUnknownKey: a key that names no setting (a misspelt "sources") makes
// the file unusable, the error naming the first such key and the keys
// there are; a key in another case is the setting's, and the names inside
// "sources" are not keys.
func TestUnknownKey(t *testing.T) {
	_, err := decode([]byte(`{"mode":"meta","source":{"auto-memory":false},"x":1}`))
	var uk *UnknownKeyError
	if !errors.As(err, &uk) || uk.Key != "source" {
		t.Fatalf("decode: %v, want the unknown key \"source\"", err)
	}
	if want := `unknown key "source": the keys are layout, tier_claude, sources, mode, project`; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if _, err := decode([]byte(`{"Sources":{"no-such-source":false},"TIER_CLAUDE":true}`)); err != nil {
		t.Errorf("keys in another case: %v", err)
	}
	long := strings.Repeat("é", 100)
	_, err = decode([]byte(`{"` + long + `":1}`))
	if !errors.As(err, &uk) || uk.Key != long || !strings.Contains(err.Error(), `"`+strings.Repeat("é", 32)+`…"`) {
		t.Errorf("a long key: %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, Name), []byte(`{"source":{"auto-memory":false}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Read(dir)
	if !errors.Is(err, ErrInvalid) || !errors.As(err, &uk) || c.Sources != nil {
		t.Fatalf("Read: %+v, %v; want ErrInvalid naming the key", c, err)
	}
	if !strings.Contains(err.Error(), `unknown key "source"`) {
		t.Errorf("Read's error %q does not name the key", err)
	}
}
