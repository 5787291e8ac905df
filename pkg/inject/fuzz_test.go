package inject

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzIndexDecode: any bytes in the index file give an index (possibly
// empty) and never a panic, and whatever decodes re-encodes to bytes that
// decode to the same records.
func FuzzIndexDecode(f *testing.F) {
	ix := NewIndex()
	ix.Redact("clean")
	ix.Screen("clean")
	ix.docRecord([]byte("# Title\n\n- A statement.\n\n@docs/more.md\n"))
	var seed bytesBuffer
	ix.encode(&seed.Buffer)
	f.Add(seed.Bytes())
	f.Add([]byte("F\tMEMORY.md\t1\t2\t3\t4\t5\t6\t1\t-9\n")) // a memory file record of v8
	f.Add([]byte("D\t/p/C.md\t3\t4\t0\tC\t0\nK\t1f\n"))      // a document record of v9
	f.Add([]byte("R\tzz\t-1\nK\t,,,\n"))
	f.Add([]byte("S\t1f\t3\n"))
	f.Add([]byte("E\t1f\t3\ta\tb\t1\tc\twhy\tx/y.go\tz.go\n"))
	f.Add([]byte("D\t1f\t3\t494d\t2a.3,1f.0\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ix := NewIndex()
		if err := ix.decode(string(b)); err != nil {
			return
		}
		for k := range ix.fixed {
			ix.fused[k] = true
		}
		for k := range ix.clean {
			ix.cused[k] = true
		}
		for k := range ix.docs {
			ix.docUsed[k] = true
		}
		var one bytesBuffer
		ix.encode(&one.Buffer)
		ix2 := NewIndex()
		if err := ix2.decode(one.String()); err != nil {
			t.Fatalf("re-encoded index does not decode: %v\n%q", err, one.Bytes())
		}
		for k := range ix2.fixed {
			ix2.fused[k] = true
		}
		for k := range ix2.clean {
			ix2.cused[k] = true
		}
		for k := range ix2.docs {
			ix2.docUsed[k] = true
		}
		var two bytesBuffer
		ix2.encode(&two.Buffer)
		if one.String() != two.String() {
			t.Fatalf("encoding is not stable:\n%q\n%q", one.String(), two.String())
		}
	})
}

// TestIndexSaveLoad is the file-level round trip of the memos.
func TestIndexSaveLoad(t *testing.T) {
	ix := NewIndex()
	ix.Redact("a\tb\\c")
	ix.Screen("clean text")
	path := filepath.Join(t.TempDir(), IndexName)
	if err := ix.Save(path); err != nil {
		t.Fatal(err)
	}
	got := LoadIndex(path)
	if !got.fixed[keyOf("a\tb\\c")] || !got.clean[keyOf("clean text")] || len(got.fixed) != 1 || len(got.clean) != 1 {
		t.Errorf("round trip: %+v", got)
	}
}

// TestIndexOfOlderVersion: an index an older intermem wrote, which held
// memory files' records, is ignored (and replaced at the next save).
func TestIndexOfOlderVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), IndexName)
	old := "intermem context index v8\nX\t" + esc(exeID()) + "\nF\tt.md\t1\t2\t0\t0\t0\t0\t0\t1\nE\tabc\tfact\t2\t1\t\t\t\t\t0\t0\ta\t0\t0\t\t0\n"
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	if ix := LoadIndex(path); len(ix.fixed) != 0 || len(ix.der) != 0 {
		t.Errorf("an older index was read: %+v", ix)
	}
	// v9 held documents' derivations, which are the catalog's now.
	v9 := "intermem context index v9\nX\t" + esc(exeID()) + "\nR\t1f\t3\nD\t/p/C.md\t3\t4\t0\tC\t0\n"
	if err := os.WriteFile(path, []byte(v9), 0o600); err != nil {
		t.Fatal(err)
	}
	if ix := LoadIndex(path); len(ix.fixed) != 0 {
		t.Errorf("a v9 index was read: %+v", ix)
	}
}

type bytesBuffer struct{ bytes.Buffer }
