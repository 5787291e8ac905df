package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/source"
	"github.com/intermem/intermem/pkg/store"
)

// settleDirs sets the times of every directory under root an hour back:
// a directory modified within the racy window is read at every walk.
func settleDirs(t *testing.T, root string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	if err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		return os.Chtimes(p, old, old)
	}); err != nil {
		t.Fatal(err)
	}
}

// A per-file source's walk takes an unchanged directory's listing from the
// state its last Build stored, without reading the directory: a name
// planted in the stored listing of .clavain/learnings (whose stat is
// unchanged) is looked for, and reported missing, by the next Build. A
// file added in a subdirectory and a file edited in place are both seen.
func TestUnchangedDirectoryIsNotListed(t *testing.T) {
	f := newFixture(t)
	settleDirs(t, f.root)
	f.update(func(*Catalog) {})

	err := f.st.Update(func(tx *bolt.Tx) error {
		c := &Catalog{tx: store.Catalog(tx)}
		st := c.loadState("clavain")
		l, ok := st.Dirs[".clavain/learnings"]
		if !ok {
			t.Fatalf("no listing of .clavain/learnings stored: %v", st.Dirs)
		}
		l.Entries = append(l.Entries, source.DirEntry{Name: "planted.md"})
		st.Dirs[".clavain/learnings"] = l
		b, err := json.Marshal(st)
		if err != nil {
			return err
		}
		return c.tx.PutState("clavain", b)
	})
	if err != nil {
		t.Fatal(err)
	}
	f.view(func(c *Catalog) {
		var planted []string
		for _, p := range c.Fresh() {
			if p.Path == ".clavain/learnings/planted.md" && strings.Contains(p.Message, "cannot be read") {
				planted = append(planted, p.Message)
			}
		}
		if len(planted) != 1 {
			t.Errorf("the planted name was not looked for: the directory was read again (problems %v)", c.Fresh())
		}
	})

	f.update(func(*Catalog) {}) // a writer stores the listing as it is
	f.write("docs/solutions/runtime/deeper/retry.md", "---\ndate: 2026-02-25\n---\n# Retries need jitter\n")
	auth := filepath.Join(f.root, ".clavain/learnings/auth.md")
	if err := os.WriteFile(auth, []byte("---\nlastConfirmed: 2026-02-10\n---\nAuth middleware now honours cancellation.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.view(func(c *Catalog) {
		if got := paths(c.Entries("compound")); !slices.Contains(got, "compound:docs/solutions/runtime/deeper/retry.md") {
			t.Errorf("a file added in a subdirectory was not seen: %q", got)
		}
		var text string
		for _, e := range c.Entries("clavain") {
			if e.Path == ".clavain/learnings/auth.md" {
				text = e.Text
			}
		}
		if !strings.Contains(text, "now honours cancellation") {
			t.Errorf("a file edited in place was not seen: %q", text)
		}
	})
}

// appendFP writes a fingerprint as %+v does: stored keys were made with
// %+v, and a key that changes form makes every source scan again once.
func TestAppendFP(t *testing.T) {
	fp := source.Fingerprint{Size: 1234, ModTime: -5, Inode: 1 << 40, Change: 1700000000123456789}
	if got, want := string(appendFP(nil, fp)), "{Size:1234 ModTime:-5 Inode:1099511627776 Change:1700000000123456789}"; got != want {
		t.Errorf("appendFP = %q, want %q", got, want)
	}
}

// A listing key is the SHA-256 of its parts, each followed by a NUL
// byte, whether the parts fit the stamp's buffer or are summed as it
// fills: stored keys were made over one buffer, and a key that changes
// form makes every source scan again once.
func TestListingKeyBytes(t *testing.T) {
	env := source.Env{Root: "/r", MemoryDir: "/m"}
	old := time.Now().Add(-time.Hour)
	fp := source.Fingerprint{Size: 7, ModTime: old.UnixNano(), Inode: 9, Change: old.UnixNano()}
	for _, n := range []int{0, 1, 2000} {
		var files []source.File
		want := "files\x00/r\x00/m\x00"
		for i := range n {
			p := "docs/solutions/" + strings.Repeat("x", i%50) + ".md"
			files = append(files, source.File{Path: p, FP: fp})
			want += p + "\x00\x00" + string(appendFP(nil, fp)) + "\x00"
		}
		probs := []source.Problem{{Path: "a", Message: "b"}}
		want += "a: b\x00" // a problem as %+v writes it: its String
		sum := sha256.Sum256([]byte(want))
		if got := listingKey(env, files, probs, time.Now()); got != hex.EncodeToString(sum[:16]) {
			t.Errorf("%d files: key %s, want the sum of the parts %x", n, got, sum[:16])
		}
	}
}

// An edit in place made after a writer stored the catalog, its sources'
// states and the search index — the file's size kept, its directory
// untouched, its new time well outside the racy window — is found by the
// next read-only search: the file's own stat is taken and tells it, the
// stored listing and index notwithstanding. Before the edit, the search
// decodes the stored index (it is at the catalog's generation).
func TestSearchSeesEditInPlace(t *testing.T) {
	f := newFixture(t)
	settleDirs(t, f.root)
	settleDirs(t, f.mem)
	f.update(func(c *Catalog) {
		if err := c.Settle(); err != nil {
			t.Fatal(err)
		}
	})
	search := func(text string) []string {
		var got []string
		f.view(func(c *Catalog) {
			hits, err := c.Search(Query{Text: text, Now: f.now})
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hits {
				got = append(got, h.Source+":"+h.Path)
			}
		})
		return got
	}
	if got := search("quokka"); len(got) > 0 {
		t.Fatalf("quokka found before the edit: %q", got)
	}
	auth := filepath.Join(f.root, ".clavain/learnings/auth.md")
	before, err := os.ReadFile(auth)
	if err != nil {
		t.Fatal(err)
	}
	after := strings.Replace(string(before), "swallows", "quokkas!", 1)
	if after == string(before) || len(after) != len(before) {
		t.Fatal("the edit does not keep the size")
	}
	dir, err := os.Stat(filepath.Dir(auth))
	if err != nil {
		t.Fatal(err)
	}
	f.write(".clavain/learnings/auth.md", after)
	if again, err := os.Stat(filepath.Dir(auth)); err != nil || !again.ModTime().Equal(dir.ModTime()) {
		t.Fatalf("the edit changed its directory: %v", err)
	}
	if got, want := search("quokka"), []string{"clavain:.clavain/learnings/auth.md"}; !slices.Equal(got, want) {
		t.Errorf("after an edit in place, quokka finds %q, want %q", got, want)
	}
}
