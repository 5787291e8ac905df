//go:build linux

package memlist

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// chunkDir makes a memory directory of files memory files (f000.md …),
// MEMORY.md, entries of every odd kind among them, and a sub-folder file
// a pointer names, its own times an hour back (so that any entry added,
// removed or renamed gives it times of now); it returns the subs.
func chunkDir(t *testing.T, dir string, files int, rng *rand.Rand) []string {
	return chunkDirOdd(t, dir, files, rng, true)
}

// chunkDirOdd is chunkDir, with odd entries or none.
func chunkDirOdd(t *testing.T, dir string, files int, rng *rand.Rand, odd bool) []string {
	t.Helper()
	for i := range files {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d%s.md", i, strings.Repeat("x", rng.IntN(40)))), []byte(strings.Repeat("x", rng.IntN(100))), 0o640)
		if odd && rng.IntN(8) == 0 {
			plantOdd(1+rng.IntN(5), dir, filepath.Join(dir, fmt.Sprintf("odd%03d.md", i)), i, "")
		}
	}
	os.WriteFile(filepath.Join(dir, Index), []byte("- fact\n"), 0o600)
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "deep.md"), []byte("deep"), 0o600)
	backdate(t, dir)
	return []string{"sub/deep.md"}
}

func backdate(t *testing.T, p string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
}

// memoryFiles counts the memory files of dir but MEMORY.md, as a part
// counts them (odd entries with a memory name included: they are summed
// with their skip).
func memoryFiles(t *testing.T, dir string) int {
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if MemoryName(e.Name()) && e.Name() != Index {
			n++
		}
	}
	return n
}

// TestChunkedIsSum: over directories of every kind of entry, each part
// of a chunked listing read afresh gives Sum's fingerprint; the parts
// hold ChunkFiles memory files each but the last, chain from the start
// to the end, and a directory of at most ChunkFiles memory files has none.
func TestChunkedIsSum(t *testing.T) {
	defer func(n int) { ChunkFiles = n }(ChunkFiles)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct {
		files, per, parts int
		odd               bool
	}{
		{200, 16, 13, true}, // 12 parts of 16, one of 8 at least (odd entries add)
		{64, 64, 0, false},  // one part: none
		{65, 64, 2, false},
		{40, 7, 6, true},
		{300, 64, 5, true},
	} {
		ChunkFiles = c.per
		dir := t.TempDir()
		subs := chunkDirOdd(t, dir, c.files, rng, c.odd)
		ch, ok := Chunked(dir)
		if c.parts == 0 {
			if ok {
				t.Fatalf("%d files by %d: %d parts, want none", c.files, c.per, len(ch.Chunks))
			}
			continue
		}
		n := memoryFiles(t, dir)
		want := (n + c.per - 1) / c.per
		if !ok || len(ch.Chunks) != want || want < c.parts || (!c.odd && want != c.parts) {
			t.Fatalf("%d files (%d memory names) by %d: %d parts (ok %v), want %d", c.files, n, c.per, len(ch.Chunks), ok, want)
		}
		entries := 0
		for i, k := range ch.Chunks {
			if (i < len(ch.Chunks)-1 && k.Files != c.per) || k.Files < 1 || k.Files > c.per {
				t.Fatalf("part %d of %d holds %d files (per %d)", i, len(ch.Chunks), k.Files, c.per)
			}
			entries += k.Entries
		}
		all, _ := os.ReadDir(dir)
		if entries != len(all) {
			t.Fatalf("parts hold %d entries, the directory %d", entries, len(all))
		}
		fp, whole, err := Sum(dir, subs)
		if err != nil || !whole {
			t.Fatal(err)
		}
		for j := range ch.Chunks {
			got, ok := SumChunk(dir, subs, &ch, j)
			if !ok || got != fp {
				t.Fatalf("part %d: SumChunk = %q %v, Sum = %q", j, got, ok, fp)
			}
		}
	}
}

