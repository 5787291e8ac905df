package redact

import (
	"encoding/base64"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	lazyset "github.com/intermem/intermem/pkg/lazy"
)

// labelAnchors are the keyword stems of a key-like label ("…password",
// "…_token", "API key", "비밀번호"): the keyword scan finds them, and
// classifyLabel decides whether the whole label really names a secret.
var labelAnchors = []string{
	"pass", "pwd", "secret", "token", "key", "cred", "senha", "contrase", "passwort", "kennwort",
	"wachtwoord", "ароль", "비밀번호", "암호", "토큰", "密码", "密碼", "口令", "密钥", "密鑰", "令牌",
	"パスワード", "トークン",
}

func isLabelRune(r rune) bool {
	return r == '_' || r == '.' || r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

// scanMemo remembers the last run and quote searches of one Find call, so that values
// holding many labels ("token:token:token:…") are scanned once, not once per label.
type scanMemo struct {
	runFrom, runTo int // s[runFrom:runTo] holds no value delimiter; s[runTo] is one (or the end)
	// PEM: the first END at or after any offset in [pemFrom, pemAt] is pemFound (-1: none
	// within reach); the last BEGIN before beginFor is begin.
	pemFrom, pemAt, pemFound int
	pemValid                 bool
	beginFor, begin          int
	beginValid               bool
	quote                    [3]struct {
		from, at int // s[from:at] holds no closing quote; s[at] is the quote, a newline, or the limit
	}
}

const (
	maxQuoted   = 512 // longest quoted value after a label
	maxLabelled = 512 // longest unquoted value after a label
)

// labelAt is the hit matcher for key-like labels: the anchor occurrence s[hs:he] lies in
// the label's last word. It parses
//
//	[previous-word ]word[**|__|*]["'`][**|__] sep [**|__] value
//
// with sep one of ":", "=", ":=", "=>", "：" (or blanks after a "--flag"), and value quoted
// or a run of non-blank bytes without quotes or angle brackets.
func labelAt(memo *scanMemo, s string, hs, he int) (Finding, bool) {
	mode := separated
	ws := hs
	for ws > 0 && hs-ws <= 96 {
		r, n := utf8.DecodeLastRuneInString(s[:ws])
		if !isLabelRune(r) {
			break
		}
		ws -= n
	}
	we := he
	for we < len(s) && we-he <= 96 {
		r, n := utf8.DecodeRuneInString(s[we:])
		if !isLabelRune(r) {
			break
		}
		we += n
	}
	i := skipEmphasis(s, we, true)
	if i < len(s) && (s[i] == '"' || s[i] == '\'' || s[i] == '`') {
		i++
	}
	i = skipEmphasis(s, i, false)
	afterLabel := i
	for i < len(s) && isBlank(s[i]) {
		i++
	}
	switch {
	case strings.HasPrefix(s[i:], ":=") || strings.HasPrefix(s[i:], "=>"):
		i += 2
	case i < len(s) && (s[i] == ':' || s[i] == '='):
		i++
	case strings.HasPrefix(s[i:], "："):
		i += len("：")
	default:
		// "--token VALUE": a flag followed by blanks and a value that is not another flag.
		flag := s[ws] == '-' && (ws == 0 || isBlank(s[ws-1])) && i > afterLabel
		switch {
		case flag && i < len(s) && s[i] != '-':
		case !flag && i > afterLabel && i < len(s):
			// Prose: "password is X", "the token for CI was `X`", "password `X`",
			// "Secret access key X".
			if mode, i = proseValue(s, i); mode == noValue {
				return Finding{}, false
			}
		default:
			return Finding{}, false
		}
	}
	for i < len(s) && isBlank(s[i]) {
		i++
	}
	i = skipEmphasis(s, i, false)
	for i < len(s) && isBlank(s[i]) {
		i++
	}
	vs := i
	if vs >= len(s) {
		return Finding{}, false
	}
	// The value first: it is cheap to reject, and most anchors in prose ("token
	// refresh", "key insight") have none. The label's words are split only then.
	if mode != separated && !proseLabel(s[ws:we]) {
		return Finding{}, false
	}
	var ve int
	switch q := s[vs]; q {
	case '"', '\'', '`':
		if mode == bare {
			return Finding{}, false
		}
		c := memo.closingQuote(s, vs+1, q)
		if c < 0 {
			return Finding{}, false
		}
		ve = c + 1
	default:
		ve = memo.runEnd(s, vs)
		if ve-vs > maxLabelled || mode == bare && ve-vs < 16 {
			return Finding{}, false // long tokens have their own rules
		}
	}
	query := ws > 0 && (s[ws-1] == '?' || s[ws-1] == '&')
	start, end, ok := valueSpan(s, vs, ve, query)
	if !ok || !plausible(s[start:end]) {
		return Finding{}, false
	}
	switch v := s[start:end]; {
	case mode == bare && !strong(v):
		return Finding{}, false
	case mode == connected && !strong(v) && (classes(v) < 2 || strings.IndexAny(v, "0123456789") < 0):
		// "is" and "was" are everywhere in prose: a value they introduce must hold a
		// digit ("the token is encountered." is a sentence, "is Summer2024!" a password).
		return Finding{}, false
	}
	ls := ws
	if ws >= 2 && s[ws-1] == ' ' {
		ps := ws - 1
		for ps > 0 && ws-ps < 64 {
			r, n := utf8.DecodeLastRuneInString(s[:ps])
			if !isLabelRune(r) {
				break
			}
			ps -= n
		}
		if ps < ws-1 {
			ls = ps
		}
	}
	kind, ok := classifyLabel(s[ls:we])
	if !ok {
		return Finding{}, false
	}
	return Finding{kind, start, end}, true
}

// How a label is tied to its value.
const (
	noValue   = iota
	separated // "label: value", "label=value", "--label value"
	connected // prose: "label is value", "label for staging was value", "label `value`"
	bare      // prose: "label value", only for a value with a strong shape
)

// proseValue finds the value of a label written in a sentence, s[i] being the first
// byte after the blanks that follow the label: a quoted value right there, a connective
// ("is", "was", "is now", "is set to", "set to", "changed to", with an optional ":")
// after at most four words that start with for/of/on/in/at ("password for the staging
// DB is"), or a bare value. It returns where the value starts and how it was tied.
func proseValue(s string, i int) (int, int) {
	switch s[i] {
	case '"', '\'', '`':
		return connected, i
	}
	j := i
	if w := proseWord(s, j); prepositions.Has(w) {
		for n := 0; n < 4; n++ {
			w := proseWord(s, j)
			if w == "" || connectiveAt(s, j) > 0 {
				break
			}
			j += len(w)
			for j < len(s) && isBlank(s[j]) {
				j++
			}
		}
	}
	if k := connectiveAt(s, j); k > 0 {
		j += k
		if j < len(s) && s[j] == ':' {
			j++
		}
		for j < len(s) && isBlank(s[j]) {
			j++
		}
		if j < len(s) && j > i {
			return connected, j
		}
		return noValue, i
	}
	if j != i {
		return noValue, i
	}
	return bare, i
}

var prepositions = lazyset.NewSet("for", "of", "on", "in", "at", "to", "from")

// proseWord returns the word (letters, digits, '_', '-', '.') at s[i:], at most 24 bytes.
func proseWord(s string, i int) string {
	j := i
	for j < len(s) && j-i <= 24 && (alnum.has(s[j]) || s[j] == '_' || s[j] == '-' || s[j] == '.') {
		j++
	}
	if j-i > 24 {
		return ""
	}
	return s[i:j]
}

// connectiveAt returns the length of a connective at s[i:] and the blanks after it, or 0.
func connectiveAt(s string, i int) int {
	if i >= len(s) || strings.IndexByte("iwscrIWSCR", s[i]) < 0 {
		return 0 // the usual case: no connective starts here
	}
	for _, c := range connectives {
		if len(s)-i > len(c) && strings.EqualFold(s[i:i+len(c)], c) {
			if e := i + len(c); isBlank(s[e]) || s[e] == ':' {
				return len(c)
			}
		}
	}
	return 0
}

var connectives = []string{"is now", "is set to", "is", "was", "set to", "changed to", "reset to"}

// proseLabel reports whether a label may own a value in a sentence: "pass" is a verb
// ("pass `-count=1`"), and a label inside a longer identifier is code, not prose.
func proseLabel(label string) bool {
	l := strings.TrimLeft(label, "-")
	return !strings.EqualFold(l, "pass") && !strings.EqualFold(l, "passes") && !strings.ContainsAny(label, "_.")
}

// strong reports a value that looks random enough to be a secret without a separator
// tying it to its label: long, mixed, and of high Shannon entropy (a SHA-1 hex digest
// has about 3.9 bits per byte, "Summer2024!" 3.3, 40 bytes of base64 about 5).
func strong(v string) bool {
	if len(v) < 16 {
		return false
	}
	for i := 0; i < len(v); i++ {
		// Token alphabets only: code ("func(*ecdh.PrivateKey", "map[K]V") is not a value.
		if c := v[i]; !tokenish.has(c) && c != '+' && c != '/' && c != '=' && c != '.' && c != '~' {
			return false
		}
	}
	h := entropy(v)
	switch {
	case isHex(v):
		return len(v) >= 32 && h >= 3.0
	case classes(v) >= 3:
		return h >= 3.5
	}
	return len(v) >= 24 && classes(v) >= 2 && h >= 4.0
}

// entropy is the Shannon entropy of v's bytes, in bits per byte.
func entropy(v string) float64 {
	var n [256]int
	for i := 0; i < len(v); i++ {
		n[v[i]]++
	}
	h := 0.0
	for _, c := range n {
		if c > 0 {
			p := float64(c) / float64(len(v))
			h -= p * math.Log2(p)
		}
	}
	return h
}

func isHex(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return v != ""
}

// skipEmphasis skips markdown emphasis ("**", "__", and "*" when single is set) at s[i:].
func skipEmphasis(s string, i int, single bool) int {
	switch {
	case strings.HasPrefix(s[i:], "**") || strings.HasPrefix(s[i:], "__"):
		return i + 2
	case single && i < len(s) && s[i] == '*':
		return i + 1
	}
	return i
}

func isValueDelim(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\v', '\f', '"', '\'', '`', '<', '>':
		return true
	}
	return false
}

