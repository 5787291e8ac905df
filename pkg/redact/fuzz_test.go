package redact

import (
	"strings"
	"testing"
)

func fuzzSeeds(f *testing.F) {
	for _, c := range formatCases() {
		f.Add(c.in)
		f.Add(c.want)
	}
	for _, r := range readSecrets(f) {
		f.Add(r.line)
	}
	f.Add("token: token: token:" + fake("seed", alnumA, 20))
	f.Add("https://a:b@c https://u:[REDACTED:url-credentials]@h x://@@ ://")
	f.Add("-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----BEGIN EC PRIVATE KEY-----\\nBBBB\\n-----END EC PRIVATE KEY-----")
	f.Add("password: \"a\\\"b" + fake("q", alnumA, 12) + "\" 密码：" + fake("z", alnumA, 9) + "（x）")
}

// FuzzFind: Find never panics and its findings are in bounds, sorted, non-overlapping,
// non-empty, named, and never cover marker text.
func FuzzFind(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, s string) {
		fs := Find(s)
		last := 0
		for i, x := range fs {
			if x.Start < last || x.Start >= x.End || x.End > len(s) || x.Kind == "" {
				t.Fatalf("finding %d %+v invalid (previous end %d, len %d)", i, x, last, len(s))
			}
			if strings.Contains(s[x.Start:x.End], Marker) {
				t.Fatalf("finding %+v covers a marker: %q", x, s[x.Start:x.End])
			}
			last = x.End
		}
		if Has(s) != (len(fs) > 0) {
			t.Fatal("Has disagrees with Find")
		}
	})
}

// FuzzString: String never panics, is idempotent, leaves nothing Find reports, and
// changes nothing when there is nothing to find.
func FuzzString(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, s string) {
		out := String(s)
		if again := String(out); again != out {
			t.Fatalf("not idempotent:\n in   %q\n out  %q\n out2 %q", s, out, again)
		}
		if fs := Find(out); len(fs) != 0 {
			t.Fatalf("String(%q) = %q still has %v", s, out, fs)
		}
		if len(Find(s)) == 0 && out != s {
			t.Fatalf("String changed %q without findings", s)
		}
	})
}
