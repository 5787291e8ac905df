package snapshot

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/store"
)

// TestHookRebuildsAStoreDamagedAtOpen: a store damaged where opening it
// reads is rebuilt by the first hook that meets it, not spooled against
// as busy until a command happens to write: a freelist page that makes
// the writer's open panic (the session's record still read), a root page
// that makes every open panic (the hook's first, read-only, included).
// (A Stop with nothing to record only reads the store: the freelist's
// damage waits for a turn that writes.) The journal's record of an operation in flight is carried over where
// it can still be read, bound to the same store id.
func TestHookRebuildsAStoreDamagedAtOpen(t *testing.T) {
	for _, c := range []struct {
		name, event string
		damage      func(meta storeMeta) (page uint64, off int, b []byte)
		carried     bool
	}{
		{"freelist", "Stop", func(m storeMeta) (uint64, int, []byte) { return m.freelist, 8, []byte{0x01, 0x00} }, true},
		{"root", "Stop", func(m storeMeta) (uint64, int, []byte) { return m.root, 0, []byte(strings.Repeat("\xff", 64)) }, false},
		{"root", "SessionEnd", func(m storeMeta) (uint64, int, []byte) { return m.root, 0, []byte(strings.Repeat("\xff", 64)) }, false},
	} {
		t.Run(c.name+"/"+c.event, func(t *testing.T) {
			q := newQuietProject(t)
			q.turn("s1", "Stop")
			db := filepath.Join(q.state, "intermem.db")
			s, err := store.Open(db, store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var id string
			err = s.Update(func(tx *bolt.Tx) error {
				id = store.ID(tx)
				return tx.Bucket(store.BucketJournal).Put([]byte("op-1"), []byte(`{"op":"in flight"}`))
			})
			if cerr := s.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				t.Fatal(err)
			}
			pg, off, b := c.damage(readStoreMeta(t, db))
			f, err := os.OpenFile(db, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			_, err = f.WriteAt(b, int64(pg)*int64(os.Getpagesize())+int64(off))
			f.Close()
			if err != nil {
				t.Fatal(err)
			}

			// The memory changed since: a Stop opens the store to write (one
			// with nothing to record reads it only).
			q.write("topics.md", "# Topics\n\n- Invoices are rendered by the billing service.\n")
			q.turn("s1", c.event)
			log, _ := os.ReadFile(q.log)
			if m, _ := filepath.Glob(db + ".corrupt-*"); len(m) != 1 {
				t.Fatalf("kept %v, want the damaged store kept once; log:\n%s", m, log)
			}
			if n := q.spooled(); n != 0 {
				t.Errorf("the turn spooled %d observations, want the rebuilt store to take it; log:\n%s", n, log)
			}
			if !strings.Contains(string(log), "moved aside to intermem.db.corrupt-") {
				t.Errorf("log:\n%s\nwant the rebuild's line", log)
			}
			q.view(func(tx *bolt.Tx) error {
				if _, known, _ := store.GetSession(tx, "s1"); !known {
					t.Error("the rebuilt store does not hold the turn's session")
				}
				if got := tx.Bucket(store.BucketJournal).Get([]byte("op-1")) != nil; got != c.carried {
					t.Errorf("journal record carried over: %v, want %v; log:\n%s", got, c.carried, log)
				}
				if got := store.ID(tx) == id; got != c.carried {
					t.Errorf("store id kept: %v, want %v", got, c.carried)
				}
				return nil
			})
		})
	}
}

// storeMeta is what the newer of a store file's meta pages names.
type storeMeta struct{ root, freelist uint64 }

// readStoreMeta reads the root bucket's and the freelist's page ids from
// the newer of the store file's two meta pages (bbolt's layout: the meta
// after the 16-byte page header; root at 16, freelist at 32, txid at 48).
func readStoreMeta(t *testing.T, path string) storeMeta {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ps := os.Getpagesize()
	var m storeMeta
	var txid uint64
	for i := range 2 {
		p := b[i*ps+16:]
		if x := binary.LittleEndian.Uint64(p[48:]); x >= txid {
			txid = x
			m = storeMeta{root: binary.LittleEndian.Uint64(p[16:]), freelist: binary.LittleEndian.Uint64(p[32:])}
		}
	}
	return m
}
