package cite

import (
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/intermem/intermem/pkg/lazy"
)

// maxTokenLen bounds the length of anything considered as a path. Longer
// tokens are skipped without being examined, which keeps hostile input (a
// 10,000-slash run) cheap.
const maxTokenLen = 1024

// maxLinkTarget bounds how far a markdown link destination is scanned.
const maxLinkTarget = 512

// item is a citation found during the scan, or a symbol candidate waiting for
// the entry's single cited file.
type item struct {
	c       Citation
	pending bool // symbol candidate: Path is filled in by finish
	link    bool // from a markdown link destination
}

type memoKey struct {
	tok string
	src source
}

type memoVal struct {
	c  Citation
	ok bool
}

// classify memoises the package-level classify for this entry.
func (e *extractor) classify(tok string, src source) (Citation, bool) {
	k := memoKey{tok, src}
	if v, ok := e.memo[k]; ok {
		return v.c, v.ok
	}
	c, ok := classify(tok, src)
	if e.memo == nil {
		e.memo = map[memoKey]memoVal{}
	}
	e.memo[k] = memoVal{c, ok}
	return c, ok
}

type key struct {
	kind   Kind
	path   string
	line   int
	symbol string
}

type extractor struct {
	memo map[memoKey]memoVal // classify results for repeated tokens
	// doc is set by ExtractDoc: link destinations relative to the
	// document are resolved against dir, and those leaving the project
	// are kept in escaped.
	doc     bool
	dir     string
	escaped []string
	items   []item
	seen    map[key]bool
	nCites  int
	nSyms   int
	symSeen map[string]bool
}

// Extract finds the citations in one markdown entry: back-ticked spans that
// look like paths, markdown link destinations that are not URLs, paths in
// prose, and Func() / Type.Method() symbols when the entry cites exactly one
// file. Fenced code blocks and HTML comments are skipped. The result is
// de-duplicated, in order of first appearance and at most MaxCitations long.
// See the package documentation for what is and is not a citation.
func Extract(text string) []Citation {
	e := &extractor{seen: map[key]bool{}, symSeen: map[string]bool{}}
	e.scanBlocks(text)
	return e.finish(text)
}

// ExtractDoc is Extract for the text of a document at doc (slash-separated,
// relative to the project root). A markdown link whose destination is
// relative to the document (./x.md, ../patterns/x.md, or a bare name,
// x.md) names a file beside the document, as a markdown renderer reads it,
// not one at the project root: ExtractDoc resolves it against doc's
// directory, so its Text and Path name the file from the project root as
// every other citation does, and a stored Text extracts to the same
// citation again. A destination with an inner slash that starts with
// neither ./ nor ../ (docs/solutions/x.md) stays as written: documents in
// the wild write links from the project root that way. A destination that
// resolution takes out of the project (../../../x) is not followed: it is
// returned in escaped, as written, and is no citation. Back-ticked spans
// and prose paths are read from the project root, as Extract reads them
// (they are mostly paths in commands run there).
func ExtractDoc(text, doc string) (cs []Citation, escaped []string) {
	e := &extractor{seen: map[key]bool{}, symSeen: map[string]bool{}, doc: true, dir: path.Dir(doc)}
	e.scanBlocks(text)
	return e.finish(text), e.escaped
}

// docRelative reports whether a link destination is relative to the
// document it is written in: ./x, ../x, or a bare name (no slash, no
// scheme, no anchor alone).
func docRelative(target string) bool {
	switch {
	case strings.HasPrefix(target, "./"), strings.HasPrefix(target, "../"):
		return true
	case target == "" || strings.HasPrefix(target, "#") || strings.ContainsAny(target, "/:\\"):
		return false
	}
	return target != "." && target != ".."
}

