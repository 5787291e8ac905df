package sources

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/intermem/intermem/pkg/redact"
	"github.com/intermem/intermem/pkg/source"
	"github.com/intermem/intermem/pkg/source/written"
)

// planting lays text out in a file one source reads, in every place of it
// that becomes a title, a field or a text (a source may cut any of them).
type planting func(text string) (path string, content []byte)

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// plantings holds, for every registered source, the files that carry a
// text into each of its entries' parts. A new source needs its own here:
// TestNoSecretCutInHalf fails for a registered source without one.
var plantings = map[string][]planting{
	"auto-memory": {
		func(t string) (string, []byte) { return "memory/MEMORY.md", []byte("# Memory\n\n- " + t + "\n") },
		func(t string) (string, []byte) {
			return "memory/note.md", []byte("---\nname: note\ndescription: " + t + "\nmetadata:\n  type: reference\n---\n" + t + "\n")
		},
	},
	"clavain": {
		func(t string) (string, []byte) {
			return ".clavain/learnings/a.md", []byte("---\nlastConfirmed: " + t + "\nprovenance: " + t + "\n---\n# " + t + "\n\n" + t + "\n\nVerify: " + t + "\n")
		},
		func(t string) (string, []byte) {
			return ".clavain/learnings/b.md", []byte("---\nlastConfirmed: 2026-02-10\n---\n" + t + "\n")
		},
	},
	"compound": {
		func(t string) (string, []byte) {
			return "docs/solutions/x/a.md", []byte("---\ntitle: " + t + "\ncomponent: " + t + "\nsymptoms: [" + jsonString(t) + "]\n---\n# " + t + "\n\n## Root Cause\n" + t + "\n")
		},
		func(t string) (string, []byte) {
			return "docs/solutions/x/b.md", []byte("# " + t + "\n\n## Problem\n" + t + "\n")
		},
	},
	"continuity": {
		func(t string) (string, []byte) {
			j := jsonString(t)
			return ".intermem/continuity.jsonl", []byte(`{"kind":"decision","id":"d1","text":` + j + `,"why":` + j + `,"phase":1,"time":"2026-11-01T10:00:00Z"}` + "\n" +
				`{"kind":"phase","n":1,"name":` + j + `,"summary":` + j + `,"artifacts":[` + j + `],"issues":[` + j + `],"started":"2026-11-01T09:00:00Z","closed":"2026-11-01T11:00:00Z"}` + "\n" +
				`{"kind":"checkpoint","id":"cp-1","summary":` + j + `,"phase":1,"time":"2026-11-01T10:30:00Z"}` + "\n" +
				`{"kind":"memory","scope":"phase","phase":1,"type":"insight","title":` + j + `,"text":` + j + `,"tags":[` + j + `],"files":[` + j + `],"time":"2026-11-01T10:40:00Z"}` + "\n")
		},
	},
	"instructions": {
		func(t string) (string, []byte) { return "CLAUDE.md", []byte("# Rules\n\n- " + t + "\n") },
	},
	"interfluence": {
		func(t string) (string, []byte) {
			return ".interfluence/learnings-raw.log", []byte("--- 2026-11-01T10:00:00Z | src/a.go | CONTEXT:style ---\nOLD: " + t + "\nNEW: " + t + " again\n" +
				"--- 2026-11-01T10:01:00Z | src/a.go | CONTEXT:style ---\nNEW: " + t + "\n" +
				"--- 2026-11-01T10:02:00Z | src/a.go | CONTEXT:style ---\nOLD: " + t + "\n")
		},
	},
	"promoted": {
		func(t string) (string, []byte) {
			return "CLAUDE.md", []byte("# Project\n\n- " + t + " <!-- intermem:0123456789abcdef -->\n")
		},
	},
	"written": {
		func(t string) (string, []byte) {
			// A longer title, content (or tag, file) is refused whole, never cut.
			title, content := jsonString(orNote(t, written.MaxTitle)), jsonString(orNote(t, written.MaxContent))
			return ".intermem/written.jsonl", []byte(`{"id":"x","type":"insight","title":` + title + `,"content":` + content + `,"tags":["deploy"],"source":"test","created_at":"2026-11-01T10:00:00Z"}` + "\n")
		},
	},
}

// orNote is s, or a plain note when s is longer than n bytes.
func orNote(s string, n int) string {
	if len(s) > n {
		return "A plain note"
	}
	return s
}

// cutSecret is one secret of pkg/redact's corpus and a line holding it.
type cutSecret struct{ format, value, line string }

