package plan

import (
	"os"
	"testing"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/catalog"
	"github.com/intermem/intermem/pkg/source/compound"
)

// solutionDocs parses real solution documents of the corpus as the
// catalog's compound source does, at the paths a project keeps them.
func solutionDocs(t *testing.T) []catalog.Entry {
	t.Helper()
	var out []catalog.Entry
	for path, file := range map[string]string{
		"docs/solutions/integration-issues/stop-hooks-break-after-mid-session-publish-20260212.md": "mistakeknot__Clavain__docs_solutions_integration-issues_stop-hooks-break-after-mid-session-publish-20260212.md",
		"docs/solutions/build-errors/mypy-collection-indexing-20260204.md":                         "mbta__gtfs-rt-alerts-translation-lambda__docs_solutions_build-errors_mypy-collection-indexing-20260204.md",
	} {
		b, err := os.ReadFile("../../testdata/corpus/solutions-learnings/" + file)
		if err != nil {
			t.Fatal(err)
		}
		es, _ := compound.Source{}.Parse(path, b)
		for _, e := range es {
			out = append(out, catalog.Entry{Entry: e})
		}
	}
	return out
}

// TestDocumentsCovering: a memory entry that a solution document already
// says (in other words, or less than one of its sentences, or by naming
// the document) is covered by it; one that adds to it, or says something
// else, is not. Expected values by hand from reading the documents.
func TestDocumentsCovering(t *testing.T) {
	d := NewDocuments(solutionDocs(t))
	const stop = "docs/solutions/integration-issues/stop-hooks-break-after-mid-session-publish-20260212.md"
	const mypy = "docs/solutions/build-errors/mypy-collection-indexing-20260204.md"
	for _, c := range []struct{ text, want string }{
		{"Claude Code's plugin installer deletes the old plugin cache directory.", stop},
		{"Claude Code bakes hook paths at session start.", stop},
		{"Stop hooks failing after a publish: see docs/solutions/integration-issues/stop-hooks-break-after-mid-session-publish-20260212.md", stop},
		{"Why Stop hooks fail: stop-hooks-break-after-mid-session-publish-20260212.md", stop},
		{"Add explicit type annotations to JSON variables in tests.", mypy},
		{"Always run the linter before pushing.", ""},
		{"The release checklist lives in RELEASING.md.", ""},
	} {
		e := automem.Entry{ID: "x", Kind: automem.Fact, Marker: "-", Text: c.text}
		if got := d.Covering(e); got != c.want {
			t.Errorf("Covering(%q) = %q, want %q", c.text, got, c.want)
		}
	}
	if got := (*Documents)(nil).Covering(automem.Entry{Kind: automem.Fact, Text: "Claude Code bakes hook paths at session start."}); got != "" {
		t.Errorf("no documents: %q", got)
	}
}
