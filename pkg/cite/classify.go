package cite

import (
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/intermem/intermem/pkg/lazy"
)

// source is where in the entry a candidate was found; each has its own bar.
type source int

const (
	fromProse   source = iota // a word of running text
	fromCode                  // a back-ticked span without spaces
	fromSpaced                // a back-ticked span with spaces that is one path
	fromLink                  // a markdown link destination
	fromCommand               // the script a back-ticked command runs
)

// classify decides whether tok is a citation and, if so, builds it. Every
// rejection rule here exists because the value is a well-known non-path that
// would otherwise be checked and reported broken.
func classify(tok string, src source) (Citation, bool) {
	var no Citation
	if tok == "" || len(tok) > maxTokenLen || !utf8.ValidString(tok) {
		return no, false
	}
	s := tok
	if src == fromLink {
		if strings.Contains(s, "%") {
			u, err := pathUnescape(s)
			if err != nil {
				return no, false
			}
			s = u
		}
		if strings.HasPrefix(s, "#") {
			return no, false // an anchor in the same document
		}
	}
	lower := strings.ToLower(s)
	if strings.Contains(s, "://") || strings.HasPrefix(lower, "www.") {
		return no, false // URL
	}
	if d, ok := drivePath(s); ok {
		c := Citation{Text: tok}
		rest, ok := splitSuffix(d[3:], &c)
		if !ok {
			return no, false
		}
		return outsideCitation(c, d[:3], rest, src)
	}
	if strings.ContainsAny(s, "\\^|;&<>\"'=`%@\t\r\n\x00") || strings.Contains(s, "…") {
		return no, false // regex, shell, env assignment, %VAR%, email, placeholder
	}
	if src != fromSpaced && src != fromLink && strings.ContainsRune(s, ' ') {
		return no, false
	}
	if isRegex(s) {
		return no, false
	}
	if s[0] == '-' || s[0] == '!' || s[0] == '$' || strings.Contains(s, "${") || strings.Contains(s, "$(") {
		return no, false // CLI flag, negation, $VAR
	}
	for i := strings.IndexByte(s, '$'); i >= 0; {
		if i+1 >= len(s) || !isLowerStart(s[i+1]) {
			return no, false // $VAR inside a path; $id.tsx route files stay
		}
		k := strings.IndexByte(s[i+1:], '$')
		if k < 0 {
			break
		}
		i += k + 1
	}

	c := Citation{Text: tok}
	p, ok := splitSuffix(s, &c)
	if !ok || p == "" {
		return no, false
	}
	if c.Symbol != "" && src == fromProse {
		return no, false
	}
	if strings.HasPrefix(p, "~") {
		i := strings.IndexByte(p, '/')
		if i < 0 || i > 1 && !isUserName(p[1:i]) {
			return no, false // ~80min/50min, ~~strike~~
		}
		return outsideCitation(c, p[:i+1], p[i+1:], src)
	}
	if p[0] == '/' {
		return absCitation(c, p, src)
	}

	explicit := strings.HasPrefix(p, "./") || strings.HasPrefix(p, "../")
	dir := strings.HasSuffix(p, "/")
	segs := splitSegs(p)
	if len(segs) == 0 || !segsOK(segs) {
		return no, false
	}
	if !explicit && (isDomain(segs[0]) && (len(segs) > 1 || !hasKnownExt(segs[0])) || isPlaceholderRoot(segs)) {
		return no, false
	}
	if !dir && (isMIME(segs) || isBranch(segs)) {
		return no, false
	}
	glob, ok := globKind(p)
	if !ok {
		return no, false
	}
	clean := path.Clean(p)
	if clean == "." || clean == "/" {
		return no, false
	}
	c.Path = clean
	if clean == ".." || strings.HasPrefix(clean, "../") {
		c.Outside = true
	}
	hasSlash := strings.ContainsRune(strings.TrimSuffix(p, "/"), '/')
	switch {
	case c.Symbol != "":
		c.Kind = Symbol
		if !isFileName(lastSegment(clean)) || glob || dir {
			return no, false
		}
	case glob:
		c.Kind = Glob
		if !strings.ContainsRune(clean, '/') || c.Line != 0 {
			return no, false // *.md without a directory part describes, not cites
		}
	case dir:
		c.Kind = Dir
	case isFileName(lastSegment(clean)):
		c.Kind = File
	default:
		c.Kind = Path
	}

	switch src {
	case fromProse:
		switch {
		case c.Kind == File || c.Kind == Glob:
			return c, hasSlash || explicit
		case c.Kind == Dir:
			return c, hasSlash || len([]rune(segs[0])) >= 2
		case c.Kind == Path:
			return c, explicit // bare a/b prose ("and/or", "client/server")
		}
		return no, false
	case fromCode:
		if hasSlash || explicit || c.Kind == Dir || c.Kind == File || c.Kind == Symbol {
			return c, true
		}
		// A bare dotfile (.env, .github) is a citation; an extension (.md) is not.
		base := lastSegment(clean)
		if isDotfile(base) {
			return c, true
		}
		return no, false
	case fromSpaced, fromCommand:
		return c, c.Kind == File
	case fromLink:
		return c, true
	}
	return no, false
}

