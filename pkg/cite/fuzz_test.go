package cite

import (
	"fmt"
	"strings"
	"testing"
)

func FuzzExtract(f *testing.F) {
	for _, s := range []string{
		"- `Open()` in `pkg/store/db.go`",
		"- see [x](docs/a%20b.md#L3-L9 \"t\") and src/**/*.py, ~/.codex/config.toml",
		"```\npkg/x.go\n```\n`a/b.go:10:5` <!-- c --> `tests/t.py::A::b[1]`",
		"- `web/{a,b}/*.tsx` `app/[id]/page.tsx` C:\\x\\y.txt `/api/v1/users`",
		strings.Repeat("/", 100), strings.Repeat("](", 50), strings.Repeat("`", 33),
	} {
		f.Add(s)
	}
	for _, tt := range nonCitations {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		cs := Extract(in)
		if len(cs) > MaxCitations {
			t.Fatalf("%d citations, cap is %d", len(cs), MaxCitations)
		}
		seen := map[key]bool{}
		for _, c := range cs {
			if c.Text == "" || !strings.Contains(in, c.Text) {
				t.Fatalf("Text %q does not occur in the input", c.Text)
			}
			if c.Path == "" {
				t.Fatalf("empty Path for %+v", c)
			}
			switch c.Kind {
			case File, Dir, Glob, Path:
				if c.Symbol != "" {
					t.Fatalf("symbol on a %s citation: %+v", c.Kind, c)
				}
			case Symbol:
				if c.Symbol == "" {
					t.Fatalf("symbol citation without a symbol: %+v", c)
				}
			default:
				t.Fatalf("unknown kind %q", c.Kind)
			}
			if !c.Outside && (c.Path == ".." || strings.HasPrefix(c.Path, "../") || strings.HasPrefix(c.Path, "~")) {
				t.Fatalf("escaping path not marked Outside: %+v", c)
			}
			if c.Line < 0 {
				t.Fatalf("negative line: %+v", c)
			}
			k := key{c.Kind, c.Path, c.Line, c.Symbol}
			if seen[k] {
				t.Fatalf("duplicate citation %+v", c)
			}
			seen[k] = true
		}
		if again := Extract(in); fmt.Sprint(again) != fmt.Sprint(cs) {
			t.Fatalf("Extract is not deterministic")
		}
		// In a document three directories down, a link resolved against
		// its directory never leaves the project unmarked, and every
		// escaped destination was written in the input.
		docCites, escaped := ExtractDoc(in, "docs/solutions/x/doc.md")
		if len(docCites) > MaxCitations {
			t.Fatalf("ExtractDoc: %d citations", len(docCites))
		}
		for _, c := range docCites {
			if !c.Outside && (c.Path == ".." || strings.HasPrefix(c.Path, "../")) {
				t.Fatalf("ExtractDoc: escaping path not marked Outside: %+v", c)
			}
		}
		for _, x := range escaped {
			if !strings.Contains(in, x) {
				t.Fatalf("ExtractDoc: escaped %q is not in the input", x)
			}
		}
	})
}

// hostile inputs, each about size bytes.
func hostile(size int) map[string]string {
	rep := func(s string) string { return strings.Repeat(s, size/len(s)+1)[:size] }
	var ticks strings.Builder
	for i := 1; ticks.Len() < size; i++ {
		ticks.WriteString(strings.Repeat("`", i%40+1))
		ticks.WriteString("a/b.go ")
	}
	return map[string]string{
		"slashes":       rep("/"),
		"dotslash":      rep("./"),
		"pathlike":      rep("a/"),
		"backtickruns":  ticks.String(),
		"unclosedlinks": rep("[x](a/b.go "),
		"linkopeners":   rep("]("),
		"comments":      rep("<!--"),
		"fences":        rep("```\n"),
		"realistic":     rep("- The store `pkg/store/db.go:42` uses src/**/*.go, see [g](docs/g.md) and `Open()`; 1/2 and/or https://x.io/a.\n"),
		"colons":        rep("a/b.go:1:"),
		"braces":        rep("`a/{b,"),
		"symbols":       rep("Open() "),
	}
}

// BenchmarkExtractHostile shows Extract is linear: ns/op grows with the input
// size (compare the 10k, 50k and 250k rows; MB/s stays flat).
func BenchmarkExtractHostile(b *testing.B) {
	for _, size := range []int{10_000, 50_000, 250_000} {
		for name, in := range hostile(size) {
			b.Run(fmt.Sprintf("%s/%dk", name, size/1000), func(b *testing.B) {
				b.SetBytes(int64(len(in)))
				for b.Loop() {
					Extract(in)
				}
			})
		}
	}
	b.Run("10000slashes", func(b *testing.B) {
		in := "- see `" + strings.Repeat("/", 10_000) + "` and " + strings.Repeat("/", 10_000)
		b.SetBytes(int64(len(in)))
		for b.Loop() {
			Extract(in)
		}
	})
}

// BenchmarkCheck measures checking a typical entry against a warm Checker.
func BenchmarkCheck(b *testing.B) {
	root := b.TempDir()
	writeFile(b, root, "pkg/store/db.go", "package store\nfunc Open() {}\n")
	writeFile(b, root, "docs/guide.md", "# g\n")
	c := NewChecker(root)
	cs := Extract("- `Open()` in `pkg/store/db.go`; see [g](docs/guide.md) and `pkg/**/*.go`")
	for b.Loop() {
		c.Check(cs)
	}
}
