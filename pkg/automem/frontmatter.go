package automem

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// frontmatter recognises a frontmatter block: line 1 is "---" (after an
// optional BOM, trailing spaces allowed) and a later line is "---". It
// returns the parsed block and the index of the first body line, or nil
// when the file has none.
func (p *parser) frontmatter() (*Frontmatter, int) {
	if len(p.lines) == 0 || !isDelimiter(p.text(0)) {
		return nil, 0
	}
	end := -1
	for j := 1; j < len(p.lines); j++ {
		if isDelimiter(p.text(j)) {
			end = j
			break
		}
	}
	if end < 0 {
		p.warnf("line 1: --- without a closing --- is not frontmatter")
		return nil, 0
	}
	fm := &Frontmatter{
		Start:  p.lines[0].start,
		End:    p.lines[end].end,
		Fields: make(map[string]string),
	}
	y := yamlParser{fields: fm.Fields, p: p}
	for j := 1; j < end; j++ {
		y.line(j, p.text(j))
	}
	y.flush()
	fm.Name = fm.Fields["name"]
	fm.Description = fm.Fields["description"]
	t, ok := fm.Fields["type"]
	if !ok {
		t = fm.Fields["metadata.type"]
	}
	fm.Type = strings.ToLower(strings.TrimSpace(t))
	return fm, end + 1
}

func isDelimiter(s string) bool {
	return strings.HasPrefix(s, "---") && isBlankText(s[3:])
}

// yamlParser is a deliberately small, never-failing reader for the YAML
// subset memory frontmatter uses: "key: value" with plain, 'single' or
// "double" quoted scalars (quoted ones may span lines), "key:" followed by
// an indented nested map or a block list, inline [a, b] lists, and | or >
// block scalars. Anything else is ignored with a warning.
type yamlParser struct {
	fields map[string]string
	p      *parser

	stack []yamlMap // open nested maps, innermost last

	// pending is the last key written with no value: it may own a nested
	// map or a block list on the following lines.
	pending       string
	pendingIndent int
	list          []string

	// block scalar (| or >) being collected
	blockKey    string
	blockIndent int // indentation of the key line
	blockFold   bool
	blockLines  []string

	// multi-line quoted scalar being collected; escaped tells whether the
	// previous line ended inside a backslash escape
	quoteKey string
	quoteBuf []string
	escaped  bool

	// last plain scalar, which more indented lines may continue
	plainKey    string
	plainIndent int
	plainBuf    []string
}

type yamlMap struct {
	indent int
	prefix string
}

func (y *yamlParser) line(n int, s string) {
	if y.quoteKey != "" {
		t := strings.TrimSpace(s)
		y.quoteBuf = append(y.quoteBuf, t)
		// Only a line that closes the quote pays for decoding it all.
		var closed bool
		if closed, y.escaped = closesQuote(t, y.quoteBuf[0][0], y.escaped); closed {
			v, _ := quoted(strings.Join(y.quoteBuf, " "))
			y.fields[y.quoteKey] = v
			y.quoteKey, y.quoteBuf = "", nil
		}
		return
	}
	ind := 0
	for ind < len(s) && (s[ind] == ' ' || s[ind] == '\t') {
		ind++
	}
	t := strings.TrimRight(s[ind:], " \t")
	if y.blockKey != "" {
		if t == "" || ind > y.blockIndent {
			y.blockLines = append(y.blockLines, s)
			return
		}
		y.endBlock()
	}
	if t == "" || t[0] == '#' {
		return
	}
	if t == "-" || strings.HasPrefix(t, "- ") {
		if y.pending != "" && ind >= y.pendingIndent {
			y.list = append(y.list, scalar(strings.TrimSpace(t[1:])))
			return
		}
		y.p.warnf("line %d: frontmatter list item without a key ignored", n+1)
		return
	}
	key, value, ok := splitKey(t)
	if !ok {
		if y.plainKey != "" && ind > y.plainIndent {
			y.plainBuf = append(y.plainBuf, t)
			return
		}
		y.p.warnf("line %d: unparseable frontmatter line ignored", n+1)
		return
	}
	y.flushList()
	y.flushPlain()
	for len(y.stack) > 0 && y.stack[len(y.stack)-1].indent >= ind {
		y.stack = y.stack[:len(y.stack)-1]
	}
	if len(y.stack) > 0 {
		// The enclosing key owns a map, not a scalar.
		delete(y.fields, strings.TrimSuffix(y.stack[len(y.stack)-1].prefix, "."))
	}
	prefix := ""
	if len(y.stack) > 0 {
		prefix = y.stack[len(y.stack)-1].prefix
	}
	full := prefix + key
	switch {
	case value == "":
		y.fields[full] = ""
		y.pending, y.pendingIndent = full, ind
		y.stack = append(y.stack, yamlMap{indent: ind, prefix: full + "."})
	case value[0] == '|' || value[0] == '>':
		if strings.Trim(value[1:], "+-0123456789") == "" || strings.HasPrefix(strings.TrimLeft(value[1:], "+-0123456789"), " #") {
			y.blockKey, y.blockIndent, y.blockFold = full, ind, value[0] == '>'
			return
		}
		y.fields[full] = value
	case value[0] == '"' || value[0] == '\'':
		if v, ok := quoted(value); ok {
			y.fields[full] = v
		} else {
			_, esc := closesQuote(value[1:], value[0], false)
			y.quoteKey, y.quoteBuf, y.escaped = full, []string{value}, esc
		}
	default:
		y.fields[full] = scalar(value)
		y.plainKey, y.plainIndent, y.plainBuf = full, ind, []string{y.fields[full]}
	}
}