// isRegex spots regular-expression syntax that globs do not use: quantifiers
// after a class or group ([a-z]+, (x)+), counted repetition (b{2,3}) and
// group modifiers ((?i)).
func isRegex(s string) bool {
	if strings.Contains(s, "]+") || strings.Contains(s, ")+") || strings.Contains(s, "(?") {
		return true
	}
	for i := strings.IndexByte(s, '{'); i >= 0; {
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return false
		}
		if strings.Trim(s[i+1:i+j], "0123456789,") == "" {
			return true
		}
		k := strings.IndexByte(s[i+j:], '{')
		if k < 0 {
			return false
		}
		i += j + k
	}
	return false
}

// isDotfile tells a bare dotfile name (.env, .gitignore, .github, .DS_Store,
// .needs-verification) from an extension (.md) or a property (.textContent,
// .length): it is a well-known name, has a dotfile suffix (rc, ignore,
// config, -version), or contains a dash, underscore or second dot.
func isDotfile(base string) bool {
	if len(base) < 2 || base[0] != '.' || base[1] == '.' {
		return false
	}
	name := base[1:]
	lower := strings.ToLower(name)
	if knownDotfiles.Has(lower) {
		return true
	}
	if knownExt.Has(lower) {
		return false // an extension: "`.md` files"
	}
	if strings.ContainsAny(name, "-_.") {
		return true
	}
	for _, suf := range []string{"rc", "ignore", "config", "version", "attributes", "modules", "keep"} {
		if strings.HasSuffix(lower, suf) && len(lower) > len(suf) {
			return true
		}
	}
	return false
}

func isLowerStart(b byte) bool { return b >= 'a' && b <= 'z' }

// isUserName matches the user in ~user/.
func isUserName(s string) bool {
	for i, r := range s {
		if !(r >= 'a' && r <= 'z' || r == '_' || i > 0 && (r >= '0' && r <= '9' || r == '-' || r == '.')) {
			return false
		}
	}
	return true
}

// drivePath recognises C:\x and C:/x and returns the slash form.
func drivePath(s string) (string, bool) {
	if len(s) < 4 || s[1] != ':' || (s[2] != '\\' && s[2] != '/') {
		return "", false
	}
	if r := s[0]; !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z') {
		return "", false
	}
	if strings.ContainsAny(s, "%$<>|\"*?") {
		return "", false
	}
	return strings.ReplaceAll(s, "\\", "/"), true
}

// outsideCitation builds the citation for a ~/ or drive-letter path: prefix
// is "~/", "~user/" or "C:/", rest the remainder without any line suffix.
func outsideCitation(c Citation, prefix, rest string, src source) (Citation, bool) {
	c.Outside = true
	if rest == "" || c.Symbol != "" || strings.ContainsRune(rest, ' ') && src != fromSpaced {
		return Citation{}, false
	}
	segs := splitSegs(rest)
	if len(segs) == 0 || !segsOK(segs) {
		return Citation{}, false
	}
	glob, ok := globKind(rest)
	if !ok {
		return Citation{}, false
	}
	c.Path = prefix + strings.TrimPrefix(path.Clean("/"+rest), "/")
	switch {
	case glob:
		c.Kind = Glob
	case strings.HasSuffix(rest, "/"):
		c.Kind = Dir
	case isFileName(lastSegment(c.Path)):
		c.Kind = File
	default:
		c.Kind = Path
	}
	if src == fromSpaced || src == fromCommand {
		return c, c.Kind == File
	}
	return c, true
}

