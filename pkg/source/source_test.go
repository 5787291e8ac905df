package source

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestID(t *testing.T) {
	// Expected values from: printf 'compound\0docs/solutions/a.md' | sha256sum
	if got := ID("compound", "docs/solutions/a.md"); got != "a87e53b2b0c18171" {
		t.Errorf("ID(compound) = %s", got)
	}
	if got := ID("clavain", "docs/solutions/a.md"); got != "29b83d6697a8f859" {
		t.Errorf("ID(clavain) = %s: the source name must be part of the id", got)
	}
}

type fake struct {
	name string
	pats []string
}

func (f fake) Name() string                              { return f.name }
func (f fake) Patterns() []string                        { return f.pats }
func (f fake) Parse(string, []byte) ([]Entry, []Problem) { return nil, nil }

func TestRegistry(t *testing.T) {
	r, err := NewRegistry(fake{name: "zeta"}, fake{name: "alpha"}, fake{name: "mid-2"})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Names(); !slices.Equal(got, []string{"alpha", "mid-2", "zeta"}) {
		t.Errorf("Names = %q", got)
	}
	names := func(ss []Source) []string {
		var out []string
		for _, s := range ss {
			out = append(out, s.Name())
		}
		return out
	}
	if got := names(r.Enabled(nil)); !slices.Equal(got, []string{"alpha", "mid-2", "zeta"}) {
		t.Errorf("Enabled(nil) = %q, want all", got)
	}
	sw := map[string]bool{"zeta": false, "alpha": true, "gamma": false}
	if got := names(r.Enabled(sw)); !slices.Equal(got, []string{"alpha", "mid-2"}) {
		t.Errorf("Enabled(zeta off) = %q", got)
	}
	if got := r.Unknown(sw); !slices.Equal(got, []string{"gamma"}) {
		t.Errorf("Unknown = %q", got)
	}
	if _, err := NewRegistry(fake{name: "a"}, fake{name: "a"}); !errors.Is(err, ErrDuplicate) {
		t.Errorf("duplicate: err = %v", err)
	}
	for _, bad := range []string{"", "Compound", "1x", "a b", "a_b"} {
		if _, err := NewRegistry(fake{name: bad}); !errors.Is(err, ErrBadName) {
			t.Errorf("name %q: err = %v", bad, err)
		}
	}
}

func write(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFind(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "proj")
	outside := filepath.Join(base, "outside")
	write(t, outside, "secret.md", "ssh key")
	write(t, outside, "dir/x.md", "outside dir")
	write(t, root, "docs/solutions/a.md", "a")
	write(t, root, "docs/solutions/cat/b.md", "b")
	write(t, root, "docs/solutions/cat/notes.txt", "not markdown")
	write(t, root, "docs/other/c.md", "not matched")
	write(t, root, "docs/solutions/real.md", "linked to")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink("real.md", filepath.Join(root, "docs/solutions/inside-link.md")))
	must(os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(root, "docs/solutions/leak.md")))
	must(os.Symlink(filepath.Join(outside, "dir"), filepath.Join(root, "docs/solutions/linkdir")))
	must(os.Symlink("missing.md", filepath.Join(root, "docs/solutions/dangling.md")))
	must(syscall.Mkfifo(filepath.Join(root, "docs/solutions/fifo.md"), 0o644))
	deep := "docs/solutions/" + strings.Repeat("d/", MaxDepth) + "deep.md"
	write(t, root, deep, "too deep")

	files, probs := Find(root, fake{name: "x", pats: []string{"docs/solutions/**/*.md", "docs/solutions/a.md"}})
	var got []string
	for _, f := range files {
		got = append(got, f.Path)
	}
	want := []string{"docs/solutions/a.md", "docs/solutions/cat/b.md", "docs/solutions/inside-link.md", "docs/solutions/real.md"}
	if !slices.Equal(got, want) {
		t.Errorf("files = %q\nwant %q", got, want)
	}
	var msgs []string
	for _, p := range probs {
		msgs = append(msgs, p.String())
	}
	wantProbs := []string{
		"docs/solutions/dangling.md: is a link that leads nowhere; not read",
		"docs/solutions/fifo.md: is not a regular file; not read",
		"docs/solutions/leak.md: is a link that leads out of the project; not read",
	}
	if !slices.Equal(msgs, wantProbs) {
		t.Errorf("problems = %q\nwant %q", msgs, wantProbs)
	}
	data, err := ReadFile(files[2], 0)
	if err != nil || string(data) != "linked to" {
		t.Errorf("ReadFile(link) = %q, %v", data, err)
	}
	if _, err := ReadFile(files[0], 0); err != nil {
		t.Errorf("ReadFile(a.md) = %v", err)
	}
	write(t, root, "docs/solutions/a.md", "grown past the limit")
	if _, err := ReadFile(files[0], 5); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadFile over the limit: err = %v, want ErrTooLarge", err)
	}

	// A base directory that is itself a link out of the project.
	must(os.Symlink(outside, filepath.Join(root, ".clavain")))
	files, probs = Find(root, fake{name: "x", pats: []string{".clavain/**/*.md"}})
	if len(files) != 0 || len(probs) != 1 || probs[0].String() != ".clavain: is a link that leads out of the project; not read" {
		t.Errorf("linked base: files %v, problems %v", files, probs)
	}
	// A missing directory is no problem.
	files, probs = Find(root, fake{name: "x", pats: []string{".interfluence/learnings-raw.log"}})
	if len(files) != 0 || len(probs) != 0 {
		t.Errorf("missing dir: files %v, problems %v", files, probs)
	}
}

