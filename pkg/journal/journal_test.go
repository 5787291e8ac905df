package journal

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/confine"
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

// toyKinds are the test's kinds of Op: promote, archive and migrate,
// each ending in its own state; steps are toy's; an undo removes the line
// an append added; no bookkeeping unless commit is set.
type toyKinds struct {
	commit func(tx *bolt.Tx, op *Op) error
}

func (toyKinds) Final(kind string) (State, bool) {
	switch kind {
	case "promote":
		return "pruned", true
	case "archive":
		return "archived", true
	case "migrate":
		return "migrated", true
	}
	return "", false
}

func (toyKinds) Apply(s *Step, cur []byte, exists bool, read Reader) ([]byte, bool, error) {
	return toy(s, cur, exists, read)
}

func (toyKinds) Undo(s *Step, cur []byte, exists bool, read Reader) ([]byte, bool, error) {
	return bytes.Replace(cur, []byte(s.Block+"\n"), nil, 1), exists, nil
}

func (k toyKinds) Commit(tx *bolt.Tx, op *Op) error {
	if k.commit == nil {
		return nil
	}
	return k.commit(tx, op)
}

// proj is a journal test's project: a root with its places, a memory
// directory beside it, and a store.
type proj struct {
	dir, root, mem string
}

// a is a target document, m a memory file.
func (p proj) a() string { return filepath.Join(p.root, "AGENTS.md") }
func (p proj) m() string { return filepath.Join(p.mem, "M.md") }

var testKey = bytes.Repeat([]byte{7}, 32)

func setup(t *testing.T) (*Journal, proj) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p := proj{dir: dir, root: filepath.Join(dir, "proj"), mem: filepath.Join(dir, "mem")}
	for _, d := range []string{p.root, p.mem} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	st, err := store.Open(filepath.Join(p.root, ".intermem", "intermem.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	return &Journal{
		Store: st, StateDir: filepath.Join(p.root, ".intermem"), Kinds: toyKinds{}, Key: testKey,
		Places: confine.Places{Root: p.root, MemoryDir: p.mem},
		Now:    func() time.Time { return now },
	}, p
}

