// Package benchgen writes a synthetic project for benchmarks: a git work
// tree on a feature branch with a few hundred lines of CLAUDE.md and
// AGENTS.md (some of them promoted facts), detail docs, cited source
// files, and an auto-memory directory of about 1,000 entries — a
// MEMORY.md past the 200-line load cap and 50 topic files — plus a store
// that has seen the memory in three sessions. Content is generated from a
// fixed seed, so every run benchmarks the same bytes.
package benchgen

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/redact"
	"github.com/intermem/intermem/pkg/snapshot"
	"github.com/intermem/intermem/pkg/store"
)

// Options size the project. The zero value gives the default scale.
type Options struct {
	IndexLines  int // MEMORY.md lines (default 260)
	FactFiles   int // fact-list topic files (default 20)
	FactsEach   int // facts per fact-list file (default 36)
	MemoryFiles int // one-memory files (default 30)
	DocLines    int // lines of CLAUDE.md and of AGENTS.md (default 300)
	Sessions    int // sessions recorded in the store (default 3)
	Now         time.Time
}

// Project is a generated project.
type Project struct {
	Root, MemoryDir string
	Entries         int // memory entries written
}

var words = strings.Fields(`invoice render ledger store mailer retry backoff golden test race cache
config flag handler schema migration index query cursor session token budget report export import
queue worker timeout deadline context parser lexer build release deploy staging metrics trace span
log rotate archive journal snapshot spool lock page batch limit offset vat tax fee currency cents`)

