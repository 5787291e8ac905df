package source

import (
	"fmt"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// MaxFrontmatterBytes is the largest frontmatter handed to the YAML parser.
// Real ones are under 2 KB; a larger one is data, not metadata, and YAML
// parsing is where hostile input costs the most.
const MaxFrontmatterBytes = 64 << 10

// maxFrontmatterLines is how far down the closing "---" is looked for.
const maxFrontmatterLines = 1000

// Value is one frontmatter value, reduced to what sources use: a scalar, or
// a list of scalars (block, inline or JSON-style alike).
type Value struct {
	// Scalar is a scalar's text, unquoted; for a list, its items joined
	// with ", ".
	Scalar string
	// List is a list's items, or nil for a scalar.
	List []string
	// IsList says whether the value was a list.
	IsList bool
}

// Strings returns a list's items, or a non-empty scalar split at commas (a
// "tags: a, b" written without brackets is still a list of two).
func (v Value) Strings() []string {
	if v.IsList {
		return v.List
	}
	var out []string
	for _, s := range strings.Split(v.Scalar, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Time parses the value as a date or a date and time: an unquoted YAML
// date, a quoted one, RFC 3339. It returns the zero time when it is none.
func (v Value) Time() time.Time {
	return ParseDate(v.Scalar)
}

// ParseDate parses s as a date ("2026-02-10"), a YAML timestamp or RFC 3339,
// returning the zero time when it is none of them. A date without a time is
// midnight UTC.
func ParseDate(s string) time.Time {
	s = strings.TrimSpace(s)
	if len(s) < 10 || len(s) > 40 {
		return time.Time{}
	}
	for _, layout := range []string{
		time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05Z07:00",
		"2006-01-02 15:04:05", "2006-01-02 15:04:05.999999999 -0700 MST",
		"2006-01-02T15:04:05.999999999Z0700", "2006-01-02",
	} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

// Frontmatter is a document's leading YAML block, flattened: nested mappings
// become dotted keys ("metadata.type").
type Frontmatter struct {
	// Present says whether the document opens with a frontmatter block.
	Present bool
	// Keys are the keys in document order, without duplicates.
	Keys   []string
	values map[string]Value
}

// Get returns the value of key and whether the frontmatter has it.
func (f *Frontmatter) Get(key string) (Value, bool) {
	v, ok := f.values[key]
	return v, ok
}

// Doc is a markdown document split into its frontmatter and body.
type Doc struct {
	Front Frontmatter
	// Body is the content after the frontmatter, with "\r\n" turned into
	// "\n" and a leading byte-order mark dropped.
	Body string
	// BodyLine is the 1-based line of the file that Body starts at.
	BodyLine int
	// Lines is the number of lines of the whole file.
	Lines int
}

// SplitDoc splits content into frontmatter and body. It never fails: a
// frontmatter that is not closed, too large or not YAML leaves Front empty
// (Present still set when it was opened and closed), the body is what
// follows it (or the whole file when it was never closed), and the reason
// is returned as problem.
func SplitDoc(content []byte) (d Doc, problem string) {
	text := normalize(content)
	d.Lines = strings.Count(text, "\n")
	if text != "" && !strings.HasSuffix(text, "\n") {
		d.Lines++
	}
	d.Body, d.BodyLine = text, 1
	first, _, _ := strings.Cut(text, "\n")
	if strings.TrimRight(first, " \t") != "---" {
		return d, ""
	}
	var yamlText string
	closed := false
	pos := len(first) + 1 // start of line 2
	for n := 2; n <= maxFrontmatterLines && pos < len(text); n++ {
		line, next := text[pos:], len(text)
		if end := strings.IndexByte(line, '\n'); end >= 0 {
			line, next = line[:end], pos+end+1
		}
		if t := strings.TrimRight(line, " \t"); t == "---" || t == "..." {
			yamlText = text[len(first)+1 : pos]
			d.Body, d.BodyLine = text[next:], n+1
			closed = true
			break
		}
		pos = next
	}
	if !closed {
		return d, "the frontmatter opened on line 1 is never closed with ---; read as body"
	}
	d.Front.Present = true
	if len(yamlText) > MaxFrontmatterBytes {
		return d, fmt.Sprintf("the frontmatter is over %d KiB; ignored", MaxFrontmatterBytes>>10)
	}
	front, err := parseYAML(yamlText)
	if err != nil {
		return d, fmt.Sprintf("the frontmatter is not valid YAML (%v); indexed by its body only", err)
	}
	front.Present = true
	d.Front = front
	return d, ""
}

// normalize drops a leading byte-order mark and turns "\r\n" into "\n".
func normalize(content []byte) string {
	s := string(content)
	s = strings.TrimPrefix(s, "\ufeff")
	if strings.Contains(s, "\r") {
		s = strings.ReplaceAll(s, "\r\n", "\n")
	}
	return s
}

// parseYAML parses a frontmatter block leniently: the top level must be a
// mapping; scalars, lists and one level of nested mappings are kept; other
// shapes are skipped. Aliases are resolved one level and never expanded
// recursively, so a "billion laughs" block costs its size, not its
// expansion. A panic in the YAML library is an error.
func parseYAML(text string) (f Frontmatter, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("YAML parser failed: %v", r)
		}
	}()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return Frontmatter{}, firstLine(err)
	}
	f.values = map[string]Value{}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return f, nil // empty frontmatter
	}
	top := deref(doc.Content[0])
	if top.Kind == yaml.ScalarNode && top.Tag == "!!null" {
		return f, nil
	}
	if top.Kind != yaml.MappingNode {
		return Frontmatter{}, fmt.Errorf("not a mapping of keys to values")
	}
	f.addMapping("", top, 0)
	return f, nil
}

func (f *Frontmatter) addMapping(prefix string, m *yaml.Node, depth int) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := deref(m.Content[i]), deref(m.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			continue
		}
		key := prefix + k.Value
		switch v.Kind {
		case yaml.ScalarNode:
			f.set(key, Value{Scalar: scalar(v)})
		case yaml.SequenceNode:
			var items []string
			for _, it := range v.Content {
				if s, ok := item(deref(it)); ok {
					items = append(items, s)
				}
			}
			f.set(key, Value{Scalar: strings.Join(items, ", "), List: items, IsList: true})
		case yaml.MappingNode:
			if depth == 0 {
				f.addMapping(key+".", v, depth+1)
			}
		}
	}
}

func (f *Frontmatter) set(key string, v Value) {
	if _, dup := f.values[key]; dup {
		return // the first of duplicate keys wins
	}
	f.Keys = append(f.Keys, key)
	f.values[key] = v
}

// item renders one list item: a scalar, or a one-pair mapping written as a
// plain "- Stop hook error: no such file" that YAML reads as a mapping.
func item(n *yaml.Node) (string, bool) {
	switch n.Kind {
	case yaml.ScalarNode:
		s := strings.TrimSpace(scalar(n))
		return s, s != ""
	case yaml.MappingNode:
		if len(n.Content) == 2 {
			k, v := deref(n.Content[0]), deref(n.Content[1])
			if k.Kind == yaml.ScalarNode && v.Kind == yaml.ScalarNode {
				return strings.TrimSpace(k.Value + ": " + scalar(v)), true
			}
		}
	}
	return "", false
}

// scalar is a scalar node's text; null is "".
func scalar(n *yaml.Node) string {
	if n.Tag == "!!null" {
		return ""
	}
	return n.Value
}

// deref follows one alias.
func deref(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		return n.Alias
	}
	return n
}

func firstLine(err error) error {
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	return fmt.Errorf("%s", msg)
}