// runEnd returns the end of the run of value bytes starting at i.
func (m *scanMemo) runEnd(s string, i int) int {
	if m.runFrom <= i && i < m.runTo {
		return m.runTo
	}
	j := i
	for j < len(s) && !isValueDelim(s[j]) {
		j++
	}
	m.runFrom, m.runTo = i, j
	return j
}

// closingQuote returns the index of the quote q that closes a value starting at i, or -1
// if the line ends (or maxQuoted bytes pass) first. A double quote may be escaped by '\'.
func (m *scanMemo) closingQuote(s string, i int, q byte) int {
	k := 0
	switch q {
	case '\'':
		k = 1
	case '`':
		k = 2
	}
	qm := &m.quote[k]
	if qm.from <= i && i < qm.at && qm.at < len(s) {
		switch s[qm.at] {
		case q:
			return qm.at
		case '\n':
			return -1
		}
	}
	limit := min(len(s), i+maxQuoted)
	j := i
	for j < limit && s[j] != q && s[j] != '\n' {
		if q == '"' && s[j] == '\\' && j+1 < limit && s[j+1] != '\n' {
			j++
		}
		j++
	}
	j = min(j, limit)
	qm.from, qm.at = i, j
	if j < len(s) && s[j] == q {
		return j
	}
	return -1
}