// resolveLink returns a document-relative link destination resolved
// against the document's directory (its anchor kept as written), or false
// when it leaves the project. Other destinations are returned as they are.
func (e *extractor) resolveLink(target string) (string, bool) {
	base, frag := target, ""
	if i := strings.IndexByte(target, '#'); i >= 0 {
		base, frag = target[:i], target[i:]
	}
	// Judged decoded, so that an encoded "%2e%2e/" is the ".." it is; a
	// "%" the decoding leaves is encoded again for classify, which decodes
	// link destinations.
	dec, err := pathUnescape(base)
	if err != nil || !docRelative(dec) {
		return target, true // as written (classify refuses what does not decode)
	}
	joined := path.Join(e.dir, dec)
	if joined == ".." || strings.HasPrefix(joined, "../") {
		return "", false
	}
	if strings.HasSuffix(dec, "/") && joined != "." {
		joined += "/"
	}
	return strings.ReplaceAll(joined, "%", "%25") + frag, true
}

func (e *extractor) full() bool { return e.nCites >= MaxCitations }

func (e *extractor) add(c Citation) { e.addFrom(c, false) }

func (e *extractor) addFrom(c Citation, link bool) {
	if e.full() {
		return
	}
	k := key{c.Kind, c.Path, c.Line, c.Symbol}
	if e.seen[k] {
		return
	}
	e.seen[k] = true
	e.nCites++
	e.items = append(e.items, item{c: c, link: link})
}

func (e *extractor) addSymbol(text, name string) {
	if e.nSyms >= MaxCitations || e.symSeen[text] {
		return
	}
	e.symSeen[text] = true
	e.nSyms++
	e.items = append(e.items, item{c: Citation{Text: text, Kind: Symbol, Symbol: name}, pending: true})
}

// finish attaches symbol candidates to the entry's one cited code file (or
// drops them), removes duplicates and applies the cap. Link destinations and
// documents (.md, .txt) are not code files: a symbol in a memory pointer's
// title is not defined in the memory file. An entry that talks about a change
// ("renamed", "replaced", "no longer", "instead of") may name symbols that are
// gone on purpose, so it yields no symbols.
func (e *extractor) finish(text string) []Citation {
	file, files, outside := "", 0, false
	for _, it := range e.items {
		if it.pending || it.link || it.c.Kind != File || isDoc(it.c.Path) || it.c.Path == file {
			continue
		}
		file, outside = it.c.Path, it.c.Outside
		files++
	}
	if files == 1 && e.nSyms > 0 && mentionsChange(text) {
		files = 0
	}
	out := make([]Citation, 0, len(e.items))
	seen := map[key]bool{}
	for _, it := range e.items {
		c := it.c
		if it.pending {
			if files != 1 || outside {
				continue
			}
			c.Path = file
		}
		k := key{c.Kind, c.Path, c.Line, c.Symbol}
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, c)
		if len(out) == MaxCitations {
			break
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

var docExts = lazy.NewSet("md", "mdx", "markdown", "rst", "txt", "adoc", "asciidoc", "org")

func isDoc(p string) bool {
	i := strings.LastIndexByte(p, '.')
	return i >= 0 && docExts.Has(strings.ToLower(p[i+1:]))
}

// changeCues are phrases that make an entry describe an edit rather than the
// current state of the code.
var changeCues = []string{
	"renamed", "replaced", "replace ", "removed", "deleted", "no longer", "instead of",
	"deprecated", "changed from", "moved to", "moved from", "formerly", "used to",
	"don't use", "do not use", "never use", "avoid ",
}

func mentionsChange(text string) bool {
	if len(text) > 8192 {
		text = text[:8192]
	}
	lower := strings.ToLower(text)
	for _, c := range changeCues {
		if strings.Contains(lower, c) {
			return true
		}
	}
	return false
}

// scanBlocks splits text into runs of lines outside fenced code blocks.
func (e *extractor) scanBlocks(text string) {
	start := 0
	inFence := false
	var fch byte
	var flen int
	for ls := 0; ls < len(text); {
		le := strings.IndexByte(text[ls:], '\n')
		next := len(text)
		if le < 0 {
			le = len(text)
		} else {
			le += ls
			next = le + 1
		}
		ch, n, rest := fenceMarker(text[ls:le])
		switch {
		case n == 0:
		case !inFence && (ch == '~' || !strings.ContainsRune(rest, '`')):
			e.scanInline(text[start:ls])
			inFence, fch, flen = true, ch, n
		case inFence && ch == fch && n >= flen && strings.TrimSpace(rest) == "":
			inFence = false
			start = next
		}
		ls = next
	}
	if !inFence && start < len(text) {
		e.scanInline(text[start:])
	}
}

// fenceMarker reports the fence character and run length if line opens or
// closes a fenced code block (after any indentation), and the rest of the line.
func fenceMarker(line string) (byte, int, string) {
	s := strings.TrimLeft(line, " \t")
	if len(s) < 3 || (s[0] != '`' && s[0] != '~') {
		return 0, 0, ""
	}
	ch := s[0]
	n := 0
	for n < len(s) && s[n] == ch {
		n++
	}
	if n < 3 {
		return 0, 0, ""
	}
	return ch, n, s[n:]
}

// scanInline handles one run of non-fenced text: HTML comments are blanked,
// code spans are found with the linear CommonMark matching of backtick runs,
// and the text between them is scanned as prose.
func (e *extractor) scanInline(s string) {
	if s == "" {
		return
	}
	if strings.Contains(s, "<!--") {
		s = blankComments(s)
	}
	type run struct{ start, n int }
	var runs []run
	for i := 0; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] == '`' {
			j++
		}
		runs = append(runs, run{i, j - i})
		i = j
	}
	// nextSame[i] is the index of the next run with the same length.
	nextSame := make([]int, len(runs))
	last := map[int]int{}
	for i := len(runs) - 1; i >= 0; i-- {
		if j, ok := last[runs[i].n]; ok {
			nextSame[i] = j
		} else {
			nextSame[i] = -1
		}
		last[runs[i].n] = i
	}
	pos := 0
	for i := 0; i < len(runs) && !e.full(); {
		j := nextSame[i]
		if j < 0 {
			i++
			continue
		}
		open, close := runs[i], runs[j]
		e.scanProse(s[pos:open.start])
		e.scanCode(s[open.start+open.n : close.start])
		pos = close.start + close.n
		i = j + 1
	}
	if pos < len(s) {
		e.scanProse(s[pos:])
	}
}

