package journal

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/store"
)

// A toy applier: "append" adds Block as a line unless present (idempotent
// by content), "drop" removes that line, "delete" deletes the file.
func toy(s *Step, cur []byte, exists bool, read Reader) ([]byte, bool, error) {
	line := []byte(s.Block + "\n")
	switch s.Action {
	case "append":
		if bytes.Contains(cur, line) {
			return cur, true, nil
		}
		return append(append([]byte{}, cur...), line...), true, nil
	case "drop":
		return bytes.Replace(cur, line, nil, 1), exists, nil
	case "delete":
		return nil, false, nil
	case "fail":
		return nil, false, errors.New("boom")
	}
	return cur, exists, nil
}

func setup(t *testing.T) (*Journal, string) {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(dir, ".intermem", "intermem.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	return &Journal{Store: st, StateDir: filepath.Join(dir, ".intermem"), Apply: toy, Now: func() time.Time { return now }}, dir
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o640); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSimulateRunAndBackups(t *testing.T) {
	j, dir := setup(t)
	a, m := filepath.Join(dir, "A.md"), filepath.Join(dir, "M.md")
	write(t, a, "a\n")
	write(t, m, "fact\nkeep\n")
	op := &Op{Kind: "promote", Steps: []Step{
		{Phase: 1, Path: a, Action: "append", Block: "fact"},
		{Phase: 1, Path: a, Action: "append", Block: "second"},
		{Phase: 2, Path: m, Action: "drop", Block: "fact"},
	}}
	contents, exists, err := Simulate(op, toy)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(contents[a]); got != "a\nfact\nsecond\n" || !exists[a] {
		t.Fatalf("simulated A = %q", got)
	}
	if op.Steps[0].Before != Hash([]byte("a\n")) || op.Steps[1].Before != op.Steps[0].After {
		t.Fatal("step hashes do not chain")
	}
	if read(t, a) != "a\n" {
		t.Fatal("Simulate wrote to disk")
	}
	if err := j.Run(op); err != nil {
		t.Fatal(err)
	}
	if read(t, a) != "a\nfact\nsecond\n" || read(t, m) != "keep\n" {
		t.Fatalf("after run: A=%q M=%q", read(t, a), read(t, m))
	}
	if op.State != Pruned {
		t.Fatalf("state %s, want pruned", op.State)
	}
	// Modes are kept, backups hold the exact before bytes, owner-only.
	if st, _ := os.Stat(a); st.Mode().Perm() != 0o640 {
		t.Errorf("mode of A changed to %v", st.Mode().Perm())
	}
	bdir := j.BackupDir(op.ID)
	ents, _ := os.ReadDir(bdir)
	if len(ents) != 2 {
		t.Fatalf("backups: %v", ents)
	}
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join(bdir, e.Name()))
		if strings.HasSuffix(e.Name(), "-A.md") && string(b) != "a\n" || strings.HasSuffix(e.Name(), "-M.md") && string(b) != "fact\nkeep\n" {
			t.Errorf("backup %s = %q", e.Name(), b)
		}
		if info, _ := e.Info(); info.Mode().Perm() != 0o600 {
			t.Errorf("backup %s mode %v", e.Name(), info.Mode().Perm())
		}
	}
	var incomplete []*Op
	j.Store.View(func(tx *bolt.Tx) error { incomplete, _ = Incomplete(tx); return nil })
	if len(incomplete) != 0 {
		t.Errorf("incomplete after a clean run: %v", incomplete)
	}
}

// Resuming a pending op whose first file was already written (a crash
// between steps) converges without duplicating, and removes its temp file.
func TestResumeIsIdempotent(t *testing.T) {
	j, dir := setup(t)
	a := filepath.Join(dir, "A.md")
	write(t, a, "a\n")
	op := &Op{ID: "20261101T000000Z-00000001", Kind: "archive", State: Pending, Steps: []Step{
		{Phase: 1, Path: a, Action: "append", Block: "x"},
		{Phase: 1, Path: a, Action: "append", Block: "y"},
	}}
	if _, _, err := Simulate(op, toy); err != nil {
		t.Fatal(err)
	}
	if err := j.save(op, nil); err != nil {
		t.Fatal(err)
	}
	write(t, a, "a\nx\n") // step 1 happened, step 2 did not
	write(t, tempName(a, op.ID), "half-writ")
	ops, err := j.Recover()
	if err != nil || len(ops) != 1 {
		t.Fatalf("recover: %v %v", ops, err)
	}
	if got := read(t, a); got != "a\nx\ny\n" {
		t.Fatalf("after recovery A = %q", got)
	}
	if _, err := os.Stat(tempName(a, op.ID)); !errors.Is(err, os.ErrNotExist) {
		t.Error("temp file left behind")
	}
	// Replaying again changes nothing.
	op.State = Pending
	if err := j.Resume(op); err != nil {
		t.Fatal(err)
	}
	if got := read(t, a); got != "a\nx\ny\n" {
		t.Fatalf("second replay A = %q", got)
	}
}