// systemRoots are first segments of absolute paths that name the machine's
// file system, never a project: /etc/hosts, /home/u/x, /Users/u/x.
var systemRoots = lazy.NewSet(
	"bin", "boot", "dev", "etc", "home", "lib",
	"lib32", "lib64", "media", "mnt", "nix", "opt",
	"proc", "root", "run", "sbin", "snap", "srv",
	"sys", "tmp", "usr", "var", "workspace", "workspaces",
	"Users", "Library", "System", "Applications", "Volumes",
	"private", "cygdrive", "Program Files", "data", "app",
)

// absCitation handles a path that starts with "/". Under a system directory it
// is Outside. Otherwise it may be written relative to the project root
// (/src/main.py) or be a URL route (/api/v1/users): it is returned with
// Outside unset and the Checker treats it as project-relative only when its
// first segment exists in the project.
func absCitation(c Citation, p string, src source) (Citation, bool) {
	segs := splitSegs(p)
	if len(segs) == 0 || !segsOK(segs) {
		return Citation{}, false
	}
	dir := strings.HasSuffix(p, "/")
	glob, ok := globKind(p)
	if !ok {
		return Citation{}, false
	}
	c.Path = path.Clean(p)
	switch {
	case glob:
		c.Kind = Glob
	case dir:
		c.Kind = Dir
	case isFileName(segs[len(segs)-1]):
		c.Kind = File
	default:
		c.Kind = Path
	}
	if c.Symbol != "" {
		if c.Kind != File {
			return Citation{}, false
		}
		c.Kind = Symbol
	}
	if systemRoots.Has(segs[0]) {
		c.Outside = true
		switch src {
		case fromProse:
			return c, len(segs) >= 2 && c.Symbol == ""
		case fromSpaced, fromCommand:
			return c, c.Kind == File
		}
		return c, true
	}
	// Without an extension or a trailing slash a leading-slash path reads as
	// a URL route (/api/v1/users) or a slash command (/compact).
	switch src {
	case fromProse:
		return c, c.Kind == File && len(segs) >= 2
	case fromSpaced, fromCommand:
		return c, c.Kind == File
	}
	return c, c.Kind != Path
}

// splitSuffix removes a ::symbol, #L10 / #anchor or :42 suffix from s,
// recording it in c, and returns the path part.
func splitSuffix(s string, c *Citation) (string, bool) {
	if i := strings.Index(s, "::"); i >= 0 {
		name, ok := symbolChain(strings.TrimSuffix(trimBracket(s[i+2:]), "()"))
		if !ok || i == 0 {
			return "", false
		}
		c.Symbol = name
		s = s[:i]
	}
	if i := strings.IndexByte(s, '#'); i >= 0 {
		frag := s[i+1:]
		if n, ok := lineFragment(frag); ok {
			c.Line = n
		} else if !isAnchor(frag) {
			return "", false
		}
		s = s[:i]
	}
	if i := strings.IndexByte(s, ':'); i >= 0 {
		n, ok := lineSuffix(s[i+1:])
		if !ok {
			return "", false // scheme:, host:port, module:function
		}
		c.Line = n
		s = s[:i]
	}
	return s, true
}

func trimBracket(s string) string {
	if i := strings.IndexByte(s, '['); i > 0 && strings.HasSuffix(s, "]") {
		return s[:i]
	}
	return s
}

