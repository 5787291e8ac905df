package snapshot

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/catalog"
	"github.com/intermem/intermem/pkg/source"
	"github.com/intermem/intermem/pkg/store"
)

// A session's end stores the other sources in the catalog, one source per
// transaction; a later session start reads them without a scan. Past its
// deadline it starts no source and says so; switched-off sources are left
// alone, auto-memory is brought up to date last; a file's problems are
// logged once.
func TestRefreshCatalog(t *testing.T) {
	root := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("docs/solutions/a/retry.md", "---\ncomponent: billing\n---\n# Retries stormed\n\n## Root Cause\nNo jitter.\n")
	write("docs/solutions/a/broken.md", "---\ncomponent: [billing\n---\n# Broken frontmatter\n")
	write(".clavain/learnings/pay.md", "The pay handler stays idempotent.\n\nEvidence: src/pay.go:1-2\n")
	write(".interfluence/learnings-raw.log", "--- 2026-10-30T10:00:00Z | src/pay.go | CONTEXT:code ---\nOLD: a\nNEW: b\n")
	mem := filepath.Join(root, "memory")
	write("memory/MEMORY.md", "# M\n- A memory.\n")
	s, err := store.Open(filepath.Join(root, "intermem.db"), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	env := source.Env{Root: root, MemoryDir: mem}
	var log []string
	logf := func(f string, a ...any) { log = append(log, fmt.Sprintf(f, a...)) }
	now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)

	// Past its deadline: nothing started.
	done, err := RefreshCatalog(s, Refresh{Env: env, Now: now, Deadline: time.Now().Add(-time.Second), Logf: logf})
	if err != nil || done {
		t.Fatalf("past the deadline: %v, %v", done, err)
	}
	if len(log) != 1 || log[0] != "catalog: clavain and the sources after it are brought up to date at the next session end" {
		t.Fatalf("log %q", log)
	}

	log = nil
	switches := map[string]bool{"interfluence": false}
	for i := 0; i < 2; i++ {
		done, err := RefreshCatalog(s, Refresh{Env: env, Switches: switches, Now: now, Logf: logf})
		if err != nil || !done {
			t.Fatalf("refresh %d: %v, %v", i, done, err)
		}
	}
	// The broken frontmatter is logged once, by the first refresh.
	if len(log) != 1 || !strings.HasPrefix(log[0], "catalog: docs/solutions/a/broken.md:") {
		t.Fatalf("log %q", log)
	}
	got := map[string]int{}
	if err := s.View(func(tx *bolt.Tx) error {
		ct := store.Catalog(tx)
		for _, src := range []string{"auto-memory", "clavain", "compound", "interfluence"} {
			_ = ct.Files(src, func(f *store.CatalogFile) error { got[src] += len(f.IDs); return nil })
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "map[auto-memory:1 clavain:1 compound:2]" {
		t.Fatalf("stored entries by source %v, want auto-memory 1, clavain 1, compound 2 (switched-off interfluence left alone)", got)
	}
}

// A session's end after a solution document was edited leaves the search
// index current: what changed is stored as a delta over the index a
// command stored, so the next read-only search decodes the index (at the
// catalog's generation) instead of building it, and finds the document by
// its new words, not its old ones.
func TestRefreshCatalogSettlesIndex(t *testing.T) {
	root := t.TempDir()
	old := time.Now().Add(-time.Hour) // outside the racy window
	write := func(rel, content string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	write("docs/solutions/a/retry.md", "# Retries stormed\n\n## Root Cause\nNo jitter in the billing client.\n")
	write("docs/solutions/a/cache.md", "# Plugin cache went stale\n\n## Root Cause\nThe cache path changes on publish.\n")
	write(".clavain/learnings/pay.md", "The pay handler stays idempotent.\n")
	s, err := store.Open(filepath.Join(root, "intermem.db"), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	env := source.Env{Root: root, MemoryDir: filepath.Join(root, "memory")}
	now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	cfg := catalog.Config{Env: env, Now: now}
	// A command stores the catalog and its index (a base).
	if err := s.Update(func(tx *bolt.Tx) error {
		c, err := catalog.Build(store.Catalog(tx), cfg)
		if err != nil {
			return err
		}
		return c.Settle()
	}); err != nil {
		t.Fatal(err)
	}
	write("docs/solutions/a/retry.md", "# Retries stormed\n\n## Root Cause\nThe invoice renderer retried without backoff.\n")
	if done, err := RefreshCatalog(s, Refresh{Env: env, Now: now}); err != nil || !done {
		t.Fatalf("refresh: %v, %v", done, err)
	}
	err = s.View(func(tx *bolt.Tx) error {
		ct := store.Catalog(tx)
		if b, at := ct.Index(); b == nil || at != ct.Generation() || ct.IndexDelta() == nil {
			t.Errorf("after the session's end the index is at generation %d of %d (delta %d bytes): the next search builds it",
				at, ct.Generation(), len(ct.IndexDelta()))
		}
		c, err := catalog.Build(ct, cfg)
		if err != nil {
			return err
		}
		if c.Changed() {
			t.Error("the read-only Build found changes the session's end did not store")
		}
		for q, want := range map[string]string{"invoice backoff": "docs/solutions/a/retry.md", "jitter billing": ""} {
			hits, err := c.Search(catalog.Query{Text: q, Now: now})
			if err != nil {
				return err
			}
			got := ""
			if len(hits) > 0 {
				got = hits[0].Path
			}
			if got != want {
				t.Errorf("%q: first hit %q, want %q", q, got, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A session's end after an upgrade (a stored index that does not decode)
// stores a new base, which a read-only search decodes; with nothing to
// do, it stores nothing.
func TestSettleBase(t *testing.T) {
	root := t.TempDir()
	old := time.Now().Add(-time.Hour)
	for i := range 40 {
		p := filepath.Join(root, ".clavain", "learnings", fmt.Sprintf("l%02d.md", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		text := fmt.Sprintf("Learning %d: the spool keeps segment %d.\n", i, i)
		if i == 7 {
			text = "The invoice renderer retries with backoff.\n"
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	s, err := store.Open(filepath.Join(root, "intermem.db"), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	env := source.Env{Root: root, MemoryDir: filepath.Join(root, "memory")}
	now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	if done, err := RefreshCatalog(s, Refresh{Env: env, Now: now}); err != nil || !done {
		t.Fatalf("refresh: %v, %v", done, err)
	}
	// No base yet: the session's end stores one.
	if ok, err := SettleBase(context.Background(), s); err != nil || !ok {
		t.Fatalf("no index: SettleBase %v, %v", ok, err)
	}
	if ok, err := SettleBase(context.Background(), s); err != nil || ok {
		t.Fatalf("a current index: SettleBase %v, %v", ok, err)
	}
	if err := s.Update(func(tx *bolt.Tx) error {
		ct := store.Catalog(tx)
		return ct.PutIndex([]byte("IMSX\x01an older format"), ct.Generation())
	}); err != nil {
		t.Fatal(err)
	}
	if ok, err := SettleBase(context.Background(), s); err != nil || !ok {
		t.Fatalf("an undecodable index: SettleBase %v, %v", ok, err)
	}
	if err := s.View(func(tx *bolt.Tx) error {
		ct := store.Catalog(tx)
		c, err := catalog.Build(ct, catalog.Config{Env: env, Now: now})
		if err != nil {
			return err
		}
		before := store.Accesses()
		hits, err := c.Search(catalog.Query{Text: "invoice renderer backoff", Limit: 1, Now: now})
		if err != nil || len(hits) != 1 || hits[0].Path != ".clavain/learnings/l07.md" {
			t.Fatalf("hits %v %+v", err, hits)
		}
		if n := store.Accesses() - before; n > 10 {
			t.Errorf("a search over the stored base read %d records, want at most 10 (the index built again)", n)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// A session's end after an upgrade, over more entries than a segment of
// the base holds, that runs out of time after its first segment keeps it;
// the next session's end goes on from it (building the second alone, not
// the first again) and stores the base an uncut session's end stores; a
// read-only search between finds what the finished base finds.
func TestSettleBaseResumes(t *testing.T) {
	root := t.TempDir()
	var log strings.Builder
	for i := range 4500 {
		fmt.Fprintf(&log, "--- 2026-02-16T10:%02d:%02dZ | src/f%04d.go | CONTEXT:prose ---\nOLD: worker %d retries at once\nNEW: worker %d backs off\n", (i/60)%60, i%60, i, i, i)
	}
	p := filepath.Join(root, ".interfluence", "learnings-raw.log")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(log.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(filepath.Join(root, "intermem.db"), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	env := source.Env{Root: root, MemoryDir: filepath.Join(root, "memory")}
	now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	if err := s.Update(func(tx *bolt.Tx) error {
		_, err := catalog.Build(store.Catalog(tx), catalog.Config{Env: env, Now: now})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	upgrade := func() {
		if err := s.Update(func(tx *bolt.Tx) error {
			ct := store.Catalog(tx)
			return ct.PutIndex([]byte("IMSX\x01an older format"), ct.Generation())
		}); err != nil {
			t.Fatal(err)
		}
	}
	// stored returns the stored base and how many segments of a build
	// are stored.
	stored := func() (base []byte, segs int) {
		s.View(func(tx *bolt.Tx) error {
			ct := store.Catalog(tx)
			b, _ := ct.Index()
			base = slices.Clone(b)
			for ct.IndexSegment(segs) != nil {
				segs++
			}
			return nil
		})
		return base, segs
	}
	search := func() string {
		var out []string
		if err := s.View(func(tx *bolt.Tx) error {
			c, err := catalog.Build(store.Catalog(tx), catalog.Config{Env: env, Now: now})
			if err != nil {
				return err
			}
			hits, err := c.Search(catalog.Query{Text: "worker 4321 backs off", Limit: 5, Now: now})
			for _, h := range hits {
				out = append(out, fmt.Sprintf("%s:%d %.6f", h.Path, h.Line, h.Score))
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return strings.Join(out, "\n")
	}
	upgrade()
	if ok, err := SettleBase(context.Background(), s); err != nil || !ok {
		t.Fatalf("uncut: SettleBase %v, %v", ok, err)
	}
	uncut, _ := stored()
	want := search()
	if !strings.HasPrefix(want, ".interfluence/learnings-raw.log:") {
		t.Fatalf("nothing found: %q", want)
	}

	upgrade()
	cut := 0
	if ok, err := settleBase(context.Background(), s, func() bool { cut++; return false }); err != nil || ok || cut != 1 {
		t.Fatalf("cut after a segment: stored the base %v (asked %d times), %v", ok, cut, err)
	}
	if base, segs := stored(); base != nil || segs != 1 {
		t.Fatalf("cut after a segment: a base of %d bytes, %d segments stored", len(base), segs)
	}
	if got := search(); got != want {
		t.Errorf("a search between finds\n%s\nwant\n%s", got, want)
	}
	asked := 0
	if ok, err := settleBase(context.Background(), s, func() bool { asked++; return true }); err != nil || !ok || asked != 0 {
		t.Fatalf("the next session's end: stored the base %v after %d more segments, %v", ok, asked, err)
	}
	base, segs := stored()
	if segs != 0 || !slices.Equal(base, uncut) {
		t.Errorf("the base finished (%d bytes, %d segments left) is not the uncut build's (%d bytes)", len(base), segs, len(uncut))
	}
	if got := search(); got != want {
		t.Errorf("after, a search finds\n%s\nwant\n%s", got, want)
	}
}
