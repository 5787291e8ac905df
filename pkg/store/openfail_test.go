package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// A store damaged where opening it reads: bbolt panics in the open (a
// writer's loads the freelist page) or in Open's own first reads (the
// size and schema checks read the root page). The open must let go of the
// file, or the flock it holds stays held for the rest of the process.

// journaledStore makes a store holding journal record op-1 and returns
// its path and id.
func journaledStore(t *testing.T) (path, id string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "intermem.db")
	s, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Update(func(tx *bolt.Tx) error {
		id = ID(tx)
		return tx.Bucket(BucketJournal).Put([]byte("op-1"), []byte(`{"op":"in flight"}`))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path, id
}

// currentMeta reads the root bucket's and the freelist's page ids from
// the newer of the store file's two meta pages.
func currentMeta(t *testing.T, path string) (root, freelist uint64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ps := os.Getpagesize()
	var txid uint64
	for i := range 2 {
		m := b[i*ps+16:] // past the page header
		if x := binary.LittleEndian.Uint64(m[48:]); x >= txid {
			txid, root, freelist = x, binary.LittleEndian.Uint64(m[16:]), binary.LittleEndian.Uint64(m[32:])
		}
	}
	return root, freelist
}

// overwrite writes b at offset off of page pg of the file at path.
func overwrite(t *testing.T, path string, pg uint64, off int, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, int64(pg)*int64(os.Getpagesize())+int64(off)); err != nil {
		t.Fatal(err)
	}
}

// damageFreelist marks the freelist page a branch page: a read-only open
// (which does not load the freelist) reads every bucket still, a
// writer's bolt.Open panics ("invalid freelist page").
func damageFreelist(t *testing.T, path string) {
	t.Helper()
	_, fl := currentMeta(t, path)
	overwrite(t, path, fl, 8, []byte{0x01, 0x00})
}

// damageRoot overwrites the root bucket's page header: every open's
// schema check panics reading it.
func damageRoot(t *testing.T, path string) {
	t.Helper()
	root, _ := currentMeta(t, path)
	overwrite(t, path, root, 0, []byte(strings.Repeat("\xff", 64)))
}

// TestOpenPanicCarriesTheJournal: a writer's open that panics lets go of
// the file, so the salvage reads the journal and id and the new store
// holds them: the operation in flight stays recoverable.
func TestOpenPanicCarriesTheJournal(t *testing.T) {
	path, id := journaledStore(t)
	damageFreelist(t, path)
	if r, err := Open(path, Options{ReadOnly: true}); err != nil {
		t.Fatalf("read-only open of a store with a damaged freelist: %v", err)
	} else {
		r.Close()
	}
	var logged []string
	w, err := Open(path, Options{Timeout: 300 * time.Millisecond, Logf: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }})
	if err != nil {
		t.Fatalf("writer open: %v", err)
	}
	defer w.Close()
	err = w.View(func(tx *bolt.Tx) error {
		if got := ID(tx); got != id {
			t.Errorf("store id %q, want %q carried over", got, id)
		}
		if tx.Bucket(BucketJournal).Get([]byte("op-1")) == nil {
			t.Error("the journal's in-flight record was not carried over")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(logged) != 1 || !strings.Contains(logged[0], "journal's 1 operation(s) carried over") || strings.Contains(logged[0], "could not be read") {
		t.Errorf("log %q, want one line saying the journal was carried over", logged)
	}
}

// TestFailedOpenLeavesNoLock: a read-only open that meets damage (the
// Stop hook's first, reading the session's record) leaves no lock behind:
// the writer's open next, in the same process, gets the store and
// rebuilds it rather than waiting out its timeout as "busy". And so does
// a writer's open that panics, for the next writer.
func TestFailedOpenLeavesNoLock(t *testing.T) {
	t.Run("reader", func(t *testing.T) {
		path, _ := journaledStore(t)
		damageRoot(t, path)
		if _, err := Open(path, Options{ReadOnly: true, Timeout: 200 * time.Millisecond}); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("read-only open: %v, want ErrCorrupt", err)
		}
		var logged []string
		w, err := Open(path, Options{Timeout: 300 * time.Millisecond, Logf: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }})
		if err != nil {
			t.Fatalf("writer open after a failed read-only open: %v", err)
		}
		w.Close()
		if m, _ := filepath.Glob(path + ".corrupt-*"); len(m) != 1 {
			t.Errorf("kept %v, want the damaged store kept once", m)
		}
		// The root page holds the meta bucket: the id cannot be read,
		// and the journal is not carried (nor told from another
		// program's); the log says where it is.
		if len(logged) != 1 || !strings.Contains(logged[0], "its id could not be read") || !strings.Contains(logged[0], "nor then its journal (it stays in the kept file)") {
			t.Errorf("log %q, want it to say the journal stays in the kept file", logged)
		}
	})
	t.Run("writer", func(t *testing.T) {
		path, _ := journaledStore(t)
		damageFreelist(t, path)
		db, file, err := boltOpen(path, &bolt.Options{Timeout: 200 * time.Millisecond})
		if !errors.Is(err, ErrCorrupt) || db != nil || file != nil {
			t.Fatalf("bolt open of a damaged freelist: %v, %v, %v; want ErrCorrupt and nothing held", db, file, err)
		}
		db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: 200 * time.Millisecond, ReadOnly: true})
		if err != nil {
			t.Fatalf("an open after a failed one: %v", err)
		}
		db.Close()
	})
}
