package automem

import (
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxDest bounds how far a link destination is read. Sibling file names are
// short (filesystems cap them at 255 bytes); the bound keeps link search
// linear on adversarial lines such as "](](](…".
const maxDest = 512

// codeSkipper skips inline code spans. Its memo records, per backtick-run
// length, the offset from which no closing run exists, so a line full of
// unmatched backticks costs one scan per run length, not one per run.
type codeSkipper struct {
	noClose [8]int // offset+1 from which no run of exactly n+1 backticks exists
}

// skip returns the offset just past the code span that starts with the
// backtick run at s[i], or just past the run when it has no closer.
func (c *codeSkipper) skip(s string, i int) int {
	n := 0
	for i+n < len(s) && s[i+n] == '`' {
		n++
	}
	j := i + n
	if n > len(c.noClose) {
		return j
	}
	if f := c.noClose[n-1]; f != 0 && j >= f-1 {
		return j
	}
	for k := j; k < len(s); {
		idx := strings.IndexByte(s[k:], '`')
		if idx < 0 {
			break
		}
		k += idx
		m := 0
		for k+m < len(s) && s[k+m] == '`' {
			m++
		}
		if m == n {
			return k + m
		}
		k += m
	}
	c.noClose[n-1] = j + 1
	return j
}

// pointerTarget reports whether an item's first-line content is a pointer
// to another memory file and returns the target (see memoryPath). The forms
// seen in real indexes are all pointers:
//
//   - a reference at the start, after optional emoji, bold or italic
//     markers, whatever follows it: "[Title](f.md) — hook", "[t](./f.md)",
//     "`notes/debugging.md` — what it holds", "[[wikilink]] — hook", and a
//     bare "notes/debugging.md — hook" when a separator or nothing follows
//     the name (so "README.md is stale" stays a fact);
//   - a reference that ends the line after a separator, the hook first:
//     "hook → [f.md](f.md)", "详细设计见：[f.md](./f.md)", "Details: [[f]]";
//   - "See [f](f.md)" or "See [f](f.md) for details".
//
// A reference in the middle of a sentence ("use the helper in [u](u.md)
// when …") or after a full stop ("Fact. [Detail](f.md)") leaves the item a
// fact: the sentence is knowledge of its own.
func pointerTarget(s string) (string, bool) {
	i := skipDecoration(s)
	if i >= len(s) {
		return "", false
	}
	var cs codeSkipper
	if target, end, ok := refAt(s, i, true, &cs); ok {
		if s[i] != '[' && s[i] != '`' && !bareEnds(s[end:]) {
			return "", false
		}
		return target, true
	}
	// The last reference on the line, if nothing but decoration (or "for
	// details") follows it. Only the tail of the line is searched, and only
	// a few openers are tried, so a line of a hundred thousand "[" costs
	// no more than a short one.
	from := max(i+1, len(s)-maxTail)
	tries := 0
	for j := len(s) - 1; j >= from && tries < maxTries; j-- {
		c := s[j]
		if c != '[' && c != '`' || c == '[' && s[j-1] == '[' {
			continue // not an opener, or the inner bracket of a wikilink
		}
		tries++
		var cs codeSkipper
		target, end, ok := refAt(s, j, false, &cs)
		if !ok {
			continue
		}
		after := strings.TrimSpace(strings.Trim(strings.TrimSpace(s[end:]), "*_).。"))
		if after != "" && !forDetails(after) {
			return "", false
		}
		before := strings.TrimSpace(strings.TrimRight(s[i:j], "*_ \t"))
		if endsWithSeparator(before) || seeWord(before) {
			return target, true
		}
		return "", false
	}
	return "", false
}

// maxTail and maxTries bound the search for a pointer's trailing link.
const (
	maxTail  = 1024
	maxTries = 16
)

// refAt parses a reference to a memory file starting at s[i]: a markdown
// link, a [[wikilink]], a back-ticked name or (with bare set) a bare name.
// It returns the target and the offset just past the reference.
func refAt(s string, i int, bare bool, cs *codeSkipper) (string, int, bool) {
	switch s[i] {
	case '[':
		if i+1 < len(s) && s[i+1] == '[' {
			return wikiAt(s, i)
		}
		if dest, end, ok := linkAt(s, i, true, cs); ok {
			if t, ok := memoryPath(dest); ok {
				return t, end, true
			}
		}
		return "", 0, false
	case '`':
		n := 0
		for i+n < len(s) && s[i+n] == '`' {
			n++
		}
		k := strings.Index(s[i+n:], s[i:i+n])
		if k < 0 {
			return "", 0, false
		}
		name := strings.TrimSpace(s[i+n : i+n+k])
		if strings.ContainsAny(name, " \t") || strings.EqualFold(name, IndexName) {
			return "", 0, false
		}
		if t, ok := memoryPath(name); ok {
			return t, i + n + k + n, true
		}
		return "", 0, false
	}
	if !bare {
		return "", 0, false
	}
	end := i
	for end < len(s) && s[end] != ' ' && s[end] != '\t' {
		end++
	}
	name := strings.TrimRight(s[i:end], ":：,;")
	if strings.EqualFold(name, IndexName) {
		return "", 0, false
	}
	if t, ok := memoryPath(name); ok {
		return t, i + len(name), true
	}
	return "", 0, false
}

// maxWiki bounds a wikilink's target: titles are short, and the bound keeps
// the search linear on a line of many "[[".
const maxWiki = 256

// wikiAt parses "[[target]]", "[[target|alias]]" or "[[target#part]]" at
// s[i]. The target names a memory by file name (with or without ".md") or
// by title; Dir resolves which file it is.
func wikiAt(s string, i int) (string, int, bool) {
	limit := min(len(s), i+2+maxWiki)
	k := strings.Index(s[i+2:limit], "]]")
	if k < 0 {
		return "", 0, false
	}
	inner := s[i+2 : i+2+k]
	if j := strings.IndexAny(inner, "|#"); j >= 0 {
		inner = inner[:j]
	}
	inner = strings.TrimSpace(inner)
	if inner == "" || strings.ContainsAny(inner, "[]\n") || strings.HasPrefix(inner, "/") || strings.Contains(inner, "..") {
		return "", 0, false
	}
	if len(inner) <= 3 || !strings.EqualFold(inner[len(inner)-3:], ".md") {
		inner += ".md"
	}
	return inner, i + 2 + k + 2, true
}

// bareEnds reports whether what follows a bare file name makes it a
// pointer: nothing, a colon, or a space and a separator before the hook.
func bareEnds(rest string) bool {
	t := strings.TrimLeft(rest, " \t")
	switch {
	case t == "":
		return true
	case len(t) == len(rest): // nothing between the name and what follows
		return strings.HasPrefix(rest, ":") || strings.HasPrefix(rest, "：")
	}
	for _, sep := range separators {
		if strings.HasPrefix(t, sep) {
			return true
		}
	}
	return false
}

// separators end the hook of a pointer written hook first, or begin the
// hook of one written link first.
var separators = []string{"—", "–", "-", "→", "->", "=>", "⇒", ":", "："}

// endsWithSeparator reports whether s (trimmed) ends with a separator, as
// "Details:" and "always restart →" do before their link.
func endsWithSeparator(s string) bool {
	for _, sep := range separators {
		if strings.HasSuffix(s, sep) {
			return true
		}
	}
	return false
}

// seeWord reports whether s is a bare "see"-like word that makes the link
// after it a cross-reference.
func seeWord(s string) bool {
	for _, w := range [...]string{"see", "see also", "details", "more", "more in", "read", "cf.", "cf", "参见", "详见", "见", "ver", "veja"} {
		if strings.EqualFold(s, w) {
			return true
		}
	}
	return false
}

// forDetails reports whether what follows a trailing link only says that
// the details are there.
func forDetails(s string) bool {
	s = strings.ToLower(strings.TrimRight(s, ".。 "))
	switch s {
	case "for details", "for more", "for more details", "for more info", "for the details", "for context":
		return true
	}
	return false
}

// skipDecoration skips what may precede a pointer's link: spaces, emphasis
// markers and emoji (symbols, variation selectors, joiners, keycaps).
func skipDecoration(s string) int { return skipLeading(s, true) }

// skipEmoji skips spaces and emoji (not emphasis markers).
func skipEmoji(s string) int { return skipLeading(s, false) }

// skipLeading returns the offset past the spaces, tabs and emoji at the
// start of s, and past "*" and "_" too when emphasis is set.
func skipLeading(s string, emphasis bool) int {
	i := 0
	for i < len(s) {
		c := s[i]
		if c == ' ' || c == '\t' || emphasis && (c == '*' || c == '_') {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			return i
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if !isEmoji(r) {
			return i
		}
		i += size
	}
	return i
}

// isEmoji reports whether r is a symbol, a variation selector, a joiner or
// a keycap: what decorates the start of a memory line.
func isEmoji(r rune) bool {
	return r != utf8.RuneError && (unicode.In(r, unicode.So, unicode.Sk) || r == 0xFE0E || r == 0xFE0F || r == 0x200D || r == 0x20E3)
}

// linkAt parses an inline link whose "[" is s[i] and returns its raw
// destination and the offset just past its closing ")". The link text may
// contain balanced brackets and code spans (`[$ x: result[["error"]]; …](f.md)`).
// With lenient set, text whose brackets never balance is ended by the first
// "](" that opens a valid destination.
func linkAt(s string, i int, lenient bool, cs *codeSkipper) (string, int, bool) {
	depth := 0
	for j := i; j < len(s); {
		for j < len(s) && !linkTextSpecial[s[j]] {
			j++
		}
		if j >= len(s) {
			break
		}
		switch s[j] {
		case '\\':
			j += 2
			continue
		case '`':
			j = cs.skip(s, j)
			continue
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				if j+1 < len(s) && s[j+1] == '(' {
					return destAt(s, j+2)
				}
				return "", 0, false
			}
		}
		j++
	}
	if !lenient {
		return "", 0, false
	}
	for k := i + 1; ; {
		idx := strings.Index(s[k:], "](")
		if idx < 0 {
			return "", 0, false
		}
		k += idx
		if dest, end, ok := destAt(s, k+2); ok {
			return dest, end, true
		}
		k += 2
	}
}

// linkTextSpecial marks the bytes linkAt must look at inside link text.
var linkTextSpecial = [256]bool{'\\': true, '`': true, '[': true, ']': true}

// destStop marks the bytes that end or complicate a plain destination.
var destStop = [256]bool{'\\': true, '(': true, ')': true, ' ': true, '\t': true}

// destAt parses a link destination and optional title starting at s[i]
// (just after "(") up to the closing ")", and returns the destination and
// the offset just past that ")".
func destAt(s string, i int) (string, int, bool) {
	limit := min(len(s), i+maxDest)
	i = skipSpace(s[:limit], i)
	if i >= limit {
		return "", 0, false
	}
	var dest string
	if s[i] == '<' {
		k := strings.IndexByte(s[i+1:limit], '>')
		if k < 0 {
			return "", 0, false
		}
		dest = s[i+1 : i+1+k]
		i += k + 2
	} else {
		start, depth := i, 0
	loop:
		for ; i < limit; i++ {
			if !destStop[s[i]] {
				continue
			}
			switch s[i] {
			case '\\':
				i++
			case '(':
				depth++
				if depth > 32 { // CommonMark's own nesting limit
					return "", 0, false
				}
			case ')':
				if depth == 0 {
					break loop
				}
				depth--
			case ' ', '\t':
				break loop
			}
		}
		if i >= limit {
			return "", 0, false
		}
		dest = s[start:i]
	}
	i = skipSpace(s[:limit], i)
	if i < limit && (s[i] == '"' || s[i] == '\'' || s[i] == '(') {
		closer := s[i]
		if closer == '(' {
			closer = ')'
		}
		k := strings.IndexByte(s[i+1:limit], closer)
		if k < 0 {
			return "", 0, false
		}
		i = skipSpace(s[:limit], i+k+2)
	}
	if i >= limit || s[i] != ')' {
		return "", 0, false
	}
	return dest, i + 1, true
}

// memoryPath reports whether a link destination names a file of the
// memory directory: a ".md" path relative to it, with no scheme, no drive,
// no leading "/" or "~", no "\\" and no ".." or empty segment. It returns
// the path without "./" and without "#fragment". Claude Code keeps memory
// flat; a "notes/debugging.md" of a hand-kept memory is a pointer too.
func memoryPath(dest string) (string, bool) {
	if k := strings.IndexByte(dest, '#'); k >= 0 {
		dest = dest[:k]
	}
	for strings.HasPrefix(dest, "./") {
		dest = dest[2:]
	}
	if len(dest) <= len(".md") || !strings.EqualFold(dest[len(dest)-3:], ".md") {
		return "", false
	}
	if dest[0] == '/' || dest[0] == '~' || strings.ContainsAny(dest, "\\:") {
		return "", false
	}
	for seg := range strings.SplitSeq(dest, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "", false
		}
	}
	return dest, true
}