// TestChunkedNoticesChanges: a file rewritten in place (its name kept,
// the directory untouched) is noticed by the one part that holds it, and
// by no other (those give the recorded fingerprint: the trade, K−1 turns
// at most); any name added, removed or renamed, MEMORY.md and the
// sub-folder files are noticed by every part; and a name change the
// directory's times do not show (within their clock tick) is noticed by
// a part.
func TestChunkedNoticesChanges(t *testing.T) {
	defer func(n int) { ChunkFiles = n }(ChunkFiles)
	ChunkFiles = 10
	rng := rand.New(rand.NewPCG(7, 8))
	setup := func() (string, []string, Chunking, string) {
		dir := t.TempDir()
		subs := chunkDir(t, dir, 60, rng)
		ch, ok := Chunked(dir)
		if !ok || len(ch.Chunks) < 6 {
			t.Fatalf("%d parts (ok %v), want 6 at least", len(ch.Chunks), ok)
		}
		fp, _, _ := Sum(dir, subs)
		return dir, subs, ch, fp
	}
	// noticed counts the parts that tell the directory changed.
	noticed := func(dir string, subs []string, ch *Chunking, was string) int {
		fp, _, _ := Sum(dir, subs)
		if fp == was {
			t.Fatalf("the change left Sum as it was")
		}
		n := 0
		for j := range ch.Chunks {
			got, ok := SumChunk(dir, subs, ch, j)
			switch {
			case !ok || got == fp:
				n++
			case got != was:
				t.Fatalf("part %d: %q, neither the recorded %q nor Sum's %q", j, got, was, fp)
			}
		}
		return n
	}

	// In place: the same inode, the directory's times as they were.
	dir, subs, ch, was := setup()
	p := filepath.Join(dir, "f033.md")
	matches, _ := filepath.Glob(filepath.Join(dir, "f033*.md"))
	p = matches[0]
	if err := os.WriteFile(p, []byte("rewritten in place"), 0o640); err != nil {
		t.Fatal(err)
	}
	if n := noticed(dir, subs, &ch, was); n != 1 {
		t.Fatalf("an in-place rewrite noticed by %d parts, want 1", n)
	}

	for name, change := range map[string]func(dir string){
		"added":   func(dir string) { os.WriteFile(filepath.Join(dir, "new.md"), nil, 0o600) },
		"removed": func(dir string) { m, _ := filepath.Glob(filepath.Join(dir, "f012*.md")); os.Remove(m[0]) },
		"renamed": func(dir string) {
			m, _ := filepath.Glob(filepath.Join(dir, "f045*.md"))
			os.Rename(m[0], filepath.Join(dir, "renamed.md"))
		},
		"index": func(dir string) { os.WriteFile(filepath.Join(dir, Index), []byte("- other\n"), 0o600) },
		"sub":   func(dir string) { os.WriteFile(filepath.Join(dir, "sub", "deep.md"), []byte("deeper"), 0o600) },
	} {
		dir, subs, ch, was := setup()
		change(dir)
		if n := noticed(dir, subs, &ch, was); n != len(ch.Chunks) {
			t.Fatalf("%s: noticed by %d of %d parts, want all", name, n, len(ch.Chunks))
		}
	}

	// A name changed within the directory's clock tick: simulated by
	// taking the directory's fingerprint as it is after the change.
	for name, change := range map[string]func(dir string){
		"added": func(dir string) { os.WriteFile(filepath.Join(dir, "new.md"), nil, 0o600) },
		"removed": func(dir string) {
			m, _ := filepath.Glob(filepath.Join(dir, "f012*.md"))
			os.Remove(m[0])
		},
	} {
		dir, subs, ch, was := setup()
		change(dir)
		d, _ := OpenDir(dir)
		ch.Dir, _ = d.FP()
		d.Close()
		if n := noticed(dir, subs, &ch, was); n < 1 {
			t.Fatalf("%s within the tick: noticed by no part", name)
		}
	}
}