var continuationRe = lazy(`[;&,][A-Za-z_][A-Za-z0-9_ -]*=`)

// valueSpan turns a matched value (possibly quoted) into the span of the secret itself:
// quotes dropped, an unquoted value cut at a following "key=" and stripped of trailing
// punctuation and of a trailing ellipsis (the visible part of a truncated secret is kept
// for redaction).
func valueSpan(s string, start, end int, query bool) (int, int, bool) {
	if start < 0 || end <= start {
		return 0, 0, false
	}
	if strings.Contains(s[start:end], Marker) {
		return 0, 0, false
	}
	switch s[start] {
	case '"', '\'', '`':
		if end-start < 2 || s[end-1] != s[start] {
			return 0, 0, false
		}
		return start + 1, end - 1, end-start > 2
	}
	v := s[start:end]
	// Secrets are ASCII; CJK text or full-width punctuation right after one is prose.
	if !isASCII(v) {
		if i := strings.IndexFunc(v, isCJK); i >= 0 {
			end = start + i
			v = s[start:end]
		}
	}
	if loc := continuationRe.FindStringIndex(v); loc != nil {
		end = start + loc[0]
	}
	if query {
		if i := strings.IndexAny(s[start:end], "&#"); i >= 0 {
			end = start + i
		}
	}
	for {
		n := end
		for end > start && strings.IndexByte(".,;:)]}>*'\"", s[end-1]) >= 0 {
			end--
		}
		if strings.HasSuffix(s[start:end], "…") {
			end -= len("…")
		}
		// Closing quotes and brackets of other scripts: “x”, «x», （x）.
		if r, size := utf8.DecodeLastRuneInString(s[start:end]); r >= utf8.RuneSelf && (unicode.Is(unicode.Pf, r) || unicode.Is(unicode.Pe, r) || unicode.Is(unicode.Po, r)) {
			end -= size
		}
		if n == end {
			break
		}
	}
	return start, end, end > start
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func isCJK(r rune) bool {
	return r >= 0x3000 && r <= 0x303F || r >= 0xFF00 && r <= 0xFFEF ||
		unicode.In(r, unicode.Han, unicode.Hangul, unicode.Hiragana, unicode.Katakana)
}

// labelComponents splits a label into lower-case words: on spaces, '_', '.', '-' and
// camelCase humps ("secretAccessKey" → secret access key, "APIKey" → api key).
func labelComponents(label string) []string {
	var comps []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			comps = append(comps, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(label)
	for i, r := range rs {
		switch {
		case r == ' ' || r == '_' || r == '.' || r == '-' || r == '\t':
			flush()
			continue
		case r < utf8.RuneSelf && unicode.IsUpper(r) && len(cur) > 0:
			prev := cur[len(cur)-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				flush()
			}
		}
		cur = append(cur, r)
	}
	flush()
	return comps
}

var (
	passwordWords = lazyset.NewSet("password", "passwd", "passphrase", "passcode", "pass", "pwd", "credentials",
		"credential", "creds", "senha", "contraseña", "passwort", "kennwort", "wachtwoord", "пароль")
	// Words before "token" that make it a counter or a parser token, not a credential.
	notSecretToken = lazyset.NewSet("page", "next", "continuation", "pagination", "cursor", "sync", "cancel",
		"cancellation", "max", "min", "num", "input", "output", "total", "design", "csrf", "xsrf",
		"lexer", "parser", "eof", "special", "stop", "bos", "eos", "pad", "unk", "mask", "sep",
		"cls", "end", "start", "count", "per", "new", "prompt", "completion", "context")
	tokenPrefixes = []string{"access", "auth", "refresh", "api", "bot", "bearer", "session", "oauth",
		"id", "github", "gh", "slack", "npm", "personal", "deploy", "push", "pat", "app"}
	// Words before "key" that make it a credential (a bare "key:" is usually not).
	keyPrev = lazyset.New(keyPrevs)
	// Last words of a label that name a form of the value before them: SECRET_KEY_BASE
	// (Rails) is a secret key.
	valueSuffix = lazyset.NewSet("base", "value", "val", "b64", "base64", "hex", "raw")
	// Words that, run together with "pass", name a password (PGPASS, DBPASS, SMTPPASS).
	passPrefixes = lazyset.NewSet("pg", "db", "my", "mysql", "sql", "psql", "redis", "mongo", "root", "admin",
		"user", "usr", "smtp", "mail", "imap", "ftp", "sftp", "ldap", "vnc", "wifi", "app", "api",
		"svc", "bot", "keystore", "store", "key", "master", "sys", "login", "auth", "web", "rabbit",
		"mq", "es", "elastic", "kafka", "jenkins", "sudo")
	cjkPassword = []string{"비밀번호", "암호", "密码", "密碼", "口令", "パスワード"}
	cjkToken    = []string{"토큰", "令牌", "トークン"}
	cjkSecret   = []string{"密钥", "密鑰"}
)

// keyPrevs are the words before "key" that make it a credential, with the
// kind each names (built on first use: keyPrev).
func keyPrevs() map[string]string {
	return map[string]string{
		"api": "api-key", "x": "api-key", "access": "api-key", "license": "api-key", "licence": "api-key",
		"account": "api-key", "app": "api-key", "application": "api-key", "client": "api-key",
		"subscription": "api-key", "service": "api-key", "role": "api-key", "admin": "api-key",
		"auth": "api-key", "webhook": "api-key", "deploy": "api-key", "consumer": "api-key",
		"ssh": "api-key", "root": "api-key", "server": "api-key", "sas": "api-key", "dev": "api-key",
		"developer": "api-key", "personal": "api-key", "project": "api-key", "management": "api-key",
		"private": "private-key",
		"secret":  "secret", "encryption": "secret", "signing": "secret", "master": "secret",
		"hmac": "secret", "jwt": "secret", "session": "secret", "shared": "secret", "storage": "secret",
		"decryption": "secret", "cookie": "secret", "crypto": "secret",
	}
}

// classifyLabel reports whether a label names a secret, and which kind.
func classifyLabel(label string) (string, bool) {
	comps := labelComponents(label)
	if n := len(comps); n > 1 && valueSuffix.Has(comps[n-1]) {
		comps = comps[:n-1] // SECRET_KEY_BASE, API_TOKEN_VALUE
	}
	if len(comps) == 0 {
		return "", false
	}
	last := comps[len(comps)-1]
	prev := ""
	if len(comps) > 1 {
		prev = comps[len(comps)-2]
	}
	if last[0] >= utf8.RuneSelf {
		for _, w := range cjkPassword {
			if strings.HasSuffix(last, w) {
				return "password", true
			}
		}
		for _, w := range cjkToken {
			if strings.HasSuffix(last, w) {
				return "token", true
			}
		}
		for _, w := range cjkSecret {
			if strings.HasSuffix(last, w) {
				return "secret", true
			}
		}
		if passwordWords.Has(last) {
			return "password", true
		}
		return "", false
	}
	switch {
	case passwordWords.Has(last):
		return "password", true
	case strings.HasSuffix(last, "password") || strings.HasSuffix(last, "passwd"):
		return "password", true
	case strings.HasSuffix(last, "pass") && passPrefixes.Has(strings.TrimSuffix(last, "pass")):
		return "password", true // PGPASS, DBPASS, SMTPPASS (not bypass, compass)
	case last == "secret":
		if prev == "client" {
			return "client-secret", true
		}
		return "secret", true
	case last == "clientsecret":
		return "client-secret", true
	case last == "token":
		if notSecretToken.Has(prev) {
			return "", false
		}
		return "token", true
	case strings.HasSuffix(last, "token"):
		for _, p := range tokenPrefixes {
			if last == p+"token" {
				return "token", true
			}
		}
		return "", false
	case last == "key":
		k, ok := keyPrev.Get()[prev]
		return k, ok
	case strings.HasSuffix(last, "key"):
		k, ok := keyPrev.Get()[strings.TrimSuffix(last, "key")]
		return k, ok
	case strings.HasSuffix(last, "secret"):
		p := strings.TrimSuffix(last, "secret")
		if p == "app" || p == "api" || p == "webhook" || p == "consumer" || p == "jwt" || p == "session" || p == "shared" {
			return "secret", true
		}
	}
	return "", false
}

var (
	envNameRe    = lazy(`^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$`)
	wordsRe      = lazy(`^[A-Za-z]+(?:[-_.][A-Za-z]+)*$`)
	humpRe       = lazy(`^(?:[a-z]+|[A-Z]+|[a-z]*(?:[A-Z][a-z]+)+)$`)
	dottedRe     = lazy(`^[A-Za-z_$][A-Za-z_$]*\d*(?:\.[A-Za-z_$][A-Za-z_$]*\d*)+(?:\(.*\))?$`)
	callRe       = lazy(`^[\w.$:]+\(.*\)$`)
	dateRe       = lazy(`^\d{4}[-/.]\d{1,2}[-/.]\d{1,2}`)
	versionRe    = lazy(`^v?\d+(?:\.\d+)+(?:[-+][\w.]+)?$`)
	numericRe    = lazy(`^[\d.,:_ -]+$`)
	emailRe      = lazy(`^[^@\s]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+$`)
	fileNameRe   = lazy(`(?i)^[\w-]+\.(?:txt|json|pem|key|env|ya?ml|toml|ini|cfg|conf|p12|pfx|crt|cer|der|jks|keystore|gpg|asc|pub|md|sh|py|js|ts|go)$`)
	extensionRe  = lazy(`/[\w.-]*\.[A-Za-z][A-Za-z0-9]{0,5}$`)
	lowerPathRe  = lazy(`^[a-z0-9._-]+(?:/[a-z0-9._-]*)+$`)
	appPassRe    = lazy(`^[a-z]{4}(?: [a-z]{4}){3}$`)
	placeholders = lazyset.NewSet("placeholder", "example", "sample", "dummy", "test", "testing", "changeme",
		"changeit", "secret", "password", "passwd", "token", "apikey", "none", "null", "nil",
		"undefined", "empty", "unset", "notset", "required", "optional", "string", "default",
		"redacted", "hidden", "masked", "removed", "omitted", "todo", "tbd", "fixme", "foobar",
		"secretkey", "mysecret", "mypassword", "yourpassword", "letmein", "qwerty", "qwertyuiop",
		"administrator", "true", "false", "disabled", "enabled", "value", "yourtoken", "yourkey",
		"yourapikey", "yoursecret",
		// Password managers and stores: where a secret is, not what it is.
		"1password", "lastpass", "bitwarden", "keepass", "keepassxc", "dashlane", "keychain",
		"passbolt", "vaultwarden")
)

// plausible is the false-positive policy for a value found only through its label: at least
// 8 bytes, not a placeholder or reference, not a path, URL, e-mail, identifier, date, version
// or number, and shaped like a secret (two character classes, or long random single-case).
func plausible(v string) bool {
	if len(v) < 8 || strings.Contains(v, Marker) || isPlaceholder(v) {
		return false
	}
	var lower, upper, digit, blank, sep, other bool // sep: - _ .
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case 'a' <= c && c <= 'z':
			lower = true
		case 'A' <= c && c <= 'Z':
			upper = true
		case '0' <= c && c <= '9':
			digit = true
		case c == ' ' || c == '\t':
			blank = true
		case c == '-' || c == '_' || c == '.':
			sep = true
		default:
			other = true
		}
	}
	if blank {
		if appPassRe.MatchString(v) {
			return true
		}
		f := strings.Fields(v)
		return len(f) <= 4 && classes(strings.Join(f, "")) >= 3
	}
	if other && (isPathLike(v) || strings.Contains(v, "://") || strings.IndexByte(v, '@') >= 0 && emailRe.MatchString(v)) {
		return false
	}
	if !other && !digit && (lower || upper) {
		// Letters only (and - _ .): words, kebab, snake, dotted and camelCase identifiers
		// are not secrets; one long single-case run of random letters is.
		if sep {
			return false
		}
		if humpRe.MatchString(v) {
			return len(v) >= 16 && (!upper || !lower)
		}
		return true
	}
	if !lower && sep && envNameRe.MatchString(v) {
		return false
	}
	if (sep || other) && (dottedRe.MatchString(strings.TrimLeft(v, "*&")) || callRe.MatchString(v) || fileNameRe.MatchString(v)) {
		return false // also a Go or C type: *ed25519.PrivateKey
	}
	if c := v[0]; '0' <= c && c <= '9' || c == 'v' {
		if dateRe.MatchString(v) || versionRe.MatchString(v) || numericRe.MatchString(v) && !isDigits(v) {
			return false
		}
	}
	return true
}