// firstSiblingLink returns the target of the first markdown link in s that
// points to a sibling memory file, ignoring code spans; "" if none. Brackets
// are matched with a stack in one pass, so the search is linear even on a
// line of a hundred thousand "[".
func firstSiblingLink(s string) string {
	if !strings.Contains(s, "](") {
		return ""
	}
	var cs codeSkipper
	var stack [16]int
	open := stack[:0] // positions of unmatched "["
	for i := 0; i < len(s); {
		switch s[i] {
		case '\\':
			i += 2
			continue
		case '`':
			i = cs.skip(s, i)
			continue
		case '[':
			open = append(open, i)
		case ']':
			if len(open) > 0 {
				open = open[:len(open)-1]
				if i+1 < len(s) && s[i+1] == '(' {
					if dest, _, ok := destAt(s, i+2); ok {
						if name, ok := memoryPath(dest); ok {
							return name
						}
					}
				}
			}
		}
		i++
	}
	return ""
}

// HasHook reports whether a pointer's text says something beyond naming the
// file it points to: a hook after the link, or link text other than the
// file's name ("[Deploy notes](project_deploy.md)", the whole fact in the
// title as some indexes write them). References to memory files are
// skipped, and so are separators and "see"-like words; whatever word with
// a letter or a digit remains is the memory. It runs on every dangling
// pointer at every scan, so it allocates nothing.
func HasHook(text, link string) bool {
	line, _, _ := strings.Cut(text, "\n")
	base := path.Base(link)
	var cs codeSkipper
	at := 0
	for i := 0; i < len(line); {
		c := line[i]
		if c == '[' || c == '`' {
			if _, end, ok := refAt(line, i, false, &cs); ok {
				if saysSomething(line[at:i]) {
					return true
				}
				if c == '[' && (i+1 >= len(line) || line[i+1] != '[') {
					if k := strings.LastIndex(line[i:end], "]("); k > 0 {
						if label := line[i+1 : i+k]; !sameKey(label, base) && saysSomething(label) {
							return true
						}
					}
				}
				at, i = end, end
				continue
			}
		}
		i++
	}
	return saysSomething(line[at:])
}

