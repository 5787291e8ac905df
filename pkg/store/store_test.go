package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

func TestCreateAndReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "intermem.db")
	if _, err := Open(path, Options{ReadOnly: true}); !errors.Is(err, ErrNotExist) {
		t.Fatalf("read-only open of a missing store: %v, want ErrNotExist", err)
	}
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Update(func(tx *bolt.Tx) error {
		return Put(tx, BucketSessions, "s1", &Session{ID: "s1", Observations: 2})
	}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("store mode %v, want 0600", st.Mode().Perm())
	}
	matches, _ := filepath.Glob(path + ".new-*")
	if len(matches) != 0 {
		t.Errorf("temporary files left behind: %v", matches)
	}
	r, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var got Session
	var version string
	r.View(func(tx *bolt.Tx) error {
		Get(tx, BucketSessions, "s1", &got)
		version = string(tx.Bucket(BucketMeta).Get([]byte("schema")))
		return nil
	})
	if got.Observations != 2 {
		t.Errorf("reopened session = %+v", got)
	}
	if version != "5" {
		t.Errorf("schema = %q, want 5", version)
	}
	if err := r.Check(); err != nil {
		t.Errorf("consistency check: %v", err)
	}
}

func TestLockedTimesOut(t *testing.T) {
	path := filepath.Join(t.TempDir(), "intermem.db")
	w, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := Open(path, Options{Timeout: 30 * time.Millisecond}); !errors.Is(err, ErrLocked) {
		t.Fatalf("second writer: %v, want ErrLocked", err)
	}
	if _, err := Open(path, Options{ReadOnly: true, Timeout: 30 * time.Millisecond}); !errors.Is(err, ErrLocked) {
		t.Fatalf("reader during a write: %v, want ErrLocked", err)
	}
	// The file must be untouched by the failed opens.
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(path + ".corrupt-*"); len(m) != 0 {
		t.Fatalf("a locked store was treated as corrupt: %v", m)
	}
}

func TestCorruptAndForeignFilesAreMovedAside(t *testing.T) {
	for name, write := range map[string]func(path string) error{
		"garbage": func(path string) error {
			return os.WriteFile(path, []byte(strings.Repeat("not a database\n", 500)), 0o600)
		},
		"foreign": func(path string) error {
			db, err := bolt.Open(path, 0o600, nil)
			if err != nil {
				return err
			}
			defer db.Close()
			return db.Update(func(tx *bolt.Tx) error {
				b, err := tx.CreateBucket([]byte("widgets"))
				if err != nil {
					return err
				}
				return b.Put([]byte("k"), []byte("v"))
			})
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "intermem.db")
			if err := write(path); err != nil {
				t.Fatal(err)
			}
			before, _ := os.ReadFile(path)
			if _, err := Open(path, Options{ReadOnly: true}); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("read-only open: %v, want ErrCorrupt", err)
			}
			var logged []string
			now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
			s, err := Open(path, Options{Now: now, Logf: func(f string, a ...any) { logged = append(logged, f) }})
			if err != nil {
				t.Fatalf("writer open: %v", err)
			}
			s.Close()
			aside := path + ".corrupt-20261125T120000Z"
			got, err := os.ReadFile(aside)
			if err != nil {
				t.Fatalf("moved-aside file: %v", err)
			}
			if string(got) != string(before) {
				t.Error("moved-aside file differs from the original")
			}
			if len(logged) != 1 {
				t.Errorf("log lines = %d, want 1", len(logged))
			}
			r, err := Open(path, Options{ReadOnly: true})
			if err != nil {
				t.Fatalf("rebuilt store: %v", err)
			}
			r.Close()
		})
	}
}

// A zero-byte file holds nothing to preserve: the writer initialises it in
// place.
func TestEmptyFileInitialisedInPlace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "intermem.db")
	os.WriteFile(path, nil, 0o600)
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if m, _ := filepath.Glob(path + ".corrupt-*"); len(m) != 0 {
		t.Errorf("empty file moved aside: %v", m)
	}
	r, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	r.Close()
}

func TestNewerSchemaRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "intermem.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Update(func(tx *bolt.Tx) error { return tx.Bucket(BucketMeta).Put([]byte("schema"), []byte("99")) })
	s.Close()
	if _, err := Open(path, Options{}); !errors.Is(err, ErrNewerSchema) {
		t.Fatalf("open of a newer store: %v, want ErrNewerSchema", err)
	}
	if m, _ := filepath.Glob(path + ".corrupt-*"); len(m) != 0 {
		t.Fatalf("a newer store must not be moved aside: %v", m)
	}
}

