//go:build linux

package store

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// mappedKB returns how much of the file at path is resident in this
// process's mapping of it (the Rss of its /proc/self/smaps entry), and
// how many mappings of it there are.
func mappedKB(t *testing.T, path string) (kb, mappings int) {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	ino := strconv.FormatUint(st.Ino, 10)
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 5 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			in = f[4] == ino
			if in {
				mappings++
			}
			continue
		}
		if in && len(f) >= 2 && f[0] == "Rss:" {
			n, _ := strconv.Atoi(f[1])
			kb += n
		}
	}
	return kb, mappings
}

// bigStore writes n entry records of about 600 bytes under random keys,
// in several transactions as hooks write them (so the file holds free
// pages too), and returns the store reopened with the file in the page
// cache.
func bigStore(t *testing.T, n int) (*Store, []string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "intermem.db")
	s, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("%016x", rng.Uint64())
	}
	preview := strings.Repeat("a memory entry's preview, long enough to be like one ", 10)
	for lo := 0; lo < n; lo += 5000 {
		if err := s.Update(func(tx *bolt.Tx) error {
			for _, k := range keys[lo:min(n, lo+5000)] {
				if err := Put(tx, BucketEntries, k, &Entry{ID: k, Preview: preview, Sessions: 1}); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	if s, err = Open(path, Options{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, keys
}

// TestShedBoundsMappedPages: reading every record of a 20,000-entry
// bucket through this package in a read transaction keeps at most a few
// megabytes of the file mapped in at any time, where the same reads made
// by bbolt alone leave most of the bucket resident; a write transaction is
// left alone.
func TestShedBoundsMappedPages(t *testing.T) {
	s, keys := bigStore(t, 20000)
	st, err := os.Stat(s.Path)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("store file %d MB", st.Size()>>20)

	// The premise: bbolt alone, reading every record, maps most of the
	// bucket (fault-around), here more than 20 MB.
	if err := s.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(BucketEntries)
		n := 0
		for _, k := range keys {
			n += len(b.Get([]byte(k)))
		}
		kb, maps := mappedKB(t, s.Path)
		t.Logf("bbolt alone, %d random reads: %d MB mapped in (%d mapping)", len(keys), kb>>10, maps)
		if maps != 1 || kb < 20<<10 {
			t.Fatalf("bbolt alone left %d KB mapped in %d mappings: the premise does not hold", kb, maps)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(s.Path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	// The bound: at most 10 MB at every point of a scan (Each) and of
	// random reads (Get).
	const bound = 10 << 10 // KB
	peak := 0
	sample := func(i int) {
		if i%200 == 0 {
			kb, _ := mappedKB(t, s.Path)
			peak = max(peak, kb)
		}
	}
	if err := s.View(func(tx *bolt.Tx) error {
		i := 0
		return Each(tx, BucketEntries, func(string, *Entry) error {
			i++
			sample(i)
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	t.Logf("Each: at most %d KB mapped in", peak)
	if peak > bound {
		t.Errorf("Each kept %d KB of the store mapped in, want at most %d", peak, bound)
	}
	peak = 0
	if err := s.View(func(tx *bolt.Tx) error {
		for i, k := range keys {
			var e Entry
			if ok, err := Get(tx, BucketEntries, k, &e); err != nil || !ok || e.ID != k {
				return fmt.Errorf("get %s: %v %v %+v", k, ok, err, e.ID)
			}
			sample(i)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	t.Logf("Get: at most %d KB mapped in", peak)
	if peak > bound {
		t.Errorf("random Gets kept %d KB of the store mapped in, want at most %d", peak, bound)
	}

	// A write transaction is not shed as it reads (its commit reads the
	// pages it replaces again).
	before := sheds.Load()
	if err := s.Update(func(tx *bolt.Tx) error {
		for _, k := range keys {
			if _, err := Get(tx, BucketEntries, k, &Entry{}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n := sheds.Load() - before; n != 0 {
		t.Errorf("a write transaction was shed %d times", n)
	}
}

// TestShedKeepsWhatATransactionHolds: a value read before a shed, still
// pointing into the mapping, reads the same after it, in a read and in a
// write transaction (bbolt's nodes keep such slices); and the store's
// content is unchanged by sheds amid writes.
func TestShedKeepsWhatATransactionHolds(t *testing.T) {
	s, keys := bigStore(t, 5000)
	for _, update := range []bool{false, true} {
		fn := func(tx *bolt.Tx) error {
			b := tx.Bucket(BucketEntries)
			var held, copies [][]byte
			for _, k := range keys[:500] {
				v := b.Get([]byte(k))
				held = append(held, v)
				copies = append(copies, bytes.Clone(v))
			}
			before := sheds.Load()
			Shed(tx)
			if sheds.Load() != before+1 {
				return fmt.Errorf("no shed done")
			}
			if kb, _ := mappedKB(t, s.Path); kb > 64 {
				return fmt.Errorf("%d KB still mapped in after a shed", kb)
			}
			for i := range held {
				if !bytes.Equal(held[i], copies[i]) {
					return fmt.Errorf("value of %s changed after a shed", keys[i])
				}
			}
			if update {
				for i, k := range keys {
					if err := Put(tx, BucketEntries, k, &Entry{ID: k, Preview: strconv.Itoa(i), Sessions: 2}); err != nil {
						return err
					}
					if i%1000 == 0 {
						Shed(tx)
					}
				}
			}
			return nil
		}
		var err error
		if update {
			err = s.Update(fn)
		} else {
			err = s.View(fn)
		}
		if err != nil {
			t.Fatalf("update=%v: %v", update, err)
		}
	}
	if err := s.View(func(tx *bolt.Tx) error {
		for i, k := range keys {
			var e Entry
			if ok, err := Get(tx, BucketEntries, k, &e); err != nil || !ok || e.Preview != strconv.Itoa(i) || e.Sessions != 2 {
				return fmt.Errorf("entry %s after the writes: %+v %v %v", k, e, ok, err)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
}

// TestSmallStoreNotShed: a store whose pages all fit under shedAbove is
// read without a shed (its pages stay mapped, each faulted in once).
func TestSmallStoreNotShed(t *testing.T) {
	s, keys := bigStore(t, 2000)
	before := sheds.Load()
	if err := s.View(func(tx *bolt.Tx) error {
		for range 3 {
			for _, k := range keys {
				if _, err := Get(tx, BucketEntries, k, &Entry{}); err != nil {
					return err
				}
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n := sheds.Load() - before; n != 0 {
		t.Errorf("%d sheds reading a %d-entry store, want none", n, len(keys))
	}
}

// TestShedReadsBoundsAWriteTransaction: a write transaction that sheds
// its reads (CatalogTx.ShedReads: a session end's catalog refresh) keeps
// at most shedWriteAbove and a few 64 KiB windows of the store mapped in
// while it reads at random, under the read transactions' shedAbove: its
// heap and its commit's pages come on top of what it read.
func TestShedReadsBoundsAWriteTransaction(t *testing.T) {
	path := filepath.Join(t.TempDir(), "intermem.db")
	s, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	ids := make([]string, 20000)
	for i := range ids {
		ids[i] = fmt.Sprintf("%016x", rng.Uint64())
	}
	text := strings.Repeat("an entry's text, long enough to be like one ", 12)
	for lo := 0; lo < len(ids); lo += 5000 {
		if err := s.Update(func(tx *bolt.Tx) error {
			c := Catalog(tx)
			for _, id := range ids[lo:min(len(ids), lo+5000)] {
				e := &CatalogEntry{}
				e.ID, e.Source, e.Text = id, "instructions", text
				if err := c.PutEntry(e); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	if s, err = Open(path, Options{}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const bound = 5 << 10 // KB: shedWriteAbove, 3 MiB, and its slack
	peak := 0
	if err := s.Update(func(tx *bolt.Tx) error {
		c := Catalog(tx)
		c.ShedReads()
		for i, id := range ids {
			if _, ok := c.Entry(id, "instructions"); !ok {
				return fmt.Errorf("entry %s missing", id)
			}
			if i%200 == 0 {
				kb, _ := mappedKB(t, s.Path)
				peak = max(peak, kb)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	t.Logf("a write transaction's random reads: at most %d KB mapped in", peak)
	if peak > bound {
		t.Errorf("a write transaction shedding its reads kept %d KB of the store mapped in, want at most %d", peak, bound)
	}
}