func isDigits(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return v != ""
}

// isPlaceholder reports values that stand for a secret without being one: templates and
// references (${X}, $X, %X%, {{x}}, <your-key>, process.env.X, op://…), masks (xxxx, ****,
// sk-...abcd), and filler words (changeme, your_key_here, none, required).
func isPlaceholder(v string) bool {
	lv := strings.ToLower(v)
	for _, p := range []string{"${", "$(", "{{", "}}", "<", ">", "process.env", "os.environ", "getenv",
		"import.meta", "secrets.", "env(", "env[", "keychain", "op://", "vault:", "ssm:", "arn:aws:",
		"xxxx", "****", "•••", "...", "…", "redacted", "changeme", "change_me", "change-me", "placeholder"} {
		if strings.Contains(lv, p) {
			return true
		}
	}
	if strings.HasPrefix(lv, "$") || strings.HasPrefix(lv, "%") && strings.HasSuffix(lv, "%") {
		return true
	}
	for _, p := range []string{"your", "insert", "replace", "paste", "enter_", "enter-", "put_", "put-", "example", "sample", "dummy"} {
		if strings.HasPrefix(lv, p) {
			return true
		}
	}
	if n := len(lv); n >= 2 && (lv[0] == '[' && lv[n-1] == ']' || lv[0] == '{' && lv[n-1] == '}' || lv[0] == '(' && lv[n-1] == ')') {
		return true
	}
	var core []byte
	seen := map[byte]bool{}
	for i := 0; i < len(lv); i++ {
		if c := lv[i]; 'a' <= c && c <= 'z' || '0' <= c && c <= '9' {
			core = append(core, c)
			seen[c] = true
		}
	}
	if len(seen) <= 2 {
		return true
	}
	cs := string(core)
	return placeholders.Has(cs) || strings.HasSuffix(cs, "here")
}