// blankComments replaces every closed HTML comment with spaces, keeping
// offsets, so that tool markers (<!-- intermem:… -->) are not scanned.
func blankComments(s string) string {
	b := []byte(s)
	for i := 0; i < len(b); {
		k := strings.Index(s[i:], "<!--")
		if k < 0 {
			break
		}
		k += i
		end := strings.Index(s[k+4:], "-->")
		if end < 0 {
			break // no later comment can close either
		}
		end += k + 4 + 3
		for x := k; x < end; x++ {
			if b[x] != '\n' {
				b[x] = ' '
			}
		}
		i = end
	}
	return string(b)
}

// scanCode classifies the content of one code span. CommonMark reads a
// line break inside a span as a space, and so does the classification;
// a citation's Text keeps the bytes as written, so that it can be found,
// and edited, in the entry.
func (e *extractor) scanCode(raw string) {
	s := strings.ReplaceAll(raw, "\n", " ")
	if len(s) >= 2 && s[0] == ' ' && s[len(s)-1] == ' ' && strings.TrimSpace(s) != "" {
		s, raw = s[1:len(s)-1], raw[1:len(raw)-1]
	}
	if s == "" || len(s) > maxTokenLen {
		return
	}
	if name, ok := parseSymbol(s); ok {
		e.addSymbol(raw, name)
		return
	}
	if !strings.ContainsAny(s, " \t") {
		if c, ok := e.classify(s, fromCode); ok {
			e.add(c)
		}
		return
	}
	if spacedPath(s) {
		// Read as a path with spaces only from a span on one line: a span
		// the editor wrapped may as well be prose, and a wrong guess
		// would call a fact stale, so it cites nothing.
		if s == raw {
			if c, ok := e.classify(s, fromSpaced); ok {
				e.add(c)
			}
		}
		return
	}
	// A command: cite only the script it runs.
	f := strings.Fields(s)
	if len(f) == 0 {
		return
	}
	cand := ""
	switch {
	case strings.ContainsRune(f[0], '/'):
		cand = f[0]
	case interpreters.Has(f[0]):
		for _, a := range f[1:] {
			if strings.HasPrefix(a, "-") || a == "run" || interpreters.Has(a) {
				continue
			}
			cand = a
			break
		}
	}
	if cand != "" {
		if c, ok := e.classify(cand, fromCommand); ok {
			e.add(c)
		}
	}
}