// saysSomething reports whether s holds a word with a letter or a digit
// that is not a "see"-like or filler word.
func saysSomething(s string) bool {
	for len(s) > 0 {
		i := strings.IndexFunc(s, isWordRune)
		if i < 0 {
			return false
		}
		s = s[i:]
		j := strings.IndexFunc(s, notWordRune)
		if j < 0 {
			j = len(s)
		}
		if w := s[:j]; !seeWord(w) && !fillerWord(w) {
			return true
		}
		s = s[j:]
	}
	return false
}

func isWordRune(r rune) bool  { return unicode.IsLetter(r) || unicode.IsDigit(r) }
func notWordRune(r rune) bool { return !isWordRune(r) }

// fillerWord reports whether w is one of the words around a bare
// cross-reference ("see x.md for details").
func fillerWord(w string) bool {
	for _, f := range [...]string{"for", "details", "more", "info", "the", "also", "in"} {
		if strings.EqualFold(w, f) {
			return true
		}
	}
	return false
}

// sameKey reports whether a link label is just the file's name: equal
// after folding case and dropping ".md" and back-ticks, with "_", "-" and
// white space all one separator.
func sameKey(label, file string) bool {
	trim := func(s string) string {
		s = strings.Trim(s, " \t`")
		if len(s) > 3 && strings.EqualFold(s[len(s)-3:], ".md") {
			s = s[:len(s)-3]
		}
		return strings.Trim(s, " \t_-`")
	}
	// next returns the folded rune at s[i:] and where the one after starts
	// (-1 at the end); a run of separators folds to one ' '.
	next := func(s string, i int) (rune, int) {
		for i < len(s) {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == '`' {
				i += n
				continue
			}
			if r == '_' || r == '-' || unicode.IsSpace(r) {
				for i < len(s) {
					r, n = utf8.DecodeRuneInString(s[i:])
					if r != '_' && r != '-' && r != '`' && !unicode.IsSpace(r) {
						break
					}
					i += n
				}
				return ' ', i
			}
			return unicode.ToLower(r), i + n
		}
		return -1, i
	}
	a, b := trim(label), trim(file)
	i, j := 0, 0
	for {
		ra, ni := next(a, i)
		rb, nj := next(b, j)
		if ra != rb {
			return false
		}
		if ra < 0 {
			return true
		}
		i, j = ni, nj
	}
}

