package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// damagedStore makes a store with many sessions (a bucket of pages of its
// own), a journal record, and then overwrites the sessions bucket's root
// page: the store still opens, and a transaction that reads the sessions
// meets the damage (bbolt's "Page expected to be…" assertion). It returns
// the path and the store id.
func damagedStore(t *testing.T) (path, id string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "intermem.db")
	s, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	var root uint64
	err = s.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(BucketSessions)
		for i := range 500 {
			if err := b.Put([]byte(fmt.Sprintf("session-%04d", i)), []byte(strings.Repeat("x", 64))); err != nil {
				return err
			}
		}
		id = ID(tx)
		return tx.Bucket(BucketJournal).Put([]byte("op-1"), []byte(`{"op":"in flight"}`))
	})
	if err != nil {
		t.Fatal(err)
	}
	s.View(func(tx *bolt.Tx) error {
		root = uint64(tx.Bucket(BucketSessions).Root())
		return nil
	})
	s.Close()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte(strings.Repeat("\xff", 4096)), int64(root)*int64(os.Getpagesize())); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return path, id
}

func readSessions(tx *bolt.Tx) error {
	return tx.Bucket(BucketSessions).ForEach(func(k, v []byte) error { return nil })
}

// TestDamageInATransactionIsMovedAside: a writer whose transaction meets
// damaged pages gets ErrCorrupt, and its Close keeps the file aside and
// rebuilds the store, with one log line; the journal's record and the
// store id are carried over, so an operation in flight stays recoverable
// and bound to its store. Before, the store stayed as it was: every hook
// failed on it for good.
func TestDamageInATransactionIsMovedAside(t *testing.T) {
	path, id := damagedStore(t)
	before, _ := os.ReadFile(path)
	var logged []string
	now := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	s, err := Open(path, Options{Now: now, Logf: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if err := s.View(readSessions); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("reading damaged pages: %v, want ErrCorrupt", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if aside, err := s.Rebuilt(); aside != "intermem.db.corrupt-20261127T080000Z" || err != nil {
		t.Errorf("Rebuilt() = %q, %v; want the kept file's name", aside, err)
	}
	got, err := os.ReadFile(path + ".corrupt-20261127T080000Z")
	if err != nil {
		t.Fatalf("the damaged file is not kept: %v", err)
	}
	if string(got) != string(before) {
		t.Error("the kept file differs from the damaged one")
	}
	if len(logged) != 1 || !strings.Contains(logged[0], "moved aside to intermem.db.corrupt-20261127T080000Z") || !strings.Contains(logged[0], "1 operation(s) carried over") {
		t.Errorf("log = %q, want one line saying it was moved aside with the journal carried over", logged)
	}
	r, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("rebuilt store: %v", err)
	}
	defer r.Close()
	err = r.View(func(tx *bolt.Tx) error {
		if got := ID(tx); got != id {
			t.Errorf("store id %q, want %q (the journal's ops are bound to it)", got, id)
		}
		if v := tx.Bucket(BucketJournal).Get([]byte("op-1")); string(v) != `{"op":"in flight"}` {
			t.Errorf("journal record = %q, want it carried over", v)
		}
		return readSessions(tx)
	})
	if err != nil {
		t.Fatalf("rebuilt store: %v", err)
	}
}

// TestReaderLeavesDamageInPlace: a read-only store never moves the file;
// and a writer whose path another process has already rebuilt leaves the
// new store alone.
func TestReaderLeavesDamageInPlace(t *testing.T) {
	path, _ := damagedStore(t)
	r, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.View(readSessions); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("reading damaged pages: %v, want ErrCorrupt", err)
	}
	r.Close()
	if m, _ := filepath.Glob(path + ".corrupt-*"); len(m) != 0 {
		t.Fatalf("a reader moved the store aside: %v", m)
	}

	w, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.View(readSessions); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("reading damaged pages: %v, want ErrCorrupt", err)
	}
	// Another process rebuilt it meanwhile.
	os.Rename(path, path+".elsewhere")
	other, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	other.Close()
	w.Close()
	if m, _ := filepath.Glob(path + ".corrupt-*"); len(m) != 0 {
		t.Fatalf("the store another process rebuilt was moved aside: %v", m)
	}
	if aside, err := w.Rebuilt(); aside != "" || err != nil {
		t.Errorf("Rebuilt() = %q, %v for a store another process rebuilt; want \"\", nil", aside, err)
	}
}

