package source

import "testing"

func FuzzSplitDoc(f *testing.F) {
	for _, s := range []string{
		"---\nmodule: x\ndate: 2026-02-10\nsymptoms:\n  - \"a\"\ntags: [a, b]\n---\n# T\n## S\nx\n",
		"---\r\na: 1\r\n---\r\n",
		"---\nx: &a [*a]\n---\n",
		"---\n---\n",
		"\ufeff---\nk: |\n  multi\n  line\n...\nbody",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, _ := SplitDoc(data)
		if d.BodyLine < 1 || d.BodyLine > d.Lines+1 {
			t.Fatalf("body line %d of %d", d.BodyLine, d.Lines)
		}
		for _, k := range d.Front.Keys {
			if _, ok := d.Front.Get(k); !ok {
				t.Fatalf("key %q listed but not kept", k)
			}
		}
		hs := Headings(d.Body, d.BodyLine)
		for _, h := range hs {
			if h.Line < d.BodyLine || h.Level < 1 || h.Level > 6 {
				t.Fatalf("heading %+v", h)
			}
		}
		Sections(d.Body, hs, 2)
	})
}