func scan(t *testing.T, j *Journal) *Scan {
	t.Helper()
	var sc *Scan
	if err := j.Store.View(func(tx *bolt.Tx) error {
		var err error
		sc, err = j.Scan(tx)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return sc
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
	j, p := setup(t)
	a, m := p.a(), p.m()
	write(t, a, "a\n")
	write(t, m, "fact\nkeep\n")
	os.Chmod(a, 0o640)
	op := &Op{Kind: "promote", Steps: []Step{
		{Phase: 1, Path: a, Action: "append", Block: "fact"},
		{Phase: 1, Path: a, Action: "append", Block: "second"},
		{Phase: 2, Path: m, Action: "drop", Block: "fact"},
	}}
	contents, exists, err := Simulate(j.Places, op, toy)
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
	if op.State != "pruned" {
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
		if strings.HasSuffix(e.Name(), "-AGENTS.md") && string(b) != "a\n" || strings.HasSuffix(e.Name(), "-M.md") && string(b) != "fact\nkeep\n" {
			t.Errorf("backup %s = %q", e.Name(), b)
		}
		if info, _ := e.Info(); info.Mode().Perm() != 0o600 {
			t.Errorf("backup %s mode %v", e.Name(), info.Mode().Perm())
		}
	}
	if sc := scan(t, j); len(sc.Ops)+len(sc.Problems) != 0 {
		t.Errorf("incomplete after a clean run: %+v", sc)
	}
}

// Simulate and Run refuse a step outside the places before anything is
// recorded or written.
func TestStepOutsidePlacesRefusedBeforeRecording(t *testing.T) {
	j, p := setup(t)
	outside := filepath.Join(p.dir, "victim")
	write(t, outside, "v\n")
	op := &Op{Kind: "promote", Steps: []Step{{Phase: 1, Path: outside, Action: "append", Block: "x"}}}
	if _, _, err := Simulate(j.Places, op, toy); !errors.Is(err, confine.ErrOutside) {
		t.Fatalf("simulate: %v, want ErrOutside", err)
	}
	if err := j.Run(op); !errors.Is(err, ErrConflict) {
		t.Fatalf("run: %v, want ErrConflict", err)
	}
	if read(t, outside) != "v\n" {
		t.Fatal("a file outside the places was written")
	}
}

// Resuming a pending op whose first file was already written (a crash
// between steps) converges without duplicating, and removes its temp file.
func TestResumeIsIdempotent(t *testing.T) {
	j, p := setup(t)
	a := p.a()
	write(t, a, "a\n")
	op := &Op{ID: "20261101T000000Z-00000001", Kind: "archive", State: Pending, Steps: []Step{
		{Phase: 1, Path: a, Action: "append", Block: "x"},
		{Phase: 1, Path: a, Action: "append", Block: "y"},
	}}
	if _, _, err := Simulate(j.Places, op, toy); err != nil {
		t.Fatal(err)
	}
	if err := j.save(op, nil); err != nil {
		t.Fatal(err)
	}
	write(t, a, "a\nx\n") // step 1 happened, step 2 did not
	leftover := filepath.Join(filepath.Dir(a), "."+filepath.Base(a)+".intermem-"+op.ID+"-0123456789abcdef.tmp")
	write(t, leftover, "half-writ")
	rec, err := j.Recover()
	if err != nil || len(rec.Resumed) != 1 || len(rec.Problems) != 0 {
		t.Fatalf("recover: %+v %v", rec, err)
	}
	if got := read(t, a); got != "a\nx\ny\n" {
		t.Fatalf("after recovery A = %q", got)
	}
	if _, err := os.Stat(leftover); !errors.Is(err, os.ErrNotExist) {
		t.Error("temp file left behind")
	}
	// Replaying again changes nothing.
	op.State = Pending
	for i := range op.Steps {
		op.Steps[i].Done = false
	}
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
	j, p := setup(t)
	a := p.a()
	write(t, a, "a\n")
	op := &Op{Kind: "migrate", State: Pending, ID: "20261101T000000Z-00000002", Steps: []Step{{Phase: 1, Path: a, Action: "append", Block: "x"}}}
	Simulate(j.Places, op, toy)
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
	j, p := setup(t)
	a := p.a()
	write(t, a, "a\n")
	op := &Op{Kind: "promote", Steps: []Step{{Phase: 1, Path: a, Action: "fail"}}}
	if err := j.Run(op); !errors.Is(err, ErrConflict) {
		t.Fatalf("run: %v, want ErrConflict", err)
	}
	sc := scan(t, j)
	if len(sc.Ops) != 1 || sc.Ops[0].State != Pending {
		t.Fatalf("incomplete = %+v", sc)
	}
	if read(t, a) != "a\n" {
		t.Fatal("file changed by a failed step")
	}
}

func TestDiscard(t *testing.T) {
	j, p := setup(t)
	a, m := p.a(), p.m()
	write(t, a, "a\n")
	write(t, m, "fact\n")
	op := &Op{Kind: "promote", State: Committed, ID: "20261101T000000Z-00000003", Steps: []Step{
		{Phase: 1, Path: a, Action: "append", Block: "fact", Done: true},
		{Phase: 2, Path: m, Action: "drop", Block: "fact"},
	}}
	Simulate(j.Places, op, toy)
	write(t, a, "a\nfact\n")
	j.save(op, nil)
	if err := j.Discard(op); err != nil {
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
	if err := j.Discard(op2); !errors.Is(err, ErrNotDiscardable) {
		t.Fatalf("discard after pruning: %v", err)
	}
}

// Retention follows the order the store recorded, not op ids: with the
// clock stepping back, every new op's id sorts lowest, and its backup (the
// one apply just printed) must still be kept.
func TestBackupRetentionByCreationOrder(t *testing.T) {
	j, p := setup(t)
	j.KeepBacks = 3
	a := p.a()
	write(t, a, "a\n")
	for i := 0; i < 6; i++ {
		op := &Op{Kind: "migrate", ID: fmt.Sprintf("20261101T00000%dZ-0000000%d", 9-i, i),
			Steps: []Step{{Phase: 1, Path: a, Action: "append", Block: fmt.Sprintf("l%d", i)}}}
		Simulate(j.Places, op, toy)
		if err := j.Run(op); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(j.BackupDir(op.ID)); err != nil {
			t.Fatalf("the backup of the op just run is gone: %v", err)
		}
	}
	ents, _ := os.ReadDir(filepath.Join(j.StateDir, "backups"))
	var kept []string
	for _, e := range ents {
		kept = append(kept, e.Name())
	}
	// The last three made: ids[3], ids[4], ids[5] (which sort first).
	want := "20261101T000004Z-00000005,20261101T000005Z-00000004,20261101T000006Z-00000003"
	if strings.Join(kept, ",") != want {
		t.Fatalf("backups kept: %v, want %s", kept, want)
	}
	// The store forgets the trimmed ones.
	n := 0
	j.Store.View(func(tx *bolt.Tx) error {
		return store.EachRaw(tx, store.BucketBackups, func(string, []byte) error { n++; return nil })
	})
	if n != 3 {
		t.Errorf("backups bucket holds %d records, want 3", n)
	}
}

// Directories the store never recorded (an older intermem's) go first.
func TestBackupRetentionUnrecordedGoFirst(t *testing.T) {
	j, p := setup(t)
	j.KeepBacks = 2
	a := p.a()
	write(t, a, "a\n")
	old := filepath.Join(j.StateDir, "backups", "29991231T235959Z-ffffffff")
	os.MkdirAll(old, 0o700)
	for i := 0; i < 2; i++ {
		op := &Op{Kind: "migrate", Steps: []Step{{Phase: 1, Path: a, Action: "append", Block: fmt.Sprintf("l%d", i)}}}
		Simulate(j.Places, op, toy)
		if err := j.Run(op); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(old); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the unrecorded directory was kept over recorded ones: %v", err)
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

// A memory file that is a link to a file kept elsewhere is one memory
// with it: deleting it deletes the file and the link, and a resume after
// a crash between the two removes the link it left dangling. A link whose
// file the op keeps stays.
func TestDeleteThroughLinkRemovesLink(t *testing.T) {
	j, p := setup(t)
	notes := filepath.Join(p.dir, "notes")
	os.MkdirAll(notes, 0o755)
	real, kept := filepath.Join(notes, "gate.md"), filepath.Join(notes, "kept.md")
	write(t, real, "gate\n")
	write(t, kept, "kept\n")
	link, keptLink := filepath.Join(p.mem, "gate.md"), filepath.Join(p.mem, "kept.md")
	for l, to := range map[string]string{link: real, keptLink: kept} {
		if err := os.Symlink(to, l); err != nil {
			t.Fatal(err)
		}
	}
	op := &Op{ID: "20261101T000000Z-0000000e", Kind: "promote", Steps: []Step{
		{Phase: 2, Path: link, Action: "delete"},
		{Phase: 2, Path: keptLink, Action: "append", Block: "more"},
	}}
	if _, _, err := Simulate(j.Places, op, toy); err != nil {
		t.Fatal(err)
	}
	if err := j.Run(op); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(real); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the file is still there: %v", err)
	}
	if _, err := os.Lstat(link); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the link is still there: %v", err)
	}
	if to, err := os.Readlink(keptLink); err != nil || to != kept || read(t, kept) != "kept\nmore\n" {
		t.Errorf("the kept memory's link: %q %v", to, err)
	}

	// A crash after the delete, before the link went: the resume finishes.
	write(t, real, "gate\n")
	os.Symlink(real, link)
	op2 := &Op{ID: "20261101T000000Z-0000000f", Kind: "promote", State: Pending, Steps: []Step{{Phase: 2, Path: link, Action: "delete"}}}
	if _, _, err := Simulate(j.Places, op2, toy); err != nil {
		t.Fatal(err)
	}
	if err := j.save(op2, nil); err != nil {
		t.Fatal(err)
	}
	os.Remove(real)
	if err := j.Resume(op2); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(link); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the resume left the dangling link: %v", err)
	}
}
