package clavain

import (
	"strings"
	"testing"

	"github.com/intermem/intermem/pkg/source/sourcetest"
)

func TestFixturesGolden(t *testing.T) {
	var b strings.Builder
	for _, f := range sourcetest.Fixtures(t, "testdata/learnings.txtar") {
		es, ps := Source{}.Parse(f.Name, f.Data)
		b.WriteString("# " + f.Name + "\n")
		b.WriteString(sourcetest.Render(es, ps))
	}
	sourcetest.Golden(t, "testdata/learnings.golden", b.String())
}

func FuzzParse(f *testing.F) {
	for _, fx := range sourcetest.Fixtures(f, "testdata/learnings.txtar") {
		f.Add(fx.Data)
	}
	f.Add([]byte("---\nlastConfirmed: &a [*a]\n---\nEvidence: ,,;;\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		es, _ := Source{}.Parse(".clavain/learnings/x.md", data)
		sourcetest.CheckEntries(t, es, ".clavain/learnings/x.md")
		if len(es) > 1 {
			t.Fatalf("%d entries from one file", len(es))
		}
	})
}
