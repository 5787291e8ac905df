package proof

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/store"
)

// storeCase replaces a project's real store with something else.
type storeCase struct {
	name, proves string
	// make returns the bytes to put where intermem.db was, given the
	// real store's bytes.
	make func(t *testing.T, real []byte) []byte
	// corrupt: the file is unusable and must be moved aside (kept, with
	// its exact bytes) and rebuilt; newer: it must be left untouched and
	// the writers refused, observations spooled.
	corrupt, newer bool
	// repair: the damage is inside pages that neither the read-only
	// command nor the hooks need to read, so the person runs
	// intermem-recover --resume, as the hint says, before the commands.
	repair bool
}

// boltFile builds a bbolt file with fn and returns its bytes.
func boltFile(t *testing.T, fn func(tx *bolt.Tx) error, from []byte) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "x.db")
	if from != nil {
		if err := os.WriteFile(path, from, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(fn); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var storeCases = []storeCase{
	{
		name: "garbage-bytes", proves: "64 KB of random bytes are moved aside, byte for byte, and a new store is built",
		corrupt: true,
		make: func(t *testing.T, _ []byte) []byte {
			b := make([]byte, 64<<10)
			rand.New(rand.NewSource(2)).Read(b)
			return b
		},
	},
	{
		name: "text-file", proves: "a text file in the store's place is moved aside and kept",
		corrupt: true,
		make:    func(t *testing.T, _ []byte) []byte { return []byte("these are my notes, not a database\n") },
	},
	{
		name: "another-programs-bbolt-file", proves: "a valid bbolt database of another program is not taken over: moved aside and kept",
		corrupt: true,
		make: func(t *testing.T, _ []byte) []byte {
			return boltFile(t, func(tx *bolt.Tx) error {
				b, err := tx.CreateBucket([]byte("widgets"))
				if err != nil {
					return err
				}
				return b.Put([]byte("w1"), []byte("blue"))
			}, nil)
		},
	},
	{
		name: "truncated-real-store", proves: "a real store cut short (half of the pages it uses are gone) is moved aside and rebuilt, never read past its end",
		corrupt: true,
		make: func(t *testing.T, real []byte) []byte {
			// The size the data occupies (the high-water mark), not the
			// file's preallocated size: cutting only free space at the
			// end would leave a valid store.
			var used int64
			boltFile(t, func(tx *bolt.Tx) error {
				used = tx.Size()
				return nil
			}, real)
			cut := used / 2 &^ 4095
			if cut < 8192 || int(cut) >= len(real) {
				t.Fatalf("the real store uses %d of its %d bytes: nothing to cut", used, len(real))
			}
			return append([]byte(nil), real[:cut]...)
		},
	},
	{
		name: "real-store-pages-damaged", proves: "a real store whose pages after its meta pages are overwritten (it still opens) is moved aside and rebuilt by intermem-recover --resume, as the hint says (or by the first writer that meets the damage); every command works again",
		corrupt: true, repair: true,
		make: func(t *testing.T, real []byte) []byte {
			if len(real) < 16384 {
				t.Fatalf("the real store is %d bytes: no pages to damage", len(real))
			}
			b := append([]byte(nil), real...)
			copy(b[8192:16384], bytes.Repeat([]byte{0xff}, 8192))
			return b
		},
	},
	{
		name: "schema-not-a-number", proves: "a store whose schema version is not a number is foreign: moved aside",
		corrupt: true,
		make: func(t *testing.T, real []byte) []byte {
			return boltFile(t, func(tx *bolt.Tx) error {
				return tx.Bucket(store.BucketMeta).Put([]byte("schema"), []byte("banana"))
			}, real)
		},
	},
	{
		name: "newer-schema", proves: "a store from a newer intermem is never moved, rewritten or guessed at: writers refuse with a hint, hooks spool",
		newer: true,
		make: func(t *testing.T, real []byte) []byte {
			return boltFile(t, func(tx *bolt.Tx) error {
				return tx.Bucket(store.BucketMeta).Put([]byte("schema"), []byte("99"))
			}, real)
		},
	},
	{
		name: "empty-file", proves: "a zero-length store file (a crash before bbolt initialised it) is usable again",
		make: func(t *testing.T, _ []byte) []byte { return nil },
	},
}

// TestBadStore puts a corrupt or foreign file where a project's store
// was, then runs a read-only command, the hooks, and every command. A
// corrupt file is moved aside to intermem.db.corrupt-* holding exactly
// its original bytes (never deleted), and the rebuilt store works; a
// newer store is left byte-identical, writers refuse it with an error and
// a hint, and the hooks' observations wait in the spool. Hooks keep their
// rules throughout, commands never crash, and no user file changes.
func TestBadStore(t *testing.T) {
	timeouts := hookTimeouts(t)
	for _, c := range storeCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := hostileFixture(t)
			f.sessions(3)
			dbPath := f.storePath()
			real, err := os.ReadFile(dbPath)
			if err != nil {
				t.Fatal(err)
			}
			bad := c.make(t, real)
			if err := os.WriteFile(dbPath, bad, 0o600); err != nil {
				t.Fatal(err)
			}
			before := fsState(t, f)

			// A reader first: it must not touch the file.
			r, _, hung := f.runLimited("", nil, "intermem", "status")
			checkCLI(t, c.name+": intermem status before any writer", r, hung, false)
			if got, _ := os.ReadFile(dbPath); !bytes.Equal(got, bad) {
				t.Errorf("%s: a read-only command changed the store file", c.name)
			}

			runHooks(t, f, timeouts, "badstore-"+c.name, nil)
			if c.repair {
				if !strings.Contains(r.stderr, "intermem-recover --resume") {
					t.Errorf("%s: intermem status does not hint at intermem-recover --resume: %q", c.name, r.stderr)
				}
				r, _, hung := f.runLimited("", nil, "intermem-recover", "--resume")
				checkCLI(t, c.name+": intermem-recover --resume", r, hung, true)
			}
			for _, args := range cliCommands {
				r, _, hung := f.runLimited("", nil, args[0], args[1:]...)
				what := fmt.Sprintf("%s (%s): %s", c.name, c.proves, strings.Join(args, " "))
				writer := args[0] == "intermem-synthesize" || (len(args) > 1 && (args[1] == "sweep" || args[1] == "validate"))
				checkCLI(t, what, r, hung, !c.newer)
				if c.newer && writer && r.code == 0 {
					t.Errorf("%s: a writer accepted a store from a newer intermem", what)
				}
			}

			asides, _ := filepath.Glob(dbPath + ".corrupt-*")
			switch {
			case c.corrupt:
				if len(asides) != 1 {
					t.Fatalf("%s: want the unusable store moved aside once, found %v", c.name, asides)
				}
				if got, _ := os.ReadFile(asides[0]); !bytes.Equal(got, bad) {
					t.Errorf("%s: %s does not hold the original %d bytes (it holds %d)", c.name, filepath.Base(asides[0]), len(bad), len(got))
				}
			case c.newer:
				if len(asides) != 0 {
					t.Errorf("%s: a newer store was moved aside: %v", c.name, asides)
				}
				if got, _ := os.ReadFile(dbPath); !bytes.Equal(got, bad) {
					t.Errorf("%s: the newer store's bytes changed", c.name)
				}
				if n := countFiles(t, filepath.Join(f.root, ".intermem", "spool"), ".json"); n == 0 {
					t.Errorf("%s: the hooks' observations were neither recorded nor spooled", c.name)
				}
			default:
				for _, a := range asides {
					if got, _ := os.ReadFile(a); !bytes.Equal(got, bad) {
						t.Errorf("%s: %s does not hold the original bytes", c.name, a)
					}
				}
			}
			if !c.newer {
				db, err := store.Open(dbPath, store.Options{ReadOnly: true, Timeout: 5 * time.Second})
				if err != nil {
					t.Fatalf("%s: the rebuilt store does not open: %v", c.name, err)
				}
				if err := db.Check(); err != nil {
					t.Errorf("%s: the rebuilt store fails bbolt's check: %v", c.name, err)
				}
				db.Close()
				var st struct{ Sessions int }
				decodeJSON(t, "status --json", f.must("intermem", "status", "--json").stdout, &st)
				if st.Sessions < 1 {
					t.Errorf("%s: the rebuilt store did not record the hooks' session", c.name)
				}
			}
			after := fsState(t, f)
			for path := range union(before, after) {
				if before[path] != after[path] {
					t.Errorf("%s: user file %s changed", c.name, path)
				}
			}
		})
	}
}
