package snapshot

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/intermem/intermem/pkg/memlist"
)

// partsProject is a quiet project through the front whose memory
// directory holds 21 memory files besides MEMORY.md, recorded in parts of
// four (memlist.ChunkFiles): six parts, a quiet turn reading one afresh.
func partsProject(t *testing.T) *quietProject {
	prev := memlist.ChunkFiles
	memlist.ChunkFiles = 4
	t.Cleanup(func() { memlist.ChunkFiles = prev })
	q := newQuietProject(t)
	q.front = true
	q.interval = "1000" // a turn tally, no checkpoint turn
	for i := range 20 {
		q.write(fmt.Sprintf("part%02d.md", i), fmt.Sprintf("# Part %d\n\n- Fact %d of the parts.\n", i, i))
	}
	q.turn("s1", "Stop")
	q.settle("s1")
	return q
}

var chunkLine = regexp.MustCompile(`(?m)^chunk .*\n`)

// parts is the number of chunk lines of the copy.
func (q *quietProject) parts() int {
	b, err := os.ReadFile(q.quiet)
	if err != nil {
		q.t.Fatal(err)
	}
	return len(chunkLine.FindAll(b, -1))
}

// untilHanded runs Stop turns of s1 until one is handed over to the full
// hook, at most max, and returns how many it took (max+1: none was).
func (q *quietProject) untilHanded(max int) int {
	q.t.Helper()
	for i := 1; i <= max; i++ {
		q.handed = 0
		q.turn("s1", "Stop")
		if q.handed > 0 {
			return i
		}
	}
	return max + 1
}

// A memory file rewritten in place is noticed within K turns (K the
// parts of the listing), and some rewrites later than at once: the quiet
// turn reads one part afresh. Every other change — a file added, removed
// or renamed, MEMORY.md, a sub-folder file a pointer names — is noticed
// at the next turn.
func TestQuietPartsThroughTheFront(t *testing.T) {
	q := partsProject(t)
	const k = 6 // ceil(21 files / 4)
	if n := q.parts(); n != k {
		t.Fatalf("the copy holds %d parts, want %d", n, k)
	}
	if n := q.untilHanded(2 * k); n != 2*k+1 {
		t.Fatalf("a quiet turn handed over at turn %d with nothing changed", n)
	}
	late := 0
	for i := range 8 {
		name := fmt.Sprintf("part%02d.md", i*2+1)
		fact := fmt.Sprintf("Fact %d rewritten in place.", i)
		q.write(name, "# Rewritten\n\n- "+fact+"\n")
		n := q.untilHanded(k)
		if n > k {
			t.Fatalf("%s rewritten in place: not noticed within %d turns", name, k)
		}
		if n > 1 {
			late++
		}
		if got := q.seen()[fact]; got != 1 {
			t.Fatalf("%s: the rewritten entry seen in %d sessions, want 1", name, got)
		}
		q.settle("s1")
		if n := q.parts(); n != k {
			t.Fatalf("the copy holds %d parts after a rewrite, want %d", n, k)
		}
	}
	if late == 0 {
		t.Fatalf("every in-place rewrite noticed at once: the quiet turn reads the whole listing")
	}

	for _, c := range []struct {
		what   string
		change func()
		fact   string
	}{
		{"a new file", func() { q.write("zz-new.md", "# New\n\n- A new file's fact.\n") }, "A new file's fact."},
		{"a renamed file", func() {
			if err := os.Rename(filepath.Join(q.mem, "part04.md"), filepath.Join(q.mem, "moved.md")); err != nil {
				t.Fatal(err)
			}
		}, ""},
		{"a removed file", func() { os.Remove(filepath.Join(q.mem, "part06.md")) }, ""},
		{"MEMORY.md", func() {
			q.write("MEMORY.md", "# Memory\n\n- The build runs with ninja.\n- [Topics](topics.md)\n- [Deep](sub/deep.md)\n")
		}, "The build runs with ninja."},
		{"a sub-folder file", func() {
			os.MkdirAll(filepath.Join(q.mem, "sub"), 0o755)
			q.write("sub/deep.md", "# Deep\n\n- A deep fact, changed.\n")
		}, "A deep fact, changed."},
	} {
		if c.what == "a sub-folder file" {
			// First the file as MEMORY.md's pointer names it.
			os.MkdirAll(filepath.Join(q.mem, "sub"), 0o755)
			q.write("sub/deep.md", "# Deep\n\n- A deep fact.\n")
			q.turn("s1", "Stop")
			q.settle("s1")
		}
		c.change()
		if n := q.untilHanded(1); n != 1 {
			t.Fatalf("%s: not noticed at the next turn", c.what)
		}
		if c.fact != "" {
			if got := q.seen()[c.fact]; got != 1 {
				t.Fatalf("%s: its entry seen in %d sessions, want 1", c.what, got)
			}
		}
		q.settle("s1")
	}
}

