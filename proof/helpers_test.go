package proof

import (
	"bytes"
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

	"github.com/tidwall/sjson"
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

// hookTimeouts reads each event's timeout from hooks.json: the only
// wall-clock bound the proofs assert.
func hookTimeouts(t *testing.T) map[string]time.Duration {
	t.Helper()
	b, err := os.ReadFile("../hooks.json")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Timeout float64 `json:"timeout"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	decodeJSON(t, "hooks.json", string(b), &cfg)
	out := map[string]time.Duration{}
	for ev, groups := range cfg.Hooks {
		for _, g := range groups {
			for _, h := range g.Hooks {
				if h.Timeout <= 0 {
					t.Fatalf("hooks.json: %s hook without an explicit timeout", ev)
				}
				out[ev] = time.Duration(h.Timeout * float64(time.Second))
			}
		}
	}
	for _, ev := range []string{"Stop", "SessionEnd", "SessionStart"} {
		if out[ev] == 0 {
			t.Fatalf("hooks.json has no %s hook", ev)
		}
	}
	return out
}

// payload loads a captured payload and points it at a session and a cwd.
func payload(t *testing.T, name, session, cwd string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "payloads", name))
	if err != nil {
		t.Fatal(err)
	}
	s, err := sjson.Set(string(b), "session_id", session)
	if err == nil {
		s, err = sjson.Set(s, "cwd", cwd)
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// checkSessionStartOutput: nothing, or exactly one JSON object in the
// shape Claude Code validates, with a context under its 10,000-character
// inline cap.
func checkSessionStartOutput(out string) error {
	if out == "" {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(out))
	var v struct {
		HookSpecificOutput *struct {
			HookEventName     string  `json:"hookEventName"`
			AdditionalContext *string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("not a JSON object: %v", err)
	}
	if dec.More() {
		return fmt.Errorf("more than one JSON value")
	}
	var rest bytes.Buffer
	rest.ReadFrom(dec.Buffered())
	if strings.TrimSpace(rest.String()) != "" {
		return fmt.Errorf("trailing bytes after the JSON object: %q", rest.String())
	}
	h := v.HookSpecificOutput
	switch {
	case h == nil:
		return fmt.Errorf("no hookSpecificOutput")
	case h.HookEventName != "SessionStart":
		return fmt.Errorf("hookEventName %q", h.HookEventName)
	case h.AdditionalContext == nil:
		return fmt.Errorf("no additionalContext string")
	case len([]rune(*h.AdditionalContext)) >= 10000:
		return fmt.Errorf("additionalContext of %d characters: Claude Code would replace it with a preview", len([]rune(*h.AdditionalContext)))
	}
	return nil
}

// countFiles counts the entries of dir whose names end in suffix.
func countFiles(t *testing.T, dir, suffix string) int {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), suffix) && !e.IsDir() {
			n++
		}
	}
	return n
}
