package compound

import (
	"os"
	"path"
	"strings"
	"testing"

	"github.com/intermem/intermem/pkg/source"
	"github.com/intermem/intermem/pkg/source/sourcetest"
)

const corpus = "../../../testdata/corpus"

// golden lists the corpus documents whose every parsed field is checked
// against testdata/corpus.golden: one of each frontmatter schema.
var golden = []string{
	"docs/solutions/build-errors/mypy-collection-indexing-20260204.md",                         // standard schema
	"docs/solutions/integration-issues/stop-hooks-break-after-mid-session-publish-20260212.md", // plain list item with ": "
	"docs/solutions/2026-02-19-extract-skillmd-inline-logic-to-library.md",                     // title/category, synthesized_into
	"docs/solutions/integration-issues/synthesis-plugin-cache-session-lifecycle.md",            // synthesized_from
	"docs/solutions/2026-01-31-dataclass-inheritance-field-ordering.md",                        // JSON-style symptoms
	"docs/solutions/2026-01-31-directoryout-type-consistency.md",                               // no symptoms, date from the name
	"docs/solutions/patterns/synthesis-subagent-context-isolation-20260216.md",                 // no "#" title
	"docs/solutions/database-issues/toctou-gate-check-cas-dispatch-intercore-20260221.md",      // framework_version
	"docs/solutions/patterns/critical-patterns.md",                                             // no frontmatter (MBTA and Interverse)
	"docs/solutions/INDEX.md", // generated index: no entry
}

func TestCorpusGolden(t *testing.T) {
	var b strings.Builder
	for _, want := range golden {
		n := 0
		for _, f := range sourcetest.Corpus(t, corpus) {
			if f.Path != want {
				continue
			}
			n++
			data, err := os.ReadFile(f.File)
			if err != nil {
				t.Fatal(err)
			}
			es, ps := Source{}.Parse(f.Path, data)
			b.WriteString("# " + f.Repo + " " + f.Path + "\n")
			b.WriteString(sourcetest.Render(es, ps))
		}
		if n == 0 {
			t.Errorf("%s is not in the corpus", want)
		}
	}
	sourcetest.Golden(t, "testdata/corpus.golden", b.String())
}

// TestCorpusWhole parses every solution document of the corpus: each but the
// index is one entry with a title and no problem, and each whose frontmatter
// has a date (or date_discovered) gets it.
func TestCorpusWhole(t *testing.T) {
	n := 0
	for _, f := range sourcetest.Corpus(t, corpus) {
		if !strings.HasPrefix(f.Path, "docs/solutions/") {
			continue
		}
		n++
		data, err := os.ReadFile(f.File)
		if err != nil {
			t.Fatal(err)
		}
		es, ps := Source{}.Parse(f.Path, data)
		if len(ps) > 0 {
			t.Errorf("%s %s: problems %v", f.Repo, f.Path, ps)
		}
		if path.Base(f.Path) == "INDEX.md" {
			if len(es) != 0 {
				t.Errorf("%s: INDEX.md gave %d entries", f.Repo, len(es))
			}
			continue
		}
		if len(es) != 1 {
			t.Fatalf("%s %s: %d entries", f.Repo, f.Path, len(es))
		}
		e := es[0]
		if e.Title == "" || e.Text == "" || e.ID != source.ID(Name, f.Path) {
			t.Errorf("%s %s: title %q, %d bytes of text, id %s", f.Repo, f.Path, e.Title, len(e.Text), e.ID)
		}
		if e.Line != 1 || e.EndLine != f.Lines {
			t.Errorf("%s %s: lines %d-%d, the manifest says %d", f.Repo, f.Path, e.Line, e.EndLine, f.Lines)
		}
		dated := strings.Contains(string(data), "\ndate:") || strings.Contains(string(data), "\ndate_discovered:")
		if dated && e.Created.IsZero() {
			t.Errorf("%s %s: the frontmatter date was not read", f.Repo, f.Path)
		}
	}
	if n != 53 {
		t.Errorf("the corpus holds %d solution documents, want 53", n)
	}
}

func TestFixturesGolden(t *testing.T) {
	for _, name := range []string{"variants"} {
		t.Run(name, func(t *testing.T) {
			var b strings.Builder
			for _, f := range sourcetest.Fixtures(t, "testdata/"+name+".txtar") {
				es, ps := Source{}.Parse(f.Name, f.Data)
				b.WriteString("# " + f.Name + "\n")
				b.WriteString(sourcetest.Render(es, ps))
			}
			sourcetest.Golden(t, "testdata/"+name+".golden", b.String())
		})
	}
}

func TestRootCause(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{"---\nroot_cause: config_error\n---\n# T\n## Root Cause\nThree-step chain:\n\n1. **Hooks bake paths at start.** More.\n", "Hooks bake paths at start."},
		{"---\nroot_cause: config_error\n---\n# T\n## Problem\nx\n", "config_error"},
		{"# T\n## Root Cause\n```\ncode\n```\n- The lock is `O_EXCL`. Then more.\n", "The lock is `O_EXCL`."},
		{"# T\n", ""},
	} {
		es, _ := Source{}.Parse("docs/solutions/x.md", []byte(tc.doc))
		if got := RootCause(&es[0]); got != tc.want {
			t.Errorf("RootCause(%q) = %q, want %q", tc.doc, got, tc.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, fx := range sourcetest.Fixtures(f, "testdata/variants.txtar") {
		f.Add(fx.Data)
	}
	for _, c := range sourcetest.Corpus(f, corpus) {
		if strings.HasPrefix(c.Path, "docs/solutions/") {
			data, err := os.ReadFile(c.File)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Add([]byte("---\na: &a [*a, *a]\nb: !!binary xyz\nc: {x: [1, {y: 2}]}\n---\n## \n#\n```\n## x"))
	f.Fuzz(func(t *testing.T, data []byte) {
		es, _ := Source{}.Parse("docs/solutions/x.md", data)
		sourcetest.CheckEntries(t, es, "docs/solutions/x.md")
		if len(es) > 1 {
			t.Fatalf("%d entries from one document", len(es))
		}
		for _, e := range es {
			RootCause(&e)
			for _, s := range e.Sections {
				if s.Line < 1 || s.Line > e.EndLine {
					t.Fatalf("section %q at line %d of %d", s.Name, s.Line, e.EndLine)
				}
			}
		}
	})
}
