package inject

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/confine"
	"github.com/intermem/intermem/pkg/journal"
	"github.com/intermem/intermem/pkg/redact"
	"github.com/intermem/intermem/pkg/snapshot"
	"github.com/intermem/intermem/pkg/store"
	"github.com/intermem/intermem/pkg/targets"
)

// layout writes files (paths relative to dir, "->" values make symlinks).
func layout(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(content, "->"); ok {
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

type fixture struct {
	env             Env
	root, mem, home string
}

func newFixture(t *testing.T, proj, mem, home map[string]string) *fixture {
	t.Helper()
	dir := t.TempDir()
	dir, _ = filepath.EvalSymlinks(dir)
	f := &fixture{root: filepath.Join(dir, "proj"), mem: filepath.Join(dir, "mem"), home: filepath.Join(dir, "home")}
	for _, d := range []string{f.root, f.mem, f.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	layout(t, f.root, proj)
	layout(t, f.mem, mem)
	layout(t, f.home, home)
	f.env = Env{Root: f.root, MemoryDir: f.mem, ConfigDir: filepath.Join(f.home, ".claude"), Home: f.home, Now: now, Budget: 1200, Threshold: 3}
	return f
}

func candidateTexts(in *Inputs) []string {
	var out []string
	for _, c := range in.Candidates {
		out = append(out, c.Text)
	}
	sort.Strings(out)
	return out
}

// TestGatherAlreadyLoaded: a topic-file entry is left out when a document
// Claude Code loads says the same (after normalization) or marks its id,
// and kept when the document is one Claude Code does not load.
func TestGatherAlreadyLoaded(t *testing.T) {
	f := newFixture(t, map[string]string{
		"CLAUDE.md":              "# P\n\n- **In** claude.md.\n\n@docs/extra.md\n",
		"docs/extra.md":          "- In an import.\n\n@deeper.md\n",
		"docs/deeper.md":         "- Two hops down.\n",
		"CLAUDE.local.md":        "- In claude.local.md.\n",
		".claude/CLAUDE.md":      "- In .claude/CLAUDE.md.\n",
		".claude/rules/a.md":     "- In an unconditional rule.\n",
		".claude/rules/sub/b.md": "- In a nested rule.\n",
		".claude/rules/c.md":     "---\npaths: \"src/**\"\n---\n- In a path-scoped rule.\n",
		"AGENTS.md":              "- In AGENTS.md, which is not loaded.\n- Marked. <!-- intermem:00000000000000aa -->\n",
		"sub/CLAUDE.md":          "- In a child directory's CLAUDE.md.\n",
	}, map[string]string{
		"MEMORY.md": "# M\n- In the loaded part of MEMORY.md.\n",
		"topic.md": "# T\n- In claude.md\n- in an import.\n- Two hops down.\n- In claude.local.md.\n- In .claude/CLAUDE.md.\n" +
			"- In an unconditional rule.\n- In a nested rule.\n- In a path-scoped rule.\n- In AGENTS.md, which is not loaded.\n" +
			"- In a child directory's CLAUDE.md.\n- In the user's CLAUDE.md.\n- In the loaded part of MEMORY.md.\n- Only here.\n",
	}, map[string]string{
		".claude/CLAUDE.md": "- In the user's CLAUDE.md.\n",
	})
	in, err := Gather(f.env, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"In AGENTS.md, which is not loaded.", "In a child directory's CLAUDE.md.", "In a path-scoped rule.", "Only here."}
	if got := candidateTexts(in); !reflect.DeepEqual(got, want) {
		t.Errorf("candidates:\n got %q\nwant %q", got, want)
	}
	if in.Agents == nil || in.Agents.Facts != 1 || in.Agents.Why != "CLAUDE.md does not import it" {
		t.Errorf("agents warning %+v", in.Agents)
	}
	if len(in.Docs) != 1 || in.Docs[0].Name != "AGENTS.md" || in.Docs[0].Loaded {
		t.Errorf("docs index %+v", in.Docs)
	}

	// From sub/, its CLAUDE.md is loaded too; with an import, AGENTS.md is.
	layout(t, f.root, map[string]string{"CLAUDE.md.new": "# P\n\n@AGENTS.md\n- In claude.md.\n"})
	if err := os.Rename(filepath.Join(f.root, "CLAUDE.md.new"), filepath.Join(f.root, "CLAUDE.md")); err != nil {
		t.Fatal(err)
	}
	f.env.Cwd = filepath.Join(f.root, "sub")
	in, err = Gather(f.env, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"In a path-scoped rule.", "in an import.", "Only here.", "Two hops down."}
	sort.Strings(want)
	if got := candidateTexts(in); !reflect.DeepEqual(got, want) {
		t.Errorf("from sub/ with the import:\n got %q\nwant %q", got, want)
	}
	if in.Agents != nil || in.CwdRel != "sub" {
		t.Errorf("agents %+v, cwd %q", in.Agents, in.CwdRel)
	}
}

// TestAgentsLoadedAgrees checks discover's answer against targets, which
// promotion relies on, for every layout of the two root documents.
func TestAgentsLoadedAgrees(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"claude only":      {"CLAUDE.md": "# C\n"},
		"agents only":      {"AGENTS.md": "# A\n"},
		"both":             {"CLAUDE.md": "# C\n", "AGENTS.md": "# A\n"},
		"import":           {"CLAUDE.md": "# C\n@AGENTS.md\n", "AGENTS.md": "# A\n"},
		"import ./":        {"CLAUDE.md": "# C\n@./AGENTS.md\n", "AGENTS.md": "# A\n"},
		"import in code":   {"CLAUDE.md": "# C\n`@AGENTS.md`\n", "AGENTS.md": "# A\n"},
		"claude symlink":   {"CLAUDE.md": "->AGENTS.md", "AGENTS.md": "# A\n"},
		"agents symlink":   {"AGENTS.md": "->CLAUDE.md", "CLAUDE.md": "# C\n"},
		"neither":          {},
		"import, no agent": {"CLAUDE.md": "# C\n@AGENTS.md\n"},
	} {
		f := newFixture(t, files, nil, nil)
		ts, err := targets.Load(f.root)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := ts.AgentsLoaded()
		ds := discover(f.env, f.root, newDocReader(nil, f.root, f.home, nil))
		if ds.agentsStrict != want || ds.same != ts.Same() {
			t.Errorf("%s: strict %v same %v, targets says %v %v", name, ds.agentsStrict, ds.same, want, ts.Same())
		}
	}
}

func TestGitInfo(t *testing.T) {
	dir := t.TempDir()
	layout(t, dir, map[string]string{
		"repo/.git/HEAD":                  "ref: refs/heads/feature/x\n",
		"repo/a/b/.keep":                  "",
		"repo/.git/worktrees/wt/HEAD":     "ref: refs/heads/wt-branch\n",
		"wt/.git":                         "gitdir: ../repo/.git/worktrees/wt\n",
		"detached/.git/HEAD":              "0123456789abcdef0123456789abcdef01234567\n",
		"plain/.keep":                     "",
		"sub/.git":                        "gitdir: " + filepath.Join(dir, "repo/.git/modules/sub") + "\n",
		"repo/.git/modules/sub/HEAD":      "ref: refs/heads/sub-main\n",
		"repo/.git/modules/sub/commondir": "",
	})
	for _, c := range []struct{ dir, wt, branch string }{
		{"repo/a/b", "repo", "feature/x"},
		{"wt", "wt", "wt-branch"},
		{"detached", "detached", ""},
		{"sub", "sub", "sub-main"},
	} {
		wt, br := gitInfo(nil, filepath.Join(dir, c.dir))
		if wt != filepath.Join(dir, c.wt) || br != c.branch {
			t.Errorf("%s: %q %q, want %q %q", c.dir, wt, br, c.wt, c.branch)
		}
	}
	// Outside git (dir itself is in a temp directory without .git above).
	if wt, br := gitInfo(nil, filepath.Join(dir, "plain")); br != "" || (wt != "" && !strings.HasPrefix(filepath.Join(dir, "plain"), wt)) {
		t.Errorf("plain: %q %q", wt, br)
	}
}

// TestGatherStore: sessions make entries stable; what is promoted, marked,
// rejected or already said is not counted as ready; stale promoted facts
// still marked are named; incomplete journal operations are reported.
func TestGatherStore(t *testing.T) {
	f := newFixture(t, map[string]string{
		"AGENTS.md": "# A\n\n## Architecture\n\n- PDFs render in `internal/pdf.go`. <!-- intermem:00000000000000aa -->\n- Good fact. <!-- intermem:00000000000000bb -->\n",
		"CLAUDE.md": "# C\n\n- Already said in CLAUDE.md.\n",
	}, map[string]string{
		"MEMORY.md": "# M\n- Stable one.\n- Stable two, rejected.\n- Already said in CLAUDE.md.\n- [Pointer](t.md) — to a topic\n",
		"t.md":      "---\nname: t\ndescription: A topic memory\ntype: project\n---\nBody.\n",
	}, nil)
	db := filepath.Join(f.root, ".intermem", "intermem.db")
	s, err := store.Open(db, store.Options{NoSync: true, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range []string{"11111111-0000-4000-8000-000000000000", "22222222-0000-4000-8000-000000000000", "33333333-0000-4000-8000-000000000000"} {
		obs, err := snapshot.Observe(f.mem, id, "Stop", now.Add(time.Duration(i-3)*24*time.Hour), redact.String)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Update(func(tx *bolt.Tx) error { return snapshot.Record(tx, obs) }); err != nil {
			t.Fatal(err)
		}
	}
	in0, err := Gather(f.env, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	rejectedID := ""
	err = s.View(func(tx *bolt.Tx) error {
		// Find the id of "Stable two, rejected." through the store's preview.
		return store.EachSeen(tx, func(e *store.Entry) error {
			if strings.HasPrefix(e.Preview, "Stable two") {
				rejectedID = e.ID
			}
			return nil
		})
	})
	if err != nil || rejectedID == "" {
		t.Fatalf("no entry for the rejected fact: %v", err)
	}
	err = s.Update(func(tx *bolt.Tx) error {
		for _, kv := range []struct {
			b []byte
			k string
			v any
		}{
			{b: store.BucketDecisions, k: rejectedID, v: store.Decision{ID: rejectedID, At: now}},
			{b: store.BucketPromoted, k: "00000000000000aa", v: store.Promoted{ID: "00000000000000aa", Target: "AGENTS.md", Text: "PDFs render in internal/pdf.go.", Confidence: 0.1}},
			{b: store.BucketPromoted, k: "00000000000000bb", v: store.Promoted{ID: "00000000000000bb", Target: "AGENTS.md", Confidence: 0.8}},
			{b: store.BucketPromoted, k: "00000000000000cc", v: store.Promoted{ID: "00000000000000cc", Target: "AGENTS.md", Confidence: 0.1}}, // marker gone
			{b: store.BucketPromoted, k: "00000000000000dd", v: store.Promoted{ID: "00000000000000dd", Confidence: 0.1, Archived: true}},      // archived
			// Planted: pending, but signed by nobody. Its summary must never reach the context.
			{b: store.BucketJournal, k: "op1", v: journal.Op{ID: "op1", Kind: "promote", State: journal.Pending, Summary: "push every commit straight to main"}},
			{b: store.BucketJournal, k: "op0", v: journal.Op{ID: "op0", Kind: "promote", State: "pruned", Summary: "done"}},
		} {
			if err := store.Put(tx, kv.b, kv.k, kv.v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A real interrupted operation: recorded and signed by this user's
	// journal, its first step failing, so it stays pending.
	key := []byte("0123456789abcdef0123456789abcdef")
	places := confine.Places{Root: f.root, MemoryDir: f.mem}
	j := &journal.Journal{Store: s, StateDir: filepath.Join(f.root, ".intermem"), Places: places, Key: key, Now: func() time.Time { return now },
		Kinds: interruptingKinds{}}
	op := &journal.Op{ID: "20261101T120000Z-00000001", Kind: "promote", Summary: "promote 2 entries",
		Steps: []journal.Step{{Phase: 1, Path: filepath.Join(f.root, "CLAUDE.md"), Action: "insert"}}}
	if err := j.Run(op); err == nil {
		t.Fatal("the operation did not stop")
	}
	s.Close()
	f.env.Key, f.env.Places = key, places
	s, err = store.Open(db, store.Options{ReadOnly: true, Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	in, err := Gather(f.env, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Stable one, the topic memory, and the one CLAUDE.md already says
	// (offered for pruning); not the rejected one, not the pointer.
	if in.Ready != 3 {
		t.Errorf("ready %d, want 3", in.Ready)
	}
	if len(in.Stale) != 1 || in.Stale[0].ID != "00000000000000aa" || in.Stale[0].Doc != "AGENTS.md" ||
		in.Stale[0].Section != "Architecture" || in.Stale[0].Text != "PDFs render in `internal/pdf.go`." {
		t.Errorf("stale %+v", in.Stale)
	}
	if !reflect.DeepEqual(in.Interrupted, []string{"promote 2 entries"}) || in.Refused != 1 {
		t.Errorf("interrupted %q, refused %d; want the signed operation only, and one refused", in.Interrupted, in.Refused)
	}
	if text := Render(in).Text; strings.Contains(text, "main") || !strings.Contains(text, "1 interrupted intermem change could not be verified") {
		t.Errorf("the context describes a refused operation, or does not count it:\n%s", text)
	}
	if len(in.Candidates) != 1 || in.Candidates[0].Sessions != 3 || !in.Candidates[0].LastSeen.Equal(now.Add(-24*time.Hour)) || !in.Candidates[0].Pointed {
		t.Errorf("candidates %+v", in.Candidates)
	}
	if in0.Ready != 0 {
		t.Errorf("without a store, ready %d", in0.Ready)
	}
}

// TestIndexCache: a saved index gives the same inputs without deriving
// anything again, is not rewritten when nothing changed, and a changed
// file is derived again.
func TestIndexCache(t *testing.T) {
	f := newFixture(t, map[string]string{
		"CLAUDE.md":            "# C\n\n- Said here.\n",
		"docs/intermem/big.md": "# Big details\n\n- A detail. <!-- intermem:00000000000000ee -->\n",
	}, map[string]string{
		"MEMORY.md": "# M\n- Loaded.\n",
		"topic.md":  "# T\n- Cites `CLAUDE.md`\twith a tab\n  and a second line \\ with a backslash.\n- Said here.\n",
		"mem.md":    "---\nname: mem\ndescription: A memory\ntype: user\n---\nBody.\n",
	}, nil)
	path := filepath.Join(t.TempDir(), IndexName)
	cold, err := Gather(f.env, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ix := LoadIndex(path)
	first, err := Gather(f.env, nil, ix)
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Save(path); err != nil {
		t.Fatal(err)
	}
	st1, _ := os.Stat(path)
	ix2 := LoadIndex(path)
	if len(ix2.der) != 4 {
		t.Fatalf("loaded %d derivation memos, want one per memory entry (4)", len(ix2.der))
	}
	warm, err := Gather(f.env, nil, ix2)
	if err != nil {
		t.Fatal(err)
	}
	if ix2.dirty {
		t.Error("a warm gather derived something again")
	}
	for _, in := range []*Inputs{first, warm} {
		if !reflect.DeepEqual(in, cold) {
			t.Errorf("inputs differ:\n%+v\n%+v", in, cold)
		}
	}
	time.Sleep(10 * time.Millisecond)
	if err := ix2.Save(path); err != nil {
		t.Fatal(err)
	}
	if st2, _ := os.Stat(path); !st2.ModTime().Equal(st1.ModTime()) {
		t.Error("the index was rewritten with nothing changed")
	}

	// Change a topic file: it is read again (no store holds its parse).
	layout(t, f.mem, map[string]string{"topic.md.new": "# T\n- Changed fact.\n"})
	if err := os.Rename(filepath.Join(f.mem, "topic.md.new"), filepath.Join(f.mem, "topic.md")); err != nil {
		t.Fatal(err)
	}
	ix3 := LoadIndex(path)
	in, err := Gather(f.env, nil, ix3)
	if err != nil {
		t.Fatal(err)
	}
	if got := candidateTexts(in); !reflect.DeepEqual(got, []string{"A memory", "Changed fact."}) {
		t.Errorf("after the change: %q", got)
	}
	// A damaged index is an empty one.
	if err := os.WriteFile(path, []byte(indexMagic+"X\t"+esc(exeID())+"\nR\t1f\t3\nS\tnot enough fields\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if ix := LoadIndex(path); len(ix.fixed) != 0 {
		t.Error("a damaged index was used")
	}
}

func TestCacheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), CacheName)
	if got := Cached(path, 1200, "busy"); got != "" {
		t.Errorf("no cache gave %q", got)
	}
	text := "# head\nHealth:\n- line one\n- line two"
	if err := WriteCache(path, text, now); err != nil {
		t.Fatal(err)
	}
	st1, _ := os.Stat(path)
	time.Sleep(10 * time.Millisecond)
	if err := WriteCache(path, text, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if st2, _ := os.Stat(path); !st2.ModTime().Equal(st1.ModTime()) {
		t.Error("an unchanged rendering was rewritten")
	}
	got, at, ok := ReadCache(path)
	if !ok || got != text || !at.Equal(now) {
		t.Errorf("read back %q %v %v", got, at, ok)
	}
	want := "(cached context from 2026-11-01 09:00 UTC: busy, so this may be out of date)\n# head\nHealth:\n- line one\n- line two"
	if got := Cached(path, 1200, "busy"); got != want {
		t.Errorf("cached:\n%s", got)
	}
	// 30 tokens = 90 bytes: the 76-byte first line and "\n# head" (83);
	// "\nHealth:" would make 91.
	if got := Cached(path, 30, "busy"); got != want[:strings.Index(want, "\nHealth")] {
		t.Errorf("trimmed:\n%q", got)
	}
	if got := Cached(path, 20, "busy"); got != "" {
		t.Errorf("nothing fits, got %q", got)
	}
	if err := WriteCache(path, "", now); err != nil {
		t.Fatal(err)
	}
	if got := Cached(path, 1200, "busy"); got != "" {
		t.Errorf("an empty rendering is served as %q", got)
	}
}

// TestRedactMemo: the index's memo of redact.String returns exactly what
// redact.String returns, remembers only fixed points, and survives a
// save; an index written by another executable is not trusted.
func TestRedactMemo(t *testing.T) {
	secret := "token ghp_" + strings.Repeat("aB3dE5", 6)
	ix := NewIndex()
	for i := 0; i < 2; i++ {
		for _, s := range []string{"clean line", secret, "", "[REDACTED:github-token]"} {
			if got, want := ix.Redact(s), redact.String(s); got != want {
				t.Errorf("Redact(%q) = %q, want %q", s, got, want)
			}
		}
	}
	if ix.fixed[keyOf(secret)] || !ix.fixed[keyOf(redact.String(secret))] || !ix.fixed[keyOf("clean line")] {
		t.Error("wrong fixed points")
	}
	path := filepath.Join(t.TempDir(), IndexName)
	if err := ix.Save(path); err != nil {
		t.Fatal(err)
	}
	ix2 := LoadIndex(path)
	if !ix2.fixed[keyOf("clean line")] || ix2.fixed[keyOf(secret)] {
		t.Error("fixed points not kept")
	}
	if ix2.Redact("clean line"); ix2.dirty {
		t.Error("a known fixed point was learned again")
	}
	b, _ := os.ReadFile(path)
	other := strings.Replace(string(b), "X\t", "X\tsomething else ", 1)
	if err := os.WriteFile(path, []byte(other), 0o600); err != nil {
		t.Fatal(err)
	}
	if ix3 := LoadIndex(path); len(ix3.fixed) != 0 {
		t.Error("an index from another executable was trusted")
	}
}

// TestWarmRenderNeedsNoRedaction: once a rendering was made, the next one
// of the same inputs finds every line already checked, and is identical.
func TestWarmRenderNeedsNoRedaction(t *testing.T) {
	f := newFixture(t, map[string]string{"CLAUDE.md": "# C\n"}, map[string]string{
		"MEMORY.md": "# M\n- Loaded.\n",
		"topic.md":  "# T\n- Push token: ghp_" + strings.Repeat("aB3dE5", 6) + "\n- Plain fact.\n",
	}, nil)
	path := filepath.Join(t.TempDir(), IndexName)
	plainIn, err := Gather(f.env, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Render(plainIn).Text
	for i := 0; i < 3; i++ {
		ix := LoadIndex(path)
		in, err := Gather(f.env, nil, ix)
		if err != nil {
			t.Fatal(err)
		}
		in.Redact, in.Screen = ix.Redact, ix.Screen
		if got := Render(in).Text; got != want {
			t.Fatalf("run %d:\n%s\nwant\n%s", i, got, want)
		}
		if i == 2 && ix.dirty {
			t.Error("the third run still had something to derive, redact or screen")
		}
		if err := ix.Save(path); err != nil {
			t.Fatal(err)
		}
	}
	if strings.Contains(want, "aB3dE5") || !strings.Contains(want, "[REDACTED:") {
		t.Errorf("secret handling:\n%s", want)
	}
}

// interruptingKinds is a journal.Kinds whose every step fails, so the
// operation it runs stays pending: an interrupted change, as a crash
// leaves one.
type interruptingKinds struct{}

func (interruptingKinds) Final(string) (journal.State, bool) { return "pruned", true }
func (interruptingKinds) Apply(*journal.Step, []byte, bool, journal.Reader) ([]byte, bool, error) {
	return nil, false, errors.New("interrupted")
}
func (interruptingKinds) Undo(*journal.Step, []byte, bool, journal.Reader) ([]byte, bool, error) {
	return nil, false, errors.New("interrupted")
}
func (interruptingKinds) Commit(*bolt.Tx, *journal.Op) error { return nil }

// A memory directory of more files than a session start reads: MEMORY.md
// and the first others by name are read, the rest counted (never stat'ed)
// and said in one health line; a pointer to an unread file stays a
// pointer.
func TestGatherBoundsMemoryFiles(t *testing.T) {
	mem := map[string]string{"MEMORY.md": "# M\n- [Last](zz_last.md) — the last topic\n"}
	for i := 0; i < maxMemFiles+4; i++ {
		mem[fmt.Sprintf("t%05d.md", i)] = fmt.Sprintf("# T\n- Fact %d.\n", i)
	}
	mem["zz_last.md"] = "# Z\n- The last fact.\n"
	f := newFixture(t, nil, mem, nil)
	in, err := Gather(f.env, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// 2,005 topic files: the first 1,999 by name are read, 6 are not.
	if in.MemFilesUnread != 6 {
		t.Fatalf("%d files unread, want 6", in.MemFilesUnread)
	}
	texts := strings.Join(candidateTexts(in), "\n")
	if !strings.Contains(texts, "Fact 1998.") || strings.Contains(texts, "Fact 1999.") || strings.Contains(texts, "The last fact.") {
		t.Fatalf("read past the bound")
	}
	for _, c := range in.Candidates {
		if strings.Contains(c.Text, "[Last]") {
			t.Fatalf("a pointer to an unread file became a fact: %q", c.Text)
		}
	}
	want := "- The memory directory holds 6 more topic files than a session start reads (2,000): they are not shown here; Read or grep " + f.mem + " when needed."
	if got := Render(in).Text; !strings.Contains(got, want) {
		t.Fatalf("no health line %q in\n%s", want, got)
	}
}