// A user edit between the crash and recovery does not defeat the step:
// the transformation applies to the current content.
func TestResumeAfterConcurrentEdit(t *testing.T) {
	j, dir := setup(t)
	a := filepath.Join(dir, "A.md")
	write(t, a, "a\n")
	op := &Op{Kind: "migrate", State: Pending, ID: "20261101T000000Z-00000002", Steps: []Step{{Phase: 1, Path: a, Action: "append", Block: "x"}}}
	Simulate(op, toy)
	j.save(op, nil)
	write(t, a, "a\nuser line\n")
	if _, err := j.Recover(); err != nil {
		t.Fatal(err)
	}
	if got := read(t, a); got != "a\nuser line\nx\n" {
		t.Fatalf("A = %q", got)
	}
}

func TestFailingStepLeavesOpIncomplete(t *testing.T) {
	j, dir := setup(t)
	a := filepath.Join(dir, "A.md")
	write(t, a, "a\n")
	op := &Op{Kind: "promote", Steps: []Step{{Phase: 1, Path: a, Action: "fail"}}}
	if err := j.Run(op); !errors.Is(err, ErrConflict) {
		t.Fatalf("run: %v, want ErrConflict", err)
	}
	var incomplete []*Op
	j.Store.View(func(tx *bolt.Tx) error { incomplete, _ = Incomplete(tx); return nil })
	if len(incomplete) != 1 || incomplete[0].State != Pending {
		t.Fatalf("incomplete = %v", incomplete)
	}
	if read(t, a) != "a\n" {
		t.Fatal("file changed by a failed step")
	}
}

func TestDiscard(t *testing.T) {
	j, dir := setup(t)
	a, m := filepath.Join(dir, "A.md"), filepath.Join(dir, "M.md")
	write(t, a, "a\n")
	write(t, m, "fact\n")
	undo := func(s *Step, cur []byte, exists bool, read Reader) ([]byte, bool, error) {
		return bytes.Replace(cur, []byte(s.Block+"\n"), nil, 1), exists, nil
	}
	op := &Op{Kind: "promote", State: Committed, ID: "20261101T000000Z-00000003", Steps: []Step{
		{Phase: 1, Path: a, Action: "append", Block: "fact", Done: true},
		{Phase: 2, Path: m, Action: "drop", Block: "fact"},
	}}
	Simulate(op, toy)
	write(t, a, "a\nfact\n")
	j.save(op, nil)
	if err := j.Discard(op, undo); err != nil {
		t.Fatal(err)
	}
	if read(t, a) != "a\n" || read(t, m) != "fact\n" {
		t.Fatalf("after discard A=%q M=%q", read(t, a), read(t, m))
	}
	if op.State != Discarded {
		t.Fatalf("state %s", op.State)
	}
	// Once memory was pruned, discarding is refused.
	op2 := &Op{Kind: "promote", State: Committed, ID: "20261101T000000Z-00000004", Steps: []Step{
		{Phase: 1, Path: a, Action: "append", Block: "f2", Done: true},
		{Phase: 2, Path: m, Action: "drop", Block: "fact", Done: true},
	}}
	if err := j.Discard(op2, undo); !errors.Is(err, ErrNotDiscardable) {
		t.Fatalf("discard after pruning: %v", err)
	}
}

func TestBackupRetention(t *testing.T) {
	j, dir := setup(t)
	j.KeepBacks = 3
	a := filepath.Join(dir, "A.md")
	write(t, a, "a\n")
	for i := 0; i < 6; i++ {
		op := &Op{Kind: "migrate", ID: "20261101T00000" + string(rune('0'+i)) + "Z-0000000" + string(rune('0'+i)),
			Steps: []Step{{Phase: 1, Path: a, Action: "append", Block: "l" + string(rune('0'+i))}}}
		Simulate(op, toy)
		if err := j.Run(op); err != nil {
			t.Fatal(err)
		}
	}
	ents, _ := os.ReadDir(filepath.Join(j.StateDir, "backups"))
	if len(ents) != 3 || ents[0].Name() != "20261101T000003Z-00000003" {
		t.Fatalf("backups kept: %v", ents)
	}
}

func TestLockExcludes(t *testing.T) {
	dir := t.TempDir()
	unlock, err := Lock(dir, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Lock(dir, 50*time.Millisecond); !errors.Is(err, ErrBusy) {
		t.Fatalf("second lock: %v, want ErrBusy", err)
	}
	unlock()
	unlock2, err := Lock(dir, time.Second)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	unlock2()
}