// TestHostileChunkings: parts that do not describe the directory — too
// few, out of order, a cookie elsewhere, counts or sums off, another
// directory's — never give the directory's fingerprint, from any part,
// unless the part read is exactly as recorded and the rest add up to it.
func TestHostileChunkings(t *testing.T) {
	defer func(n int) { ChunkFiles = n }(ChunkFiles)
	ChunkFiles = 8
	rng := rand.New(rand.NewPCG(9, 10))
	dir := t.TempDir()
	subs := chunkDir(t, dir, 50, rng)
	good, ok := Chunked(dir)
	if !ok {
		t.Fatal("no parts")
	}
	other := t.TempDir()
	chunkDir(t, other, 50, rng)
	others, _ := Chunked(other)
	fp, _, _ := Sum(dir, subs)
	edit := func(f func(c *Chunking)) Chunking {
		c := Chunking{Dir: good.Dir, Chunks: append([]Chunk(nil), good.Chunks...)}
		f(&c)
		return c
	}
	k := len(good.Chunks)
	// refused lists the parts whose reads differ from the record, which
	// must be refused; nil: no part may give the directory's fingerprint.
	for _, c := range []struct {
		name    string
		c       Chunking
		refused []int
	}{
		{"last part dropped", edit(func(c *Chunking) { c.Chunks = c.Chunks[:k-1] }), nil},
		{"first part dropped", edit(func(c *Chunking) { c.Chunks = c.Chunks[1:] }), nil},
		{"a part twice", edit(func(c *Chunking) { c.Chunks = append(c.Chunks[:2:2], c.Chunks[1:]...) }), nil},
		{"cookie elsewhere", edit(func(c *Chunking) { c.Chunks[1].Start += 12345; c.Chunks[0].End = c.Chunks[1].Start }), []int{0, 1}},
		{"cookie past the end", edit(func(c *Chunking) { c.Chunks[k-1].Start, c.Chunks[k-2].End = 1<<62, 1<<62 }), []int{k - 2, k - 1}},
		{"negative cookie", edit(func(c *Chunking) { c.Chunks[2].Start, c.Chunks[1].End = -5, -5 }), []int{1, 2}},
		{"one entry more", edit(func(c *Chunking) { c.Chunks[1].Entries++ }), []int{1}},
		{"one entry less", edit(func(c *Chunking) { c.Chunks[k-1].Entries-- }), []int{k - 1}},
		{"sums swapped", edit(func(c *Chunking) { c.Chunks[0].Sum, c.Chunks[1].Sum = c.Chunks[1].Sum, c.Chunks[0].Sum }), []int{0, 1}},
		{"files moved", edit(func(c *Chunking) { c.Chunks[0].Files--; c.Chunks[1].Files++ }), []int{0, 1}},
		{"another directory", others, nil},
		{"another's parts", edit(func(c *Chunking) { c.Chunks = others.Chunks }), nil},
		{"no directory", edit(func(c *Chunking) { c.Dir = "" }), nil},
		{"too many parts", edit(func(c *Chunking) { c.Chunks = make([]Chunk, MaxChunks+1) }), nil},
	} {
		for j := range c.c.Chunks {
			got, ok := SumChunk(dir, subs, &c.c, j)
			if c.refused == nil && ok && got == fp {
				t.Fatalf("%s: part %d gives the directory's fingerprint", c.name, j)
			}
			if ok && slices.Contains(c.refused, j) {
				t.Fatalf("%s: part %d, whose read is not as recorded, taken (%q)", c.name, j, got)
			}
		}
	}
	for _, j := range []int{-1, k, 1 << 40} {
		if _, ok := SumChunk(dir, subs, &good, j); ok {
			t.Fatalf("part %d of %d taken", j, k)
		}
	}
}

// The chunk line's fields: written as AppendChunk writes them, and only
// so.
func TestParseChunk(t *testing.T) {
	k := Chunk{Start: 0, End: 9223372036854775807, Entries: 70, Files: 64, Sum: 0xdeadbeef}
	b := AppendChunk(nil, &k)
	if string(b) != "0 9223372036854775807 70 64 deadbeef" {
		t.Fatalf("AppendChunk = %q", b)
	}
	if got, ok := ParseChunk(string(b)); !ok || got != k {
		t.Fatalf("ParseChunk = %+v %v", got, ok)
	}
	if got, ok := ParseChunk("-3 4 1 0 0"); !ok || got != (Chunk{Start: -3, End: 4, Entries: 1}) {
		t.Fatalf("ParseChunk of a negative cookie = %+v %v", got, ok)
	}
	for _, bad := range []string{"", "1 2 3 4", "1 2 3 4 5 6", "+1 2 3 4 5", "01 2 3 4 5", "1 2 3 4 DEAD", "1  2 3 4 5",
		"1 2 3 4 5 ", "1 2 3 4 x", "1 2 99999999999 4 5", "1 2 3 4 10000000000000000"} {
		if k, ok := ParseChunk(bad); ok {
			t.Errorf("ParseChunk(%q) = %+v", bad, k)
		}
	}
}

// FuzzParseChunk holds ParseChunk to strconv: a line it takes is five
// fields strconv parses to the same values, and AppendChunk writes it
// back byte for byte; a line AppendChunk wrote is taken.
func FuzzParseChunk(f *testing.F) {
	f.Add("0 9223372036854775807 70 64 deadbeef")
	f.Add("-3 4 1 0 0")
	f.Add("1 2 3 4 ffffffffffffffff")
	f.Add("-9223372036854775808 0 2147483647 0 10")
	f.Fuzz(func(t *testing.T, s string) {
		k, ok := ParseChunk(s)
		if !ok {
			fs := strings.Split(s, " ")
			if len(fs) != 5 {
				return
			}
			a, e1 := strconv.ParseInt(fs[0], 10, 64)
			b, e2 := strconv.ParseInt(fs[1], 10, 64)
			c, e3 := strconv.ParseInt(fs[2], 10, 32)
			d, e4 := strconv.ParseInt(fs[3], 10, 32)
			h, e5 := strconv.ParseUint(fs[4], 16, 64)
			if e1 == nil && e2 == nil && e3 == nil && e4 == nil && e5 == nil && c >= 0 && d >= 0 {
				w := Chunk{Start: a, End: b, Entries: int(c), Files: int(d), Sum: h}
				if string(AppendChunk(nil, &w)) == s {
					t.Fatalf("%q refused, AppendChunk writes it", s)
				}
			}
			return
		}
		if got := string(AppendChunk(nil, &k)); got != s {
			t.Fatalf("%q taken as %+v, written back as %q", s, k, got)
		}
	})
}