// isPathLike reports file-system paths and file names: "/etc/x", "~/.ssh/id_rsa", "./a",
// "C:\x", "secrets/token.txt", "config/prod", "token.json".
func isPathLike(v string) bool {
	if strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~") || strings.HasPrefix(v, "./") ||
		strings.HasPrefix(v, "../") || strings.HasPrefix(v, `\`) {
		return true
	}
	if len(v) >= 3 && v[1] == ':' && (v[2] == '\\' || v[2] == '/') {
		return true
	}
	if fileNameRe.MatchString(v) {
		return true
	}
	if strings.Contains(v, "/") && !strings.ContainsAny(v, "+=") {
		return lowerPathRe.MatchString(v) || extensionRe.MatchString(v)
	}
	return false
}

// lenientOK is the policy where the context already says "this is a credential" (a URL's
// password, a .netrc password, curl -u, mysql -p): not a placeholder, reference or path, at
// least minLen bytes.
func lenientOK(v string, minLen int) bool {
	if len(v) < minLen || strings.Contains(v, Marker) || isPlaceholder(v) {
		return false
	}
	if strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~") || strings.HasPrefix(v, ".") {
		return false
	}
	return true
}

// lenient returns a check that applies lenientOK (6 bytes) to the value in group.
func lenient(kind string, group int) func(s string, m []int) (Finding, bool) {
	return func(s string, m []int) (Finding, bool) {
		start, end, ok := valueSpan(s, m[2*group], m[2*group+1], false)
		if !ok || !lenientOK(s[start:end], 6) {
			return Finding{}, false
		}
		return Finding{kind, start, end}, true
	}
}

// urlAt is the hit matcher for "://": the password of scheme://user:password@host (any
// scheme), or a token used as the user name (https://<token>@host). The authority ends at
// the first '/', '?', '#', blank, quote or angle bracket; a password may contain '@' (the
// last '@' ends it).
func urlAt(_ *scanMemo, s string, hs, he int) (Finding, bool) {
	i := hs
	for i > 0 && hs-i < 21 && (alnum.has(s[i-1]) || s[i-1] == '+' || s[i-1] == '.' || s[i-1] == '-') {
		i--
	}
	for i < hs && !(s[i]|0x20 >= 'a' && s[i]|0x20 <= 'z') {
		i++
	}
	if i == hs {
		return Finding{}, false
	}
	scheme := strings.ToLower(s[i:hs])
	at := -1
	for j := he; j < len(s) && j-he < 1024; j++ {
		c := s[j]
		if c == '/' || c == '?' || c == '#' || isValueDelim(c) {
			break
		}
		if c == '@' {
			at = j
		}
	}
	if at < 0 || at+1 >= len(s) || !(alnum.has(s[at+1]) || s[at+1] == '[') {
		return Finding{}, false
	}
	user, pass, hasPass := strings.Cut(s[he:at], ":")
	if !hasPass {
		switch scheme {
		case "http", "https", "git", "ssh", "ftp", "ws", "wss":
		default:
			return Finding{}, false
		}
		if len(user) < 20 || classes(user) < 2 || !strings.ContainsAny(user, "0123456789") ||
			strings.ContainsFunc(user, func(r rune) bool { return r > 127 || !tokenish.has(byte(r)) }) || isPlaceholder(user) {
			return Finding{}, false
		}
		return Finding{"url-credentials", he, at}, true
	}
	if user == "" || strings.ContainsAny(user, "[]") || pass == user || !lenientOK(pass, 3) {
		return Finding{}, false
	}
	if isDigits(pass) && len(pass) <= 5 { // host:port, not user:password
		return Finding{}, false
	}
	return Finding{"url-credentials", at - len(pass), at}, true
}

// headerValue accepts the credential of an Authorization header or a Bearer scheme.
func headerValue(kind string) func(s string, m []int) (Finding, bool) {
	return func(s string, m []int) (Finding, bool) {
		start, end, ok := valueSpan(s, m[2], m[3], false)
		if !ok {
			return Finding{}, false
		}
		v := s[start:end]
		if len(v) < 8 || isPlaceholder(v) || envNameRe.MatchString(v) || dottedRe.MatchString(v) {
			return Finding{}, false
		}
		if wordsRe.MatchString(v) && (len(v) < 16 || humpRe.MatchString(v) && strings.ToLower(v) != v) {
			return Finding{}, false
		}
		if classes(v) < 2 && len(v) < 16 {
			return Finding{}, false
		}
		return Finding{kind, start, end}, true
	}
}

// basicAuth accepts "Basic <base64>" when the base64 decodes to user:password.
func basicAuth(s string, m []int) (Finding, bool) {
	v := s[m[2]:m[3]]
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		b, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(v, "="))
	}
	if err != nil || !utf8.Valid(b) {
		return Finding{}, false
	}
	u, p, ok := strings.Cut(string(b), ":")
	if !ok || u == "" || p == "" {
		return Finding{}, false
	}
	for _, r := range string(b) {
		if !unicode.IsPrint(r) {
			return Finding{}, false
		}
	}
	return Finding{"basic-auth", m[2], m[3]}, true
}

// cliUserPass accepts the password of "-u user:password" / "--user user:password".
func cliUserPass(s string, m []int) (Finding, bool) {
	if m[0] > 0 && !isBlank(s[m[0]-1]) {
		return Finding{}, false
	}
	user := s[m[2]:m[3]]
	start, end, ok := valueSpan(s, m[4], m[5], false)
	if !ok {
		return Finding{}, false
	}
	v := s[start:end]
	if v == user || isDigits(v) || !lenientOK(v, 6) {
		return Finding{}, false
	}
	return Finding{"password", start, end}, true
}

var (
	attachedPContext = lazy(`\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump|sshpass)\b`)
	spacedPContext   = lazy(`\b(?:sshpass|(?:docker|podman|nerdctl)\s+login|helm\s+registry\s+login)\b`)
)

// cliDashP accepts the password of "-p'secret'", "-p\"secret\"" or "-psecret" (groups 1 to 3),
// or of "-p secret" (group 4); the rules that use it decide where each form is unambiguous.
func cliDashP(s string, m []int) (Finding, bool) {
	if i := m[0] + strings.Index(s[m[0]:m[1]], "-p"); i > 0 && !isBlank(s[i-1]) && s[i-1] != '\n' {
		return Finding{}, false
	}
	var start, end int
	switch {
	case len(m) > 3 && m[2] >= 0:
		start, end = m[2], m[3]
	case len(m) > 5 && m[4] >= 0:
		start, end = m[4], m[5]
	case len(m) > 7 && m[6] >= 0:
		start, end = m[6], m[7]
	case len(m) > 9 && m[8] >= 0:
		var ok bool
		if start, end, ok = valueSpan(s, m[8], m[9], false); !ok {
			return Finding{}, false
		}
	default:
		return Finding{}, false
	}
	if !lenientOK(s[start:end], 4) || strings.HasPrefix(s[start:end], "-") {
		return Finding{}, false
	}
	return Finding{"password", start, end}, true
}