// maxLabel bounds the link text Refs reads.
const maxLabel = 1024

// Ref is a link in markdown text: an inline link or image ("[label](dest)",
// "![alt](src)") or a [[wikilink]] (Dest is its target as written, Label
// its alias or target).
type Ref struct {
	Start, End int // byte range in the text, "!" of an image included
	Label      string
	Dest       string
	Wiki       bool
	Image      bool
}

// Fence follows fenced code blocks line by line: a block opens with a run
// of three or more ``` or ~~~ and closes with a line of at least that run
// of the same character.
type Fence struct{ marker string }

// Code reports whether the line t (its leading blanks trimmed) is fenced
// code: inside a block, or the line that opens or closes one. It is to be
// called on every line, in order.
func (f *Fence) Code(t string) bool {
	if f.marker != "" {
		if strings.HasPrefix(t, f.marker) && strings.Trim(t, f.marker[:1]+" \t") == "" {
			f.marker = ""
		}
		return true
	}
	if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
		n := 0
		for n < len(t) && t[n] == t[0] {
			n++
		}
		f.marker = t[:n]
		return true
	}
	return false
}

// Refs returns the links of markdown text, in order, outside fenced code
// and code spans. Like the rest of the parser it is linear in the text:
// link destinations and wikilinks are bounded.
func Refs(text string) []Ref {
	var out []Ref
	var fence Fence
	off := 0
	for _, line := range strings.SplitAfter(text, "\n") {
		at := off
		off += len(line)
		s := strings.TrimRight(line, "\r\n")
		t := strings.TrimLeft(s, " \t")
		if fence.Code(t) {
			continue
		}
		if !strings.Contains(s, "[") {
			continue
		}
		var cs codeSkipper
		for i := 0; i < len(s); {
			switch s[i] {
			case '\\':
				i += 2
				continue
			case '`':
				i = cs.skip(s, i)
				continue
			case '[':
				if i+1 < len(s) && s[i+1] == '[' {
					if k := strings.Index(s[i+2:min(len(s), i+2+maxWiki)], "]]"); k > 0 {
						inner := s[i+2 : i+2+k]
						target, alias, _ := strings.Cut(inner, "|")
						label := strings.TrimSpace(alias)
						if label == "" {
							label = strings.TrimSpace(target)
						}
						if !strings.ContainsAny(inner, "[]") {
							out = append(out, Ref{Start: at + i, End: at + i + 2 + k + 2, Label: label, Dest: strings.TrimSpace(target), Wiki: true})
							i += 2 + k + 2
							continue
						}
					}
					i++
					continue
				}
				// The window bounds the work per "[" on a line of many.
				w := s[:min(len(s), i+maxLabel+maxDest)]
				var wcs codeSkipper
				if dest, end, ok := linkAt(w, i, false, &wcs); ok {
					if k := strings.LastIndex(w[i:end], "]("); k > 0 {
						if _, e2, ok := destAt(w, i+k+2); ok && e2 == end {
							r := Ref{Start: at + i, End: at + end, Label: s[i+1 : i+k], Dest: dest}
							if i > 0 && s[i-1] == '!' {
								r.Start--
								r.Image = true
							}
							out = append(out, r)
							i = end
							continue
						}
					}
				}
			}
			i++
		}
	}
	return out
}
