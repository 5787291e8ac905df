// Package tier implements progressive disclosure: promoted project facts
// live in detail documents, docs/intermem/<slug>.md (one per topic), and
// AGENTS.md keeps only a thin managed index — one line per topic with a
// one-liner and the path to read. Claude Code loads AGENTS.md every
// session and the detail documents never, so the always-loaded cost of
// promoted knowledge is one line per topic instead of every fact.
//
// Layout. "tiered" (the default) sends facts routed to AGENTS.md into
// detail documents; facts routed to CLAUDE.md (behavioural rules) stay
// inline, because a rule the model has not read is a rule it does not
// follow — set INTERMEM_TIER_CLAUDE=1 to tier those too. "flat" writes
// every fact inline, as sections of the target document. The layout comes
// from INTERMEM_LAYOUT, else .intermem/config.json ({"layout": "flat"}).
//
// The index is a managed block between "<!-- intermem:index:begin -->" and
// "<!-- intermem:index:end -->". It is rendered from the detail documents
// as they are after an operation (package journal hands the renderer the
// operation's view of every file), so it is deterministic and rewriting it
// is idempotent. Other tools' blocks and all other bytes of AGENTS.md are
// untouched; an index with no topics is removed.
package tier

import (
	"bytes"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

	"github.com/intermem/intermem/pkg/config"
	"github.com/intermem/intermem/pkg/journal"
	"github.com/intermem/intermem/pkg/lazyre"
	"github.com/intermem/intermem/pkg/match"
	"github.com/intermem/intermem/pkg/mdoc"
	"github.com/intermem/intermem/pkg/targets"
)

// Layouts.
const (
	Flat   = "flat"
	Tiered = "tiered"
)

// Config is the layout configuration of a project.
type Config struct {
	Layout      string
	TierClaude  bool
	Description string // where it came from, for status
}

// Load reads the layout from the environment and .intermem/config.json.
func Load(getenv func(string) string, stateDir string) Config {
	c := Config{Layout: Tiered, Description: "default"}
	// An unusable file leaves the defaults here; status reports it.
	if file, err := config.Read(stateDir); err == nil {
		if file.Layout == Flat || file.Layout == Tiered {
			c.Layout, c.Description = file.Layout, ".intermem/config.json"
		}
		c.TierClaude = file.TierClaude
	}
	if v := getenv("INTERMEM_LAYOUT"); v == Flat || v == Tiered {
		c.Layout, c.Description = v, "INTERMEM_LAYOUT"
	}
	if getenv("INTERMEM_TIER_CLAUDE") == "1" {
		c.TierClaude = true
	}
	return c
}

// Tiers reports whether facts for target go to detail documents.
func (c Config) Tiers(target string) bool {
	if c.Layout != Tiered {
		return false
	}
	return target == targets.Agents || c.TierClaude
}

// TopicTitle returns the topic a section title names: the title without a
// trailing date or dated note — "(updated 2026-04-02)", "(added …)", "(as
// of …)", "— 2026-04-02", "[2026-04-02]", "（2026-02-28）", "(2026)" — so
// that the same heading written on two days is one topic and one detail
// document, not two. A title that is nothing but a date stays as it is.
func TopicTitle(title string) string {
	t := strings.TrimSpace(title)
	for {
		loc := datedSuffix.Get().FindStringIndex(t)
		if loc == nil || loc[0] == 0 {
			break
		}
		t = strings.TrimRight(t[:loc[0]], " \t—–-:·|,;")
	}
	if t == "" {
		return strings.TrimSpace(title)
	}
	return t
}

// datedSuffix matches what TopicTitle strips. It compiles on first use:
// the hooks link this package and rarely title a topic.
var datedSuffix = lazyre.New(datedSuffixExpr)

const datedSuffixExpr = `(?i)(` +
	// a bracketed date (a year alone too), or a bracketed dated note
	`\s*[(\[（【]\s*(` + dateWords + `)?[\s:]*(` + datePattern + `|(19|20)\d\d)[^)\]）】]*[)\]）】]` +
	`|\s*[(\[（【]\s*(` + dateWords + `)\b[^)\]）】]*[)\]）】]` +
	// a date after a separator, with or without a note word
	`|\s*[—–\-:·|,]\s*(` + dateWords + `)?[\s:]*` + datePattern +
	// a bare date at the end
	`|\s+` + datePattern + `)\s*$`