// interpreters are commands whose first non-flag argument is a script file.
var interpreters = lazy.NewSet(
	"bash", "sh", "zsh", "fish", "source", ".",
	"python", "python3", "node", "ruby", "perl",
	"php", "bun", "deno", "tsx", "ts-node", "uv",
	"Rscript", "pwsh", "lua",
)

// spacedPath reports whether a code span containing spaces is written as one
// path (`docs/Design Notes.md`) rather than a command (`python x/y.py`): no
// shell syntax, a known file extension at the end, and a first word that is
// itself path-like, capitalised or non-ASCII rather than a lower-case command.
func spacedPath(s string) bool {
	if strings.ContainsAny(s, "\t|&;<>$`\"'=*") || strings.Contains(s, " -") {
		return false
	}
	if !hasKnownExt(lastSegment(strings.TrimRight(s, "/"))) {
		return false
	}
	first, _, _ := strings.Cut(s, " ")
	if strings.ContainsRune(first, '/') {
		return true
	}
	r, _ := utf8.DecodeRuneInString(first)
	return unicode.IsUpper(r) || r >= utf8.RuneSelf || unicode.IsDigit(r)
}

// scanProse scans text outside code spans: markdown link destinations, then
// whitespace-separated words.
func (e *extractor) scanProse(s string) {
	pos := 0
	prev := ""
	for i := 0; i+1 < len(s) && !e.full(); i++ {
		if s[i] != ']' || s[i+1] != '(' {
			continue
		}
		target, end, ok := linkTarget(s, i+2)
		if !ok {
			continue
		}
		prev = e.scanWords(s[pos:i+1], prev)
		if e.doc {
			t, ok := e.resolveLink(target)
			if !ok {
				e.escaped = append(e.escaped, target)
				pos, i = end, end-1
				continue
			}
			target = t
		}
		if c, ok := e.classify(target, fromLink); ok {
			e.addFrom(c, true)
		}
		pos = end
		i = end - 1
	}
	if pos < len(s) {
		e.scanWords(s[pos:], prev)
	}
}

