package catalog

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/source"
	"github.com/intermem/intermem/pkg/store"
)

// sampleState is a state with every field set, and sampleBytes its
// encoding, written out by hand from the format in statecodec.go.
var (
	sampleState = sourceState{
		Key: "k1", Entries: 3, Touched: []string{"MEMORY.md"}, Files: []string{"a.md"},
		Problems: []source.Problem{{Path: "a.md", Line: 2, Message: "bad"}, {Path: ".", Message: "gone", Unread: true}},
		Dirs: source.Dirs{
			"d": {FP: source.Fingerprint{Size: 4, ModTime: -1, Inode: 300, Change: 2}, Path: "d",
				Entries: []source.DirEntry{{Name: "a.md"}, {Name: "link.md", Link: true}, {Name: "sub", Dir: true}}},
			".": {Path: ".", Entries: []source.DirEntry{{Name: "d", Dir: true}}},
		},
	}
	sampleBytes = "IMST\x01" +
		"\x02k1" + // key
		"\x03" + // entries
		"\x01\x09MEMORY.md" + // touched
		"\x01\x04a.md" + // files
		"\x02" + "\x04a.md\x02\x03bad\x00" + "\x01.\x00\x04gone\x01" + // problems
		"\x02" + // dirs, in key order
		"\x01.\x01.\x00\x00\x00\x00" + "\x01\x01d\x01" +
		"\x01d\x01d\x08\x01\xac\x02\x04" + "\x03\x04a.md\x00\x07link.md\x02\x03sub\x01"
)

func TestStateBytes(t *testing.T) {
	if got := string(encodeState(&sampleState)); got != sampleBytes {
		t.Errorf("encodeState:\n got %q\nwant %q", got, sampleBytes)
	}
	got, err := decodeState([]byte(sampleBytes))
	if err != nil {
		t.Fatal(err)
	}
	// The files are kept encoded, as the record holds them, until asked
	// for.
	if got.Files != nil || string(got.filesAt) != "\x01\x04a.md" {
		t.Errorf("decodeState decoded the files %q (kept %q), want them kept encoded", got.Files, got.filesAt)
	}
	if f := got.files(); !reflect.DeepEqual(f, sampleState.Files) {
		t.Errorf("files() = %q, want %q", f, sampleState.Files)
	}
	if again := string(encodeState(&sourceState{Key: got.Key, Entries: got.Entries, Touched: got.Touched, filesAt: got.filesAt,
		Problems: got.Problems, Dirs: got.Dirs})); again != sampleBytes {
		t.Errorf("encodeState of the files kept encoded:\n got %q\nwant %q", again, sampleBytes)
	}
	got.filesAt = nil
	if !reflect.DeepEqual(got, sampleState) {
		t.Errorf("decodeState:\n got %+v\nwant %+v", got, sampleState)
	}
}

// Every prefix of a state, a state with a byte more, and states broken
// in each of their checks are ErrStateCorrupt, never a panic or a state.
func TestStateHostile(t *testing.T) {
	bad := map[string]string{
		"trailing byte":            sampleBytes + "\x00",
		"other version":            "IMST\x02" + sampleBytes[5:],
		"json":                     `{"key":"k1"}`,
		"names out of order":       strings.Replace(sampleBytes, "\x04a.md\x00\x07link.md", "\x07link.md\x00\x04a.md", 1),
		"directories out of order": strings.Replace(sampleBytes, "\x01.\x01.", "\x01e\x01.", 1),
		"unknown name flag":        strings.Replace(sampleBytes, "\x03sub\x01", "\x03sub\x04", 1),
		"unread flag not 0 or 1":   strings.Replace(sampleBytes, "gone\x01", "gone\x02", 1),
		"count past the end":       "IMST\x01\x00\x00\xff\xff\xff\xff\x0f",
		"string past the end":      "IMST\x01\x7f",
		"varint too long":          "IMST\x01\x00\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",
		"entries out of range":     "IMST\x01\x00\xff\xff\xff\xff\xff\x01",
	}
	for i := range len(sampleBytes) {
		bad["prefix "+string(rune('0'+i%10))+"…"+sampleBytes[:i]] = sampleBytes[:i]
	}
	for name, b := range bad {
		st, err := decodeState([]byte(b))
		if !errors.Is(err, ErrStateCorrupt) {
			t.Errorf("%s: err %v, state %+v; want ErrStateCorrupt", name, err, st)
		}
	}
}

