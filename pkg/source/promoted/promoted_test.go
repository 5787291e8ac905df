package promoted

import (
	"strings"
	"testing"

	"github.com/intermem/intermem/pkg/source/sourcetest"
)

func TestFixturesGolden(t *testing.T) {
	var b strings.Builder
	for _, f := range sourcetest.Fixtures(t, "testdata/docs.txtar") {
		es, ps := Source{}.Parse(f.Name, f.Data)
		b.WriteString("# " + f.Name + "\n")
		b.WriteString(sourcetest.Render(es, ps))
	}
	sourcetest.Golden(t, "testdata/docs.golden", b.String())
}

func FuzzParse(f *testing.F) {
	for _, fx := range sourcetest.Fixtures(f, "testdata/docs.txtar") {
		f.Add(fx.Data)
	}
	f.Add([]byte("<!-- intermem:0123456789abcdef -->"))
	f.Fuzz(func(t *testing.T, data []byte) {
		es, _ := Source{}.Parse("CLAUDE.md", data)
		sourcetest.CheckEntries(t, es, "CLAUDE.md")
	})
}