const (
	dateWords   = `updated|last updated|added|as of|since|revised|edited|created|new|snapshot|status`
	datePattern = `(\d{4}[-/.]\d{1,2}([-/.]\d{1,2})?|\d{4}年\d{1,2}月(\d{1,2}日)?|(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.? \d{1,2}(, \d{4})?)`
)

// Slug makes a file name stem from a section title: lower case, letters
// and digits of any script kept (so "Déploiement" and "배포" stay
// readable), every other run of characters one "-".
func Slug(title string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(title) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
			dash = false
			continue
		}
		if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	s := strings.TrimRight(b.String(), "-")
	// Keep paths short: cut long titles at a word boundary.
	if r := []rune(s); len(r) > 40 {
		cut := string(r[:40])
		if i := strings.LastIndexByte(cut, '-'); i > 20 {
			cut = cut[:i]
		}
		s = strings.TrimRight(cut, "-")
	}
	if s == "" {
		s = "notes"
	}
	return s
}

// Header is the start of a new detail document.
func Header(title string) string {
	return "# " + title + "\n\nFacts promoted by intermem from Claude Code's auto-memory. Claude Code does not load\nthis file at session start; the index in AGENTS.md points here.\n"
}

// Title returns a detail document's topic: its first heading.
func Title(content []byte) string {
	d := mdoc.Parse(content)
	for _, s := range d.Sections {
		if s.Level > 0 {
			return s.Title
		}
	}
	return ""
}

// Mapper assigns sections to detail documents for one operation, reusing
// existing documents and avoiding slug collisions between topics.
type Mapper struct {
	root  string
	byKey map[string]string // normalized title → path
	taken map[string]string // path → normalized title
}

// NewMapper starts from the existing detail documents.
func NewMapper(ts *targets.Set) *Mapper {
	m := &Mapper{root: ts.Root, byKey: map[string]string{}, taken: map[string]string{}}
	for _, d := range ts.Details {
		key := match.Normalize(TopicTitle(Title(d.Content)))
		if key == "" {
			key = match.Normalize(strings.TrimSuffix(filepath.Base(d.Name), ".md"))
		}
		if _, dup := m.byKey[key]; !dup {
			m.byKey[key] = d.Path
		}
		m.taken[d.Path] = key
	}
	return m
}

// Path returns the detail document for a section title: the same for every
// title naming the same TopicTitle.
func (m *Mapper) Path(title string) string {
	title = TopicTitle(title)
	key := match.Normalize(title)
	if p, ok := m.byKey[key]; ok {
		return p
	}
	base := Slug(title)
	dir := filepath.Join(m.root, filepath.FromSlash(targets.DetailDir))
	for i := 1; ; i++ {
		name := base
		if i > 1 {
			name = fmt.Sprintf("%s-%d", base, i)
		}
		p := filepath.Join(dir, name+".md")
		if _, used := m.taken[p]; !used {
			m.byKey[key] = p
			m.taken[p] = key
			return p
		}
	}
}

