package journal

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/store"
)

// pendingOp records an op that stopped before its first write.
func pendingOp(t *testing.T, j *Journal, id, path string) *Op {
	t.Helper()
	op := &Op{ID: id, Kind: "promote", State: Pending, Steps: []Step{{Phase: 1, Path: path, Action: "append", Block: "x"}}}
	if _, _, err := Simulate(j.Places, op, toy); err != nil {
		t.Fatal(err)
	}
	if err := j.save(op, nil); err != nil {
		t.Fatal(err)
	}
	return op
}

// An op verifies only under the key, store and root that signed it; any
// change to its record breaks the MAC; and a refused op is never replayed.
func TestMACBindsOpToKeyStoreAndRoot(t *testing.T) {
	j, p := setup(t)
	a := p.a()
	write(t, a, "a\n")
	op := pendingOp(t, j, "20261101T000000Z-0000000a", a)
	if sc := scan(t, j); len(sc.Ops) != 1 || len(sc.Problems) != 0 {
		t.Fatalf("own op: %+v", sc)
	}

	other := *j
	other.Key = []byte("another user's key, thirty-two b")
	if sc := scan(t, &other); len(sc.Ops) != 0 || len(sc.Problems) != 1 || !errors.Is(sc.Problems[0].Err, ErrNotOurs) {
		t.Fatalf("another key: %+v", sc)
	}
	moved := *j
	moved.Places.Root = filepath.Join(p.dir, "elsewhere")
	if sc := scan(t, &moved); len(sc.Problems) != 1 || !errors.Is(sc.Problems[0].Err, ErrNotOurs) {
		t.Fatalf("another root: %+v", sc)
	}
	noKey := *j
	noKey.Key = nil
	if sc := scan(t, &noKey); len(sc.Problems) != 1 || !errors.Is(sc.Problems[0].Err, ErrNotOurs) {
		t.Fatalf("no key: %+v", sc)
	}

	// Editing the record (a step's text) breaks the MAC.
	op.Steps[0].Block = "attacker line"
	j.Store.Update(func(tx *bolt.Tx) error { return store.Put(tx, store.BucketJournal, op.ID, op) })
	sc := scan(t, j)
	if len(sc.Problems) != 1 || !errors.Is(sc.Problems[0].Err, ErrNotOurs) {
		t.Fatalf("edited record: %+v", sc)
	}
	rec, err := j.Recover()
	if err != nil || len(rec.Resumed) != 0 || len(rec.Problems) != 1 {
		t.Fatalf("recover: %+v %v", rec, err)
	}
	if read(t, a) != "a\n" {
		t.Fatal("a refused op was replayed")
	}
}

// A planted op (no MAC, or a MAC from another key) writing to a file
// outside the places is refused with the path it would have written.
func TestPlantedOpRefusedAndDropped(t *testing.T) {
	j, p := setup(t)
	victim := filepath.Join(p.dir, "home", ".ssh", "authorized_keys")
	os.MkdirAll(filepath.Dir(victim), 0o700)
	write(t, victim, "ssh-ed25519 AAAA mine\n")
	planted := &Op{ID: "20261101T000000Z-0000000b", Kind: "promote", State: Pending,
		Steps: []Step{{Phase: 1, Path: victim, Action: "append", Block: "ssh-ed25519 AAAA attacker"}}}
	j.Store.Update(func(tx *bolt.Tx) error { return store.Put(tx, store.BucketJournal, planted.ID, planted) })

	rec, err := j.Recover()
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Resumed) != 0 || len(rec.Problems) != 1 {
		t.Fatalf("recover: %+v", rec)
	}
	pr := rec.Problems[0]
	if !errors.Is(pr.Err, ErrNotOurs) || pr.Path != victim || pr.Op == nil || pr.Op.ID != planted.ID {
		t.Fatalf("problem = %+v", pr)
	}
	if read(t, victim) != "ssh-ed25519 AAAA mine\n" {
		t.Fatal("the planted op wrote")
	}
	// Kept until dropped; Drop touches no file.
	if sc := scan(t, j); len(sc.Problems) != 1 {
		t.Fatalf("the refused record was not kept: %+v", sc)
	}
	if _, err := j.Drop("20261101T000000Z-ffffffff"); !errors.Is(err, ErrNotAProblem) {
		t.Fatalf("drop of an unknown id: %v", err)
	}
	if _, err := j.Drop(planted.ID); err != nil {
		t.Fatal(err)
	}
	if sc := scan(t, j); len(sc.Problems)+len(sc.Ops) != 0 {
		t.Fatalf("after drop: %+v", sc)
	}
	if read(t, victim) != "ssh-ed25519 AAAA mine\n" {
		t.Fatal("drop wrote")
	}
}