// FuzzDecodeState: hostile bytes never panic, and a state that decodes
// encodes to one that decodes to the same.
func FuzzDecodeState(f *testing.F) {
	f.Add([]byte(sampleBytes))
	f.Add(encodeState(&sourceState{}))
	f.Add([]byte("IMST\x01"))
	f.Add([]byte(`{"key":"x","files":["a"]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := decodeState(b)
		if err != nil {
			return
		}
		again, err := decodeState(encodeState(&st))
		if err != nil {
			t.Fatalf("a decoded state does not decode once encoded: %v", err)
		}
		if !reflect.DeepEqual(again.files(), st.files()) {
			t.Fatalf("round trip of the files:\n got %q\nwant %q", again.Files, st.Files)
		}
		again.filesAt, st.filesAt = nil, nil
		if !reflect.DeepEqual(again, st) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", again, st)
		}
	})
}

// states returns every source's stored state.
func (f *fixture) states() map[string][]byte {
	out := map[string][]byte{}
	f.st.View(func(tx *bolt.Tx) error {
		c := store.Catalog(tx)
		for _, s := range []string{"auto-memory", "clavain", "compound", "continuity", "instructions", "interfluence", "promoted", "written"} {
			if b := c.State(s); b != nil {
				out[s] = append([]byte(nil), b...)
			}
		}
		return nil
	})
	return out
}

func (f *fixture) putStates(states map[string][]byte) {
	f.t.Helper()
	if err := f.st.Update(func(tx *bolt.Tx) error {
		c := store.Catalog(tx)
		for s, b := range states {
			if err := c.PutState(s, b); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		f.t.Fatal(err)
	}
}

// A state an older intermem stored as JSON is read: the sources it says
// are unchanged are not scanned (their file records, made undecodable,
// are not read), and a writer stores it again in the binary form. A state that does not decode makes its source scanned
// again, with the same result, and the next writer stores it in the
// binary form.
func TestStateOlderFormats(t *testing.T) {
	f := newFixture(t)
	settleDirs(t, f.root)
	settleDirs(t, f.mem)
	var want []SourceInfo
	f.update(func(c *Catalog) { want = c.Sources() })
	f.update(func(*Catalog) {})
	stored := f.states()
	if len(stored) < 4 {
		t.Fatalf("states stored for %d sources: %v", len(stored), stored)
	}
	same := func(what string, c *Catalog) {
		t.Helper()
		got := c.Sources()
		for i := range got {
			got[i].Scanned, want[i].Scanned = time.Time{}, time.Time{}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: sources\n got %+v\nwant %+v", what, got, want)
		}
	}
	asJSON := map[string][]byte{}
	for s, b := range stored {
		if !strings.HasPrefix(string(b), stateMagic) {
			t.Errorf("state of %s stored as %q, not in the binary form", s, b)
		}
		st, err := decodeState(b)
		if err != nil {
			t.Fatalf("state of %s: %v", s, err)
		}
		st.files()
		j, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		asJSON[s] = j
	}
	f.putStates(asJSON)
	records := map[string][]byte{}
	if err := f.st.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(store.BucketCatFiles)
		return b.ForEach(func(k, v []byte) error {
			records[string(k)] = append([]byte(nil), v...)
			return b.Put(k, []byte("{not json"))
		})
	}); err != nil {
		t.Fatal(err)
	}
	f.view(func(c *Catalog) {
		if c.Changed() {
			t.Errorf("states stored as JSON were not read: the sources were scanned again")
		}
		same("states as JSON", c)
	})
	f.update(func(c *Catalog) {
		if c.Changed() {
			t.Errorf("states stored as JSON were not read by a writer: the sources were scanned again")
		}
		same("states as JSON, a writer", c)
	})
	for s, b := range f.states() {
		if _, err := decodeState(b); err != nil {
			t.Errorf("state of %s, read as JSON by a writer, not stored again in the binary form: %q (%v)", s, b, err)
		}
	}
	if err := f.st.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(store.BucketCatFiles)
		for k, v := range records {
			if err := b.Put([]byte(k), v); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	broken := map[string][]byte{}
	for s := range stored {
		broken[s] = []byte(stateMagic + "\xff")
	}
	f.putStates(broken)
	f.view(func(c *Catalog) { same("states undecodable", c) })
	f.update(func(c *Catalog) { same("states undecodable, a writer", c) })
	for s, b := range f.states() {
		if _, err := decodeState(b); err != nil {
			t.Errorf("state of %s not stored again: %q (%v)", s, b, err)
		}
	}
}
