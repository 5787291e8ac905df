package proof

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/journal"
	"github.com/intermem/intermem/pkg/store"
)

// envInt reads a positive integer from the environment, or def.
func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := strings.TrimSpace(os.Getenv(name))
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// envSeed reads INTERMEM_PROOF_SEED, or picks one from the clock.
func envSeed(t *testing.T) int64 {
	t.Helper()
	if v := strings.TrimSpace(os.Getenv("INTERMEM_PROOF_SEED")); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("INTERMEM_PROOF_SEED=%q: want an integer", v)
		}
		return n
	}
	return time.Now().UnixNano()
}

// snapEntry is one path of a dirSnapshot.
type snapEntry struct {
	rel  string
	mode fs.FileMode
	data []byte // file content, or symlink target
}

// dirSnapshot holds the exact state of a directory tree (files with their
// modes, directories, symlinks), so one prepared fixture can be put back
// byte for byte before every round instead of being prepared again.
type dirSnapshot []snapEntry

func takeSnapshot(t *testing.T, dir string) dirSnapshot {
	t.Helper()
	var out dirSnapshot
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if rel == "." {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		e := snapEntry{rel: rel, mode: info.Mode()}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			e.data = []byte(target)
		case d.Type().IsRegular():
			if e.data, err = os.ReadFile(path); err != nil {
				return err
			}
		case !d.IsDir():
			return fmt.Errorf("%s: cannot snapshot a %v", path, d.Type())
		}
		out = append(out, e)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// restore makes dir hold exactly the snapshot.
func (s dirSnapshot) restore(t *testing.T, dir string) {
	t.Helper()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var dirs []snapEntry
	for _, e := range s { // WalkDir order: parents first
		path := filepath.Join(dir, e.rel)
		var err error
		switch {
		case e.mode.IsDir():
			err = os.Mkdir(path, 0o755)
			dirs = append(dirs, e)
		case e.mode&fs.ModeSymlink != 0:
			err = os.Symlink(string(e.data), path)
		default:
			err = os.WriteFile(path, e.data, e.mode.Perm())
			if err == nil {
				err = os.Chmod(path, e.mode.Perm())
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range dirs {
		if err := os.Chmod(filepath.Join(dir, e.rel), e.mode.Perm()); err != nil {
			t.Fatal(err)
		}
	}
}

// storePath is the fixture's bbolt file.
func (f *fixture) storePath() string { return filepath.Join(f.root, ".intermem", "intermem.db") }

// view reads the fixture's store in-process, read-only (the way a
// second program would), failing the test when it cannot be opened.
func (f *fixture) view(fn func(tx *bolt.Tx) error) {
	f.t.Helper()
	s, err := store.Open(f.storePath(), store.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		f.t.Fatalf("open store read-only: %v", err)
	}
	defer s.Close()
	if err := s.View(fn); err != nil {
		f.t.Fatalf("read store: %v", err)
	}
}

// journalOps returns every journal record in the store by id.
func (f *fixture) journalOps() map[string]*journal.Op {
	f.t.Helper()
	out := map[string]*journal.Op{}
	f.view(func(tx *bolt.Tx) error {
		return store.Each(tx, store.BucketJournal, func(id string, op *journal.Op) error {
			out[id] = op
			return nil
		})
	})
	return out
}

// storeFacts reads the store's promoted records: the ids it believes are
// live in a curated document, and those it believes are archived.
func (f *fixture) storeFacts() (live, archived []string) {
	f.t.Helper()
	f.view(func(tx *bolt.Tx) error {
		return store.Each(tx, store.BucketPromoted, func(id string, r *store.Promoted) error {
			if r.Archived {
				archived = append(archived, id)
			} else {
				live = append(live, id)
			}
			return nil
		})
	})
	sort.Strings(live)
	sort.Strings(archived)
	return live, archived
}

// docFacts reads the curated documents: ids marked in CLAUDE.md, AGENTS.md
// and docs/intermem/*.md, and ids recorded in the archive.
func (f *fixture) docFacts() (live, archived []string) {
	f.t.Helper()
	for path, body := range f.tree() {
		if !strings.HasPrefix(path, "proj/") {
			continue
		}
		if strings.HasSuffix(path, ".archived.md") {
			for _, m := range archivedRE.FindAllStringSubmatch(body, -1) {
				archived = append(archived, m[1])
			}
			continue
		}
		for _, m := range anyMarkerRE.FindAllStringSubmatch(body, -1) {
			live = append(live, m[1])
		}
	}
	sort.Strings(live)
	sort.Strings(archived)
	return live, archived
}

// decodeJSON decodes a command's stdout or fails with it.
func decodeJSON(t *testing.T, what, out string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("%s: not JSON (%v):\n%s", what, err, out)
	}
}

// percentile returns the p-th percentile (0–100) of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p/100+0.5) - 1
	if i < 0 {
		i = 0
	}
	if i >= len(sorted) {
		i = len(sorted) - 1
	}
	return sorted[i]
}

// candidates lists the texts a plan offers.
func candidates(plan map[string]any) []string {
	var out []string
	list, _ := plan["candidates"].([]any)
	for _, c := range list {
		out = append(out, c.(map[string]any)["text"].(string))
	}
	return out
}