// lineFragment parses L10, L10C5, L10-L20, L10-20.
func lineFragment(f string) (int, bool) {
	if len(f) < 2 || f[0] != 'L' {
		return 0, false
	}
	n, rest := leadingInt(f[1:])
	if n <= 0 {
		return 0, false
	}
	if strings.HasPrefix(rest, "C") {
		_, rest = leadingInt(rest[1:])
	}
	if rest == "" {
		return n, true
	}
	if rest[0] != '-' {
		return 0, false
	}
	rest = strings.TrimPrefix(rest[1:], "L")
	m, rest := leadingInt(rest)
	if m <= 0 {
		return 0, false
	}
	if strings.HasPrefix(rest, "C") {
		_, rest = leadingInt(rest[1:])
	}
	return n, rest == ""
}

// lineSuffix parses 42, 42:7, 42-50.
func lineSuffix(f string) (int, bool) {
	n, rest := leadingInt(f)
	if n <= 0 {
		return 0, false
	}
	if rest == "" {
		return n, true
	}
	if rest[0] != ':' && rest[0] != '-' {
		return 0, false
	}
	m, rest := leadingInt(rest[1:])
	return n, m > 0 && rest == ""
}

// leadingInt parses up to 9 leading digits.
func leadingInt(s string) (int, string) {
	n, i := 0, 0
	for i < len(s) && i < 9 && s[i] >= '0' && s[i] <= '9' {
		n = n*10 + int(s[i]-'0')
		i++
	}
	if i == 0 {
		return -1, s
	}
	return n, s[i:]
}

func isAnchor(f string) bool {
	for _, r := range f {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// splitSegs returns the non-empty segments of p other than ".".
func splitSegs(p string) []string {
	var segs []string
	for _, s := range strings.Split(p, "/") {
		if s != "" && s != "." {
			segs = append(segs, s)
		}
	}
	return segs
}

// segsOK rejects paths that are numbers (1/2, 2026/02/18, v1.2/3), elisions
// (a/.../b) and segments with unbalanced or non-glob brackets and braces.
func segsOK(segs []string) bool {
	if len(segs) == 0 {
		return true
	}
	word, dots := false, 0
	for i, s := range segs {
		if s[0] == '.' && s != ".." {
			dots++
		}
		if k := strings.Index(s, "**"); k >= 0 && s != "**" {
			return false // markdown emphasis, not a doublestar segment
		}
		if strings.Trim(s, ".") == "" && len(s) > 2 {
			return false
		}
		if hasLetter(s) && !(i == 0 && isVersion(s)) {
			word = true
		}
		if strings.ContainsAny(s, "()") && !(s[0] == '(' && s[len(s)-1] == ')' && strings.Count(s, "(") == 1 && strings.Count(s, ")") == 1) {
			return false // call syntax, not a route group
		}
		if o, cl := strings.Count(s, "{"), strings.Count(s, "}"); o != cl || (o > 0 && !strings.Contains(s, ",")) {
			return false // {placeholder}
		}
		if strings.Count(s, "[") != strings.Count(s, "]") {
			return false
		}
		if strings.ContainsRune(s, ',') && !strings.Contains(s, "{") {
			return false
		}
	}
	if dots == len(segs) && len(segs) > 1 {
		return false // .forEach/.map/.filter, .png/.jpg
	}
	return word
}

func hasLetter(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) {
			return true
		}
	}
	return false
}

// isVersion matches v1, v1.2, 1.2.3, V2.
func isVersion(s string) bool {
	s = strings.TrimLeft(s, "vV")
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r == '.' || r == 'x') {
			return false
		}
	}
	return s[0] >= '0' && s[0] <= '9'
}

// isDomain reports whether a first segment is a host name (github.com,
// golang.org, gopkg.in, docs.rs): lower-case DNS labels and an alphabetic top
// label. Mixed case (MyApp.Core) and numeric or one-letter suffixes (conf.d,
// python3.11) are directories.
func isDomain(s string) bool {
	if !strings.ContainsRune(s, '.') || s[0] == '.' || strings.HasSuffix(s, ".") {
		return false
	}
	labels := strings.Split(s, ".")
	for _, l := range labels {
		if l == "" {
			return false
		}
		for _, r := range l {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
				return false
			}
		}
	}
	top := labels[len(labels)-1]
	if len(top) < 2 || len(top) > 24 {
		return false
	}
	for _, r := range top {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return true
}

