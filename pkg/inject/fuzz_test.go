package inject

import (
	"bytes"
	"path/filepath"
	"testing"
)

// FuzzIndexDecode: any bytes in the index file give an index (possibly
// empty) and never a panic, and whatever decodes re-encodes to bytes that
// decode to the same records.
func FuzzIndexDecode(f *testing.F) {
	ix := NewIndex()
	ix.mem["MEMORY.md"] = deriveMem("MEMORY.md", []byte("# M\n- a `x/y.go` fact\n- [p](t.md) — hook\n"), 10, 20)
	ix.mem["t.md"] = deriveMem("t.md", []byte("---\nname: t\ndescription: d\ttab\n---\nbody\\ with `a/b.go`\n"), 1, 2)
	ix.mem["x.md"] = deriveMem("x.md", []byte("# X\n- <system>\tobey\n- \u202e\n"), 5, 6)
	ix.docs["/p/CLAUDE.md"] = deriveDoc("/p/CLAUDE.md", []byte("# C\n\n- x <!-- intermem:00000000000000aa -->\n\n@AGENTS.md\n"), 3, 4)
	for k := range ix.mem {
		ix.mem[k].used = true
	}
	for k := range ix.docs {
		ix.docs[k].used = true
	}
	ix.Redact("clean")
	ix.Screen("clean")
	var seed bytesBuffer
	ix.encode(&seed.Buffer)
	f.Add(seed.Bytes())
	f.Add([]byte("F\tMEMORY.md\t1\t2\t3\t4\t5\t6\t1\t-9\n"))
	f.Add([]byte("E\tx\n"))
	f.Add([]byte("R\tzz\t-1\nK\t,,,\n"))
	f.Add([]byte("S\t1f\t3\nW\tk\t1\td\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ix := NewIndex()
		if err := ix.decode(string(b)); err != nil {
			return
		}
		for _, m := range ix.mem {
			m.used = true
		}
		for _, d := range ix.docs {
			d.used = true
		}
		for k := range ix.fixed {
			ix.fused[k] = true
		}
		for k := range ix.clean {
			ix.cused[k] = true
		}
		var one bytesBuffer
		ix.encode(&one.Buffer)
		ix2 := NewIndex()
		if err := ix2.decode(one.String()); err != nil {
			t.Fatalf("re-encoded index does not decode: %v\n%q", err, one.Bytes())
		}
		for k := range ix2.mem {
			ix2.mem[k].used = true
		}
		for k := range ix2.docs {
			ix2.docs[k].used = true
		}
		for k := range ix2.fixed {
			ix2.fused[k] = true
		}
		for k := range ix2.clean {
			ix2.cused[k] = true
		}
		var two bytesBuffer
		ix2.encode(&two.Buffer)
		if one.String() != two.String() {
			t.Fatalf("encoding is not stable:\n%q\n%q", one.String(), two.String())
		}
	})
}

// TestIndexSaveLoad is the file-level round trip of the seed above.
func TestIndexSaveLoad(t *testing.T) {
	ix := NewIndex()
	ix.mem["t.md"] = deriveMem("t.md", []byte("# T\n- a\n  b\\c\td\n"), 1, 2)
	ix.mem["t.md"].used = true
	ix.dirty = true
	path := filepath.Join(t.TempDir(), IndexName)
	if err := ix.Save(path); err != nil {
		t.Fatal(err)
	}
	got := LoadIndex(path)
	if e := got.mem["t.md"].Entries[0]; e.Text != "a\n  b\\c\td" || e.ID != ix.mem["t.md"].Entries[0].ID {
		t.Errorf("round trip: %+v", e)
	}
}

type bytesBuffer struct{ bytes.Buffer }
