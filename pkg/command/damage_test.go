package command

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/store"
)

// TestDamagedStoreIsHinted: a store damaged inside its pages (it opens,
// and a transaction meets the damage) makes status and validate fail
// with the hint every other store failure has, not a bare "store is
// damaged: assertion failed: …"; the writer among them (validate records
// its checks) keeps the file aside and rebuilds the store, so the next
// run works.
func TestDamagedStoreIsHinted(t *testing.T) {
	dir, root, path := damagedProject(t)
	run := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		env := cli.New([]string{"HOME=" + filepath.Join(dir, "home"), "INTERMEM_MEMORY_DIR=" + filepath.Join(dir, "mem"), "INTERMEM_NOW=2026-11-27T08:00:00Z"}, root, nil, &out, &errb)
		code := Main(context.Background(), env, args)
		return code, errb.String()
	}
	for _, cmd := range []string{"status", "validate"} {
		code, stderr := run(cmd)
		if code != 1 || !strings.Contains(stderr, "store is damaged") || !strings.Contains(stderr, "intermem: hint: ") {
			t.Errorf("%s on a damaged store: exit %d, stderr %q; want 1 and the store's hint", cmd, code, stderr)
		}
	}
	if m, _ := filepath.Glob(path + ".corrupt-*"); len(m) != 1 {
		t.Errorf("kept files %v, want the damaged store kept once", m)
	}
	if code, stderr := run("status"); code != 0 {
		t.Errorf("status on the rebuilt store: exit %d, stderr %q", code, stderr)
	}
}

// damagedProject makes a project whose store opens but has its sessions'
// and entries' root pages overwritten: a transaction reading them meets
// the damage, and so does bbolt's consistency check.
func damagedProject(t *testing.T) (dir, root, path string) {
	t.Helper()
	dir = t.TempDir()
	root = filepath.Join(dir, "proj")
	for _, d := range []string{filepath.Join(root, ".git"), filepath.Join(root, ".intermem"), filepath.Join(dir, "home"), filepath.Join(dir, "mem")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(root, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "mem", "MEMORY.md"), []byte("# Memory\n\n- The build uses make.\n"), 0o644)
	path = filepath.Join(root, ".intermem", "intermem.db")
	s, err := store.Open(path, store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	var roots []uint64
	err = s.Update(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{store.BucketSessions, store.BucketEntries} {
			b := tx.Bucket(name)
			for i := range 500 {
				if err := b.Put([]byte(fmt.Sprintf("k-%04d", i)), []byte(strings.Repeat("x", 64))); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s.View(func(tx *bolt.Tx) error {
		roots = append(roots, uint64(tx.Bucket(store.BucketSessions).Root()), uint64(tx.Bucket(store.BucketEntries).Root()))
		return nil
	})
	s.Close()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range roots {
		f.WriteAt(bytes.Repeat([]byte{0xff}, 4096), int64(r)*int64(os.Getpagesize()))
	}
	f.Close()

	return dir, root, path
}

// TestRecoverSaysARebuildOnlyWhenItHappened: intermem-recover --resume on
// a damaged store says it was rebuilt, naming the kept file, when Close
// did rebuild it; when the rebuild fails it fails with the store's hint
// and says nothing of a rebuild. Before, it said "was rebuilt" either way.
func TestRecoverSaysARebuildOnlyWhenItHappened(t *testing.T) {
	for _, fails := range []bool{false, true} {
		dir, root, path := damagedProject(t)
		if fails {
			// The new store's temporary name is taken by a directory
			// that cannot be removed: the rebuild fails.
			if err := os.MkdirAll(filepath.Join(fmt.Sprintf("%s.new-%d", path, os.Getpid()), "x"), 0o700); err != nil {
				t.Fatal(err)
			}
		}
		var out, errb bytes.Buffer
		env := cli.New([]string{"HOME=" + filepath.Join(dir, "home"), "INTERMEM_MEMORY_DIR=" + filepath.Join(dir, "mem"), "INTERMEM_NOW=2026-11-27T08:00:00Z"}, root, nil, &out, &errb)
		code := RecoverMain(context.Background(), env, []string{"--resume"})
		stderr := errb.String()
		kept, _ := filepath.Glob(path + ".corrupt-*")
		if fails {
			if code == 0 || strings.Contains(stderr, "rebuilt") || !strings.Contains(stderr, "intermem: hint: ") || len(kept) != 0 {
				t.Errorf("failed rebuild: exit %d, stderr %q, kept %v; want a failure with the hint, no rebuild claimed", code, stderr, kept)
			}
			continue
		}
		if code != 0 || len(kept) != 1 || !strings.Contains(stderr, "kept as .intermem/"+filepath.Base(kept[0])+" and was rebuilt") {
			t.Errorf("rebuild: exit %d, stderr %q, kept %v; want it to name the kept file", code, stderr, kept)
		}
	}
}
