// Package benchgen writes a synthetic project for benchmarks: a git work
// tree on a feature branch with a few hundred lines of CLAUDE.md and
// AGENTS.md (some of them promoted facts), detail docs, cited source
// files, and an auto-memory directory of about 1,000 entries — a
// MEMORY.md past the 200-line load cap and 50 topic files — plus a store
// that has seen the memory in three sessions and records the promoted
// facts. Content is generated from a fixed seed, so every run benchmarks
// the same bytes.
//
// Options grow it in two directions: many small topic files (TopicFiles:
// the 10,000- and 100,000-file projects of the scale rows), and every
// other memory source intermem reads (Solutions under docs/solutions,
// Learnings under .clavain/learnings, Edits in an interfluence log), so
// that a project of 20,000 entries spreads them across all sources.
package benchgen

import (
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

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
	// TopicFiles adds that many small one-memory files (topic_mem_N.md)
	// that MEMORY.md does not point to.
	TopicFiles int
	// Solutions, Learnings and Edits add that many compound solution
	// documents (docs/solutions/<category>/*.md), clavain learnings
	// (.clavain/learnings/*.md) and interfluence edit observations (blocks
	// of .interfluence/learnings-raw.log).
	Solutions, Learnings, Edits int
	Now                         time.Time
}

// Project is a generated project.
type Project struct {
	Root, MemoryDir string
	// Entries counts what was written across every source; BySource
	// splits it: "auto-memory" (memory entries), "instructions" (the
	// curated documents' hand-written statements, about: one a line),
	// "promoted" (marked facts), "compound", "clavain", "interfluence".
	Entries  int
	BySource map[string]int
	// Files counts the memory files written.
	Files int
	// Changed lists a few files of each source a benchmark may append to
	// (a one-file change), by source name.
	Changed map[string]string
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
	p := &Project{Root: filepath.Join(dir, "proj"), MemoryDir: filepath.Join(dir, "memory"),
		BySource: map[string]int{}, Changed: map[string]string{}}
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

	// Curated documents with some promoted facts: the store records each
	// (with a confidence, some of them stale).
	var promoted []store.Promoted
	promote := func(target, section, text string) string {
		id := fmt.Sprintf("%016x", rng.Uint64())
		conf := 0.7
		if len(promoted)%17 == 3 {
			conf = 0.2
		}
		promoted = append(promoted, store.Promoted{ID: id, Target: target, Section: section, Text: text, Kind: "fact",
			At: o.Now.Add(-10 * 24 * time.Hour), Confidence: conf, LastEvidence: o.Now.Add(-2 * 24 * time.Hour), Op: "bench"})
		return id
	}
	doc := func(target, title string, marked int) string {
		section := ""
		var b strings.Builder
		fmt.Fprintf(&b, "# %s\n\n", title)
		for i := 0; i < o.DocLines-2; i++ {
			switch {
			case i%25 == 0:
				section = fmt.Sprintf("%s %d", capital(words[rng.Intn(len(words))]), i/25)
				fmt.Fprintf(&b, "## %s\n", section)
			case i%25 == 1:
				b.WriteString("\n")
			case marked > 0 && i%9 == 0:
				text := fmt.Sprintf("%s in `%s`.", sentence(10), sources[rng.Intn(len(sources))])
				fmt.Fprintf(&b, "- %s <!-- intermem:%s -->\n", text, promote(target, section, "- "+text))
				marked--
				p.BySource["promoted"]++
			default:
				fmt.Fprintf(&b, "- %s.\n", sentence(8+rng.Intn(10)))
				p.BySource["instructions"]++
			}
		}
		return b.String()
	}
	if err := w("CLAUDE.md", doc("CLAUDE.md", "Project", 10)); err != nil {
		return nil, err
	}
	if err := w("AGENTS.md", doc("AGENTS.md", "Agents guide", 20)); err != nil {
		return nil, err
	}
	for i := 0; i < 3; i++ {
		name := fmt.Sprintf("docs/intermem/%s.md", words[i])
		text := sentence(12) + "."
		if err := w(name, fmt.Sprintf("# %s details\n\n- %s <!-- intermem:%s -->\n", words[i], text, promote(name, words[i]+" details", "- "+text))); err != nil {
			return nil, err
		}
		p.BySource["promoted"]++
	}
	p.Changed["instructions"] = filepath.Join(p.Root, "CLAUDE.md")

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
			p.BySource["auto-memory"]++
		} else {
			fmt.Fprintf(&idx, "- %s\n", fact())
			p.BySource["auto-memory"]++
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
		p.BySource["auto-memory"]++
	}
	for i := 0; i < o.FactFiles; i++ {
		var b strings.Builder
		fmt.Fprintf(&b, "# %s notes\n", words[i%len(words)])
		for j := 0; j < o.FactsEach; j++ {
			if j%12 == 0 {
				fmt.Fprintf(&b, "\n## %s\n", words[rng.Intn(len(words))])
			}
			fmt.Fprintf(&b, "- %s\n", fact())
			p.BySource["auto-memory"]++
		}
		if err := mw(fmt.Sprintf("topic_%02d.md", i), b.String()); err != nil {
			return nil, err
		}
	}
	for i := 0; i < o.TopicFiles; i++ {
		typ := []string{"user", "feedback", "project", "reference"}[i%4]
		body := fmt.Sprintf("---\nname: %s %d\ndescription: %s\ntype: %s\n---\n%s\n", words[i%len(words)], i, sentence(7), typ, fact())
		if err := mw(fmt.Sprintf("topic_mem_%06d.md", i), body); err != nil {
			return nil, err
		}
		p.BySource["auto-memory"]++
	}
	p.Files = 1 + o.MemoryFiles + o.FactFiles + o.TopicFiles
	p.Changed["auto-memory"] = filepath.Join(p.MemoryDir, "topic_00.md")
	if o.FactFiles == 0 {
		p.Changed["auto-memory"] = filepath.Join(p.MemoryDir, "MEMORY.md")
	}

	if err := writeSources(p, o, rng, w, sentence, sources); err != nil {
		return nil, err
	}
	for _, n := range p.BySource {
		p.Entries += n
	}

	// The store: the memory seen in o.Sessions sessions, a day apart.
	s, err := store.Open(filepath.Join(p.Root, ".intermem", "intermem.db"), store.Options{NoSync: true, Now: o.Now})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	if err := s.Update(func(tx *bolt.Tx) error {
		for i := range promoted {
			if err := store.PutPromoted(tx, &promoted[i]); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	// The memory files as a while after they were written (a fingerprint
	// taken within snapshot.RacyWindow of a write is not trusted), and the
	// sessions as Stop hooks record them: complete passes.
	settled := o.Now
	if now := time.Now(); now.Before(settled) {
		settled = now
	}
	settled = settled.Add(-time.Hour)
	if err := filepath.WalkDir(p.MemoryDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		return os.Chtimes(path, settled, settled)
	}); err != nil {
		return nil, err
	}
	for i := 0; i < o.Sessions; i++ {
		at := o.Now.Add(-time.Duration(o.Sessions-i) * 24 * time.Hour)
		if err := s.Update(func(tx *bolt.Tx) error {
			l, err := snapshot.List(p.MemoryDir, snapshot.Subs(tx))
			if err != nil {
				return err
			}
			_, err = snapshot.Sync(tx, l, snapshot.Pass{Session: fmt.Sprintf("0000000%d-0000-4000-8000-000000000000", i), Event: "Stop", At: at})
			return err
		}); err != nil {
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

// Categories, problem types and the like of the generated solution
// documents, as the corpus's compound documents spell them.
var (
	categories = []string{"build-errors", "runtime-errors", "integration-issues", "best-practices", "test-failures", "workflow-issues"}
	rootCauses = []string{"cache_invalidation", "missing_guard", "race_condition", "wrong_default", "stale_reference", "encoding_mismatch"}
	severities = []string{"low", "medium", "high"}
)

// writeSources writes the other sources' files: compound solution
// documents, clavain learnings and one interfluence log.
func writeSources(p *Project, o Options, rng *rand.Rand, w func(rel, content string) error, sentence func(int) string, sources []string) error {
	pick := func(list []string) string { return list[rng.Intn(len(list))] }
	day := func() string { return o.Now.Add(-time.Duration(rng.Intn(400)) * 24 * time.Hour).Format("2006-01-02") }
	for i := 0; i < o.Solutions; i++ {
		cat := categories[i%len(categories)]
		comp, mod := words[rng.Intn(20)], words[rng.Intn(len(words))]
		title := capital(sentence(6))
		cited := sources[rng.Intn(len(sources))]
		var b strings.Builder
		fmt.Fprintf(&b, "---\nmodule: %s\ndate: %s\nproblem_type: %s\ncomponent: %s\nsymptoms:\n  - \"%s\"\n  - %s\nroot_cause: %s\nresolution_type: fix\nseverity: %s\ntags: [%s, %s, %s]\n---\n\n",
			mod, day(), strings.TrimSuffix(cat, "s"), comp, sentence(7), sentence(5), pick(rootCauses), pick(severities), pick(words), pick(words), comp)
		fmt.Fprintf(&b, "# %s\n\n## Problem\n%s.\n\n## Root Cause\n%s in `%s`.\n\n## Solution\n%s.\n\n```go\n// %s\n```\n\n## Prevention\n- %s.\n- %s.\n",
			title, sentence(25), capital(sentence(14)), cited, capital(sentence(30)), sentence(6), capital(sentence(9)), capital(sentence(9)))
		rel := fmt.Sprintf("docs/solutions/%s/%s-%s-%05d.md", cat, comp, mod, i)
		if err := w(rel, b.String()); err != nil {
			return err
		}
		p.BySource["compound"]++
		if i == 0 {
			p.Changed["compound"] = filepath.Join(p.Root, filepath.FromSlash(rel))
		}
	}
	for i := 0; i < o.Learnings; i++ {
		cited := sources[rng.Intn(len(sources))]
		body := fmt.Sprintf("---\nlastConfirmed: %s\nprovenance: independent\n---\n%s.\n\nEvidence: %s:%d-%d, %s()\nVerify: %s.\n",
			day(), capital(sentence(12)), cited, 10+rng.Intn(90), 100+rng.Intn(90), capital(pick(words)), sentence(8))
		rel := fmt.Sprintf(".clavain/learnings/%s-%s-%05d.md", pick(words), pick(words), i)
		if err := w(rel, body); err != nil {
			return err
		}
		p.BySource["clavain"]++
		if i == 0 {
			p.Changed["clavain"] = filepath.Join(p.Root, filepath.FromSlash(rel))
		}
	}
	if o.Edits > 0 {
		var b strings.Builder
		at := o.Now.Add(-time.Duration(o.Edits) * time.Minute)
		for i := 0; i < o.Edits; i++ {
			fmt.Fprintf(&b, "--- %s | %s | CONTEXT:%s ---\nOLD: %s\nNEW: %s\n", at.Add(time.Duration(i)*time.Minute).Format(time.RFC3339),
				sources[rng.Intn(len(sources))], pick([]string{"code", "prose"}), sentence(8), sentence(8))
			p.BySource["interfluence"]++
		}
		if err := w(".interfluence/learnings-raw.log", b.String()); err != nil {
			return err
		}
		p.Changed["interfluence"] = filepath.Join(p.Root, ".interfluence", "learnings-raw.log")
	}
	return nil
}
