package rendercache_test

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/intermem/intermem/pkg/rendercache"
)

// modes are the ways Load checks a file's facts: in sequence, streamed;
// on two goroutines, the records cut into units of 32, of 2 (every group
// of the test tree shared out, so that units start inside a group and
// open its directory themselves), and of 3 all checked by the helper.
var modes = []struct {
	name string
	min  int64
	unit int32
	main bool
}{
	{"sequential", math.MaxInt64, 32, true},
	{"two goroutines", 0, 32, true},
	{"two goroutines, units of 2", 0, 2, true},
	{"the helper alone, units of 3", 0, 3, false},
}

// inModes runs test in each of the modes.
func inModes(t *testing.T, test func(t *testing.T)) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			defer rendercache.Share(m.min, m.unit, m.main)()
			test(t)
		})
	}
}

// project is a tree of groups directories of perDir files each, every
// file stat'ed, and one fact of each other kind: the cache file's bytes
// and where it is to be written.
func project(tb testing.TB, groups, perDir int) (root string, b []byte) {
	tb.Helper()
	root, err := filepath.EvalSymlinks(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	d := rendercache.NewDeps()
	for g := range groups {
		for f := range perDir {
			p := filepath.Join(root, "src", fmt.Sprintf("d%02d", g), fmt.Sprintf("file%03d.go", f))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				tb.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("package d\n"), 0o644); err != nil {
				tb.Fatal(err)
			}
			if g == 0 {
				d.Lstat(p) // the memory files are lstat'ed
			} else {
				d.Stat(p)
			}
		}
	}
	os.MkdirAll(filepath.Join(root, ".git"), 0o755)
	os.WriteFile(filepath.Join(root, ".git/HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	d.Stat(filepath.Join(root, "src/d00"))
	d.Stat(filepath.Join(root, "gone/a.go"))
	d.ReadDir(filepath.Join(root, "src"))
	d.Names(filepath.Join(root, "src/d00"))
	d.EvalSymlinks(filepath.Join(root, "src/d01"))
	d.ReadHead(filepath.Join(root, ".git/HEAD"))
	text := strings.Repeat("- a remembered fact, as the rendering gives it\n", 400)
	b = rendercache.Encode(key, time.Time{}, rendercache.SessionRule{}, d, text)
	if b == nil {
		tb.Fatal("Encode refused the project's facts")
	}
	p := filepath.Join(root, ".intermem", rendercache.Name)
	os.MkdirAll(filepath.Dir(p), 0o700)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		tb.Fatal(err)
	}
	return root, b
}

// A fact that fails in any group, whichever goroutine checks it, makes a
// miss; the helper's share alone too.
func TestAFailedFactInAnyShareIsAMiss(t *testing.T) {
	inModes(t, func(t *testing.T) {
		for _, g := range []int{0, 3, 6} {
			root, _ := project(t, 7, 10)
			p := filepath.Join(root, ".intermem", rendercache.Name)
			if _, ok := rendercache.Load(p, key, "s", now); !ok {
				t.Fatal("unchanged: a miss")
			}
			time.Sleep(5 * time.Millisecond)
			os.WriteFile(filepath.Join(root, "src", fmt.Sprintf("d%02d", g), "file009.go"), []byte("package d // edited\n"), 0o644)
			if _, ok := rendercache.Load(p, key, "s", now); ok {
				t.Errorf("the last file of group %d edited: a hit", g)
			}
		}
	})
}

// A malformed record anywhere is a miss: each record's kind made one
// that is none, each name made a path.
func TestAMalformedRecordAnywhereIsAMiss(t *testing.T) {
	root, b := project(t, 5, 8)
	p := filepath.Join(root, ".intermem", rendercache.Name)
	starts := recordStarts(t, b)
	if len(starts) < 40 {
		t.Fatalf("%d records", len(starts))
	}
	inModes(t, func(t *testing.T) {
		load := func(b []byte) bool {
			os.Remove(p)
			os.WriteFile(p, b, 0o600)
			_, ok := rendercache.Load(p, key, "s", now)
			return ok
		}
		if !load(b) {
			t.Fatal("the valid file: a miss")
		}
		for _, at := range starts {
			bad := bytes.Clone(b)
			bad[at] = 'x'
			if load(bad) {
				t.Errorf("an unknown kind at %d: a hit", at)
			}
			if b[at] == 's' || b[at] == 'l' {
				bad := slicesInsert(b, at+1, "a/")
				if load(bad) {
					t.Errorf("a name that is a path at %d (%q): a hit", at, b[at:at+20])
				}
			}
		}
	})
}

// recordStarts is the offset of each record of a cache file, found by
// hand: after the deps line, a 'g' record has one field, any other two.
func recordStarts(t *testing.T, b []byte) []int {
	t.Helper()
	i := bytes.Index(b, []byte("\ndeps "))
	j := i + 6 + bytes.IndexByte(b[i+6:], '\n')
	n, err := strconv.Atoi(string(b[i+6 : j]))
	if err != nil {
		t.Fatal(err)
	}
	at := j + 1
	var starts []int
	for range n {
		starts = append(starts, at)
		fields := 2
		if b[at] == 'g' {
			fields = 1
		}
		for range fields {
			at += bytes.IndexByte(b[at:], 0) + 1
		}
	}
	if string(b[at:at+6]) != "\ntext " {
		t.Fatalf("the records end at %q", b[at:at+6])
	}
	return starts
}

func slicesInsert(b []byte, at int, s string) []byte {
	return append(append(append([]byte{}, b[:at]...), s...), b[at:]...)
}

// BenchmarkLoad is a hit on a cache file like a 20,000-entry project's
// (about 650 facts: stats of files in 36 directories) and on smaller
// ones, checked in sequence, on two goroutines, and by the helper alone
// (the cost of reading the file whole, decoding it first and handing it
// over, without the second CPU's work).
func BenchmarkLoad(b *testing.B) {
	for _, size := range []struct{ groups, perDir int }{{36, 18}, {16, 12}, {10, 10}, {6, 10}} {
		root, file := project(b, size.groups, size.perDir)
		p := filepath.Join(root, ".intermem", rendercache.Name)
		for _, m := range []struct {
			name string
			min  int64
		}{{"sequential", math.MaxInt64}, {"two", 0}, {"helper-alone", -1}} {
			b.Run(fmt.Sprintf("facts=%d/%s", size.groups*size.perDir, m.name), func(b *testing.B) {
				defer rendercache.Share(max(m.min, 0), rendercache.UnitMax(), m.min >= 0)()
				b.SetBytes(int64(len(file)))
				for b.Loop() {
					if _, ok := rendercache.Load(p, key, "s", now); !ok {
						b.Fatal("a miss")
					}
				}
			})
		}
	}
}
