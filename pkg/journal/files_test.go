package journal

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func appendTo(t *testing.T, path, line string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(line); err != nil {
		t.Fatal(err)
	}
}

// A phase writes each file once, however many steps change it.
func TestEachFileWrittenOncePerPhase(t *testing.T) {
	j, p := setup(t)
	m := p.m()
	var body strings.Builder
	var steps []Step
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&body, "fact %d\n", i)
		steps = append(steps, Step{Phase: 2, Path: m, Action: "drop", Block: fmt.Sprintf("fact %d", i)})
	}
	write(t, m, body.String()+"keep\n")
	swaps := map[string]int{}
	testHook = func(point, real string) {
		if point == "swap" {
			swaps[real]++
		}
	}
	defer func() { testHook = nil }()
	op := &Op{Kind: "promote", Steps: steps}
	Simulate(j.Places, op, toy)
	if err := j.Run(op); err != nil {
		t.Fatal(err)
	}
	if read(t, m) != "keep\n" {
		t.Fatalf("M = %q", read(t, m))
	}
	if swaps[m] != 1 {
		t.Fatalf("M was replaced %d times, want once", swaps[m])
	}
}

// Lines appended between the phase's read and the compare are kept
// without rewriting the file again: the rename goes ahead and the appended
// bytes follow into the new file.
func TestAppendBeforeCompareCarried(t *testing.T) {
	j, p := setup(t)
	m := p.m()
	write(t, m, "fact\nkeep\n")
	swaps := 0
	testHook = func(point, real string) {
		switch point {
		case "compare":
			appendTo(t, real, "another session\n")
		case "swap":
			swaps++
		}
	}
	defer func() { testHook = nil }()
	op := &Op{Kind: "promote", Steps: []Step{{Phase: 2, Path: m, Action: "drop", Block: "fact"}}}
	Simulate(j.Places, op, toy)
	if err := j.Run(op); err != nil {
		t.Fatal(err)
	}
	if got, want := read(t, m), "keep\nanother session\n"; got != want {
		t.Fatalf("M = %q, want %q", got, want)
	}
	if swaps != 1 {
		t.Fatalf("%d renames, want 1", swaps)
	}
}