// isPlaceholderRoot rejects the "path/to/file" placeholder.
func isPlaceholderRoot(segs []string) bool {
	return len(segs) >= 2 && segs[0] == "path" && segs[1] == "to"
}

// branchPrefixes are conventional git branch prefixes: feat/phase2-subscribe
// is a branch, not a directory.
var branchPrefixes = lazy.NewSet("feat", "feature", "fix", "bugfix", "hotfix", "chore", "refactor")

func isBranch(segs []string) bool {
	return len(segs) == 2 && branchPrefixes.Has(segs[0]) && !isFileName(segs[1])
}

var mimeTop = lazy.NewSet(
	"application", "audio", "font", "image",
	"multipart", "text", "video",
)

// isMIME matches type/subtype media types (application/json, image/*,
// application/vnd.api+json) but not a file under such a directory
// (image/logo.png).
func isMIME(segs []string) bool {
	if len(segs) != 2 || !mimeTop.Has(segs[0]) {
		return false
	}
	sub := segs[1]
	if sub == "*" {
		return true
	}
	if hasKnownExt(sub) && !strings.ContainsRune(sub, '+') {
		return false
	}
	for _, r := range sub {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("!#&^_.+-", r)) {
			return false
		}
	}
	return true
}

// globKind reports whether p is a glob, and false for ok when it is a
// malformed one. A route-parameter segment ([id].tsx, [...slug], [[...all]])
// is a literal file or directory name, not a character class.
func globKind(p string) (glob, ok bool) {
	meta := strings.ContainsAny(p, "*?{")
	if !meta && strings.ContainsRune(p, '[') {
		for _, s := range strings.Split(p, "/") {
			if strings.ContainsRune(s, '[') && !isRouteSeg(s) {
				meta = true
			}
		}
	}
	if !meta {
		return false, true
	}
	return true, doublestar.ValidatePattern(p)
}

// isRouteSeg matches [name], [...name] and [[...name]], optionally followed by
// an extension.
func isRouteSeg(s string) bool {
	open := "["
	if strings.HasPrefix(s, "[[") {
		open = "[["
	}
	if !strings.HasPrefix(s, open) {
		return false
	}
	closer := strings.Repeat("]", len(open))
	i := strings.Index(s, closer)
	if i < 0 {
		return false
	}
	name := strings.TrimPrefix(s[len(open):i], "...")
	if !isIdent(name) || strings.ContainsAny(name, "[]") {
		return false
	}
	rest := s[i+len(closer):]
	return rest == "" || rest[0] == '.' && !strings.ContainsAny(rest, "[]")
}

func lastSegment(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// isFileName reports whether a base name is evidently a file: a known
// extension-less name (Makefile) or a known extension (db.go, .mcp.json).
func isFileName(base string) bool {
	return knownNames.Has(base) || hasKnownExt(base)
}

func hasKnownExt(base string) bool {
	i := strings.LastIndexByte(base, '.')
	if i <= 0 || i == len(base)-1 {
		return false
	}
	return knownExt.Has(strings.ToLower(base[i+1:]))
}

// parseSymbol recognises Func(), Type.Method(), pkg::Func() and
// Class#method(). A call with arguments (TTR::SMA(Close,50)) is code quoted
// from the file, not a reference to a definition, and is not a symbol.
func parseSymbol(s string) (string, bool) {
	if !strings.HasSuffix(s, "()") {
		return "", false
	}
	return symbolChain(s[:len(s)-2])
}

// symbolChain validates identifiers joined by ".", "::" or "#" and returns the
// last one.
func symbolChain(s string) (string, bool) {
	if s == "" {
		return "", false
	}
	s = strings.ReplaceAll(s, "::", ".")
	s = strings.ReplaceAll(s, "#", ".")
	parts := strings.Split(s, ".")
	for _, p := range parts {
		if !isIdent(p) {
			return "", false
		}
	}
	return parts[len(parts)-1], true
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(unicode.IsLetter(r) || r == '_' || i > 0 && unicode.IsDigit(r)) {
			return false
		}
	}
	return true
}