// flush ends whatever multi-line construct is still open at the closing
// "---".
func (y *yamlParser) flush() {
	if y.blockKey != "" {
		y.endBlock()
	}
	if y.quoteKey != "" {
		// An unterminated quote: keep the raw text rather than nothing.
		y.fields[y.quoteKey] = strings.Join(y.quoteBuf, " ")
		y.quoteKey, y.quoteBuf = "", nil
	}
	y.flushList()
	y.flushPlain()
}

// flushPlain joins a plain scalar's continuation lines, once.
func (y *yamlParser) flushPlain() {
	if len(y.plainBuf) > 1 {
		y.fields[y.plainKey] = strings.Join(y.plainBuf, " ")
	}
	y.plainKey, y.plainBuf = "", nil
}

func (y *yamlParser) flushList() {
	if y.list != nil {
		y.fields[y.pending] = strings.Join(y.list, ", ")
		y.list = nil
		y.pending = ""
	}
}

// closesQuote reports whether line t closes a quoted scalar opened by q,
// given whether the previous line ended inside an escape, and whether this
// one does.
func closesQuote(t string, q byte, escaped bool) (closed, stillEscaped bool) {
	for i := 0; i < len(t); i++ {
		switch {
		case escaped:
			escaped = false
		case q == '"' && t[i] == '\\':
			escaped = true
		case t[i] == q:
			if q == '\'' && i+1 < len(t) && t[i+1] == '\'' {
				i++
				continue
			}
			return true, false
		}
	}
	return false, escaped
}

func (y *yamlParser) endBlock() {
	lines := y.blockLines
	for len(lines) > 0 && isBlankText(lines[len(lines)-1]) {
		lines = lines[:len(lines)-1]
	}
	strip := -1
	for _, l := range lines {
		if isBlankText(l) {
			continue
		}
		_, off := indentOf(l)
		if strip < 0 || off < strip {
			strip = off
		}
	}
	var b strings.Builder
	for i, l := range lines {
		if len(l) >= strip && strip > 0 {
			l = l[strip:]
		} else if isBlankText(l) {
			l = ""
		}
		if i > 0 {
			if y.blockFold && l != "" && lines[i-1] != "" && !isBlankText(lines[i-1]) {
				b.WriteByte(' ')
			} else {
				b.WriteByte('\n')
			}
		}
		b.WriteString(l)
	}
	y.fields[y.blockKey] = b.String()
	y.blockKey, y.blockLines = "", nil
}

