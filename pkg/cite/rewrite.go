package cite

import (
	"strings"
)

// Fix is one correction Rewrite made: a citation written as Old now reads
// New.
type Fix struct {
	Old string `json:"old"`
	New string `json:"new"`
}

// Rewrite returns text with every Moved citation among rs (as checked from
// text, or from text it contains) rewritten to the path that exists now,
// and the corrections made. The citation is rewritten as written, keeping
// its form: a line suffix (x.go:42), an anchor, a "./" or leading "/", a
// directory's trailing slash. It is replaced wherever it occurs in text as
// a whole token (not inside a longer path or word). A moved citation whose
// written form does not contain its cleaned path (a percent-encoded link)
// is left alone, as are symbols, whose file is rewritten through its own
// citation. Rewriting is idempotent: the new paths exist.
func Rewrite(text string, rs []Result) (string, []Fix) {
	var fixes []Fix
	done := map[string]bool{}
	for _, r := range rs {
		if r.Status != Moved || r.MovedTo == "" || r.Kind == Symbol || done[r.Text] {
			continue
		}
		done[r.Text] = true
		p := strings.TrimPrefix(r.Path, "/")
		k := strings.Index(r.Text, p)
		if p == "" || k < 0 {
			continue
		}
		to := r.Text[:k] + r.MovedTo + r.Text[k+len(p):]
		out, n := replaceToken(text, r.Text, to)
		if n == 0 {
			continue
		}
		text = out
		fixes = append(fixes, Fix{Old: r.Text, New: to})
	}
	return text, fixes
}

// replaceToken replaces each occurrence of old in s that stands as a token
// of its own: not preceded by a path character, and not followed by one (a
// dot followed by a letter or digit continues the path: x.go.orig).
func replaceToken(s, old, new string) (string, int) {
	var b strings.Builder
	n, i := 0, 0
	for {
		k := strings.Index(s[i:], old)
		if k < 0 {
			break
		}
		k += i
		end := k + len(old)
		if (k == 0 || !pathByte(s[k-1])) && !continues(s, end) {
			b.WriteString(s[i:k])
			b.WriteString(new)
			n++
		} else {
			b.WriteString(s[i:end])
		}
		i = end
	}
	b.WriteString(s[i:])
	return b.String(), n
}

func pathByte(c byte) bool {
	return c == '/' || c == '.' || c == '_' || c == '-' || c == '~' ||
		'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c >= 0x80
}

func continues(s string, end int) bool {
	if end >= len(s) {
		return false
	}
	c := s[end]
	if c == '.' {
		return end+1 < len(s) && pathByte(s[end+1]) && s[end+1] != '.' && s[end+1] != '/'
	}
	return pathByte(c)
}