// A store written before the schema was versioned (a meta bucket without
// "schema", and only some buckets) is migrated in place, keeping its data.
func TestMigrateFromUnversioned(t *testing.T) {
	path := filepath.Join(t.TempDir(), "intermem.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Update(func(tx *bolt.Tx) error {
		tx.CreateBucket(BucketMeta)
		b, _ := tx.CreateBucket(BucketSessions)
		return b.Put([]byte("old"), []byte(`{"id":"old","observations":7}`))
	})
	db.Close()
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.View(func(tx *bolt.Tx) error {
		for _, b := range allBuckets() {
			if tx.Bucket(b) == nil {
				t.Errorf("bucket %s missing after migration", b)
			}
		}
		if v := string(tx.Bucket(BucketMeta).Get([]byte("schema"))); v != "5" {
			t.Errorf("schema after migration = %q", v)
		}
		if len(ID(tx)) != 32 {
			t.Errorf("store id after migration = %q", ID(tx))
		}
		var sess Session
		if ok, _ := Get(tx, BucketSessions, "old", &sess); !ok || sess.Observations != 7 {
			t.Errorf("data lost in migration: %+v", sess)
		}
		return nil
	})
}

// Every new store has its own random id.
func TestNewStoresHaveDistinctIDs(t *testing.T) {
	ids := map[string]bool{}
	for i := 0; i < 3; i++ {
		s, err := Open(filepath.Join(t.TempDir(), "intermem.db"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		s.View(func(tx *bolt.Tx) error { ids[ID(tx)] = true; return nil })
		s.Close()
	}
	for id := range ids {
		if len(id) != 32 {
			t.Errorf("store id %q, want 32 hex digits", id)
		}
	}
	if len(ids) != 3 {
		t.Errorf("ids %v, want 3 distinct", ids)
	}
}

// A schema-1 store (before store ids) keeps its data and has no id when
// read; the first read-write open migrates it (to 3) and gives it an id,
// which later opens keep.
func TestMigrateFrom1AssignsID(t *testing.T) {
	path := filepath.Join(t.TempDir(), "intermem.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Update(func(tx *bolt.Tx) error {
		for _, b := range allBuckets() {
			if string(b) != string(BucketBackups) {
				tx.CreateBucket(b)
			}
		}
		tx.Bucket(BucketMeta).Put([]byte("schema"), []byte("1"))
		tx.Bucket(BucketMeta).Put([]byte("created"), []byte("2026-01-02T03:04:05Z"))
		return tx.Bucket(BucketJournal).Put([]byte("op"), []byte(`{"id":"op","state":"pending"}`))
	})
	db.Close()

	r, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	r.View(func(tx *bolt.Tx) error {
		if id := ID(tx); id != "" {
			t.Errorf("read-only open of a schema-1 store: id %q, want none", id)
		}
		return nil
	})
	r.Close()

	var first string
	for i := 0; i < 2; i++ {
		s, err := Open(path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		s.View(func(tx *bolt.Tx) error {
			meta := tx.Bucket(BucketMeta)
			if v := string(meta.Get([]byte("schema"))); v != "5" {
				t.Errorf("schema = %q, want 5", v)
			}
			if v := string(meta.Get([]byte("created"))); v != "2026-01-02T03:04:05Z" {
				t.Errorf("created changed to %q", v)
			}
			if tx.Bucket(BucketBackups) == nil {
				t.Error("no backups bucket")
			}
			if v := tx.Bucket(BucketJournal).Get([]byte("op")); string(v) != `{"id":"op","state":"pending"}` {
				t.Errorf("journal record lost: %q", v)
			}
			id := ID(tx)
			if len(id) != 32 || (first != "" && id != first) {
				t.Errorf("open %d: id %q (first %q)", i, id, first)
			}
			first = id
			return nil
		})
		s.Close()
	}
}

func BenchmarkOpenReadOnlyView(b *testing.B) {
	path := filepath.Join(b.TempDir(), "intermem.db")
	s, _ := Open(path, Options{})
	s.Close()
	for b.Loop() {
		r, err := Open(path, Options{ReadOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		r.View(func(tx *bolt.Tx) error { return nil })
		r.Close()
	}
}

func BenchmarkOpenUpdateSynced(b *testing.B) {
	path := filepath.Join(b.TempDir(), "intermem.db")
	for b.Loop() {
		s, err := Open(path, Options{})
		if err != nil {
			b.Fatal(err)
		}
		s.Update(func(tx *bolt.Tx) error { return Put(tx, BucketSessions, "s", &Session{ID: "s"}) })
		s.Close()
	}
}
