package docrecord

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/intermem/intermem/pkg/match"
	"github.com/intermem/intermem/pkg/wire"
)

const doc = `---
paths: ["src/**"]
---
# Deploys

- Staging deploys run from main.
- A fact. <!-- intermem:00000000000000ee -->

@AGENTS.md
@~/notes.md

<!-- intermem:index:begin -->
- Deploys → docs/intermem/deploys.md
- Not a detail → README.md
<!-- intermem:index:end -->
`

// TestDerive: what a session start needs of a document, written by hand.
func TestDerive(t *testing.T) {
	r := Derive([]byte(doc))
	if !r.HasPaths || !r.TopicIdx || r.Title != "Deploys" {
		t.Errorf("haspaths %v topicindex %v title %q", r.HasPaths, r.TopicIdx, r.Title)
	}
	if want := []string{"docs/intermem/deploys.md"}; !reflect.DeepEqual(r.Indexed, want) {
		t.Errorf("indexed %q, want %q", r.Indexed, want)
	}
	if want := []string{"AGENTS.md", "~/notes.md"}; !reflect.DeepEqual(r.Imports, want) {
		t.Errorf("imports %q, want %q", r.Imports, want)
	}
	if len(r.Marks) != 1 || r.Marks[0].ID != "00000000000000ee" || r.Marks[0].Section != "Deploys" || !strings.HasPrefix(r.Marks[0].Text, "A fact.") {
		t.Errorf("marks %+v", r.Marks)
	}
	found := false
	for _, k := range r.Keys {
		found = found || k == match.Key("Staging deploys run from main.")
	}
	if !found {
		t.Errorf("no key of the first statement in %x", r.Keys)
	}
}

// TestRoundTrip: Decode reads what Encode stored.
func TestRoundTrip(t *testing.T) {
	for _, content := range []string{doc, "", "plain line\n", "# T\n\n- a\n  b\\c\td\n"} {
		want := Derive([]byte(content))
		got, err := Decode(Encode(want))
		if err != nil {
			t.Fatalf("%q: %v", content, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%q: decoded\n%+v\nwant\n%+v", content, got, want)
		}
	}
}

// TestNotKept: a record with a secret in a path that must stay as
// written is stored as a mark only; texts are redacted, and kept.
func TestNotKept(t *testing.T) {
	secret := "ghp_" + strings.Repeat("a1B2", 9)
	b := Encode(Derive([]byte("# T\n\n@" + secret + ".md\n")))
	if strings.Contains(string(b), secret) {
		t.Fatal("the record holds the secret")
	}
	if _, err := Decode(b); !errors.Is(err, ErrNotKept) {
		t.Errorf("a secret import: %v, want ErrNotKept", err)
	}
	r, err := Decode(Encode(Derive([]byte("# Token " + secret + "\n"))))
	if err != nil || strings.Contains(r.Title, secret) {
		t.Errorf("a secret title: %+v %v", r, err)
	}
}

// TestOtherVersion: bytes of another version, truncated or with bytes
// left over are never a Record.
func TestOtherVersion(t *testing.T) {
	b := Encode(Derive([]byte(doc)))
	if _, err := Decode(append([]byte("IMDR\x00"), b[len(Magic):]...)); !errors.Is(err, ErrOldRecord) {
		t.Errorf("another version: %v", err)
	}
	if _, err := Decode([]byte(`{"title":"T"}`)); !errors.Is(err, ErrOldRecord) {
		t.Errorf("JSON: %v", err)
	}
	for _, bad := range [][]byte{b[:len(b)-1], b[:len(Magic)], append(b[:len(b):len(b)], 0)} {
		if _, err := Decode(bad); !errors.Is(err, wire.ErrCorrupt) {
			t.Errorf("%d bytes: %v, want wire.ErrCorrupt", len(bad), err)
		}
	}
}

// FuzzDecode: any bytes decode or fail, never panic; what decodes encodes
// again to the same Record.
func FuzzDecode(f *testing.F) {
	f.Add(Encode(Derive([]byte(doc))))
	f.Add(Encode(Derive(nil)))
	f.Add([]byte(Magic + "\x00"))
	f.Add([]byte(Magic + "\x01\x00\x00\xff\xff\xff\xff\x0f"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Decode(b)
		if err != nil {
			return
		}
		again, err := Decode(Encode(r))
		if errors.Is(err, ErrNotKept) {
			return // a fuzzed path that reads as a secret
		}
		if err != nil || !reflect.DeepEqual(again, r) {
			t.Fatalf("re-encoded: %+v %v, was %+v", again, err, r)
		}
	})
}