// A directory of at most memlist.ChunkFiles memory files has no parts:
// its quiet turns sum it whole, and a rewrite in place is noticed at the
// next turn, as before parts.
func TestQuietNoPartsForASmallDirectory(t *testing.T) {
	q := newQuietProject(t)
	q.front = true
	q.interval = "1000"
	q.turn("s1", "Stop")
	q.settle("s1")
	if b, _ := os.ReadFile(q.quiet); bytes.Contains(b, []byte("\nmemory ")) || bytes.Contains(b, []byte("\nchunk ")) {
		t.Fatalf("a directory of two memory files recorded in parts:\n%s", b)
	}
	for i := range 4 {
		fact := fmt.Sprintf("Invoices are rendered by service %d.", i)
		q.write("topics.md", "# Topics\n\n- "+fact+"\n")
		if n := q.untilHanded(1); n != 1 {
			t.Fatalf("rewrite %d in place not noticed at the next turn", i)
		}
		q.settle("s1")
	}
}

// The parts are hostile input. Lines that do not chain (a part dropped,
// one part, a cookie that breaks the chain, a field that is no number)
// make the copy unusable: the turn is handed over with nothing changed.
// A part whose sum is not the directory's, or parts of another directory,
// are refused, and the listing is summed whole (the check before parts):
// a rewrite in place is noticed at the next turn.
func TestQuietHostileParts(t *testing.T) {
	q := partsProject(t)
	good, err := os.ReadFile(q.quiet)
	if err != nil {
		t.Fatal(err)
	}
	lines := chunkLine.FindAll(good, -1)
	if len(lines) != 6 {
		t.Fatalf("%d parts, want 6", len(lines))
	}
	without := func(i int) []byte { return bytes.Replace(good, lines[i], nil, 1) }
	field := func(line []byte, i int, v string) []byte {
		f := strings.Fields(string(line))
		f[i] = v
		return []byte(strings.Join(f, " ") + "\n")
	}
	replace := func(i int, with []byte) []byte { return bytes.Replace(good, lines[i], with, 1) }
	summed := func(delta int) []byte {
		b := good
		for _, l := range lines {
			f := strings.Fields(string(l))
			var s uint64
			fmt.Sscanf(f[5], "%x", &s)
			b = bytes.Replace(b, l, field(l, 5, fmt.Sprintf("%x", s+uint64(delta))), 1)
		}
		return b
	}
	for _, c := range []struct {
		name string
		b    []byte
	}{
		{"the last part dropped", without(5)},
		{"the first part dropped", without(0)},
		{"one part", chunkLine.ReplaceAll(good, nil)[:0:0]},
		{"a cookie off the chain", replace(2, field(lines[2], 1, "12345"))},
		{"a count that is no number", replace(3, field(lines[3], 3, "x"))},
		{"a part twice", bytes.Replace(good, lines[1], append(append([]byte{}, lines[1]...), lines[1]...), 1)},
		{"no chunk line", chunkLine.ReplaceAll(good, nil)},
	} {
		if len(c.b) == 0 { // one part: the first line alone
			c.b = bytes.Replace(chunkLine.ReplaceAll(good, nil), []byte("\nsession "), append(append([]byte("\n"), lines[0]...), "session "...), 1)
		}
		if err := os.WriteFile(q.quiet, c.b, 0o600); err != nil {
			t.Fatal(err)
		}
		if n := q.untilHanded(1); n != 1 {
			t.Fatalf("%s: the turn was quiet", c.name)
		}
		q.settle("s1")
	}
	// Sums not the directory's, another directory's fingerprint: the part
	// is refused and the listing summed whole, so a rewrite in place is
	// noticed at the next turn, whichever part the turn picks.
	for i := range 6 {
		good, _ = os.ReadFile(q.quiet)
		lines = chunkLine.FindAll(good, -1)
		hostile := bytes.Replace(good, []byte("\nmemory "), []byte("\nmemory 1"), 1)
		if i%2 == 0 {
			hostile = summed(1)
		}
		if err := os.WriteFile(q.quiet, hostile, 0o600); err != nil {
			t.Fatal(err)
		}
		fact := fmt.Sprintf("Hostile round %d.", i)
		q.write(fmt.Sprintf("part%02d.md", 3+i*3), "# Rewritten\n\n- "+fact+"\n")
		if n := q.untilHanded(1); n != 1 {
			t.Fatalf("round %d: a rewrite in place not noticed at the next turn", i)
		}
		q.settle("s1")
	}
}
