package retrieve

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/catalog"
	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/project"
	"github.com/intermem/intermem/pkg/store"
)

// A search reads the hits it shows: with nothing from another index to
// score with them, the catalog's candidates (three times the limit) are
// read only until limit distinct ids are found.
func TestSearchReadsTheHitsItShows(t *testing.T) {
	base := t.TempDir()
	root, home := filepath.Join(base, "proj"), filepath.Join(base, "home")
	for _, d := range []string{root, home, filepath.Join(base, "memory")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("git", "-C", root, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	old := time.Now().Add(-time.Hour)
	for i := range 12 {
		p := filepath.Join(root, ".clavain", "learnings", fmt.Sprintf("l%02d.md", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		body := fmt.Sprintf("---\nlastConfirmed: 2026-02-%02d\n---\nThe zebra cache needs warming, case %d.\n", i+1, i)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	env := cli.New([]string{"HOME=" + home, "INTERMEM_MEMORY_DIR=" + filepath.Join(base, "memory"), "INTERMEM_NOW=2026-03-01T10:00:00Z"},
		root, strings.NewReader(""), new(bytes.Buffer), new(bytes.Buffer))
	p, err := project.Resolve(env, root)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.EnsureStateDir(); err != nil {
		t.Fatal(err)
	}
	// A writer's build, its index settled, as a command leaves the store.
	st, err := store.Open(p.Path("intermem.db"), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	now, _ := env.Now()
	cfg, err := catalog.ProjectConfig(env, p, now)
	if err != nil {
		t.Fatal(err)
	}
	err = st.Update(func(tx *bolt.Tx) error {
		c, err := catalog.Build(store.Catalog(tx), cfg)
		if err != nil {
			return err
		}
		return c.Settle()
	})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	search := func(text string, limit int) (int, uint64) {
		t.Helper()
		before := store.Accesses()
		got, err := SearchScoped(env, p, Options{Wait: time.Second}, ScopedQuery{Query: Query{Text: text, Limit: limit, Now: now}})
		if err != nil {
			t.Fatal(err)
		}
		return len(got.Results), store.Accesses() - before
	}
	n, none := search("quokka", 1) // the same reads, and no hit
	if n != 0 {
		t.Fatalf("%d hits for a word no learning holds", n)
	}
	for _, limit := range []int{1, 3} {
		n, acc := search("zebra warming", limit)
		if n != limit {
			t.Fatalf("limit %d: %d hits", limit, n)
		}
		// Each hit shown: its entry, fact, overlay record, promotion.
		if read := acc - none; read > uint64(4*limit) {
			t.Errorf("limit %d: %d record accesses past a search with no hit, want at most %d", limit, read, 4*limit)
		}
	}
}