// TestRebuildFailureIsReported: when the new store cannot be made, Close
// leaves the damaged store in place and Rebuilt says why, so that no
// command claims a rebuild that did not happen.
func TestRebuildFailureIsReported(t *testing.T) {
	path, _ := damagedStore(t)
	// The new store's temporary name is taken by a directory that cannot
	// be removed.
	tmp := fmt.Sprintf("%s.new-%d", path, os.Getpid())
	if err := os.MkdirAll(filepath.Join(tmp, "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	w, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.View(readSessions); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("reading damaged pages: %v, want ErrCorrupt", err)
	}
	w.Close()
	if aside, err := w.Rebuilt(); aside != "" || err == nil {
		t.Errorf("Rebuilt() = %q, %v; want the failure", aside, err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("the damaged store is not left in place")
	}
}

// TestPanicInACallbackKeepsTheStore: a callback's own panic (a nil map
// written, an index out of range, a parser's panic on hostile text) is
// recovered as an ordinary error, not damage: the writer's Close leaves
// the store, and its data, in place, and keeps no copy aside. Before, any
// panic was ErrCorrupt and the store was rebuilt empty at every Close.
func TestPanicInACallbackKeepsTheStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "intermem.db")
	s, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(BucketSessions).Put([]byte("session-1"), []byte("kept"))
	}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	for _, c := range []struct {
		name string
		fn   func(tx *bolt.Tx) error
	}{
		{"nil map", func(tx *bolt.Tx) error {
			var m map[string]int
			m["x"] = 1
			return nil
		}},
		{"index", func(tx *bolt.Tx) error {
			var b []byte
			i := len(tx.Bucket(BucketSessions).Get([]byte("session-1")))
			_ = b[i]
			return nil
		}},
		{"value", func(tx *bolt.Tx) error { panic("a parser gave up") }},
		// A misuse that panics inside bbolt's own code on a sound store:
		// suspected, then cleared by the consistency check at Close.
		{"bbolt", func(tx *bolt.Tx) error {
			var b *bolt.Bucket
			return b.Put([]byte("k"), []byte("v"))
		}},
	} {
		var logged []string
		w, err := Open(path, Options{Logf: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }})
		if err != nil {
			t.Fatal(err)
		}
		err = w.Update(c.fn)
		if err == nil {
			t.Fatalf("%s: a panicking callback returned no error", c.name)
		}
		if c.name != "bbolt" && (errors.Is(err, ErrCorrupt) || !errors.Is(err, ErrPanicked) || w.Damaged() != nil) {
			t.Errorf("%s: %v (damaged %v), want an ordinary error", c.name, err, w.Damaged())
		}
		if err := w.View(c.fn); err == nil {
			t.Fatalf("%s: a panicking read callback returned no error", c.name)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if c.name == "bbolt" && (w.Damaged() == nil || len(logged) != 1 || !strings.Contains(logged[0], "finds the store sound")) {
			t.Errorf("bbolt: damaged %v, log %q: want it suspected, then cleared by the check", w.Damaged(), logged)
		}
		if m, _ := filepath.Glob(path + ".corrupt-*"); len(m) != 0 {
			t.Fatalf("%s: a callback's panic moved the store aside: %v (log %q)", c.name, m, logged)
		}
		r, err := Open(path, Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		err = r.View(func(tx *bolt.Tx) error {
			if v := tx.Bucket(BucketSessions).Get([]byte("session-1")); string(v) != "kept" {
				t.Errorf("%s: session-1 = %q after the panic, want it kept", c.name, v)
			}
			return nil
		})
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestMoveAsideWithoutHardLinks: on a filesystem without hard links (link
// fails with EPERM, as on vfat), a store is still created, a file that
// does not open is still moved aside and rebuilt, and so is one a
// transaction found damaged: the file is renamed aside instead. Before,
// Open failed with "moving it aside failed" on every hook and command.
func TestMoveAsideWithoutHardLinks(t *testing.T) {
	link = func(oldname, newname string) error {
		return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: syscall.EPERM}
	}
	t.Cleanup(func() { link = os.Link })
	now := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)

	path := filepath.Join(t.TempDir(), "intermem.db")
	s, err := Open(path, Options{Now: now, NoSync: true})
	if err != nil {
		t.Fatalf("create without hard links: %v", err)
	}
	s.Close()

	garbage := []byte(strings.Repeat("not a store ", 1000))
	if err := os.WriteFile(path, garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err = Open(path, Options{Now: now, NoSync: true})
	if err != nil {
		t.Fatalf("open of a file that does not open, without hard links: %v", err)
	}
	s.Close()
	if got, err := os.ReadFile(path + ".corrupt-20261127T090000Z"); err != nil || string(got) != string(garbage) {
		t.Fatalf("the unusable file is not kept as it was: %v", err)
	}

	// Twice in the same second: the second copy takes the next name.
	for _, want := range []string{".corrupt-20261127T090000Z-1", ".corrupt-20261127T090000Z-2"} {
		dpath, id := damagedStore(t)
		os.Rename(dpath, path)
		before, _ := os.ReadFile(path)
		w, err := Open(path, Options{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.View(readSessions); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("reading damaged pages: %v, want ErrCorrupt", err)
		}
		w.Close()
		if got, err := os.ReadFile(path + want); err != nil || string(got) != string(before) {
			t.Fatalf("the damaged file is not kept as %s: %v", want, err)
		}
		r, err := Open(path, Options{ReadOnly: true})
		if err != nil {
			t.Fatalf("rebuilt store: %v", err)
		}
		err = r.View(func(tx *bolt.Tx) error {
			if got := ID(tx); got != id {
				t.Errorf("store id %q, want %q", got, id)
			}
			return readSessions(tx)
		})
		r.Close()
		if err != nil {
			t.Fatalf("rebuilt store: %v", err)
		}
	}
}

// TestKeptCopiesAreBounded: a rebuild leaves the newest KeepAside kept
// files, the one it made among them, and says which it removed; a file
// beside the store that keepAside did not name is never touched. Damage
// that recurs must not fill the disk with a full copy at every rebuild.
func TestKeptCopiesAreBounded(t *testing.T) {
	path, _ := damagedStore(t)
	old := []string{"20261120T080000Z", "20261121T080000Z", "20261121T080000Z-1", "20261122T080000Z", "20261123T080000Z"}
	for _, n := range append(old, "notes", "20261120T080000Z.txt") {
		if err := os.WriteFile(path+".corrupt-"+n, []byte("kept"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var logged []string
	now := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	w, err := Open(path, Options{Now: now, Logf: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.View(readSessions); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("reading damaged pages: %v, want ErrCorrupt", err)
	}
	w.Close()
	var got []string
	m, _ := filepath.Glob(path + ".corrupt-*")
	for _, f := range m {
		got = append(got, strings.TrimPrefix(f, path+".corrupt-"))
	}
	want := []string{"20261120T080000Z.txt", "20261121T080000Z-1", "20261122T080000Z", "20261123T080000Z", "20261127T080000Z", "notes"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("kept %v, want %v", got, want)
	}
	if len(logged) != 1 || !strings.Contains(logged[0], "intermem.db.corrupt-20261120T080000Z, intermem.db.corrupt-20261121T080000Z removed") {
		t.Errorf("log %q, want it to name the kept files removed", logged)
	}
}

// rebuildAt damages a store at path (replacing what is there), has a
// writer's transaction meet the damage, and returns what Close's rebuild
// kept (Rebuilt) and logged.
func rebuildAt(t *testing.T, path string, now time.Time) (aside string, logged []string) {
	t.Helper()
	dpath, _ := damagedStore(t)
	if err := os.Rename(dpath, path); err != nil {
		t.Fatal(err)
	}
	w, err := Open(path, Options{Now: now, NoSync: true, Logf: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.View(readSessions); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("reading damaged pages: %v, want ErrCorrupt", err)
	}
	w.Close()
	aside, err = w.Rebuilt()
	if err != nil || aside == "" {
		t.Fatalf("Rebuilt() = %q, %v; want the kept file", aside, err)
	}
	return aside, logged
}

// keptNames lists the suffixes of the files kept aside of the store at path.
func keptNames(path string) []string {
	var got []string
	m, _ := filepath.Glob(path + ".corrupt-*")
	for _, f := range m {
		got = append(got, strings.TrimPrefix(f, path+".corrupt-"))
	}
	slices.Sort(got)
	return got
}

// TestSameStampKeepsTheNewest: rebuilds stamped alike (a fixed
// INTERMEM_NOW, several in one second) each keep their copy under a name
// not used before, so the pruning never removes the copy just made and
// Rebuilt never names a file that is gone; -10 is newer than -9.
func TestSameStampKeepsTheNewest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "intermem.db")
	now := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	for i := range 6 {
		aside, logged := rebuildAt(t, path, now)
		if _, err := os.Stat(filepath.Join(filepath.Dir(path), aside)); err != nil {
			t.Fatalf("round %d: Rebuilt names %s, which is gone (%v); log %q", i, aside, err, logged)
		}
		want := "intermem.db.corrupt-20261127T080000Z"
		if i > 0 {
			want += fmt.Sprintf("-%d", i)
		}
		if aside != want {
			t.Errorf("round %d: kept as %s, want %s", i, aside, want)
		}
	}
	if got, want := keptNames(path), []string{"20261127T080000Z-2", "20261127T080000Z-3", "20261127T080000Z-4", "20261127T080000Z-5"}; !slices.Equal(got, want) {
		t.Errorf("kept %v, want %v", got, want)
	}

	// Numbered past 9: ordered by number, not by name.
	for _, n := range []string{"-6", "-7", "-8", "-9"} {
		if err := os.WriteFile(path+".corrupt-20261127T080000Z"+n, []byte("kept"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if aside, _ := rebuildAt(t, path, now); aside != "intermem.db.corrupt-20261127T080000Z-10" {
		t.Errorf("kept as %s, want -10", aside)
	}
	if got, want := keptNames(path), []string{"20261127T080000Z-10", "20261127T080000Z-7", "20261127T080000Z-8", "20261127T080000Z-9"}; !slices.Equal(got, want) {
		t.Errorf("kept %v, want %v", got, want)
	}

	// A clock set back: the copy made is stamped older than those kept,
	// and stays all the same; the oldest of the others goes.
	back := now.Add(-24 * time.Hour)
	aside, _ := rebuildAt(t, path, back)
	if aside != "intermem.db.corrupt-20261126T080000Z" {
		t.Errorf("kept as %s, want the earlier stamp", aside)
	}
	if got, want := keptNames(path), []string{"20261126T080000Z", "20261127T080000Z-10", "20261127T080000Z-8", "20261127T080000Z-9"}; !slices.Equal(got, want) {
		t.Errorf("kept %v, want %v", got, want)
	}
}