// A change that is not an append (the file rewritten) fails the compare:
// the file is read again and the steps re-applied to what it holds.
func TestCompareAndSwapReappliesOnRewrite(t *testing.T) {
	j, p := setup(t)
	m := p.m()
	write(t, m, "fact\nkeep\n")
	n := 0
	testHook = func(point, real string) {
		if point == "compare" && n < 3 {
			n++
			if err := os.WriteFile(real, []byte(fmt.Sprintf("fact\nedit %d\n", n)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	defer func() { testHook = nil }()
	op := &Op{Kind: "promote", Steps: []Step{{Phase: 2, Path: m, Action: "drop", Block: "fact"}}}
	Simulate(j.Places, op, toy)
	if err := j.Run(op); err != nil {
		t.Fatal(err)
	}
	if got, want := read(t, m), "edit 3\n"; got != want {
		t.Fatalf("M = %q, want %q", got, want)
	}
}

// A file that never stops changing stops the op cleanly: nothing written
// over the other program's bytes, the op left to resume.
func TestCompareAndSwapGivesUp(t *testing.T) {
	j, p := setup(t)
	m := p.m()
	write(t, m, "fact\nkeep\n")
	n := 0
	testHook = func(point, real string) {
		if point == "compare" {
			n++
			if err := os.WriteFile(real, []byte(fmt.Sprintf("fact\nedit %d\n", n)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	op := &Op{Kind: "promote", Steps: []Step{{Phase: 2, Path: m, Action: "drop", Block: "fact"}}}
	Simulate(j.Places, op, toy)
	err := j.Run(op)
	testHook = nil
	if !errors.Is(err, ErrContended) {
		t.Fatalf("run: %v, want ErrContended", err)
	}
	if got, want := read(t, m), fmt.Sprintf("fact\nedit %d\n", maxAttempts); got != want {
		t.Fatalf("M = %q, want %q", got, want)
	}
	sc := scan(t, j)
	if len(sc.Ops) != 1 || sc.Ops[0].State != Committed {
		t.Fatalf("op not left resumable: %+v", sc)
	}
	if _, err := j.Recover(); err != nil {
		t.Fatal(err)
	}
	if got, want := read(t, m), fmt.Sprintf("edit %d\n", maxAttempts); got != want {
		t.Fatalf("after resume M = %q, want %q", got, want)
	}
}

// Bytes an O_APPEND writer puts into the old file after the compare, just
// before the rename, are carried into the new file.
func TestLateAppendCarriedOver(t *testing.T) {
	j, p := setup(t)
	m := p.m()
	write(t, m, "fact\nkeep\n")
	testHook = func(point, real string) {
		if point == "swap" {
			appendTo(t, real, "late\n")
		}
	}
	defer func() { testHook = nil }()
	op := &Op{Kind: "promote", Steps: []Step{{Phase: 2, Path: m, Action: "drop", Block: "fact"}}}
	Simulate(j.Places, op, toy)
	if err := j.Run(op); err != nil {
		t.Fatal(err)
	}
	if got, want := read(t, m), "keep\nlate\n"; got != want {
		t.Fatalf("M = %q, want %q", got, want)
	}
}

// A late rewrite in place (not an append) replaces ours when nothing else
// changed the new file, and the steps are applied to it.
func TestLateRewriteTakenWhole(t *testing.T) {
	j, p := setup(t)
	m := p.m()
	write(t, m, "fact\nkeep\n")
	done := false
	testHook = func(point, real string) {
		if point == "swap" && !done {
			done = true
			if err := os.WriteFile(real, []byte("fact\nrewritten\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	defer func() { testHook = nil }()
	op := &Op{Kind: "promote", Steps: []Step{{Phase: 2, Path: m, Action: "drop", Block: "fact"}}}
	Simulate(j.Places, op, toy)
	if err := j.Run(op); err != nil {
		t.Fatal(err)
	}
	if got, want := read(t, m), "rewritten\n"; got != want {
		t.Fatalf("M = %q, want %q", got, want)
	}
}

// A memory file that is a symlink (into a dotfiles repository) is written
// through: the link stays a link, the real file changes, no temp is left.
func TestWritesThroughSymlink(t *testing.T) {
	j, p := setup(t)
	dot := filepath.Join(p.dir, "dotfiles", "MEMORY.md")
	os.MkdirAll(filepath.Dir(dot), 0o755)
	write(t, dot, "fact\nkeep\n")
	m := filepath.Join(p.mem, "MEMORY.md")
	if err := os.Symlink(dot, m); err != nil {
		t.Fatal(err)
	}
	op := &Op{Kind: "promote", Steps: []Step{
		{Phase: 1, Path: p.a(), Action: "append", Block: "fact"},
		{Phase: 2, Path: m, Action: "drop", Block: "fact"},
	}}
	contents, _, err := Simulate(j.Places, op, toy)
	if err != nil {
		t.Fatal(err)
	}
	if string(contents[dot]) != "keep\n" {
		t.Fatalf("simulation not keyed by the real path: %q", contents)
	}
	if err := j.Run(op); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(m); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("MEMORY.md is no longer a link: %v %v", st, err)
	}
	if read(t, dot) != "keep\n" {
		t.Fatalf("dotfiles copy = %q", read(t, dot))
	}
	if ents, _ := os.ReadDir(filepath.Dir(dot)); len(ents) != 1 {
		t.Fatalf("left beside the real file: %v", ents)
	}
	// The backup holds the real file's bytes.
	ents, _ := os.ReadDir(j.BackupDir(op.ID))
	found := false
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join(j.BackupDir(op.ID), e.Name()))
		found = found || bytes.Equal(b, []byte("fact\nkeep\n"))
	}
	if !found {
		t.Fatalf("no backup of MEMORY.md: %v", ents)
	}
}

// Two names of one file (CLAUDE.md linked to AGENTS.md) are one file: both
// names' steps land, in order.
func TestTwoNamesOneFile(t *testing.T) {
	j, p := setup(t)
	a := p.a()
	write(t, a, "a\n")
	c := filepath.Join(p.root, "CLAUDE.md")
	os.Symlink("AGENTS.md", c)
	op := &Op{Kind: "migrate", Steps: []Step{
		{Phase: 1, Path: a, Action: "append", Block: "one"},
		{Phase: 1, Path: c, Action: "append", Block: "two"},
	}}
	Simulate(j.Places, op, toy)
	if err := j.Run(op); err != nil {
		t.Fatal(err)
	}
	if got := read(t, a); got != "a\none\ntwo\n" {
		t.Fatalf("AGENTS.md = %q", got)
	}
}

// A link planted where an Op's temporary file would go (the name an
// older intermem derived from the op id alone) is neither written through
// nor renamed into place: temporary files are created O_EXCL|O_NOFOLLOW
// under a name with random digits.
func TestPlantedTempLinkNotFollowed(t *testing.T) {
	j, p := setup(t)
	a := p.a()
	write(t, a, "a\n")
	victim := filepath.Join(p.dir, "victim")
	write(t, victim, "mine\n")
	op := &Op{ID: "20261101T000000Z-0000000c", Kind: "promote", Steps: []Step{{Phase: 1, Path: a, Action: "append", Block: "x"}}}
	if err := os.Symlink(victim, filepath.Join(p.root, ".AGENTS.md.intermem-"+op.ID+".tmp")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Simulate(j.Places, op, toy); err != nil {
		t.Fatal(err)
	}
	if err := j.Run(op); err != nil {
		t.Fatal(err)
	}
	if got := read(t, victim); got != "mine\n" {
		t.Fatalf("the planted link's target was written: %q", got)
	}
	st, err := os.Lstat(a)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Mode().IsRegular() || read(t, a) != "a\nx\n" {
		t.Fatalf("AGENTS.md is %v holding %q, want a regular file holding %q", st.Mode(), read(t, a), "a\nx\n")
	}
}