// Write creates the project under dir (which must exist and be empty).
func Write(dir string, o Options) (*Project, error) {
	if o.IndexLines == 0 {
		o.IndexLines = 260
	}
	if o.FactFiles == 0 {
		o.FactFiles = 20
	}
	if o.FactsEach == 0 {
		o.FactsEach = 36
	}
	if o.MemoryFiles == 0 {
		o.MemoryFiles = 30
	}
	if o.DocLines == 0 {
		o.DocLines = 300
	}
	if o.Sessions == 0 {
		o.Sessions = 3
	}
	if o.Now.IsZero() {
		o.Now = time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	}
	rng := rand.New(rand.NewSource(42))
	p := &Project{Root: filepath.Join(dir, "proj"), MemoryDir: filepath.Join(dir, "memory")}
	w := func(rel string, content string) error {
		path := filepath.Join(p.Root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		return os.WriteFile(path, []byte(content), 0o644)
	}
	mw := func(name, content string) error {
		if err := os.MkdirAll(p.MemoryDir, 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(p.MemoryDir, name), []byte(content), 0o644)
	}
	sentence := func(n int) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[rng.Intn(len(words))])
		}
		return b.String()
	}
	src := func() string {
		return fmt.Sprintf("internal/%s/%s.go", words[rng.Intn(20)], words[rng.Intn(len(words))])
	}

	// The work tree: branch, sources (a tenth touched an hour ago).
	if err := w(".git/HEAD", "ref: refs/heads/feature/invoice-render\n"); err != nil {
		return nil, err
	}
	var sources []string
	for i := 0; i < 200; i++ {
		s := src()
		sources = append(sources, s)
		if err := w(s, "package x\n"); err != nil {
			return nil, err
		}
		mod := o.Now.Add(-time.Duration(30+rng.Intn(60*24)) * time.Hour)
		if i%10 == 0 {
			mod = o.Now.Add(-time.Hour)
		}
		if err := os.Chtimes(filepath.Join(p.Root, filepath.FromSlash(s)), mod, mod); err != nil {
			return nil, err
		}
	}

	// Curated documents with some promoted facts.
	doc := func(title string, marked int) string {
		var b strings.Builder
		fmt.Fprintf(&b, "# %s\n\n", title)
		for i := 0; i < o.DocLines-2; i++ {
			switch {
			case i%25 == 0:
				fmt.Fprintf(&b, "## %s %d\n", capital(words[rng.Intn(len(words))]), i/25)
			case i%25 == 1:
				b.WriteString("\n")
			case marked > 0 && i%9 == 0:
				fmt.Fprintf(&b, "- %s in `%s`. <!-- intermem:%016x -->\n", sentence(10), sources[rng.Intn(len(sources))], rng.Uint64())
				marked--
			default:
				fmt.Fprintf(&b, "- %s.\n", sentence(8+rng.Intn(10)))
			}
		}
		return b.String()
	}
	if err := w("CLAUDE.md", doc("Project", 10)); err != nil {
		return nil, err
	}
	if err := w("AGENTS.md", doc("Agents guide", 20)); err != nil {
		return nil, err
	}
	for i := 0; i < 3; i++ {
		if err := w(fmt.Sprintf("docs/intermem/%s.md", words[i]), fmt.Sprintf("# %s details\n\n- %s. <!-- intermem:%016x -->\n", words[i], sentence(12), rng.Uint64())); err != nil {
			return nil, err
		}
	}

	// Auto-memory.
	fact := func() string {
		return fmt.Sprintf("%s: `%s` %s.", capital(words[rng.Intn(len(words))]), sources[rng.Intn(len(sources))], sentence(8+rng.Intn(14)))
	}
	var idx strings.Builder
	idx.WriteString("# Memory\n")
	lines := 1
	mem := 0
	for lines < o.IndexLines {
		if lines%20 == 1 {
			fmt.Fprintf(&idx, "## %s\n", words[rng.Intn(len(words))])
		} else if mem < o.MemoryFiles && lines%8 == 0 {
			fmt.Fprintf(&idx, "- [%s](memory_%02d.md) — %s\n", words[mem%len(words)], mem, sentence(6))
			mem++
			p.Entries++
		} else {
			fmt.Fprintf(&idx, "- %s\n", fact())
			p.Entries++
		}
		lines++
	}
	if err := mw("MEMORY.md", idx.String()); err != nil {
		return nil, err
	}
	for i := 0; i < o.MemoryFiles; i++ {
		typ := []string{"user", "feedback", "project", "reference"}[i%4]
		body := fmt.Sprintf("---\nname: %s_%d\ndescription: %s\ntype: %s\n---\n%s\n\n**Why:** %s.\n",
			words[i%len(words)], i, sentence(9), typ, fact(), sentence(12))
		if err := mw(fmt.Sprintf("memory_%02d.md", i), body); err != nil {
			return nil, err
		}
		p.Entries++
	}
	for i := 0; i < o.FactFiles; i++ {
		var b strings.Builder
		fmt.Fprintf(&b, "# %s notes\n", words[i%len(words)])
		for j := 0; j < o.FactsEach; j++ {
			if j%12 == 0 {
				fmt.Fprintf(&b, "\n## %s\n", words[rng.Intn(len(words))])
			}
			fmt.Fprintf(&b, "- %s\n", fact())
			p.Entries++
		}
		if err := mw(fmt.Sprintf("topic_%02d.md", i), b.String()); err != nil {
			return nil, err
		}
	}

	// The store: the memory seen in o.Sessions sessions, a day apart.
	s, err := store.Open(filepath.Join(p.Root, ".intermem", "intermem.db"), store.Options{NoSync: true, Now: o.Now})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	for i := 0; i < o.Sessions; i++ {
		at := o.Now.Add(-time.Duration(o.Sessions-i) * 24 * time.Hour)
		obs, err := snapshot.Observe(p.MemoryDir, fmt.Sprintf("0000000%d-0000-4000-8000-000000000000", i), "Stop", at, redact.String)
		if err != nil {
			return nil, err
		}
		if err := s.Update(func(tx *bolt.Tx) error { return snapshot.Record(tx, obs) }); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// capital capitalises an ASCII word.
func capital(w string) string {
	if w == "" || w[0] < 'a' || w[0] > 'z' {
		return w
	}
	return string(w[0]-'a'+'A') + w[1:]
}
