package turns

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/intermem/intermem/pkg/atomicfile"
)

// BenchmarkCountTurn is what a quiet Stop pays to count its turn through
// the hook front: look the session up in the tally, append a line (with 32
// sessions in the file, compacted as a full hook compacts it).
func BenchmarkCountTurn(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, Name)
	m := map[string]Turn{}
	for i := 0; i < 32; i++ {
		m[fmt.Sprintf("%08x-0000-4000-8000-000000000000", i)] = Turn{Turns: i, Seen: int64(i)}
	}
	os.WriteFile(path, Encode(m), 0o600)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%100 == 0 { // compaction, as a full hook's turn does past CompactBytes
			os.WriteFile(path, Encode(m), 0o600)
		}
		prev, _ := Lookup(path, "00000001-0000-4000-8000-000000000000")
		t, _ := Stop(prev, 10)
		if err := Append(path, "00000001-0000-4000-8000-000000000000", t); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRewriteTurnsJSON is what counting a turn cost before the tally:
// the JSON map decoded, encoded and the file replaced atomically.
func BenchmarkRewriteTurnsJSON(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, Name)
	type turn struct {
		Turns int   `json:"turns"`
		Last  int   `json:"last"`
		Seen  int64 `json:"seen"`
		Ended bool  `json:"ended,omitempty"`
	}
	m := map[string]turn{}
	for i := 0; i < 32; i++ {
		m[fmt.Sprintf("%08x-0000-4000-8000-000000000000", i)] = turn{Turns: i, Seen: int64(i)}
	}
	data, _ := json.Marshal(m)
	os.WriteFile(path, data, 0o600)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		raw, _ := os.ReadFile(path)
		got := map[string]turn{}
		json.Unmarshal(raw, &got)
		t := got["00000001-0000-4000-8000-000000000000"]
		t.Turns++
		got["00000001-0000-4000-8000-000000000000"] = t
		out, _ := json.Marshal(got)
		if err := atomicfile.WriteState(dir, path, out, atomicfile.Options{NoSync: true}); err != nil {
			b.Fatal(err)
		}
	}
}