func TestSplitDoc(t *testing.T) {
	for _, tc := range []struct {
		name, in      string
		keys          string // key=value pairs, "; "-joined
		body          string
		bodyLine      int
		lines         int
		present       bool
		problemPrefix string
	}{
		{name: "none", in: "# T\n\ntext\n", body: "# T\n\ntext\n", bodyLine: 1, lines: 3},
		{name: "block and inline lists, date",
			in:   "---\nmodule: System\ndate: 2026-02-10\nsymptoms:\n  - \"a: quoted\"\n  - plain one\n  - Stop hook error: no such file\ntags: [x, y]\n---\n# T\n",
			keys: "module=System; date=2026-02-10; symptoms=[a: quoted|plain one|Stop hook error: no such file]; tags=[x|y]",
			body: "# T\n", bodyLine: 10, lines: 10, present: true},
		{name: "json list, crlf, bom",
			in:   "\ufeff---\r\nsymptoms: [\"TypeError: x\", \"y\"]\r\ncategory: gotcha\r\n---\r\nbody\r\n",
			keys: "symptoms=[TypeError: x|y]; category=gotcha", body: "body\n", bodyLine: 5, lines: 5, present: true},
		{name: "nested metadata with trailing space",
			in:   "---\nname: n\nmetadata: \n  type: project\n  deeper:\n    x: 1\n---\n",
			keys: "name=n; metadata.type=project", body: "", bodyLine: 8, lines: 7, present: true},
		{name: "unclosed", in: "---\nkey: v\nbody\n", body: "---\nkey: v\nbody\n", bodyLine: 1, lines: 3,
			problemPrefix: "the frontmatter opened on line 1 is never closed"},
		{name: "invalid yaml", in: "---\nkey: [unclosed\n---\nbody\n", body: "body\n", bodyLine: 4, lines: 4, present: true,
			problemPrefix: "the frontmatter is not valid YAML"},
		{name: "not a mapping", in: "---\n- a\n- b\n---\nbody", body: "body", bodyLine: 5, lines: 5, present: true,
			problemPrefix: "the frontmatter is not valid YAML (not a mapping"},
		{name: "empty frontmatter", in: "---\n---\nbody\n", body: "body\n", bodyLine: 3, lines: 3, present: true},
		{name: "dots close, duplicate key keeps first", in: "---\na: 1\na: 2\n...\nb\n", keys: "a=1", body: "b\n", bodyLine: 5, lines: 5, present: true},
		{name: "aliases are not expanded", in: "---\nx: &a [1, 2]\ny: *a\nz: [*a, *a]\n---\n", keys: "x=[1|2]; y=[1|2]; z=[]", body: "", bodyLine: 6, lines: 5, present: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, prob := SplitDoc([]byte(tc.in))
			if tc.problemPrefix == "" && prob != "" || !strings.HasPrefix(prob, tc.problemPrefix) {
				t.Errorf("problem = %q, want prefix %q", prob, tc.problemPrefix)
			}
			var kv []string
			for _, k := range d.Front.Keys {
				v, _ := d.Front.Get(k)
				if v.IsList {
					kv = append(kv, k+"=["+strings.Join(v.List, "|")+"]")
				} else {
					kv = append(kv, k+"="+v.Scalar)
				}
			}
			if got := strings.Join(kv, "; "); got != tc.keys {
				t.Errorf("keys = %q, want %q", got, tc.keys)
			}
			if d.Body != tc.body || d.BodyLine != tc.bodyLine || d.Lines != tc.lines || d.Front.Present != tc.present {
				t.Errorf("body %q line %d lines %d present %v, want %q %d %d %v", d.Body, d.BodyLine, d.Lines, d.Front.Present, tc.body, tc.bodyLine, tc.lines, tc.present)
			}
		})
	}
}