// splitKey splits "key: value" (or "key:" at end of line) and unquotes a
// quoted key. The separator is the first ": " outside a quoted key, so
// values may contain colons.
func splitKey(t string) (key, value string, ok bool) {
	if t[0] == '"' || t[0] == '\'' {
		q := t[0]
		k := 1
		for k < len(t) && t[k] != q {
			if q == '"' && t[k] == '\\' {
				k++
			}
			k++
		}
		if k >= len(t) {
			return "", "", false
		}
		rest := strings.TrimLeft(t[k+1:], " \t")
		if !strings.HasPrefix(rest, ":") {
			return "", "", false
		}
		if v, ok := quoted(t[:k+1]); ok {
			key = v
		}
		return key, strings.TrimSpace(rest[1:]), key != ""
	}
	i := strings.Index(t, ": ")
	if j := strings.Index(t, ":\t"); j >= 0 && (i < 0 || j < i) {
		i = j
	}
	if i < 0 {
		if !strings.HasSuffix(t, ":") {
			return "", "", false
		}
		i = len(t) - 1
	}
	key = strings.TrimSpace(t[:i])
	if key == "" || strings.ContainsAny(key, "[]{}") {
		return "", "", false
	}
	return key, strings.TrimSpace(t[i+1:]), true
}

// scalar interprets a one-line value: quoted, inline list, or plain (a
// " #" starts a comment, "~" and "null" are empty).
func scalar(v string) string {
	if v == "" {
		return ""
	}
	switch v[0] {
	case '"', '\'':
		if s, ok := quoted(v); ok {
			return s
		}
		return v
	case '[':
		if items, ok := inlineList(v); ok {
			return strings.Join(items, ", ")
		}
		return v
	}
	if k := strings.Index(v, " #"); k >= 0 {
		v = strings.TrimSpace(v[:k])
	}
	if v == "~" || v == "null" {
		return ""
	}
	return v
}

// inlineList splits "[a, 'b, c', "d"]" into its unquoted items.
func inlineList(v string) ([]string, bool) {
	var items []string
	start, quote, depth := 1, byte(0), 0
	for i := 1; i < len(v); i++ {
		c := v[i]
		switch {
		case quote != 0:
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '[' || c == '{':
			depth++
		case c == ']' && depth == 0:
			if item := strings.TrimSpace(v[start:i]); item != "" || len(items) > 0 {
				items = append(items, scalar(item))
			}
			return items, true
		case c == ']' || c == '}':
			depth--
		case c == ',' && depth == 0:
			items = append(items, scalar(strings.TrimSpace(v[start:i])))
			start = i + 1
		}
	}
	return nil, false
}

// quoted decodes a single- or double-quoted YAML scalar at the start of v;
// ok is false when the closing quote is missing. Text after the closing
// quote (a comment) is ignored.
func quoted(v string) (string, bool) {
	q := v[0]
	var b strings.Builder
	for i := 1; i < len(v); i++ {
		c := v[i]
		if c == q {
			if q == '\'' && i+1 < len(v) && v[i+1] == '\'' {
				b.WriteByte('\'')
				i++
				continue
			}
			return b.String(), true
		}
		if c != '\\' || q == '\'' || i+1 >= len(v) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := v[i]; e {
		case 'n':
			b.WriteByte('\n')
		case 't', '\t':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '0':
			b.WriteByte(0)
		case 'a':
			b.WriteByte(7)
		case 'b':
			b.WriteByte(8)
		case 'e':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte(0xc)
		case 'v':
			b.WriteByte(0xb)
		case ' ', '"', '/', '\\':
			b.WriteByte(e)
		case 'N':
			b.WriteRune('\u0085')
		case '_':
			b.WriteRune('\u00a0')
		case 'L':
			b.WriteRune('\u2028')
		case 'P':
			b.WriteRune('\u2029')
		case 'x', 'u', 'U':
			n := 2
			if e == 'u' {
				n = 4
			} else if e == 'U' {
				n = 8
			}
			if i+n < len(v) {
				if r, err := strconv.ParseUint(v[i+1:i+1+n], 16, 32); err == nil && utf8.ValidRune(rune(r)) {
					b.WriteRune(rune(r))
					i += n
					continue
				}
			}
			b.WriteByte('\\')
			b.WriteByte(e)
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return "", false
}
