package automem

import (
	"bytes"
	"strings"
	"testing"
	"unicode"
)

// fuzzSeeds are small inputs that exercise every rule; the corpus files are
// added on top.
var fuzzSeeds = []string{
	"",
	"- a\n  - b\n1. c\n   - d\n",
	"## H\n```\n# x\n```\n~~~\n- y\n",
	"- a\n```\ncode\n```\n- b\n",
	"```\nunclosed\n- a\n",
	"<!--\n- hidden\n-->\n- shown\n",
	"| a | b |\n|---|---|\n",
	"---\nname: x\nmetadata: \n  type: project\n---\nbody\n",
	"\uFEFF- bom\r\n- crlf\r\n",
	"- [t](a.md) — x\n- `b.md` — y\n- [$ r[[\"e\"]]](c.md)\n",
	"# A\n\n## B\n- b\n\n## C\n- c",
	"- \x00\xff\n",
	"Fixes:\n- a\n- b\n\nLead:\n\n1. x\n2. y\n",
	"**Rule:** text\nwrapped\n\n**Label**\n```\nc\n```\n",
	"- hook → [a.md](a.md)\n- `n/b.md` — x\n- c.md: y\n- [[w]] z\n",
	// Secrets in every field: a heading, a pointer, a table cell, a fence, a
	// key split over list items, a frontmatter name and description.
	"## Staging creds sk_live_FAKEwVM7XipTJbvnehTJEP6V\n- a\n",
	"- [Bot](AKIAFAKEZX3C7DA2QCLO.md) — password: FAKEdb5vm3OIcVsv\n",
	"| user | token |\n|---|---|\n| ci | ghp_FAKEnVqpW9YRjvIkXnhfBSssj7hiRTimbWq4 |\n",
	"- run:\n```\nredis-cli -a FAKEqadrJCD3q0 ping\n```\n",
	"- -----BEGIN RSA PRIVATE KEY-----\n- MIIEowIBAAKCAQEAFAKES6qJ7EHzCmlj92FHUKYurqrIucWpIZGHeweOBOa6ciq9\n- -----END RSA PRIVATE KEY-----\n",
	"---\nname: token ghp_FAKEnVqpW9YRjvIkXnhfBSssj7hiRTimbWq4\ndescription: >\n  The staging DB password\n  is FAKEaP3IL08NS9\n---\nbody\n",
}

func addSeeds(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), true)
		f.Add([]byte(s), false)
	}
	for name, content := range corpusFiles(f) {
		f.Add(content, corpusName(name) == IndexName)
	}
}

func FuzzParse(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, content []byte, index bool) {
		name := "topic.md"
		if index {
			name = IndexName
		}
		orig := bytes.Clone(content)
		p := Parse(name, content)
		if !bytes.Equal(content, orig) {
			t.Fatal("Parse modified its input")
		}
		checkRanges(t, p)
		for _, e := range p.Entries {
			if strings.Contains(e.Text, "\r\n") {
				t.Fatalf("entry text keeps CRLF: %q", e.Text)
			}
		}
		if got := p.Remove(); !bytes.Equal(got, content) {
			t.Fatal("Remove() does not round-trip")
		}
		var ids []string
		for _, e := range p.Entries {
			ids = append(ids, e.ID)
		}
		all := p.Remove(ids...)
		if !isLineSubsequence(all, content) {
			t.Fatalf("Remove(all) is not a subsequence of the input lines:\n%q\n%q", all, content)
		}
		for i, e := range p.Entries {
			if i == 8 {
				break
			}
			checkRemoveOne(t, p, e)
		}
	})
}

// isLineSubsequence reports whether the lines of out (terminators kept)
// are a subsequence of the lines of in, and a BOM is kept when there was
// one.
func isLineSubsequence(out, in []byte) bool {
	if bytes.HasPrefix(in, bom) {
		if len(out) > 0 && !bytes.HasPrefix(out, bom) {
			return false
		}
		in, out = in[len(bom):], bytes.TrimPrefix(out, bom)
	}
	ol, il := splitKeep(out), splitKeep(in)
	j := 0
	for _, l := range il {
		if j < len(ol) && ol[j] == l {
			j++
		}
	}
	return j == len(ol)
}

func FuzzNormalizeText(f *testing.F) {
	f.Add("  a\r\n\tb <!-- intermem:8ed6945e -->  ")
	f.Add("\u00a0x\u3000y\u2028")
	f.Add("<!-- intermem: -->\xff")
	f.Fuzz(func(t *testing.T, s string) {
		n := NormalizeText(s)
		if n != strings.TrimSpace(n) || strings.Contains(n, "  ") {
			t.Fatalf("%q normalizes to %q with stray spaces", s, n)
		}
		if strings.ContainsFunc(n, func(r rune) bool { return r != ' ' && unicode.IsSpace(r) }) {
			t.Fatalf("%q normalizes to %q with whitespace other than a space", s, n)
		}
		if len(ID(n)) != 16 {
			t.Fatal("id is not 16 hex digits")
		}
		if isNormalized([]byte(s)) && n != s {
			t.Fatalf("isNormalized(%q) but it normalizes to %q", s, n)
		}
		if !isNormalized([]byte(n)) && !strings.Contains(n, "<!--") && strings.IndexFunc(n, func(r rune) bool { return r < ' ' }) < 0 {
			t.Fatalf("normalized %q not recognised as normalized", n)
		}
	})
}

// FuzzRefs checks the link scanner on any text: links are in order, within
// the text, start with "[" or "![", and never come from fenced code.
func FuzzRefs(f *testing.F) {
	for _, s := range []string{
		"See [a](b.md) and [[c|d]] and ![e](f.png)",
		"```\n[x](y.md)\n```\n[z](w.md)",
		"`[code](x.md)` [t](<a b.md> \"t\") [u](v.md",
		"[[[[[[]]]]]]((((", strings.Repeat("[a](", 50),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		prev := 0
		for _, r := range Refs(s) {
			if r.Start < prev || r.End <= r.Start || r.End > len(s) {
				t.Fatalf("ref [%d,%d) out of order or bounds (prev %d, len %d)", r.Start, r.End, prev, len(s))
			}
			if !strings.HasPrefix(s[r.Start:], "[") && !strings.HasPrefix(s[r.Start:], "![") {
				t.Fatalf("ref at %d does not start a link: %q", r.Start, s[r.Start:r.End])
			}
			if r.Wiki != strings.HasPrefix(s[r.Start:], "[[") {
				t.Fatalf("ref %q: Wiki = %v", s[r.Start:r.End], r.Wiki)
			}
			prev = r.End
		}
	})
}
