package inject

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/catalog"
	"github.com/intermem/intermem/pkg/source"
	"github.com/intermem/intermem/pkg/source/automemory"
	"github.com/intermem/intermem/pkg/store"
)

// memoryFixture is a project whose memory has an index line pointing to a
// one-memory file by its frontmatter name, and one pointing to a file
// that may be removed: a pointer while the file exists, the memory itself
// (a fact) once it is gone.
func memoryFixture(t *testing.T) (*fixture, *store.Store) {
	t.Helper()
	f := newFixture(t, map[string]string{"CLAUDE.md": "# C\n"}, map[string]string{
		"MEMORY.md": "# M\n- [Deploy](deploy.md) — staging deploys need the release flag\n- [[build-notes]] — how the build runs\n",
		"deploy.md": "# Deploy\n- Staging deploys run from main.\n",
		"notes.md":  "---\nname: build-notes\ndescription: Builds use make release\ntype: project\n---\nRun make release before tagging.\n",
	}, nil)
	old := time.Now().Add(-time.Hour) // past every racy window
	for _, n := range []string{"MEMORY.md", "deploy.md", "notes.md"} {
		if err := os.Chtimes(filepath.Join(f.mem, n), old, old); err != nil {
			t.Fatal(err)
		}
	}
	s, err := store.Open(filepath.Join(f.root, ".intermem", "intermem.db"), store.Options{NoSync: true, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return f, s
}

// build brings the catalog up to date as a command does, and returns the
// ids of its live auto-memory entries.
func buildCatalog(t *testing.T, f *fixture, s *store.Store) []string {
	t.Helper()
	var ids []string
	cfg := catalog.Config{Env: source.Env{Root: f.root, MemoryDir: f.mem, Home: f.home}, Now: now}
	if err := s.Update(func(tx *bolt.Tx) error {
		c, err := catalog.Build(store.Catalog(tx), cfg)
		if err != nil {
			return err
		}
		for _, e := range c.Entries(automemory.Name) {
			ids = append(ids, e.ID)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	sort.Strings(ids)
	return ids
}

// shown returns the candidates' texts and the ids of every memory entry a
// session start counts as knowledge (candidates and the MEMORY.md lines
// that are facts, not pointers).
func shown(t *testing.T, f *fixture, s *store.Store) (texts, ids []string) {
	t.Helper()
	in, err := Gather(f.env, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range in.Candidates {
		texts = append(texts, c.Kind+": "+c.Text)
		ids = append(ids, c.ID)
	}
	// MEMORY.md's own facts are loaded, not candidates: count them from
	// the same gather's view of the index.
	g := newGatherer(f.env, nil)
	if err := g.memory(func() (*store.Store, func(), error) { return s, func() {}, nil }); err != nil {
		t.Fatal(err)
	}
	for _, mf := range g.mem {
		if mf.Name != automem.IndexName {
			continue
		}
		for i := range mf.Entries {
			if en := &mf.Entries[i]; !g.isPointer(en) {
				ids = append(ids, en.ID)
			}
		}
	}
	sort.Strings(texts)
	sort.Strings(ids)
	return texts, ids
}

// TestMemoryThroughCatalog: a session start's memory entries are the
// catalog's — the same ids for the same directory — as files come and go,
// an index line turning from a pointer into a fact and back.
func TestMemoryThroughCatalog(t *testing.T) {
	f, s := memoryFixture(t)
	check := func(what string, wantTexts []string) {
		t.Helper()
		want := buildCatalog(t, f, s)
		texts, ids := shown(t, f, s)
		if !reflect.DeepEqual(texts, wantTexts) {
			t.Errorf("%s: shown\n%q\nwant\n%q", what, texts, wantTexts)
		}
		if !reflect.DeepEqual(ids, want) {
			t.Errorf("%s: session start's ids %q, the catalog's %q", what, ids, want)
		}
	}
	check("both files", []string{
		"fact: Staging deploys run from main.",
		"memory: Builds use make release",
	})
	// deploy.md goes: its index line is the only copy of that memory.
	if err := os.Rename(filepath.Join(f.mem, "deploy.md"), filepath.Join(f.root, "deploy.md")); err != nil {
		t.Fatal(err)
	}
	check("deploy.md gone", []string{"memory: Builds use make release"})
	texts, ids := shown(t, f, s)
	if len(ids) != 2 || len(texts) != 1 {
		t.Errorf("the index line to a gone file is not a fact: %q %q", texts, ids)
	}
	// It comes back: a pointer again.
	if err := os.Rename(filepath.Join(f.root, "deploy.md"), filepath.Join(f.mem, "deploy.md")); err != nil {
		t.Fatal(err)
	}
	check("deploy.md back", []string{
		"fact: Staging deploys run from main.",
		"memory: Builds use make release",
	})
}

// TestMemoryReadFromStore: a session start takes a file's parse from the
// store while the file has the fingerprint it was stored for, and reads
// the file once it changed. The stored parse here is of other bytes than
// the file's, which only a session start reading the store would show.
func TestMemoryReadFromStore(t *testing.T) {
	f, s := memoryFixture(t)
	path := filepath.Join(f.mem, "deploy.md")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	blob, ok := automemory.Encode(automem.ParseMeasured("deploy.md", []byte("# Deploy\n- Stored, not on disk.\n")), true)
	if !ok {
		t.Fatal("not encodable")
	}
	if err := s.Update(func(tx *bolt.Tx) error {
		return store.Catalog(tx).PutParse(automemory.Name, "memory/deploy.md", source.FingerprintOf(fi), false, blob, now)
	}); err != nil {
		t.Fatal(err)
	}
	texts, _ := shown(t, f, s)
	if want := []string{"fact: Stored, not on disk.", "memory: Builds use make release"}; !reflect.DeepEqual(texts, want) {
		t.Errorf("with a stored parse: %q, want %q", texts, want)
	}
	later := time.Now().Add(-time.Minute)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	texts, _ = shown(t, f, s)
	if want := []string{"fact: Staging deploys run from main.", "memory: Builds use make release"}; !reflect.DeepEqual(texts, want) {
		t.Errorf("after the file changed: %q, want %q", texts, want)
	}
	// A racy fingerprint is trusted by nobody.
	fi, _ = os.Stat(path)
	if err := s.Update(func(tx *bolt.Tx) error {
		return store.Catalog(tx).PutParse(automemory.Name, "memory/deploy.md", source.FingerprintOf(fi), true, blob, now)
	}); err != nil {
		t.Fatal(err)
	}
	texts, _ = shown(t, f, s)
	if want := []string{"fact: Staging deploys run from main.", "memory: Builds use make release"}; !reflect.DeepEqual(texts, want) {
		t.Errorf("with a racy stored parse: %q, want %q", texts, want)
	}
}

// TestMemoryOldRecordParsed: a stored parse in the form an older intermem
// wrote (JSON) at the file's very fingerprint is of another version: the
// session start parses the file rather than misread it.
func TestMemoryOldRecordParsed(t *testing.T) {
	f, s := memoryFixture(t)
	fi, err := os.Stat(filepath.Join(f.mem, "deploy.md"))
	if err != nil {
		t.Fatal(err)
	}
	old := `{"file":{"safe_name":"deploy.md","entries":[{"ID":"0123456789abcdef","Kind":"fact","File":"deploy.md","Section":"Deploy","Text":"Stored, not on disk.","StartLine":2,"EndLine":2}]},"screened":true}`
	if err := s.Update(func(tx *bolt.Tx) error {
		return store.Catalog(tx).PutParse(automemory.Name, "memory/deploy.md", source.FingerprintOf(fi), false, []byte(old), now)
	}); err != nil {
		t.Fatal(err)
	}
	texts, _ := shown(t, f, s)
	if want := []string{"fact: Staging deploys run from main.", "memory: Builds use make release"}; !reflect.DeepEqual(texts, want) {
		t.Errorf("with an old stored parse: %q, want %q", texts, want)
	}
}
