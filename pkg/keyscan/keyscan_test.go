package keyscan

import (
	"math/rand"
	"strings"
	"testing"
)

type hit struct {
	id  int32
	end int
}

// naive is the oracle: every occurrence of every keyword, case-folded.
func naive(keys []string, s string) map[hit]bool {
	out := map[hit]bool{}
	ls := strings.ToLower(s)
	for id, k := range keys {
		lk := strings.ToLower(k)
		for i := 0; i+len(lk) <= len(ls); i++ {
			if ls[i:i+len(lk)] == lk {
				out[hit{int32(id), i + len(lk)}] = true
			}
		}
	}
	return out
}

func TestScanMatchesNaive(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	alphabet := "abcAB_-: "
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[r.Intn(len(alphabet))]
		}
		return string(b)
	}
	for round := 0; round < 300; round++ {
		var keys []string
		for i := 0; i < 1+r.Intn(8); i++ {
			keys = append(keys, word(1+r.Intn(4)))
		}
		m := New(keys)
		s := word(r.Intn(80))
		got := map[hit]bool{}
		last := -1
		m.Scan(s, func(id int32, end int) {
			if end < last {
				t.Fatalf("ends out of order: %d after %d", end, last)
			}
			last = end
			got[hit{id, end}] = true
		})
		want := naive(keys, s)
		if len(got) != len(want) {
			t.Fatalf("keys %q in %q: got %v, want %v", keys, s, got, want)
		}
		for h := range want {
			if !got[h] {
				t.Fatalf("keys %q in %q: missed %v", keys, s, h)
			}
		}
	}
}

func TestCaseFoldingIsASCIIOnly(t *testing.T) {
	m := New([]string{"token", "ключ"})
	var ids []int32
	m.Scan("TOKEN Ключ ключ", func(id int32, end int) { ids = append(ids, id) })
	// "Ключ" differs from "ключ" outside ASCII: only the exact one matches.
	if len(ids) != 2 || ids[0] != 0 || ids[1] != 1 {
		t.Fatalf("ids = %v, want [0 1]", ids)
	}
}
