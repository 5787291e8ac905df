package inject

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/snapshot"
	"github.com/intermem/intermem/pkg/source/automemory"
	"github.com/intermem/intermem/pkg/store"
)

// hookProject is the memory fixture as the hooks meet it: a git project
// whose store only the hooks write, run as Claude Code runs them.
type hookProject struct {
	t *testing.T
	f *fixture
}

func newHookProject(t *testing.T) *hookProject {
	t.Helper()
	// deploy.md is long enough that the catalog's buckets have pages of
	// their own (a small bucket is inline in its parent, its root 0).
	var deploy strings.Builder
	deploy.WriteString("# Deploy\n- Staging deploys run from main.\n")
	for i := range 100 {
		fmt.Fprintf(&deploy, "- Deploy step %d waits for the release flag of stage %d.\n", i, i)
	}
	f := newFixture(t, map[string]string{"CLAUDE.md": "# C\n"}, map[string]string{
		"MEMORY.md": "# M\n- [Deploy](deploy.md) — staging deploys need the release flag\n- [[build-notes]] — how the build runs\n",
		"deploy.md": deploy.String(),
		"notes.md":  "---\nname: build-notes\ndescription: Builds use make release\ntype: project\n---\nRun make release before tagging.\n",
	}, nil)
	if err := os.Mkdir(filepath.Join(f.root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour) // past every racy window
	for _, p := range []string{filepath.Join(f.root, "CLAUDE.md"), filepath.Join(f.mem, "MEMORY.md"), filepath.Join(f.mem, "deploy.md"), filepath.Join(f.mem, "notes.md")} {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	return &hookProject{t: t, f: f}
}

// hook runs the Stop/SessionEnd hook (intermem-snapshot) for session at
// event.
func (h *hookProject) hook(session, event string) {
	h.t.Helper()
	payload := `{"session_id":"` + session + `","cwd":"` + h.f.root + `","hook_event_name":"` + event + `"}`
	var out bytes.Buffer
	vars := []string{"HOME=" + h.f.home, "INTERMEM_MEMORY_DIR=" + h.f.mem, "INTERMEM_CHECKPOINT_INTERVAL=0"}
	if code := snapshot.Main(cli.New(vars, h.f.root, strings.NewReader(payload), &out, &out), nil); code != 0 || out.Len() > 0 {
		h.t.Fatalf("%s %s: exit %d, output %q", session, event, code, out.String())
	}
	if b, _ := os.ReadFile(filepath.Join(h.f.root, ".intermem", "log")); len(b) > 0 {
		h.t.Fatalf("%s %s logged:\n%s", session, event, b)
	}
}

// store runs fn over the hooks' store, opened for writing.
func (h *hookProject) store(fn func(ct *store.CatalogTx, tx *bolt.Tx)) {
	h.t.Helper()
	s, err := store.Open(filepath.Join(h.f.root, ".intermem", "intermem.db"), store.Options{})
	if err != nil {
		h.t.Fatal(err)
	}
	defer s.Close()
	if err := s.Update(func(tx *bolt.Tx) error { fn(store.Catalog(tx), tx); return nil }); err != nil {
		h.t.Fatal(err)
	}
}

// parsed returns how many memory files a session start parses itself,
// having no stored parse of theirs to use.
func (h *hookProject) parsed() int {
	h.t.Helper()
	s, err := store.Open(filepath.Join(h.f.root, ".intermem", "intermem.db"), store.Options{ReadOnly: true})
	if err != nil {
		h.t.Fatal(err)
	}
	defer s.Close()
	ms, err := memFiles(nil, h.f.mem, func() (*store.Store, func(), error) { return s, func() {}, nil }, NewIndex(), nil)
	if err != nil {
		h.t.Fatal(err)
	}
	if len(ms.files) != 3 {
		h.t.Fatalf("the session start read %d memory files, want 3", len(ms.files))
	}
	return ms.parsed
}

func parseKey(name string) string { return store.FileKey(automemory.Name, automemory.Prefix+name) }

// TestSessionEndRerecords: a store an older intermem wrote holds a memory
// file's parse as JSON (another version), and another's is damaged; a
// session start parses both files itself, at every start, since no turn
// reads an unchanged file again. The session's end stores their parses
// again, which the next session start uses (it parses no file); a current
// parse is never rewritten: a session end over current parses leaves the
// catalog's pages where they were, and the one beside the renewed ones
// keeps its bytes.
func TestSessionEndRerecords(t *testing.T) {
	h := newHookProject(t)
	h.hook("A", "Stop") // reads every file and stores its parse, unscreened
	h.hook("A", "SessionEnd")
	// Every parse screened, as catalog.Build stores a file's it parses:
	// current, and other bytes than a parse stored unscreened.
	h.store(func(ct *store.CatalogTx, _ *bolt.Tx) {
		for _, name := range []string{"MEMORY.md", "deploy.md", "notes.md"} {
			content, err := os.ReadFile(filepath.Join(h.f.mem, name))
			if err != nil {
				t.Fatal(err)
			}
			f, ok := ct.File(parseKey(name))
			blob, encoded := automemory.Encode(automem.ParseMeasured(name, content), true)
			if !ok || !encoded {
				t.Fatalf("%s: no catalog record (%v) or no parse (%v)", name, ok, encoded)
			}
			if err := ct.PutParse(automemory.Name, automemory.Prefix+name, f.FP, false, blob, now); err != nil {
				t.Fatal(err)
			}
		}
	})
	if n := h.parsed(); n != 0 {
		t.Fatalf("with every parse stored, a session start parses %d files", n)
	}

	// A session end over current parses rewrites none.
	roots := func() (blobs, files uint64) {
		h.store(func(_ *store.CatalogTx, tx *bolt.Tx) {
			blobs, files = uint64(tx.Bucket(store.BucketCatBlobs).Root()), uint64(tx.Bucket(store.BucketCatFiles).Root())
		})
		return blobs, files
	}
	// The first records, beside each file's entries, the key of what the
	// rest of the directory decided of them (CatalogFile.Resolved, which
	// PutParse cleared): its parses stay as they are. The next rewrites
	// nothing at all.
	blobs, _ := roots()
	h.hook("B", "SessionEnd")
	b, files := roots()
	if b != blobs {
		t.Errorf("a session end over current parses moved the blobs' pages: root %d → %d", blobs, b)
	}
	h.store(func(ct *store.CatalogTx, _ *bolt.Tx) {
		for _, name := range []string{"MEMORY.md", "deploy.md", "notes.md"} {
			if f, ok := ct.File(parseKey(name)); !ok || f.Resolved == "" {
				t.Errorf("%s: a session end over its current parse recorded no resolution key", name)
			}
		}
	})
	blobs = b
	h.hook("B0", "SessionEnd")
	if b, f := roots(); b != blobs || f != files {
		t.Errorf("a session end over current parses and keys moved the catalog's pages: blobs' root %d → %d, files' root %d → %d", blobs, b, files, f)
	}

	// An older intermem's JSON parse of deploy.md, a damaged one of
	// notes.md (its last bytes cut); MEMORY.md's stays current.
	old := `{"file":{"safe_name":"deploy.md","entries":[{"ID":"0123456789abcdef","Kind":"fact","File":"deploy.md","Section":"Deploy","Text":"Staging deploys run from main.","StartLine":2,"EndLine":2}]},"screened":false}`
	var index []byte
	h.store(func(ct *store.CatalogTx, _ *bolt.Tx) {
		notes := ct.Blob(parseKey("notes.md"))
		if _, _, screened, err := automemory.Decode("notes.md", notes); err != nil || !screened {
			t.Fatalf("notes.md's stored parse is not the current screened one: %v", err)
		}
		index = slices.Clone(ct.Blob(parseKey("MEMORY.md")))
		if err := ct.PutBlob(parseKey("deploy.md"), []byte(old)); err != nil {
			t.Fatal(err)
		}
		if err := ct.PutBlob(parseKey("notes.md"), slices.Clone(notes[:len(notes)-3])); err != nil {
			t.Fatal(err)
		}
	})
	if n := h.parsed(); n != 2 {
		t.Fatalf("with an old and a damaged stored parse, a session start parses %d files, want 2", n)
	}
	h.hook("B", "Stop") // a turn reads no unchanged file: no change
	if n := h.parsed(); n != 2 {
		t.Fatalf("after a turn, a session start parses %d files, want 2", n)
	}

	h.hook("C", "SessionEnd")
	if n := h.parsed(); n != 0 {
		t.Errorf("after a session end, a session start still parses %d files itself", n)
	}
	h.store(func(ct *store.CatalogTx, _ *bolt.Tx) {
		for _, name := range []string{"deploy.md", "notes.md"} {
			if _, _, _, err := automemory.Decode(name, ct.Blob(parseKey(name))); err != nil {
				t.Errorf("%s's stored parse after the session end: %v", name, err)
			}
		}
		if got := ct.Blob(parseKey("MEMORY.md")); !bytes.Equal(got, index) {
			t.Errorf("MEMORY.md's current stored parse was rewritten")
		}
	})
}
