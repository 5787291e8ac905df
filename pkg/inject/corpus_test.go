package inject

import (
	"bufio"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/intermem/intermem/pkg/hookio"
	"github.com/intermem/intermem/pkg/redact"
)

// corpusDir is the real-world corpus vendored in testdata, relative to
// this package.
var corpusDir = filepath.Join("..", "..", "testdata", "corpus")

// corpusMemoryDirs rebuilds every auto-memory folder of the corpus: the
// files of one repository and directory (MANIFEST.tsv says which), under
// their own names, in one scratch directory each.
func corpusMemoryDirs(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join(corpusDir, "MANIFEST.tsv"))
	if err != nil {
		t.Fatalf("the vendored corpus is part of the repository: %v", err)
	}
	defer f.Close()
	dirs := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) < 3 || cols[0] != "auto-memory" {
			continue
		}
		repo, p := cols[1], cols[2]
		src := filepath.Join(corpusDir, "auto-memory", strings.ReplaceAll(repo, "/", "__")+"__"+strings.ReplaceAll(p, "/", "_"))
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		key := repo + ":" + path.Dir(p)
		dir, ok := dirs[key]
		if !ok {
			dir = filepath.Join(t.TempDir(), "memory")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			dirs[key] = dir
		}
		if err := os.WriteFile(filepath.Join(dir, path.Base(p)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 8 {
		t.Fatalf("only %d auto-memory folders in the corpus", len(dirs))
	}
	return dirs
}

// TestCorpus renders every real auto-memory folder as the memory of a
// scratch project under three budgets: the hook's output is one valid
// JSON object, within budget, valid UTF-8, free of secrets, the same
// twice, or nothing when every entry is loaded and MEMORY.md is well
// within its cap; the folder whose MEMORY.md is 249 lines gets a ledger.
func TestCorpus(t *testing.T) {
	dirs := corpusMemoryDirs(t)
	keys := make([]string, 0, len(dirs))
	for k := range dirs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	total := map[int][2]int{}
	for _, key := range keys {
		root := t.TempDir()
		env := Env{Root: root, MemoryDir: dirs[key], Now: now, Threshold: 3}
		in, err := Gather(env, nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		var fill []string
		for _, b := range []int{200, 1200, 5000} {
			in.Budget = b
			res := Render(in)
			if res.Text == "" {
				// Allowed only when nothing is worth saying: every entry
				// is loaded and MEMORY.md is well within its cap.
				if len(in.Candidates) > 0 || (in.Index != nil && (in.Index.Truncated || in.Index.Lines >= 160 || in.Index.Chars >= 20000)) {
					t.Errorf("%s, budget %d: nothing rendered for %d candidates, index %+v", key, b, len(in.Candidates), in.Index)
				}
				fill = append(fill, "-")
				continue
			}
			if again := Render(in); again.Text != res.Text {
				t.Errorf("%s, budget %d: two renderings differ", key, b)
			}
			if len(res.Text) > 3*b || res.Chars >= MaxChars || !utf8.ValidString(res.Text) {
				t.Errorf("%s, budget %d: %d bytes, %d chars, valid UTF-8 %v", key, b, len(res.Text), res.Chars, utf8.ValidString(res.Text))
			}
			if redact.Has(res.Text) {
				t.Errorf("%s, budget %d: a secret in the context", key, b)
			}
			out, err := hookio.SessionStartOutput(res.Text)
			if err != nil {
				t.Fatal(err)
			}
			if !gjson.ValidBytes(out) || gjson.GetBytes(out, "hookSpecificOutput.hookEventName").String() != "SessionStart" ||
				gjson.GetBytes(out, "hookSpecificOutput.additionalContext").String() != res.Text {
				t.Errorf("%s, budget %d: bad hook output %s", key, b, out)
			}
			if key == "1000ssam/claude-config:memory" && b >= 1200 && !strings.Contains(res.Text, "MEMORY.md is 249 lines") {
				t.Errorf("%s: no ledger for a 249-line MEMORY.md:\n%s", key, res.Text)
			}
			fill = append(fill, strings.Join([]string{itoa(len(res.Text)), "/", itoa(3 * b)}, ""))
			tt := total[b]
			total[b] = [2]int{tt[0] + len(res.Text), tt[1] + 3*b}
		}
		t.Logf("%-60s %d candidates; bytes used at budgets 200/1200/5000: %s", key, len(in.Candidates), strings.Join(fill, "  "))
	}
	for _, b := range []int{200, 1200, 5000} {
		t.Logf("budget %d: %d of %d bytes over %d folders (%.0f%%)", b, total[b][0], total[b][1], len(keys), 100*float64(total[b][0])/float64(total[b][1]))
	}
}