// An op signed by this user whose step no longer resolves into the places
// (the target became a link out of the project) is refused too, naming
// where it would have written.
func TestOwnOpWithStepNowOutsideRefused(t *testing.T) {
	j, p := setup(t)
	a := p.a()
	write(t, a, "a\n")
	op := pendingOp(t, j, "20261101T000000Z-0000000c", a)
	profile := filepath.Join(p.dir, ".profile")
	write(t, profile, "p\n")
	os.Remove(a)
	if err := os.Symlink("../.profile", a); err != nil {
		t.Fatal(err)
	}
	sc := scan(t, j)
	if len(sc.Problems) != 1 || !errors.Is(sc.Problems[0].Err, ErrStepOutside) || sc.Problems[0].Path != profile {
		t.Fatalf("scan: %+v", sc)
	}
	if _, err := j.Recover(); err != nil {
		t.Fatal(err)
	}
	if read(t, profile) != "p\n" {
		t.Fatal("wrote through a link out of the project")
	}
	// With the user's --allow-outside recorded in the op, it is allowed.
	op.AllowOutside = true
	op.Steps[0].Done = false
	if err := j.save(op, nil); err != nil {
		t.Fatal(err)
	}
	if sc := scan(t, j); len(sc.Ops) != 1 {
		t.Fatalf("allow-outside op refused: %+v", sc)
	}
}

// A record that no longer decodes is reported, kept, and dropped only on
// request.
func TestDamagedRecordReportedKeptDropped(t *testing.T) {
	j, _ := setup(t)
	j.Store.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(store.BucketJournal).Put([]byte("20261101T000000Z-0000000d"), []byte(`{"id":"x","steps":[{"phase":"one"`))
	})
	rec, err := j.Recover()
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Problems) != 1 || !errors.Is(rec.Problems[0].Err, ErrDamaged) || rec.Problems[0].Op != nil {
		t.Fatalf("recover: %+v", rec)
	}
	if sc := scan(t, j); len(sc.Problems) != 1 {
		t.Fatal("the damaged record was not kept")
	}
	if _, err := j.Drop("20261101T000000Z-0000000d"); err != nil {
		t.Fatal(err)
	}
	if sc := scan(t, j); len(sc.Problems) != 0 {
		t.Fatal("not dropped")
	}
}

// Saving needs a key and a store id.
func TestSaveNeedsKey(t *testing.T) {
	j, p := setup(t)
	j.Key = nil
	write(t, p.a(), "a\n")
	op := &Op{Kind: "promote", Steps: []Step{{Phase: 1, Path: p.a(), Action: "append", Block: "x"}}}
	if err := j.Run(op); !errors.Is(err, ErrNoKey) {
		t.Fatalf("run without a key: %v", err)
	}
	if read(t, p.a()) != "a\n" {
		t.Fatal("wrote without a record")
	}
}

// An op with no MAC at all (as an intermem from before operations were
// signed recorded them) is refused, and the reason says it is unsigned,
// not only that it is not ours; one with a wrong MAC keeps the generic
// reason.
func TestUnsignedOpSaysSo(t *testing.T) {
	j, p := setup(t)
	a := p.a()
	write(t, a, "a\n")
	op := pendingOp(t, j, "20261101T000000Z-0000000d", a)
	op.MAC = ""
	j.Store.Update(func(tx *bolt.Tx) error { return store.Put(tx, store.BucketJournal, op.ID, op) })
	sc := scan(t, j)
	if len(sc.Ops) != 0 || len(sc.Problems) != 1 {
		t.Fatalf("scan: %+v", sc)
	}
	pr := sc.Problems[0]
	if !errors.Is(pr.Err, ErrUnsigned) || !errors.Is(pr.Err, ErrNotOurs) {
		t.Errorf("err = %v", pr.Err)
	}
	if got := pr.Why(); got != "unsigned: recorded by an intermem from before operations were signed, or planted" {
		t.Errorf("Why() = %q", got)
	}

	op.MAC = "0123"
	j.Store.Update(func(tx *bolt.Tx) error { return store.Put(tx, store.BucketJournal, op.ID, op) })
	pr = scan(t, j).Problems[0]
	if errors.Is(pr.Err, ErrUnsigned) || pr.Why() != "not created by this user's intermem for this project" {
		t.Errorf("a wrong MAC: %v, %q", pr.Err, pr.Why())
	}
}
