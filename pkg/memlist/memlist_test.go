package memlist

import (
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// The listing's fingerprint is a sum of one term per file, each FNV-1a
// over name NUL fingerprint NUL skip NEWLINE (held to the standard
// library's FNV-1a) mixed by MurmurHash3's finalizer (held to the
// reference's constants, written out here), in any order.
func TestListingFP(t *testing.T) {
	files := []File{
		{Name: "MEMORY.md", FP: "120:1700000000000000000:42:644"},
		{Name: "notes/é.md", FP: "7:1:2:644", Skip: "not a regular file"},
		{Name: "", FP: "", Skip: ""},
	}
	fmix := func(h uint64) uint64 {
		h ^= h >> 33
		h *= 0xff51afd7ed558ccd
		h ^= h >> 33
		h *= 0xc4ceb9fe1a85ec53
		h ^= h >> 33
		return h
	}
	var sum uint64
	for _, f := range files {
		h := fnv.New64a()
		io.WriteString(h, f.Name+"\x00"+f.FP+"\x00"+f.Skip+"\n")
		sum += fmix(h.Sum64())
	}
	want := "m" + strconv.FormatUint(sum, 16) + ".3"
	if got := ListingFP(files); got != want {
		t.Fatalf("ListingFP = %s, want %s", got, want)
	}
	if got := ListingFP([]File{files[2], files[0], files[1]}); got != want {
		t.Fatalf("ListingFP in another order = %s, want %s", got, want)
	}
	if got := ListingFP(files[:2]); got == want {
		t.Fatalf("ListingFP without a file = %s, the whole listing's", got)
	}
	if got := ListingFP(nil); got != "m0.0" {
		t.Fatalf("ListingFP(nil) = %s", got)
	}
	// A known answer of the finalizer: fmix64(1) (MurmurHash3's
	// reference implementation).
	if got := fmix64(1); got != 0xb456bcfc34c2cb2c {
		t.Fatalf("fmix64(1) = %#x", got)
	}
}

// TestSumIsTurn: Sum, which keeps no File and sums each file as it is
// stat'ed, says what a new sweep's Turn says (its FP and Whole) and what
// the fingerprint of Turn's files is, over directories of every kind of
// entry, with sub-folder files, at the edges of a turn's chunk.
func TestSumIsTurn(t *testing.T) {
	defer func(n int) { ChunkEntries = n }(ChunkEntries)
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 40 {
		dir := t.TempDir()
		n := rng.IntN(30)
		var subs []string
		for i := range n {
			name := fmt.Sprintf("f%02d.md", i)
			p := filepath.Join(dir, name)
			switch k := rng.IntN(9); k {
			case 0, 1, 2, 3, 4, 5:
				target := ""
				if k == 0 { // the same draws as before the cases were shared
					target = fmt.Sprintf("f%02d.md", rng.IntN(n))
				}
				plantOdd(k, dir, p, i, target)
			case 6:
				os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
				os.WriteFile(filepath.Join(dir, "sub", name), []byte("x"), 0o600)
				subs = append(subs, "sub/"+name, "sub/../sub/"+name, "sub/missing.md")
			default:
				os.WriteFile(p, []byte(strings.Repeat("x", rng.IntN(100))), 0o640)
			}
		}
		if rng.IntN(2) == 0 {
			os.WriteFile(filepath.Join(dir, Index), []byte("- fact\n"), 0o600)
		}
		if round%10 == 9 {
			os.WriteFile(filepath.Join(dir, "big.md"), make([]byte, MaxFileBytes+1), 0o600)
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		// Chunks that hold the directory and its subs, that end on its
		// last entry, and that are too small.
		for _, chunk := range []int{4096, len(ents) + 2 + len(subs), len(ents) + 2 + len(subs) - 1, len(ents) + 2, len(ents) + 1, 3} {
			ChunkEntries = max(chunk, 1)
			l, err := Turn(dir, subs, nil)
			if err != nil {
				t.Fatal(err)
			}
			fp, whole, err := Sum(dir, subs)
			if err != nil {
				t.Fatal(err)
			}
			if fp != l.FP || whole != l.Whole {
				t.Fatalf("round %d, chunk %d: Sum = %q whole %v, Turn = %q whole %v", round, chunk, fp, whole, l.FP, l.Whole)
			}
			if l.Whole && ListingFP(l.Files) != fp {
				t.Fatalf("round %d, chunk %d: Sum = %q, the sum of Turn's files %q", round, chunk, fp, ListingFP(l.Files))
			}
			if chunk == 4096 {
				full, err := List(dir, subs)
				if err != nil || !whole || full.FP != fp {
					t.Fatalf("round %d: List = %q (%v), Sum = %q whole %v", round, full.FP, err, fp, whole)
				}
			}
		}
	}
	if fp, whole, err := Sum(filepath.Join(t.TempDir(), "missing"), nil); fp != "none" || !whole || err != nil {
		t.Fatalf("missing directory: %q %v %v", fp, whole, err)
	}
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, nil, 0o600)
	if _, _, err := Sum(f, nil); err == nil {
		t.Fatal("a file for a directory: no error")
	}
}

// TestParallelSumIsSequential: the sum two goroutines take of a
// directory's entries (a helper started before the directory is read, or
// once a batch shows it large, sharing every batch above ParallelMin) is
// the sum one takes, and Turn's,
// over directories of hundreds of entries of every kind — more than one
// getdents buffer holds, with names long and short — and turns whose chunk
// ends inside a buffer; a helper started for batches too small to share
// changes nothing either. Run under -race, it also shows that the two
// goroutines share nothing but the buffer they read and the batch's
// atomics.
func TestParallelSumIsSequential(t *testing.T) {
	defer func(n, m int, b int64) { ChunkEntries, ParallelMin, ParallelBytes = n, m, b }(ChunkEntries, ParallelMin, ParallelBytes)
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 6 {
		dir := t.TempDir()
		n := 150 + rng.IntN(800)
		for i := range n {
			name := fmt.Sprintf("f%03d%s.md", i, strings.Repeat("x", rng.IntN(60)))
			p := filepath.Join(dir, name)
			switch k := rng.IntN(12); k {
			case 0, 1, 2, 3, 4, 5:
				target := ""
				if k == 0 { // the same draws as before the cases were shared
					target = fmt.Sprintf("f%03d.md", rng.IntN(n))
				}
				plantOdd(k, dir, p, i, target)
			default:
				os.WriteFile(p, []byte(strings.Repeat("x", rng.IntN(100))), 0o640)
			}
		}
		if round%2 == 0 {
			os.WriteFile(filepath.Join(dir, Index), []byte("- fact\n"), 0o600)
		}
		for _, chunk := range []int{4096, n / 2, 7} {
			ChunkEntries = chunk
			ParallelMin, ParallelBytes = 1<<30, 1<<62
			seq, seqWhole, err := Sum(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			l, err := Turn(dir, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if seq != l.FP || seqWhole != l.Whole {
				t.Fatalf("round %d, chunk %d: sequential Sum = %q whole %v, Turn %q whole %v", round, chunk, seq, seqWhole, l.FP, l.Whole)
			}
			if chunk == 4096 && (!seqWhole || ListingFP(l.Files) != seq) {
				t.Fatalf("round %d: Sum = %q, the sum of Turn's files %q", round, seq, ListingFP(l.Files))
			}
			// The helper early on every batch, early on none (too few
			// entries in each), and late (the directory's size too
			// small to say).
			for _, c := range []struct {
				min   int
				bytes int64
			}{{1, 0}, {1 << 30, 0}, {1, 1 << 62}} {
				ParallelMin, ParallelBytes = c.min, c.bytes
				par, parWhole, err := Sum(dir, nil)
				if err != nil {
					t.Fatal(err)
				}
				if par != seq || parWhole != seqWhole {
					t.Fatalf("round %d, chunk %d, ParallelMin %d: parallel Sum = %q whole %v, sequential %q whole %v",
						round, chunk, c.min, par, parWhole, seq, seqWhole)
				}
			}
		}
	}
}

// plantOdd puts at p (the i-th entry of dir) one of the entries a memory
// listing must judge apart from a plain file, by kind: a link to target,
// a dangling link, a directory, a FIFO, a hidden file, a file that is not
// Markdown.
func plantOdd(kind int, dir, p string, i int, target string) {
	switch kind {
	case 0:
		os.Symlink(target, p)
	case 1:
		os.Symlink("nowhere.md", p)
	case 2:
		os.Mkdir(p, 0o755)
	case 3:
		syscall.Mkfifo(p, 0o600)
	case 4:
		os.WriteFile(filepath.Join(dir, fmt.Sprintf(".hidden%d.md", i)), nil, 0o600)
	case 5:
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("other%d.txt", i)), nil, 0o600)
	}
}
