package tidy

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"
)

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// mv names a section by its bytes, as a plan does.
func mv(section, file, pointer string) Moved {
	return Moved{Hash: sha(section), File: file, Pointer: pointer}
}

func TestRewrite(t *testing.T) {
	cases := []struct {
		name, in string
		moves    []Moved
		want     string
	}{{
		name: "a new pointers' section where the first moved section was; the end leaves without its blank line",
		in:   "# Memory\n\n## A\n- a1\n- a2\n\n## B\n- b1\n\n## C\n- c1\n  - nested\n",
		moves: []Moved{
			mv("## A\n- a1\n- a2\n", "a.md", "- [A](a.md) — a1; a2"),
			mv("## C\n- c1\n  - nested\n", "c.md", "- [C](c.md) — c1"),
		},
		want: "# Memory\n\n## Topic files\n- [A](a.md) — a1; a2\n- [C](c.md) — c1\n\n## B\n- b1\n",
	}, {
		name: "appended to an existing pointers' section, whatever its case",
		in:   "# Memory\n\n## topic FILES\n- [Old](old.md) — kept\n\n## A\n- a1\n- a2\n\n## B\n- b1\n",
		moves: []Moved{
			mv("## A\n- a1\n- a2\n", "a.md", "- [A](a.md) — a1; a2"),
		},
		want: "# Memory\n\n## topic FILES\n- [Old](old.md) — kept\n- [A](a.md) — a1; a2\n\n## B\n- b1\n",
	}, {
		name: "a pointers' section that ends in a lead-in gets no pointer: one of their own instead",
		in:   "# Memory\n\n## Topic files\nFiles:\n\n## A\n- a1\n- a2\n",
		moves: []Moved{
			mv("## A\n- a1\n- a2\n", "a.md", "- [A](a.md) — a1; a2"),
		},
		want: "# Memory\n\n## Topic files\nFiles:\n\n## Topic files\n- [A](a.md) — a1; a2\n",
	}, {
		name: "subsections move with their section; a level-1 heading ends it",
		in:   "# Memory\n\n## A\n- a1\n\n### A.1\n- a11\n\n# Other\n\n## B\n- b1\n",
		moves: []Moved{
			mv("## A\n- a1\n\n### A.1\n- a11\n", "a.md", "- [A](a.md) — a1; a11"),
		},
		want: "# Memory\n\n## Topic files\n- [A](a.md) — a1; a11\n\n# Other\n\n## B\n- b1\n",
	}, {
		name: "CRLF: the pointers' lines end as the file's do",
		in:   "# Memory\r\n\r\n## A\r\n- a1\r\n\r\n## B\r\n- b1\r\n",
		moves: []Moved{
			mv("## A\r\n- a1\r\n", "a.md", "- [A](a.md) — a1"),
		},
		want: "# Memory\r\n\r\n## Topic files\r\n- [A](a.md) — a1\r\n\r\n## B\r\n- b1\r\n",
	}, {
		name: "no final newline: the last kept line is ended before the pointers",
		in:   "## Topic files\n- [Old](old.md)\n\n## A\n- a1\n- a2",
		moves: []Moved{
			mv("## A\n- a1\n- a2", "a.md", "- [A](a.md) — a1; a2"),
		},
		want: "## Topic files\n- [Old](old.md)\n- [A](a.md) — a1; a2\n",
	}, {
		name: "a BOM stays first; a ## inside a fence is no section",
		in:   "\xEF\xBB\xBF# Memory\n\n## A\n```\n## not a heading\n```\n- a1\n\n## B\n- b1\n",
		moves: []Moved{
			mv("## A\n```\n## not a heading\n```\n- a1\n", "a.md", "- [A](a.md) — a1"),
		},
		want: "\xEF\xBB\xBF# Memory\n\n## Topic files\n- [A](a.md) — a1\n\n## B\n- b1\n",
	}, {
		name: "a section right after text, with no blank line between, gets one before the pointers",
		in:   "# Memory\nIndex.\n## A\n- a1\n## B\n- b1\n",
		moves: []Moved{
			mv("## A\n- a1\n", "a.md", "- [A](a.md) — a1"),
		},
		want: "# Memory\nIndex.\n\n## Topic files\n- [A](a.md) — a1\n\n## B\n- b1\n",
	}, {
		name: "the only section moves: the pointers end the file",
		in:   "# Memory\n\n## A\n- a1\n\n\n",
		moves: []Moved{
			mv("## A\n- a1\n", "a.md", "- [A](a.md) — a1"),
		},
		want: "# Memory\n\n## Topic files\n- [A](a.md) — a1\n",
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Rewrite([]byte(c.in), c.moves, nil)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Fatalf("got\n%q\nwant\n%q", got, c.want)
			}
			again, err := Rewrite(got, c.moves, nil)
			if err != nil {
				t.Fatalf("second application: %v", err)
			}
			if string(again) != string(got) {
				t.Fatalf("not idempotent:\n%q\nthen\n%q", got, again)
			}
		})
	}
}

func TestRewriteRefuses(t *testing.T) {
	in := "# Memory\n\n## A\n- a1\n\n## B\n- b1\n"
	a := mv("## A\n- a1\n", "a.md", "- [A](a.md) — a1")

	// The section was edited since the plan and its pointer is not there.
	edited := "# Memory\n\n## A\n- a1\n- a new fact\n\n## B\n- b1\n"
	if _, err := Rewrite([]byte(edited), []Moved{a}, nil); !errors.Is(err, ErrChanged) {
		t.Fatalf("edited section: err = %v, want ErrChanged", err)
	}

	// The topic file does not hold the section: it stays in the index.
	holds := func(string) (string, error) { return sha("## A\n- a1\n- something else\n"), nil }
	if _, err := Rewrite([]byte(in), []Moved{a}, holds); !errors.Is(err, ErrNotCopied) {
		t.Fatalf("topic file differs: err = %v, want ErrNotCopied", err)
	}
	missing := func(string) (string, error) { return "", nil }
	if _, err := Rewrite([]byte(in), []Moved{a}, missing); !errors.Is(err, ErrNotCopied) {
		t.Fatalf("topic file missing: err = %v, want ErrNotCopied", err)
	}

	// The topic files' own section never moves, even named by its hash.
	topics := "# Memory\n\n## Topic files\n- [X](x.md)\n"
	if _, err := Rewrite([]byte(topics), []Moved{mv("## Topic files\n- [X](x.md)\n", "t.md", "- [T](t.md)")}, nil); !errors.Is(err, ErrChanged) {
		t.Fatalf("moving the pointers' section: err = %v, want ErrChanged", err)
	}

	// With the topic file in place, it goes.
	ok := func(string) (string, error) { return a.Hash, nil }
	got, err := Rewrite([]byte(in), []Moved{a}, ok)
	if err != nil {
		t.Fatal(err)
	}
	if want := "# Memory\n\n## Topic files\n- [A](a.md) — a1\n\n## B\n- b1\n"; string(got) != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestValidName(t *testing.T) {
	for name, want := range map[string]bool{
		"vercel.md": true, "스킬-경로.md": true, "MEMORY.md": false, "memory.md": false,
		"../x.md": false, "a/b.md": false, `a\b.md`: false, ".hidden.md": false, "x.txt": false, "x\x00.md": false,
	} {
		if got := ValidName(name); got != want {
			t.Errorf("ValidName(%q) = %v, want %v", name, got, want)
		}
	}
}
