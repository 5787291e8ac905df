package ops

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/journal"
	"github.com/intermem/intermem/pkg/mdoc"
)

const corpus = "../../testdata/corpus"

func corpusFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(corpus, dir))
	if err != nil {
		t.Fatalf("the vendored corpus is part of the repository: %v", err)
	}
	out := map[string][]byte{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(corpus, dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	if len(out) == 0 {
		t.Fatal("empty corpus directory")
	}
	return out
}

// Promoting into every real CLAUDE.md/AGENTS.md preserves every other byte:
// removing exactly the inserted bytes gives back the original, and the
// entry is found whole, marked on its first line.
func TestPromoteIntoCorpusTargets(t *testing.T) {
	block := "- The store is opened with a timeout; never hold it across file I/O.\n  ```sh\n  go test ./pkg/store\n  ```"
	const id = "0123456789abcdef"
	for name, content := range corpusFiles(t, "claude-agents-md") {
		for _, section := range []string{"Testing", "Brand new section from intermem", ""} {
			s := &journal.Step{Action: ActInsert, ID: id, Section: section, Block: block}
			out, keep, err := Kinds.Apply(s, content, true, journal.ReadFile)
			if err != nil || !keep {
				t.Errorf("%s § %q: %v", name, section, err)
				continue
			}
			d := mdoc.Parse(out)
			var found *mdoc.Marked
			for _, m := range d.Marked() {
				if m.ID == id {
					m := m
					found = &m
				}
			}
			if found == nil {
				t.Errorf("%s § %q: inserted entry not found", name, section)
				continue
			}
			if !strings.Contains(string(out[found.Start:found.End]), "go test ./pkg/store") {
				t.Errorf("%s § %q: entry not whole:\n%s", name, section, out[found.Start:found.End])
			}
			first, _, _ := strings.Cut(string(out[found.Start:found.End]), "\n")
			if !strings.Contains(first, mdoc.Marker(id)) {
				t.Errorf("%s § %q: marker not on the first line: %q", name, section, first)
			}
			// Idempotent: applying again changes nothing.
			if again, _, _ := Kinds.Apply(s, out, true, journal.ReadFile); !bytes.Equal(again, out) {
				t.Errorf("%s § %q: insert is not idempotent", name, section)
			}
			// Undo restores every original byte.
			back, _, err := Kinds.Undo(s, out, true, journal.ReadFile)
			if err != nil || !bytes.Equal(back, content) {
				t.Errorf("%s § %q: removing the inserted entry does not restore the original bytes", name, section)
			}
		}
	}
}

// Pruning each fact from every real auto-memory file removes that entry's
// lines and nothing else: the result is the original with the entry's
// lines (and at most the blank lines and emptied headings around them)
// taken out, in order; every other entry survives with its identity. An
// entry that holds a secret is never pruned: the step leaves its file as
// it is.
func TestPruneFromCorpusMemory(t *testing.T) {
	pruned, kept := 0, 0
	for name, content := range corpusFiles(t, "auto-memory") {
		f := automem.Parse(name, content)
		for _, e := range f.Entries {
			var s *journal.Step
			switch e.Kind {
			case automem.Fact:
				s = &journal.Step{Action: ActRemoveEntry, ID: e.ID, Path: "/m/" + name}
			case automem.Memory:
				s = &journal.Step{Action: ActDeleteFile, ID: e.ID, Path: "/m/" + name}
			default:
				continue
			}
			out, keep, err := Kinds.Apply(s, content, true, journal.ReadFile)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			if e.Secret {
				kept++
				if !keep || !bytes.Equal(out, content) {
					t.Errorf("%s: the entry at line %d holds a secret and was pruned", name, e.StartLine)
				}
				continue
			}
			pruned++
			if e.Kind == automem.Memory {
				if keep {
					t.Errorf("%s: deleting a memory file kept it", name)
				}
				continue
			}
			removed := string(content[e.Start:e.End])
			if bytes.Contains(out, []byte(strings.TrimSpace(removed))) && strings.Count(string(content), strings.TrimSpace(removed)) == 1 {
				t.Errorf("%s: entry at line %d still present", name, e.StartLine)
			}
			if !isSubsequence(lines(out), lines(content)) {
				t.Errorf("%s: pruning line %d changed lines it did not remove", name, e.StartLine)
			}
			after := automem.Parse(name, out)
			left := map[string]bool{}
			for _, x := range after.Entries {
				left[x.ID] = true
			}
			for _, x := range f.Entries {
				if x.ID != e.ID && !left[x.ID] {
					t.Errorf("%s: pruning line %d lost entry at line %d", name, e.StartLine, x.StartLine)
				}
			}
		}
	}
	if pruned < 100 {
		t.Fatalf("only %d entries pruned across the corpus", pruned)
	}
	// The corpus holds two secrets in auto-memory (pkg/redact's corpus test
	// lists them): a password in a fact, a client secret in a topic file.
	if kept != 2 {
		t.Errorf("%d corpus entries kept for holding a secret, want 2", kept)
	}
}

func lines(b []byte) []string { return strings.SplitAfter(string(b), "\n") }

func isSubsequence(sub, of []string) bool {
	i := 0
	for _, l := range of {
		if i < len(sub) && sub[i] == l {
			i++
		}
	}
	return i == len(sub)
}