// oneLineSecrets reads one secret of each kind from pkg/redact's corpus,
// those that fit on one line.
func oneLineSecrets(t *testing.T) []cutSecret {
	t.Helper()
	fh, err := os.Open("../../redact/testdata/secrets.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var out []cutSecret
	kinds := map[string]bool{}
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), "\t", 3)
		if len(parts) != 3 || strings.HasPrefix(parts[0], "#") || strings.Contains(parts[2], "⏎") {
			continue
		}
		kind, _, _ := strings.Cut(parts[0], "/")
		if kinds[kind] || len(parts[1]) < 8 {
			continue
		}
		kinds[kind] = true
		out = append(out, cutSecret{parts[0], parts[1], strings.TrimPrefix(parts[2], "- ")})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(kinds) < 40 {
		t.Fatalf("%d kinds of secret read from the corpus; want at least 40", len(kinds))
	}
	return out
}

// filler is n bytes of plain words.
func filler(n int) string {
	const words = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor "
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(words)
	}
	return b.String()[:n]
}

// piece returns the first 8-byte piece of secret found in s, or "".
func piece(s, secret string) string {
	for i := 0; i+8 <= len(secret); i++ {
		if strings.Contains(s, secret[i:i+8]) {
			return secret[i : i+8]
		}
	}
	return ""
}

// stored is every text of an entry as the catalog stores it: redacted
// (unless its source did) as catalog.prepare does, so what is checked is
// what would reach the store.
func stored(e source.Entry) string {
	parts := []string{e.Path, e.Title, e.Text}
	parts = append(append(append(parts, e.Tags...), e.Symptoms...), e.Citations...)
	for _, s := range e.Sections {
		parts = append(parts, s.Name, s.Text)
	}
	for k, v := range e.Fields {
		parts = append(parts, k, v)
	}
	all := strings.Join(parts, "\x00")
	if e.Redacted {
		return all
	}
	for i, p := range parts {
		parts[i] = redact.String(p)
	}
	return strings.Join(parts, "\x00")
}

// TestNoSecretCutInHalf: whatever a source cuts (a title, a field, a
// text), it cuts redacted text. Every registered source reads a line
// holding a secret of each kind, with the secret moved by plain words
// before it across every cut length up to past 300 bytes and around the
// longer cuts (2 KiB fields, 8 and 16 KiB texts, 64 KiB lines); no 8-byte
// piece of the secret may be in what the catalog would store. A secret the
// whole line does not give up to redaction is not this test's concern (the
// redact corpus tests hold those).
func TestNoSecretCutInHalf(t *testing.T) {
	secrets := oneLineSecrets(t)
	var offsets []int
	for f := 0; f <= 330; f += 11 {
		offsets = append(offsets, f)
	}
	var long []int
	for _, c := range []int{2 << 10, 8 << 10, 16 << 10, 64 << 10} {
		for f := c - 100; f <= c; f += 20 {
			long = append(long, f)
		}
	}
	for _, src := range Registry().All() {
		ps, ok := plantings[src.Name()]
		if !ok {
			t.Errorf("source %s has no planting in this test: add the files that carry a text into every part of its entries", src.Name())
			continue
		}
		t.Run(src.Name(), func(t *testing.T) {
			t.Parallel()
			checked := 0
			for si, s := range secrets {
				if piece(redact.String(s.line), s.value) != "" {
					continue // not redacted even whole: the redact corpus's concern
				}
				fs := offsets
				if si%32 == 0 {
					fs = append(fs[:len(fs):len(fs)], long...)
				}
				for _, f := range fs {
					text := filler(f) + s.line + " and more words after it"
					for _, plant := range ps {
						p, content := plant(text)
						es, probs := src.Parse(p, content)
						if len(es) == 0 {
							t.Fatalf("%s, %d bytes before its line: no entry from %s", s.format, f, p)
						}
						for _, pr := range probs { // shown as they are
							if got := piece(pr.String(), s.value); got != "" {
								t.Errorf("%s, %d bytes before its line, %s: a problem shows %q of the secret: %s", s.format, f, p, got, pr)
								return
							}
						}
						for _, e := range es {
							checked++
							if got := piece(stored(e), s.value); got != "" {
								t.Errorf("%s, %d bytes before its line, %s: the entry keeps %q of the secret:\ntitle %q", s.format, f, p, got, e.Title)
								return
							}
						}
					}
				}
			}
			t.Logf("%d entries checked over %d kinds of secret", checked, len(secrets))
		})
	}
}
