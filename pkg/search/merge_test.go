package search

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

// manyDocs returns n documents of three sources, the first source seen
// only from the second third on, so that a merge must renumber sources.
func manyDocs(n int) []Doc {
	words := []string{"invoice", "render", "retry", "cache", "hook", "publish", "queue", "worker", "stop", "session"}
	srcs := []string{"clavain", "compound", "auto-memory"}
	var out []Doc
	for i := range n {
		src := srcs[(i/7)%2]
		if i > n/3 && i%5 == 0 {
			src = srcs[2]
		}
		out = append(out, Doc{
			ID: fmt.Sprintf("%04d", i), Source: src,
			Title:      fmt.Sprintf("%s %s number %d", words[i%10], words[(i*3)%10], i),
			Text:       fmt.Sprintf("The %s %s after the %s; see %d.", words[(i*7)%10], words[(i+1)%10], words[(i*i)%10], i%13),
			Tags:       []string{words[(i+4)%10]},
			Confidence: float64(i%4) / 4, Stale: i%17 == 0,
		})
	}
	return out
}

// segments builds docs as a base is built a segment at a time: the first
// of each size normalised by its own averages, the rest by the first's.
func segments(docs []Doc, size int) ([][]byte, [4]float64) {
	var out [][]byte
	var avg [4]float64
	for from := 0; from == 0 || from < len(docs); from += size {
		b := NewBuilder()
		if from > 0 {
			b.Normalise(avg)
		}
		for i := from; i < min(from+size, len(docs)); i++ {
			b.Add(&docs[i])
		}
		x := b.Index()
		if from == 0 {
			avg = x.Averages()
		}
		out = append(out, x.Encode())
	}
	return out, avg
}

// TestMergeIsOneBuild: the segments of a base merged are the base one
// Builder makes of every document normalised by the first segment's
// averages, byte for byte, and rank alike.
func TestMergeIsOneBuild(t *testing.T) {
	docs := manyDocs(100)
	for _, size := range []int{1, 7, 33, 100, 250} {
		segs, avg := segments(docs, size)
		got, err := Merge(segs, avg)
		if err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		b := NewBuilder()
		b.Normalise(avg)
		for i := range docs {
			b.Add(&docs[i])
		}
		want := b.Index()
		if !slices.Equal(got, want.Encode()) {
			t.Fatalf("size %d: the merged segments are not the one build", size)
		}
		x, err := Decode(got)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{"invoice render retry", "stop hook", "session 7"} {
			a, b := x.Search(q, Options{Limit: 20, Now: day("2026-06-15")}), want.Search(q, Options{Limit: 20, Now: day("2026-06-15")})
			if fmt.Sprint(a) != fmt.Sprint(b) {
				t.Errorf("size %d, %q: merged %v, built %v", size, q, a, b)
			}
		}
	}
	// With one segment, the merge is the segment.
	segs, avg := segments(docs, len(docs))
	if got, err := Merge(segs, avg); err != nil || !slices.Equal(got, segs[0]) {
		t.Errorf("one segment merged is not itself: %v", err)
	}
	if got, err := Merge(nil, [4]float64{1, 1, 1, 1}); err != nil {
		t.Errorf("no segment: %v", err)
	} else if x, err := Decode(got); err != nil || x.Len() != 0 {
		t.Errorf("no segment merged: %v", err)
	}
}

// TestMergeRefusesDamage: a segment that does not decode, is a delta, was
// normalised otherwise, or whose postings are damaged is not merged.
func TestMergeRefusesDamage(t *testing.T) {
	docs := manyDocs(60)
	segs, avg := segments(docs, 20)
	other := avg
	other[3]++
	delta := BuildDelta(Build(docs[:20]), docs[:2], []string{"0000"}).Encode()
	cases := map[string]func() ([][]byte, [4]float64){
		"undecodable": func() ([][]byte, [4]float64) { return [][]byte{segs[0], []byte("IMSX\x01"), segs[2]}, avg },
		"cut":         func() ([][]byte, [4]float64) { return [][]byte{segs[0], segs[1][:len(segs[1])-1], segs[2]}, avg },
		"averages":    func() ([][]byte, [4]float64) { return segs, other },
		"delta":       func() ([][]byte, [4]float64) { return [][]byte{segs[0], delta}, avg },
		"postings": func() ([][]byte, [4]float64) {
			// A posting's document number past the segment's documents:
			// Decode leaves postings to the query, Merge reads them all.
			bad := slices.Clone(segs[1])
			x, _ := Decode(bad)
			r := x.dict[len(x.dict)/2]
			bad[len(bad)-len(x.blob)+int(r.off)] = 0x7f
			return [][]byte{segs[0], bad, segs[2]}, avg
		},
	}
	for name, c := range cases {
		s, a := c()
		if _, err := Merge(s, a); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: Merge = %v, want ErrCorrupt", name, err)
		}
	}
}

// FuzzMerge: whatever bytes stand for a segment, Merge never panics, and
// what it returns decodes and searches.
func FuzzMerge(f *testing.F) {
	docs := manyDocs(30)
	segs, avg := segments(docs, 10)
	for _, s := range segs {
		f.Add(s)
	}
	f.Add([]byte("IMSX\x02"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, in := range [][][]byte{{data}, {segs[0], data}, {data, segs[2]}} {
			x, err := DecodeShared(data)
			a := avg
			if err == nil && len(in) == 1 {
				a = x.avg
			}
			out, err := Merge(in, a)
			if err != nil {
				continue
			}
			y, err := Decode(out)
			if err != nil {
				t.Fatalf("merged bytes do not decode: %v", err)
			}
			for _, r := range y.dict {
				if got := len(decodePostings(y.blob, r, len(y.docs))); got != int(r.count) {
					t.Fatalf("term %q: %d postings read of %d", r.term, got, r.count)
				}
			}
			y.Search("invoice render retry", Options{Limit: 3})
		}
	})
}
