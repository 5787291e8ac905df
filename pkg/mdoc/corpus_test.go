package mdoc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// corpusBlocks are the entries the corpus tests insert, with the text Marked
// must report for each (the fenced one may come back with tildes after an
// unclosed backtick fence).
var corpusBlocks = []struct{ block, text, alt string }{
	{"- corpus fact about `pkg/mdoc`", "corpus fact about `pkg/mdoc`", ""},
	{"```sh\ngo test ./pkg/mdoc/\n```", "```sh\ngo test ./pkg/mdoc/\n```", "~~~sh\ngo test ./pkg/mdoc/\n~~~"},
	{"- a lesson\n  - with a detail\n  ```go\n  x := 1\n  ```", "a lesson\n- with a detail\n```go\nx := 1\n```", "a lesson\n- with a detail\n~~~go\nx := 1\n~~~"},
}

// corpusVariants returns the file and the forms real files also come in:
// CRLF line endings, and no final newline.
func corpusVariants(doc []byte) map[string]string {
	s := string(doc)
	v := map[string]string{"as is": s}
	if !strings.Contains(s, "\r\n") {
		v["CRLF"] = strings.ReplaceAll(s, "\n", "\r\n")
	}
	if strings.HasSuffix(s, "\n") {
		v["no final newline"] = strings.TrimRight(s, "\n")
	} else {
		v["final newline"] = s + "\n"
	}
	return v
}

// TestCorpusInsertRemove inserts into every real file, into sections it has
// and one it does not, and checks each result with checkPlace: one
// contiguous insertion with the document's line endings, the entry whole
// with its marker on its first line and outside managed blocks, and Remove
// giving back the original bytes.
func TestCorpusInsertRemove(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "corpus", "*"))
	if err != nil || len(files) < 19 {
		t.Fatalf("corpus: %d files, %v", len(files), err)
	}
	for _, name := range files {
		raw, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for vname, doc := range corpusVariants(raw) {
			t.Run(filepath.Base(name)+"/"+vname, func(t *testing.T) {
				d := Parse([]byte(doc))
				for _, title := range corpusTitles(d) {
					for _, cb := range corpusBlocks {
						ins := checkPlace(t, doc, title, cb.block)
						checkCorpusSection(t, d, title, ins)
						m := findMarked(t, ins.Content, testID)
						if m.Text != cb.text && m.Text != cb.alt {
							t.Errorf("%q: entry text %q, want %q", title, m.Text, cb.text)
						}
					}
				}
			})
		}
	}
}

// corpusTitles picks the section titles to insert under: the first and last
// sections and a few spread between, up to three whose heading is inside a
// managed block, one title the file does not have, and none.
func corpusTitles(d *Doc) []string {
	var titles []string
	n := len(d.Sections) - 1
	for i := 1; i <= n; i += max(1, n/4) {
		titles = append(titles, d.Sections[i].Title)
	}
	if n > 1 {
		titles = append(titles, d.Sections[n].Title)
	}
	inBlock := 0
	for _, s := range d.Sections[1:] {
		for _, b := range d.Blocks {
			if b.Start < s.Start && s.Start < b.End && inBlock < 3 {
				titles = append(titles, s.Title)
				inBlock++
				break
			}
		}
	}
	return append(titles, "Intermem Corpus Test", "")
}

// checkCorpusSection checks the section Place chose, from first principles:
// a title the document has goes to the first section with exactly that title
// unless that section lies wholly inside a managed block (then a new one is
// created); a title it lacks gets a new section.
func checkCorpusSection(t *testing.T, d *Doc, title string, ins Insertion) {
	t.Helper()
	if title == "" {
		if ins.Created {
			t.Errorf("no title: created a section")
		}
		return
	}
	k := -1
	for i, s := range d.Sections[1:] {
		if s.Title == title {
			k = i + 1
			break
		}
	}
	if k < 0 {
		if !ins.Created || ins.Section != title {
			t.Errorf("%q: went to %q (created %v), want a new section", title, ins.Section, ins.Created)
		}
		return
	}
	s := d.Sections[k]
	walledIn := false
	for _, b := range d.Blocks {
		if b.Start < s.Start && s.End < b.End {
			walledIn = true
		}
	}
	switch {
	case ins.Section != title:
		t.Errorf("%q: went to %q", title, ins.Section)
	case ins.Created != walledIn:
		t.Errorf("%q: created %v, but the section is walled in by a block: %v", title, ins.Created, walledIn)
	case !ins.Created && (ins.Start < s.Start || ins.Start > s.End):
		t.Errorf("%q: inserted at %d, outside the section [%d,%d]", title, ins.Start, s.Start, s.End)
	}
}

func findMarked(t *testing.T, doc []byte, id string) Marked {
	t.Helper()
	for _, m := range Parse(doc).Marked() {
		if m.ID == id {
			return m
		}
	}
	t.Fatalf("entry %s not found", id)
	return Marked{}
}

// TestCorpusParseStable checks invariants of Parse on every real file: the
// sections tile the document in order, blocks are properly nested, and every
// statement and marked entry lies within the document.
func TestCorpusParseStable(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "corpus", "*"))
	for _, name := range files {
		doc, _ := os.ReadFile(name)
		d := Parse(doc)
		prev := 0
		for k, s := range d.Sections {
			if s.Start < prev || s.BodyEnd < s.Start || s.End < s.BodyEnd || s.End > len(doc) {
				t.Errorf("%s: section %d %q has offsets %d/%d/%d", name, k, s.Title, s.Start, s.BodyEnd, s.End)
			}
			prev = s.Start
		}
		for i, a := range d.Blocks {
			for _, b := range d.Blocks[i+1:] {
				if b.Start < a.End && b.End > a.End {
					t.Errorf("%s: blocks %s and %s overlap", name, a.Name, b.Name)
				}
			}
		}
		if len(d.Statements()) == 0 && len(d.Blocks) == 0 {
			t.Errorf("%s: no statements", name)
		}
	}
}