// linkTarget parses an inline link destination starting at s[i] (just after
// "](") and returns it with the index just past the closing parenthesis.
func linkTarget(s string, i int) (string, int, bool) {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	start, end := i, i
	if i < len(s) && s[i] == '<' {
		i++
		start = i
		for i < len(s) && s[i] != '>' {
			if s[i] == '<' || s[i] == '\n' || i-start > maxLinkTarget {
				return "", 0, false
			}
			i++
		}
		if i >= len(s) {
			return "", 0, false
		}
		end = i
		i++
	} else {
		depth := 0
	loop:
		for ; i < len(s); i++ {
			if i-start > maxLinkTarget {
				return "", 0, false
			}
			switch s[i] {
			case ' ', '\t', '\n', '\r':
				break loop
			case '[', ']', '<', '>', '`':
				return "", 0, false
			case '(':
				depth++
			case ')':
				if depth == 0 {
					break loop
				}
				depth--
			}
		}
		end = i
	}
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	if i < len(s) && (s[i] == '"' || s[i] == '\'') {
		q := s[i]
		k := strings.IndexByte(s[i+1:min(len(s), i+1+maxLinkTarget)], q)
		if k < 0 {
			return "", 0, false
		}
		i += k + 2
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	if i >= len(s) || s[i] != ')' || end == start {
		return "", 0, false
	}
	return s[start:end], i + 1, true
}

var httpVerbs = lazy.NewSet(
	"GET", "POST", "PUT", "PATCH", "DELETE",
	"HEAD", "OPTIONS",
)

// scanWords scans whitespace-separated words of prose. prev is the word before
// s (to recognise "GET /v1/messages"); the last word is returned.
func (e *extractor) scanWords(s, prev string) string {
	for i := 0; i < len(s) && !e.full(); {
		if n := spaceAt(s, i); n > 0 {
			i += n
			continue
		}
		j := i
		for j < len(s) {
			if spaceAt(s, j) > 0 {
				break
			}
			if s[j] < utf8.RuneSelf {
				j++
			} else {
				_, n := utf8.DecodeRuneInString(s[j:])
				j += n
			}
		}
		w := s[i:j]
		i = j
		if len(w) > maxTokenLen {
			prev = ""
			continue
		}
		e.scanWord(w, httpVerbs.Has(prev))
		prev = w
	}
	return prev
}

// spaceAt returns the width of the white-space rune at s[i], or 0.
func spaceAt(s string, i int) int {
	if c := s[i]; c < utf8.RuneSelf {
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' {
			return 1
		}
		return 0
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	if unicode.IsSpace(r) {
		return n
	}
	return 0
}

func (e *extractor) scanWord(w string, afterVerb bool) {
	if t := trimProse(w); strings.HasSuffix(t, "()") {
		if name, ok := parseSymbol(t); ok {
			e.addSymbol(t, name)
			return
		}
	}
	if afterVerb || !strings.ContainsAny(w, "/\\") {
		return
	}
	for len(w) > 0 {
		k := strings.IndexFunc(w, isProseDelim)
		piece := w
		if k >= 0 {
			piece = w[:k]
			_, n := utf8.DecodeRuneInString(w[k:])
			w = w[k+n:]
		} else {
			w = ""
		}
		piece = cutTrailingScript(trimProse(piece))
		if piece == "" || !strings.ContainsAny(piece, "/\\") {
			continue
		}
		if c, ok := e.classify(piece, fromProse); ok {
			e.add(c)
		}
	}
}

// cutTrailingScript drops non-ASCII letters glued after a file extension in
// running text (the Korean particle in "notes/x.md에").
func cutTrailingScript(s string) string {
	i := strings.LastIndexByte(s, '.')
	if i < 0 {
		return s
	}
	j := i + 1
	for j < len(s) && s[j] < utf8.RuneSelf && (unicode.IsLetter(rune(s[j])) || unicode.IsDigit(rune(s[j]))) {
		j++
	}
	if j == i+1 || j == len(s) || s[j] < utf8.RuneSelf || !knownExt.Has(strings.ToLower(s[i+1:j])) {
		return s
	}
	return s[:j]
}

// isProseDelim reports runes that end a path in running text.
func isProseDelim(r rune) bool {
	switch r {
	case '(', ')', '"', '\'', ',', ';', '<', '>', '|', '[', ']',
		'：', '，', '。', '、', '；', '（', '）', '【', '】', '「', '」', '『', '』',
		'《', '》', '“', '”', '‘', '’', '→', '←', '—', '–':
		return true
	}
	return false
}

// trimProse removes markdown emphasis and sentence punctuation around a word.
// Trailing stars are removed only to balance leading ones, so a glob such as
// plugins/* keeps its star.
func trimProse(s string) string {
	for {
		t := strings.TrimRight(s, ".,:;!?")
		if n := len(t) - len(strings.TrimLeft(t, "*")); n > 0 {
			t = t[n:]
			for k := 0; k < n && strings.HasSuffix(t, "*"); k++ {
				t = t[:len(t)-1]
			}
		}
		if t == s {
			return s
		}
		s = t
	}
}
