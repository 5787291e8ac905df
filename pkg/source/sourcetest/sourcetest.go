// Package sourcetest holds what the source packages' tests share: a stable
// text rendering of entries for golden files, and the real corpus laid out
// under the paths its files had in their repositories.
package sourcetest

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/intermem/intermem/pkg/source"
)

// Update rewrites golden files instead of comparing with them.
var Update = flag.Bool("update", false, "rewrite golden files")

// Render writes entries and problems as stable, reviewable text: every
// field, long texts cut to their start and length.
func Render(entries []source.Entry, probs []source.Problem) string {
	var b strings.Builder
	for _, e := range entries {
		fmt.Fprintf(&b, "== %s:%d-%d id=%s source=%s kind=%s promotable=%v\n", e.Path, e.Line, e.EndLine, e.ID, e.Source, e.Kind, e.Promotable)
		fmt.Fprintf(&b, "title: %s\n", e.Title)
		fmt.Fprintf(&b, "dates: created=%s updated=%s confirmed=%s\n", day(e.Created), day(e.Updated), day(e.Confirmed))
		if len(e.Tags) > 0 {
			fmt.Fprintf(&b, "tags: %s\n", strings.Join(e.Tags, " | "))
		}
		for _, s := range e.Symptoms {
			fmt.Fprintf(&b, "symptom: %s\n", s)
		}
		keys := make([]string, 0, len(e.Fields))
		for k := range e.Fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "field %s: %s\n", k, cut(e.Fields[k], 100))
		}
		if len(e.Citations) > 0 {
			fmt.Fprintf(&b, "citations: %s\n", strings.Join(e.Citations, " | "))
		}
		for _, s := range e.Sections {
			fmt.Fprintf(&b, "section %q @%d: %s\n", s.Name, s.Line, cut(s.Text, 60))
		}
		fmt.Fprintf(&b, "text: %s\n", cut(e.Text, 100))
	}
	for _, p := range probs {
		fmt.Fprintf(&b, "problem: %s\n", p)
	}
	return b.String()
}

func day(t time.Time) string {
	switch {
	case t.IsZero():
		return "-"
	case t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 && t.Nanosecond() == 0:
		return t.Format("2006-01-02")
	}
	return t.Format(time.RFC3339)
}

// cut shows the start of s on one line and its length when it was cut.
func cut(s string, n int) string {
	one := strings.ReplaceAll(s, "\n", "⏎")
	if len(one) <= n {
		return one
	}
	return fmt.Sprintf("%s (%d bytes)", source.Clip(one, n), len(s))
}

// Golden compares got with the golden file, or rewrites it under -update.
func Golden(t *testing.T, file, got string) {
	t.Helper()
	if *Update {
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != got {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := 0; i < max(len(gl), len(wl)); i++ {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("%s differs at line %d:\n got: %s\nwant: %s", file, i+1, g, w)
			}
		}
	}
}

// CorpusFile is one file of the real corpus (testdata/corpus).
type CorpusFile struct {
	Kind, Repo, Path string
	// Lines is the file's line count as the manifest gives it.
	Lines int
	// File is the file's name in the corpus folder.
	File string
}

// Corpus reads the corpus manifest under dir (testdata/corpus).
func Corpus(t testing.TB, dir string) []CorpusFile {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "MANIFEST.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []CorpusFile
	sc := bufio.NewScanner(f)
	for first := true; sc.Scan(); first = false {
		cols := strings.Split(sc.Text(), "\t")
		if first || len(cols) < 5 {
			continue
		}
		owner, name, _ := strings.Cut(cols[1], "/")
		file := owner + "__" + name + "__" + strings.ReplaceAll(cols[2], "/", "_")
		lines, _ := strconv.Atoi(cols[4])
		out = append(out, CorpusFile{Kind: cols[0], Repo: cols[1], Path: cols[2], Lines: lines, File: filepath.Join(dir, cols[0], file)})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// CheckEntries checks what every entry of every source must hold: a
// 16-hex-digit id, unique within the parse, the path it was parsed from and
// a line range inside the file.
func CheckEntries(t *testing.T, es []source.Entry, path string) {
	t.Helper()
	seen := map[string]bool{}
	for _, e := range es {
		if len(e.ID) != 16 || strings.Trim(e.ID, "0123456789abcdef") != "" {
			t.Fatalf("bad id %q", e.ID)
		}
		if seen[e.ID] && e.Source != "interfluence" {
			t.Fatalf("duplicate id %s", e.ID)
		}
		seen[e.ID] = true
		if e.Path != path || e.Source == "" || e.Kind == "" {
			t.Fatalf("entry %+v: path, source or kind wrong", e)
		}
		if e.Line < 1 || e.EndLine < e.Line {
			t.Fatalf("entry %s: lines %d-%d", e.ID, e.Line, e.EndLine)
		}
	}
}
