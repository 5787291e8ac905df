package proof

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/catalog"
	"github.com/intermem/intermem/pkg/source"
	"github.com/intermem/intermem/pkg/store"
)

// maxSearchReads bounds the store records a read-only search reads over a
// catalog and index the hooks kept current: each source's stored state,
// the index's records and the five hits it shows, each a few records (24
// to 40 here). Scanning auto-memory again reads every memory file's
// stored parse and record and more (174 here); building the index reads
// every entry and its overlay (3,800).
const maxSearchReads = 50

// What the sessions' hooks leave behind is current for a read-only search
// (intermem search, the MCP server's tools), which cannot store anything:
// after memory edits, their Stops and a SessionEnd, the search reads only
// what the hooks stored — every source's state found unchanged by its
// stats, the index decoded in place — and finds the new fact. Three
// histories: one fact added (auto-memory's stored state was left stale,
// and every search scanned the memory whole again); edits over several
// sessions until more ids changed than a delta over the index's base
// takes (every search built the whole index); and an index that does
// not decode (an upgrade: every search built it). Before, each held until
// a command that writes ran; the hooks never brought it current.
func TestHooksKeepSearchCurrent(t *testing.T) {
	const files, facts = 30, 20
	memory := map[string]string{}
	index := "# Memory\n"
	for i := range files {
		name := fmt.Sprintf("topic_%02d.md", i)
		index += fmt.Sprintf("- [Topic %d](%s)\n", i, name)
		var b strings.Builder
		for j := range facts {
			fmt.Fprintf(&b, "- Fact %d of topic %d: the ledger worker %d drains queue %d before shutdown.\n", j, i, j, i)
		}
		memory[name] = b.String()
	}
	memory["MEMORY.md"] = index
	f := newFixture(t, map[string]string{
		"docs/solutions/build/cache.md": "# Plugin cache went stale\n\n## Root Cause\nThe cache path changes on publish.\n",
	}, memory)
	past := time.Now().Add(-time.Hour) // every file written outside the racy window
	age := func() {
		for _, dir := range []string{f.memDir, filepath.Join(f.root, "docs")} {
			_ = filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
				if err == nil {
					err = os.Chtimes(p, past, past)
				}
				return err
			})
		}
	}
	age()
	f.must("intermem", "validate")
	if n := searchReads(t, f, "ledger worker drains", ""); n > maxSearchReads {
		t.Fatalf("after a command stored the catalog, a search read %d records, want at most %d", n, maxSearchReads)
	}

	session := 0
	end := func(edit func()) {
		t.Helper()
		session++
		id := fmt.Sprintf("stale-%d", session)
		edit()
		age()
		for range 3 {
			if r := f.run(fmt.Sprintf(`{"session_id":%q,"cwd":%q,"hook_event_name":"Stop"}`, id, f.root), nil, "intermem-snapshot"); r.code != 0 || r.stdout != "" {
				t.Fatalf("Stop: exit %d, stdout %q", r.code, r.stdout)
			}
		}
		if r := f.run(fmt.Sprintf(`{"session_id":%q,"cwd":%q,"hook_event_name":"SessionEnd","reason":"other"}`, id, f.root), nil, "intermem-snapshot"); r.code != 0 || r.stdout != "" {
			t.Fatalf("SessionEnd: exit %d, stdout %q", r.code, r.stdout)
		}
	}
	appendFact := func(file, fact string) {
		p := filepath.Join(f.memDir, file)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f.write(p, string(b)+"- "+fact+"\n")
	}
	check := func(what, query, want string) {
		t.Helper()
		n := searchReads(t, f, query, want)
		t.Logf("%s: a read-only search read %d records", what, n)
		if n > maxSearchReads {
			t.Errorf("%s: a read-only search read %d records, want at most %d", what, n, maxSearchReads)
		}
	}

	// One fact added in one session.
	end(func() { appendFact("topic_03.md", "The invoice renderer retries with jittered backoff.") })
	check("one fact added, then the session ended", "invoice renderer backoff", "memory/topic_03.md")

	// A fact added half a second before the session's end: within the
	// catalog's racy window, where the memory file's stat alone cannot
	// say it is unchanged (before, auto-memory's key was stored empty and
	// every search scanned the memory again until the next session's
	// end); the key holds what the session's end read of the file.
	session++
	racyID := fmt.Sprintf("stale-%d", session)
	appendFact("topic_05.md", "The payment webhook retries after a gateway timeout.")
	edited := time.Now()
	if r := f.run(fmt.Sprintf(`{"session_id":%q,"cwd":%q,"hook_event_name":"Stop"}`, racyID, f.root), nil, "intermem-snapshot"); r.code != 0 || r.stdout != "" {
		t.Fatalf("Stop: exit %d, stdout %q", r.code, r.stdout)
	}
	time.Sleep(time.Until(edited.Add(500 * time.Millisecond)))
	if r := f.run(fmt.Sprintf(`{"session_id":%q,"cwd":%q,"hook_event_name":"SessionEnd","reason":"other"}`, racyID, f.root), nil, "intermem-snapshot"); r.code != 0 || r.stdout != "" {
		t.Fatalf("SessionEnd: exit %d, stdout %q", r.code, r.stdout)
	}
	if since := time.Since(edited); since < catalog.RacyWindow {
		t.Logf("the session ended %v after the edit", since.Round(time.Millisecond))
	}
	check("one fact added 0.5 s before the session ended", "payment webhook gateway timeout", "memory/topic_05.md")

	// Edits over sessions, each rewriting 12 facts (24 ids changed),
	// until more ids changed than a delta takes (maxDelta: 602/8+64).
	for s := range 6 {
		end(func() {
			p := filepath.Join(f.memDir, fmt.Sprintf("topic_%02d.md", 10+s))
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.SplitAfter(string(b), "\n")
			for i := range 12 {
				lines[i] = strings.TrimSuffix(lines[i], ".\n") + fmt.Sprintf(", revised in session %d.\n", s)
			}
			f.write(p, strings.Join(lines, ""))
		})
	}
	f.view(func(tx *bolt.Tx) error {
		if n := len(store.Catalog(tx).IndexChanged()); n != 0 {
			t.Errorf("after 144 ids changed over six sessions, %d changed ids since the index's base: no new base was stored", n)
		}
		return nil
	})
	check("ids changed past a delta over six sessions", "revised session ledger", "memory/topic_1")

	// An index that does not decode, as after an upgrade, then a session.
	s, err := store.Open(f.storePath(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Update(func(tx *bolt.Tx) error {
		ct := store.Catalog(tx)
		return ct.PutIndex([]byte("IMSX\x01an older format"), ct.Generation())
	}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	end(func() { appendFact("topic_20.md", "The spool compactor keeps the newest segment.") })
	check("an index that does not decode, then a session", "spool compactor segment", "memory/topic_20.md")
}

// searchReads searches the fixture's catalog as a read-only search does
// (the store opened read-only, the catalog built in its read transaction,
// nothing stored) and returns how many store records it read; the first
// hit's path must start with want ("" for any).
func searchReads(t *testing.T, f *fixture, query, want string) uint64 {
	t.Helper()
	now, _ := time.Parse(time.RFC3339, f.now)
	cfg := catalog.Config{Env: source.Env{Root: f.root, MemoryDir: f.memDir, Home: f.home, ConfigDir: filepath.Join(f.home, ".claude")}, Now: now}
	var n uint64
	f.view(func(tx *bolt.Tx) error {
		before := store.Accesses()
		c, err := catalog.Build(store.Catalog(tx), cfg)
		if err != nil {
			return err
		}
		hits, err := c.Search(catalog.Query{Text: query, Limit: 5, Now: now})
		if err != nil {
			return err
		}
		n = store.Accesses() - before
		if want != "" && (len(hits) == 0 || !strings.HasPrefix(hits[0].Path, want)) {
			t.Errorf("search %q: hits %v, want the first in %s", query, hits, want)
		}
		return nil
	})
	return n
}
