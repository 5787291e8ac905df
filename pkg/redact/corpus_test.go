package redact

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type secretRecord struct {
	format, kind, secret, line string
	lineNo                     int
}

// newline is how testdata/secrets.txt writes a line break inside a record.
const newline = "⏎"

func readSecrets(t testing.TB) []secretRecord {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "secrets.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []secretRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.SplitN(line, "\t", 3)
		if len(parts) != 3 || !strings.Contains(parts[2], parts[1]) {
			t.Fatalf("secrets.txt:%d: want kind<TAB>secret<TAB>bullet containing the secret", n)
		}
		kind, _, _ := strings.Cut(parts[0], "/")
		recs = append(recs, secretRecord{parts[0], kind,
			strings.ReplaceAll(parts[1], newline, "\n"), strings.ReplaceAll(parts[2], newline, "\n"), n})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return recs
}

// TestSecretCorpus: every secret in testdata/secrets.txt is found with its kind and fully
// removed: no 8-byte substring of it survives String.
func TestSecretCorpus(t *testing.T) {
	recs := readSecrets(t)
	formats := map[string]int{}
	for _, r := range recs {
		if prev, dup := formats[r.format]; dup {
			t.Errorf("secrets.txt:%d: format %s is also line %d", r.lineNo, r.format, prev)
		}
		formats[r.format] = r.lineNo
	}
	if len(formats) < 60 {
		t.Fatalf("secrets.txt has %d formats, want at least 60", len(formats))
	}
	for _, r := range recs {
		var kinds []string
		for _, f := range Find(r.line) {
			kinds = append(kinds, f.Kind)
		}
		if !strings.Contains(" "+strings.Join(kinds, " ")+" ", " "+r.kind+" ") {
			t.Errorf("secrets.txt:%d: kinds %v, want %s", r.lineNo, kinds, r.kind)
		}
		out := String(r.line)
		for i := 0; i+8 <= len(r.secret); i++ {
			if sub := r.secret[i : i+8]; strings.Contains(out, sub) {
				t.Errorf("secrets.txt:%d: %q survives in %q", r.lineNo, sub, out)
				break
			}
		}
		if String(out) != out {
			t.Errorf("secrets.txt:%d: not idempotent", r.lineNo)
		}
	}
}

// corpusExpected lists every finding in the real-world corpus (../../testdata/corpus),
// as "file: kind value". Each is justified in the comment.
var corpusExpected = map[string]bool{
	// A Google OAuth client credential written under the label "client_secret" in a private
	// memory file: conservative redaction of a value its author called a secret.
	"1000ssam__claude-config__memory_project_book-writer.md: client-secret 358410151364-ijasavahhiuifcnjh75vsdpkrghc507a": true,
	// A real admin password written as "Auth: <user> / <password>" in a project memory: the
	// SessionStart context printed it before the credential-pair rule existed.
	"zatiads__projeto-jake-23-03-2026__.claude_projects_-root_memory_projeto.md: password Jake@2024!": true,
}

// TestRealCorpus runs String over every real memory, CLAUDE.md and solution file: it may
// change nothing but the findings listed in corpusExpected.
func TestRealCorpus(t *testing.T) {
	root := filepath.Join("..", "..", "testdata", "corpus")
	if _, err := os.Stat(root); err != nil {
		t.Fatalf("the vendored corpus is part of the repository: %v", err)
	}
	seen := map[string]bool{}
	files := 0
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files++
		s := string(b)
		fs := Find(s)
		for _, f := range fs {
			key := filepath.Base(p) + ": " + f.Kind + " " + s[f.Start:f.End]
			seen[key] = true
			t.Logf("finding %s", key)
			if !corpusExpected[key] {
				t.Errorf("unexpected finding %s in line %q", key, lineAround(s, f.Start))
			}
		}
		out := String(s)
		if len(fs) == 0 && out != s {
			t.Errorf("%s: String changed a file without findings", p)
		}
		if strings.Count(out, Marker) != len(fs) {
			t.Errorf("%s: %d markers for %d findings", p, strings.Count(out, Marker), len(fs))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for k := range corpusExpected {
		if !seen[k] {
			t.Errorf("expected finding not reported: %s", k)
		}
	}
	t.Logf("%d corpus files, %d findings", files, len(seen))
}

func lineAround(s string, i int) string {
	ls := strings.LastIndexByte(s[:i], '\n') + 1
	le := strings.IndexByte(s[i:], '\n')
	if le < 0 {
		le = len(s)
	} else {
		le += i
	}
	return s[ls:le]
}
