package redact

import (
	"slices"
	"strings"
)

// Name redacts a file name. A name has no label to say what its words are,
// and it joins them with "_", "-", "." and blanks, which the token rules
// read as part of a token ("ref_ghp_…" is not a GitHub token by its
// boundaries). So the name is searched from every word start, and a word
// that is random on its own (a pasted password or key, not a name anyone
// would choose) is redacted as a "secret" too: at least 12 bytes, of three
// character classes switching often, or 32+ bytes of hex, or 20+ bytes of
// two classes at 4 bits of entropy per byte. Words such as "isIBAvailable",
// "2026-06-07" or "retune-elementtree-port-T1" are names; UUIDs, whose
// groups are short, are left alone.
func Name(name string) string {
	type span struct {
		start, end int
		kind       string
	}
	var spans []span
	for i := 0; i < len(name); i++ {
		if i > 0 && !nameSep(name[i-1]) {
			continue
		}
		for _, f := range Find(name[i:]) {
			spans = append(spans, span{i + f.Start, i + f.End, f.Kind})
		}
		j := wordEnd(name, i)
		if w := name[i:j]; w != "md" && randomWord(w) {
			// A token may hold "-" or "_": take in the mixed parts it is
			// joined to ("gY1Ivd…Brb-dbSODg1OY"), not the words ("-notes").
			a := i
			for a >= 2 && (name[a-1] == '-' || name[a-1] == '_') {
				k := a - 1
				for k > 0 && !nameSep(name[k-1]) {
					k--
				}
				if !mixedPart(name[k : a-1]) {
					break
				}
				a = k
			}
			for j+1 < len(name) && (name[j] == '-' || name[j] == '_') {
				k := wordEnd(name, j+1)
				if !mixedPart(name[j+1 : k]) {
					break
				}
				j = k
			}
			spans = append(spans, span{a, j, "secret"})
		}
	}
	if len(spans) == 0 {
		return name
	}
	slices.SortStableFunc(spans, func(a, b span) int { return a.start - b.start })
	var b strings.Builder
	last := 0
	for k, sp := range spans {
		if sp.start < last {
			continue // inside the previous one
		}
		end := sp.end
		for _, o := range spans[k:] {
			if o.start < end && o.end > end {
				end = o.end
			}
		}
		b.WriteString(name[last:sp.start])
		b.WriteString(Marker + sp.kind + "]")
		last = end
	}
	b.WriteString(name[last:])
	return String(b.String())
}

func nameSep(c byte) bool { return c == '_' || c == '-' || c == '.' || c == ' ' }

func wordEnd(name string, i int) int {
	for i < len(name) && !nameSep(name[i]) {
		i++
	}
	return i
}

// mixedPart reports a part of a name joined to a random word that belongs
// to it: four bytes or more of two classes or more.
func mixedPart(p string) bool { return len(p) >= 4 && classes(p) >= 2 && !strings.Contains(p, Marker) }

// randomWord reports a word of a name that looks random: see Name.
func randomWord(w string) bool {
	if len(w) < 12 || strings.Contains(w, Marker) {
		return false
	}
	h := entropy(w)
	switch c := classes(w); {
	case isHex(w) && len(w) >= 32:
		return h >= 3.0
	case c >= 3:
		// Class switches: "FAKE4MseF7KIYn" switches 7 times in 14 bytes,
		// "MyProjectV2Notes" 7 times in 16; random text about every other.
		switches := 0
		for i := 1; i < len(w); i++ {
			if class(w[i]) != class(w[i-1]) {
				switches++
			}
		}
		return h >= 3.3 && 2*switches >= len(w)
	case c == 2:
		return len(w) >= 20 && h >= 4.0
	}
	return false
}

// class is the character class of c: 0 lower, 1 upper, 2 digit, 3 other.
func class(c byte) int {
	switch {
	case 'a' <= c && c <= 'z':
		return 0
	case 'A' <= c && c <= 'Z':
		return 1
	case '0' <= c && c <= '9':
		return 2
	}
	return 3
}
