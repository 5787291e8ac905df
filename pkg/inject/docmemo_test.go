package inject

import (
	hexbytes "encoding/hex"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/intermem/intermem/pkg/store"
)

// TestDocMemo: a session start over documents the catalog holds no record
// of (no store here: a project whose store only the Stop hook wrote is
// the same) derives each from its bytes once; the next, with the index it
// saved, derives none and reads the same records. A document edited
// since is derived again; one whose import path holds a secret is never
// memoized (docrecord keeps no record of it), nor is the secret written.
func TestDocMemo(t *testing.T) {
	f, _ := docFixture(t)
	path := filepath.Join(f.root, ".intermem", IndexName)
	start := func() (*docSet, int) {
		t.Helper()
		ix := LoadIndex(path)
		g := newGatherer(f.env, ix)
		if err := g.memory(func() (*store.Store, func(), error) { return nil, func() {}, nil }); err != nil {
			t.Fatal(err)
		}
		r := newDocReader(g.docs, f.root, f.home, ix)
		ds := discover(f.env, f.root, r)
		if err := ix.Save(path); err != nil {
			t.Fatal(err)
		}
		return ds, r.derived
	}
	first, derived := start()
	if derived != 2 {
		t.Fatalf("first start: %d documents derived, want 2", derived)
	}
	second, derived := start()
	if derived != 0 {
		t.Fatalf("second start: %d documents derived, want none (memoized)", derived)
	}
	if !reflect.DeepEqual(first.claude.Record, second.claude.Record) || !reflect.DeepEqual(first.details[0].d.Record, second.details[0].d.Record) {
		t.Fatalf("the memoized records differ from the derived ones:\n%+v\n%+v", first.claude.Record, second.claude.Record)
	}

	layout(t, f.root, map[string]string{"docs/intermem/deploy.md": "# Detail two\n\n- Another detail.\n"})
	ds, derived := start()
	if got := detailTitle(t, ds); derived != 1 || got != "Detail two" {
		t.Fatalf("after an edit: %d derived, title %q; want 1, %q", derived, got, "Detail two")
	}

	secret := "ghp_" + strings.Repeat("a1B2", 9)
	layout(t, f.root, map[string]string{"CLAUDE.md": "# C\n\n- Said here.\n\n@" + secret + ".md\n"})
	for i := range 2 {
		if _, derived := start(); derived != 1 {
			t.Fatalf("start %d with a secret import path: %d derived, want 1 (never memoized)", i, derived)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), secret) || strings.Contains(string(b), hexbytes.EncodeToString([]byte(secret))) {
		t.Fatal("the index holds the secret")
	}
}