func TestParseDate(t *testing.T) {
	for in, want := range map[string]string{
		"2026-02-10":                "2026-02-10T00:00:00Z",
		"2026-02-16T10:23:45Z":      "2026-02-16T10:23:45Z",
		"2026-02-16T10:23:45+02:00": "2026-02-16T08:23:45Z",
		"2026-02-16 10:23:45":       "2026-02-16T10:23:45Z",
		"2026-09-08T19:29:56.864Z":  "2026-09-08T19:29:56.864Z",
		"yesterday":                 "0001-01-01T00:00:00Z",
		"2026-13-01":                "0001-01-01T00:00:00Z",
	} {
		if got := ParseDate(in).Format(time.RFC3339Nano); got != want {
			t.Errorf("ParseDate(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestHeadingsAndSections(t *testing.T) {
	body := "# Title #\n\nintro\n\n## Problem\nIt broke.\n```sh\n# not a heading\n## nor this\n```\n### Detail\nmore\n## Root Cause ##\n~~~\n## fenced\n~~~~\nWhy.\n    ## indented code\n#hashtag\n## Solution\n"
	hs := Headings(body, 5)
	var got []string
	for _, h := range hs {
		got = append(got, strings.Repeat("#", h.Level)+" "+h.Text+" @"+strconv.Itoa(h.Line))
	}
	want := []string{"# Title @5", "## Problem @9", "### Detail @15", "## Root Cause @17", "## Solution @24"}
	if !slices.Equal(got, want) {
		t.Errorf("headings = %q\nwant %q", got, want)
	}
	secs := Sections(body, hs, 2)
	if len(secs) != 3 {
		t.Fatalf("sections = %+v", secs)
	}
	if secs[0].Name != "Problem" || secs[0].Text != "It broke.\n```sh\n# not a heading\n## nor this\n```\n### Detail\nmore" {
		t.Errorf("Problem = %+v", secs[0])
	}
	if secs[1].Name != "Root Cause" || secs[1].Line != 17 || secs[1].Text != "~~~\n## fenced\n~~~~\nWhy.\n    ## indented code\n#hashtag" {
		t.Errorf("Root Cause = %+v", secs[1])
	}
	if secs[2].Text != "" {
		t.Errorf("Solution = %+v", secs[2])
	}
	e := Entry{Sections: secs}
	if s, ok := e.Section(" root cause"); !ok || s.Line != 17 {
		t.Errorf("Section(root cause) = %+v, %v", s, ok)
	}
}

func TestCursor(t *testing.T) {
	log := bytes.Repeat([]byte("line of the log\n"), 1000) // 16,000 bytes
	c := Seal(bytes.NewReader(log), Cursor{Offset: 8000, Line: 501})
	if len(c.Sum) == 0 {
		t.Fatal("Seal set no checksum")
	}
	grown := append(append([]byte(nil), log...), "appended\n"...)
	if got := Resume(bytes.NewReader(grown), int64(len(grown)), c); got.Offset != 8000 || got.Line != 501 {
		t.Errorf("append: Resume = %+v, want the cursor", got)
	}
	rewritten := append([]byte(nil), grown...)
	rewritten[7990] = 'X'
	if got := Resume(bytes.NewReader(rewritten), int64(len(rewritten)), c); got.Offset != 0 {
		t.Errorf("rewrite near the cursor: Resume = %+v, want the start", got)
	}
	rewritten = append([]byte(nil), grown...)
	rewritten[3] = 'X'
	if got := Resume(bytes.NewReader(rewritten), int64(len(rewritten)), c); got.Offset != 0 {
		t.Errorf("rewrite at the start: Resume = %+v, want the start", got)
	}
	if got := Resume(bytes.NewReader(log[:7000]), 7000, c); got.Offset != 0 {
		t.Errorf("truncated: Resume = %+v, want the start", got)
	}
	if got := Resume(bytes.NewReader(grown), int64(len(grown)), Cursor{Offset: 8000, Line: 501}); got.Offset != 0 {
		t.Errorf("unsealed: Resume = %+v, want the start", got)
	}
	small := []byte("abc\n")
	c = Seal(bytes.NewReader(small), Cursor{Offset: 4, Line: 2})
	if got := Resume(bytes.NewReader([]byte("abc\ndef\n")), 8, c); got.Offset != 4 {
		t.Errorf("short prefix: Resume = %+v", got)
	}
}