// TestChunkReadInSeveralGetdents: a part whose names are too long for the
// getdents buffer sized to it (partBuf: about 64 bytes an entry) is read
// in several, each going on where the last stopped, and still reads as
// recorded; a file of it rewritten in place is still noticed.
func TestChunkReadInSeveralGetdents(t *testing.T) {
	defer func(n int) { ChunkFiles = n }(ChunkFiles)
	ChunkFiles = 16
	dir := t.TempDir()
	long := strings.Repeat("n", 240)
	for i := range 100 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s%03d.md", long, i)), []byte("fact"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, Index), []byte("- fact\n"), 0o600)
	backdate(t, dir)
	ch, ok := Chunked(dir)
	if !ok || len(ch.Chunks) != 7 {
		t.Fatalf("Chunked: %d parts (ok %v), want 7", len(ch.Chunks), ok)
	}
	if b := partBuf(ch.Chunks[0].Entries); b >= 16*(24+len(long)+8) {
		t.Fatalf("partBuf(%d) = %d: one getdents holds the part, the test reads none in several", ch.Chunks[0].Entries, b)
	}
	fp, whole, err := Sum(dir, nil)
	if err != nil || !whole {
		t.Fatal(err)
	}
	for j := range ch.Chunks {
		if got, ok := SumChunk(dir, nil, &ch, j); !ok || got != fp {
			t.Fatalf("part %d: SumChunk = %q %v, Sum = %q", j, got, ok, fp)
		}
	}
	// A file of part 3 rewritten in place (another size; the directory
	// is not touched): part 3 no longer reads as recorded, part 2 does.
	var in3 string
	d, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	d.walk(ch.Chunks[3].Start, chunkBuf, func(name []byte, _ fs.FileMode, _ int64) bool {
		if memoryName(name) && string(name) != Index {
			in3 = string(name)
			return false
		}
		return true
	})
	d.Close()
	if in3 == "" {
		t.Fatal("part 3 holds no memory file")
	}
	if err := os.WriteFile(filepath.Join(dir, in3), []byte("a longer fact"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, ok := SumChunk(dir, nil, &ch, 3); ok && got == fp {
		t.Fatalf("part 3 reads as recorded after %s was rewritten", in3)
	}
	if got, ok := SumChunk(dir, nil, &ch, 2); !ok || got != fp {
		t.Fatalf("part 2 (the directory untouched): SumChunk = %q %v, want the recorded %q", got, ok, fp)
	}
}

// TestChunkedHalves: a directory of more than MaxChunks parts of
// ChunkFiles files is recorded in parts of twice as many (or four
// times…), at most MaxChunks, chained from its start to its end, each
// read afresh giving Sum's fingerprint.
func TestChunkedHalves(t *testing.T) {
	defer func(n int) { ChunkFiles = n }(ChunkFiles)
	ChunkFiles = 1
	rng := rand.New(rand.NewPCG(7, 8))
	for _, c := range []struct{ files, parts, per int }{
		{MaxChunks, MaxChunks, 1},
		{MaxChunks + 1, (MaxChunks + 2) / 2, 2},
		{4*MaxChunks + 3, (4*MaxChunks + 3 + 7) / 8, 8},
	} {
		dir := t.TempDir()
		subs := chunkDirOdd(t, dir, c.files, rng, false)
		ch, ok := Chunked(dir)
		if !ok || len(ch.Chunks) != c.parts || !ch.Valid() {
			t.Fatalf("%d files: %d parts (ok %v, valid %v), want %d", c.files, len(ch.Chunks), ok, ch.Valid(), c.parts)
		}
		for i, k := range ch.Chunks {
			if i < len(ch.Chunks)-1 && k.Files != c.per {
				t.Fatalf("%d files: part %d holds %d, want %d", c.files, i, k.Files, c.per)
			}
		}
		fp, whole, err := Sum(dir, subs)
		if err != nil || !whole {
			t.Fatal(err)
		}
		for j := range ch.Chunks {
			if got, ok := SumChunk(dir, subs, &ch, j); !ok || got != fp {
				t.Fatalf("%d files: part %d: SumChunk = %q %v, Sum = %q", c.files, j, got, ok, fp)
			}
		}
	}
}
