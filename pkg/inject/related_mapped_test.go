package inject

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/source"
	"github.com/intermem/intermem/pkg/source/clavain"
	"github.com/intermem/intermem/pkg/store"
)

// residentFileBytes is the process's resident file-backed memory
// (/proc/self/statm's third field), or false where it cannot be read.
func residentFileBytes(t *testing.T) (int64, bool) {
	t.Helper()
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	f := bytes.Fields(b)
	if len(f) < 3 {
		return 0, false
	}
	pages, err := strconv.ParseInt(string(f[2]), 10, 64)
	if err != nil {
		return 0, false
	}
	return pages * int64(os.Getpagesize()), true
}

// TestReadRelatedShedsMappedPages checks that reading the catalog's
// related entries, a session start's largest read of the store, holds
// the store's pages mapped into the process within relatedShedAbove (and
// a few fault-around windows), not within store's default: entries
// spread over several megabytes of the file are read at random and
// the resident set must not grow with them.
func TestReadRelatedShedsMappedPages(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("mapped pages are shed on Linux only")
	}
	db := filepath.Join(t.TempDir(), "intermem.db")
	s, err := store.Open(db, store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	// 3,000 learnings of ~1.5 KB each: ~5 MB of entries, in id order
	// unlike their files' order (the ids are hashes in the real catalog).
	const n = 3000
	body := strings.Repeat("a learning's text, long enough to fill its page. ", 30)
	err = s.Update(func(tx *bolt.Tx) error {
		ct := store.Catalog(tx)
		f := store.CatalogFile{Source: clavain.Name, Path: ".clavain/learnings/all.md"}
		for i := 0; i < n; i++ {
			id := fmt.Sprintf("%08x", uint32(i)*2654435761)
			f.IDs = append(f.IDs, id)
			e := store.CatalogEntry{Entry: source.Entry{ID: id, Source: clavain.Name, Path: f.Path, Line: i + 1,
				Title: fmt.Sprintf("learning %d", i), Text: body, Citations: []string{"internal/x.go"}}}
			if err := ct.PutEntry(&e); err != nil {
				return err
			}
		}
		return ct.PutFile(&f)
	})
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	on := func(string) bool { return true }
	read := func() (grew int64, got int) {
		s, err := store.Open(db, store.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		err = s.View(func(tx *bolt.Tx) error {
			before, ok := residentFileBytes(t)
			if !ok {
				t.Skip("no /proc/self/statm")
			}
			rel, _ := readRelated(tx, on)
			after, _ := residentFileBytes(t)
			grew, got = after-before, len(rel)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return grew, got
	}
	read() // the code's own pages, and the file's in the page cache
	grew, got := read()
	if got != n {
		t.Fatalf("read %d related entries, want %d", got, n)
	}
	// Each look at the resident set comes relatedShedEvery entries
	// apart, each mapping at most a few 64 KiB windows.
	if limit := int64(relatedShedAbove + 2<<20); grew > limit {
		t.Errorf("the resident file pages grew by %d KiB reading the related entries, want at most %d KiB", grew>>10, limit>>10)
	}
}