// Paths lists every detail document known to the mapper, sorted.
func (m *Mapper) Paths() []string {
	out := make([]string, 0, len(m.taken))
	for p := range m.taken {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Index block delimiters.
const (
	IndexBegin = "<!-- intermem:index:begin -->"
	IndexEnd   = "<!-- intermem:index:end -->"
)

// Topic is one line of the index.
type Topic struct {
	Title string
	Path  string // relative to the root, slash-separated
	Facts []string
}

// RenderIndex renders the managed block for topics (without a trailing
// newline), or "" when there are none. It is what Claude Code loads every
// session in place of the facts, so every byte counts: one line per topic,
// its fact count, a one-liner of the facts' first words, and the path.
func RenderIndex(topics []Topic) string {
	if len(topics) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(IndexBegin + "\n## Project knowledge\n\nRead a topic's file before working on it.\n\n")
	for _, t := range topics {
		title := t.Title
		if r := []rune(title); len(r) > 40 {
			title = string(r[:39]) + "…"
		}
		fmt.Fprintf(&b, "- %s (%d): %s → %s\n", title, len(t.Facts), OneLiner(t.Facts, 64), t.Path)
	}
	b.WriteString(IndexEnd)
	return b.String()
}

// OneLiner summarises facts in about max characters: the first words of
// each, joined with "; ".
func OneLiner(facts []string, max int) string {
	var parts []string
	total := 0
	for _, f := range facts {
		words := strings.Fields(plainText(f))
		if len(words) > 5 {
			words = append(words[:5], "…")
		}
		part := strings.Join(words, " ")
		if total+len([]rune(part))+2 > max && len(parts) > 0 {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, part)
		total += len([]rune(part)) + 2
	}
	return strings.Join(parts, "; ")
}

// plainText strips markdown punctuation that would clutter a one-liner.
func plainText(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	r := strings.NewReplacer("**", "", "`", "", "*", "")
	return r.Replace(s)
}

// Topics reads the detail documents (through read) and returns one topic
// per document that holds at least one marked fact, sorted by title.
func Topics(root string, paths []string, read journal.Reader) ([]Topic, error) {
	var out []Topic
	for _, p := range paths {
		b, ok, err := read(p)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		d := mdoc.Parse(b)
		t := Topic{Title: Title(b)}
		if rel, err := filepath.Rel(root, p); err == nil {
			t.Path = filepath.ToSlash(rel)
		}
		if t.Title == "" {
			t.Title = strings.TrimSuffix(filepath.Base(p), ".md")
		}
		for _, m := range d.Marked() {
			if !m.Heading {
				t.Facts = append(t.Facts, m.Text)
			}
		}
		if len(t.Facts) > 0 {
			out = append(out, t)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return strings.ToLower(out[i].Title) < strings.ToLower(out[j].Title) })
	return out, nil
}

// SetIndex returns content with its managed index replaced by block (or
// added at the end, after one blank line; or removed when block is ""),
// keeping every other byte and the document's line endings.
func SetIndex(content []byte, block string) []byte {
	d := mdoc.Parse(content)
	eol := d.EOL
	if eol != "\n" {
		block = strings.ReplaceAll(block, "\n", eol)
	}
	start := bytes.Index(content, []byte(IndexBegin))
	end := -1
	if start >= 0 {
		if i := bytes.Index(content[start:], []byte(IndexEnd)); i >= 0 {
			end = start + i + len(IndexEnd)
		}
	}
	if start >= 0 && end >= 0 {
		// Replace the lines [start of begin line, end of end line).
		ls := bytes.LastIndexByte(content[:start], '\n') + 1
		le := end
		if i := bytes.IndexByte(content[end:], '\n'); i >= 0 {
			le = end + i + 1
		} else {
			le = len(content)
		}
		if block == "" {
			// Drop the block and one blank line before it.
			pre := content[:ls]
			trimmed := bytes.TrimRight(pre, "\r\n")
			if len(pre)-len(trimmed) > len(eol) {
				pre = append(trimmed, []byte(eol)...)
			}
			out := append([]byte{}, pre...)
			rest := content[le:]
			if len(rest) == 0 && !d.FinalNewline {
				out = bytes.TrimRight(out, "\r\n")
			}
			return append(out, rest...)
		}
		out := append([]byte{}, content[:ls]...)
		out = append(out, block...)
		if le > end || d.FinalNewline {
			out = append(out, eol...)
		}
		return append(out, content[le:]...)
	}
	if block == "" {
		return content
	}
	// Append at the end, separated from the content by one blank line.
	out := append([]byte{}, content...)
	if len(bytes.TrimSpace(out)) > 0 {
		if !d.FinalNewline {
			out = append(out, eol...)
		}
		if !bytes.HasSuffix(out, []byte(eol+eol)) {
			out = append(out, eol...)
		}
	}
	out = append(out, block...)
	if d.FinalNewline || len(content) == 0 {
		out = append(out, eol...)
	}
	return out
}

// IndexBytes returns the size of the managed index in content.
func IndexBytes(content []byte) int {
	start := bytes.Index(content, []byte(IndexBegin))
	if start < 0 {
		return 0
	}
	i := bytes.Index(content[start:], []byte(IndexEnd))
	if i < 0 {
		return 0
	}
	return i + len(IndexEnd)
}
