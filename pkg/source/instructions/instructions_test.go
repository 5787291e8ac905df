package instructions

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/intermem/intermem/pkg/loaded"
	"github.com/intermem/intermem/pkg/source"
	"github.com/intermem/intermem/pkg/source/sourcetest"
)

func TestFixturesGolden(t *testing.T) {
	var b strings.Builder
	for _, f := range sourcetest.Fixtures(t, "testdata/files.txtar") {
		es, ps := Source{}.Parse(f.Name, f.Data)
		b.WriteString("# " + f.Name + "\n")
		b.WriteString(sourcetest.Render(es, ps))
	}
	sourcetest.Golden(t, "testdata/files.golden", b.String())
}

// TestLocate: the files are the loaded set, named as a person knows them;
// an AGENTS.md beside a CLAUDE.md that does not import it is not loaded,
// a rule scoped by paths loads on demand only, and the user's CLAUDE.md is
// "~/…".
func TestLocate(t *testing.T) {
	root, home := t.TempDir(), t.TempDir()
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, ".git", "HEAD"), "ref: refs/heads/main\n")
	write(filepath.Join(root, "CLAUDE.md"), "Use tabs.\n\n@docs/style.md\n")
	write(filepath.Join(root, "docs", "style.md"), "Short names.\n")
	write(filepath.Join(root, "AGENTS.md"), "Not loaded beside a CLAUDE.md.\n")
	write(filepath.Join(root, ".claude", "rules", "a.md"), "Rule a.\n")
	write(filepath.Join(root, ".claude", "rules", "scoped.md"), "---\npaths: [\"x/**\"]\n---\nScoped.\n")
	write(filepath.Join(home, ".claude", "CLAUDE.md"), "Mine.\n")
	fs, probs := Source{}.Locate(source.Env{Root: root, Home: home, ConfigDir: filepath.Join(home, ".claude")})
	if len(probs) > 0 {
		t.Fatalf("problems: %v", probs)
	}
	var got []string
	for _, f := range fs {
		got = append(got, f.Path)
	}
	slices.Sort(got)
	want := []string{".claude/rules/a.md", "CLAUDE.md", "docs/style.md", "~/.claude/CLAUDE.md"}
	if !slices.Equal(got, want) {
		t.Fatalf("files = %q, want %q", got, want)
	}
}

func FuzzParse(f *testing.F) {
	for _, fx := range sourcetest.Fixtures(f, "testdata/files.txtar") {
		f.Add(fx.Data)
	}
	f.Add([]byte("- a\n  - b\n- c <!-- intermem:0123456789abcdef -->\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		es, _ := Source{}.Parse("CLAUDE.md", data)
		sourcetest.CheckEntries(t, es, "CLAUDE.md")
	})
}

// An instruction file is read whole up to loaded.MaxBytes, and refused
// past it, whatever its size was when the buffer was sized.
func TestReadBounded(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{0, 1, 511, 512, 4096, loaded.MaxBytes - 1, loaded.MaxBytes, loaded.MaxBytes + 1, 3 * loaded.MaxBytes} {
		p := filepath.Join(dir, "CLAUDE.md")
		want := strings.Repeat("x", n)
		if err := os.WriteFile(p, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		b, err := readBounded(p)
		if n > loaded.MaxBytes {
			if !errors.Is(err, source.ErrTooLarge) {
				t.Errorf("%d bytes: %v, want ErrTooLarge", n, err)
			}
			continue
		}
		if err != nil || string(b) != want {
			t.Errorf("%d bytes: read %d, %v", n, len(b), err)
		}
	}
	if _, err := readBounded(filepath.Join(dir, "missing.md")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}
