package cite

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/corpus-sample.txt")

// corpusDir is the real-world corpus vendored in testdata, relative to this package.
var corpusDir = filepath.Join("..", "..", "testdata", "corpus")

// corpusEntries splits a markdown file into entries: each list item with its
// continuation lines (fenced blocks included), and every other non-blank line
// that is not a heading, a table rule or frontmatter.
func corpusEntries(text string) []string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	lines := strings.Split(text, "\n")
	if len(lines) > 0 && strings.TrimSpace(lines[0]) == "---" {
		for i := 1; i < len(lines); i++ {
			if strings.TrimSpace(lines[i]) == "---" {
				lines = lines[i+1:]
				break
			}
		}
	}
	var out []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.Join(cur, "\n"))
			cur = nil
		}
	}
	inFence, inItem := false, false
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if ch, n, _ := fenceMarker(l); n > 0 && ch != 0 {
			inFence = !inFence
			if inItem {
				cur = append(cur, l)
			}
			continue
		}
		switch {
		case inFence:
			if inItem {
				cur = append(cur, l)
			}
		case t == "":
			flush()
			inItem = false
		case strings.HasPrefix(t, "#") || strings.Trim(t, "|-: ") == "":
			flush()
			inItem = false
		case isListItem(t):
			flush()
			cur = []string{l}
			inItem = true
		case inItem && (l != t || !strings.HasPrefix(t, "|")):
			cur = append(cur, l)
		default:
			flush()
			inItem = false
			out = append(out, l)
		}
	}
	flush()
	return out
}

func isListItem(t string) bool {
	if strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "* ") || strings.HasPrefix(t, "+ ") {
		return true
	}
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	return i > 0 && i < len(t)-1 && (t[i] == '.' || t[i] == ')') && t[i+1] == ' '
}

// isPointer reports a link to a sibling markdown file ([t](topic.md)), the
// auto-memory index form: relative to the memory directory, not the project.
func isPointer(entry string, c Citation) bool {
	return c.Kind == File && !strings.Contains(c.Path, "/") && isDoc(c.Path) && strings.Contains(entry, "]("+c.Text)
}

type corpusHit struct {
	file, entry string
	c           Citation
}

// TestCorpusReport runs Extract over every real memory and instruction file
// in the shared corpus, logs the figures and writes a seeded sample of 50
// extracted values (with their entries) for a person to judge.
func TestCorpusReport(t *testing.T) {
	var files []string
	for _, sub := range []string{"auto-memory", "claude-agents-md"} {
		m, _ := filepath.Glob(filepath.Join(corpusDir, sub, "*.md"))
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatalf("the vendored corpus is part of the repository: no %s", corpusDir)
	}
	sort.Strings(files)
	var hits []corpusHit
	entries, withCheckable, withProject, pointers, outside := 0, 0, 0, 0, 0
	kinds := map[Kind]int{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range corpusEntries(string(data)) {
			entries++
			cs := Extract(e)
			if Checkable(cs) > 0 {
				withCheckable++
			}
			project := false
			for _, c := range cs {
				if isPointer(e, c) {
					pointers++
				} else if !c.Outside {
					project = true
				}
			}
			if project {
				withProject++
			}
			for _, c := range cs {
				kinds[c.Kind]++
				if c.Outside {
					outside++
				}
				hits = append(hits, corpusHit{filepath.Base(f), e, c})
			}
		}
	}
	if entries == 0 {
		t.Fatal("no entries in the corpus")
	}
	t.Logf("%d files, %d entries, %d (%.0f%%) with a checkable citation", len(files), entries, withCheckable, 100*float64(withCheckable)/float64(entries))
	t.Logf("%d values extracted (%d outside, %d memory-pointer link targets): %v", len(hits), outside, pointers, kinds)
	t.Logf("%d (%.0f%%) entries cite something checkable other than a memory pointer", withProject, 100*float64(withProject)/float64(entries))

	rng := rand.New(rand.NewPCG(2026, 2))
	idx := rng.Perm(len(hits))
	if len(idx) > 50 {
		idx = idx[:50]
	}
	sort.Ints(idx)
	var b strings.Builder
	fmt.Fprintf(&b, "# Seeded sample of %d of the %d values Extract finds in %d corpus entries\n", len(idx), len(hits), entries)
	fmt.Fprintf(&b, "# (regenerate with: go test ./pkg/cite -run TestCorpusReport -update)\n\n")
	for n, i := range idx {
		h := hits[i]
		entry := strings.ReplaceAll(h.entry, "\n", "⏎")
		if r := []rune(entry); len(r) > 300 {
			entry = string(r[:300]) + "…"
		}
		fmt.Fprintf(&b, "%d. %q kind=%s path=%q", n+1, h.c.Text, h.c.Kind, h.c.Path)
		if h.c.Line > 0 {
			fmt.Fprintf(&b, " line=%d", h.c.Line)
		}
		if h.c.Symbol != "" {
			fmt.Fprintf(&b, " symbol=%s", h.c.Symbol)
		}
		if h.c.Outside {
			b.WriteString(" outside")
		}
		fmt.Fprintf(&b, "\n   file:  %s\n   entry: %s\n\n", h.file, entry)
	}
	golden := filepath.Join("testdata", "corpus-sample.txt")
	if *update {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != b.String() {
		t.Errorf("%s is out of date: extraction changed; review and regenerate with -update", golden)
	}
}
