// Package compound reads compound-engineering solution documents,
// docs/solutions/**/*.md: one entry per document, with its "##" sections
// addressable (Problem, Root Cause, Solution, Prevention, …).
//
// A document is YAML frontmatter, then a "# Title" and its sections. The
// frontmatter has several schemas in the wild, all read by the same lenient
// pass (see source.SplitDoc):
//
//   - module, date (an unquoted YAML date), problem_type, component,
//     symptoms (a block list of quoted or plain strings), root_cause,
//     resolution_type, severity, tags (an inline list), and sometimes
//     framework_version or synthesized_into;
//   - title, category, severity, date, tags, related_issues;
//   - synthesized documents with synthesized_from (a list) and no module;
//   - flat YYYY-MM-DD-slug.md files with tags, category, module and symptoms
//     as an inline JSON-style list;
//   - date_discovered instead of date;
//   - no frontmatter at all.
//
// Mapping: Title is the frontmatter title, else the first "#" heading, else
// the file name; Tags and Symptoms are the lists of those keys; Created is
// date, else date_discovered, else created, else the date in the file name
// (2026-02-01-slug.md or slug-20260204.md); Updated is updated or
// last_updated; every other key is a Field (lists joined with ", "). Text is
// the whole body. Citations are the paths and symbols cite.ExtractDoc finds
// in the body: a link relative to the document (./x.md, ../patterns/x.md)
// is resolved against the document's directory, and one that would leave
// the project is a Problem, not a citation. A frontmatter that does not parse leaves the document indexed by
// its body, with one Problem. Solution documents already live in the
// repository, so they are never promotable.
//
// The id is keyed by the document's path (see package source): edits keep it.
// INDEX.md, a generated table of the other documents, is navigation rather
// than knowledge and yields no entry.
package compound

import (
	"path"
	"strings"
	"time"

	"github.com/intermem/intermem/pkg/cite"
	"github.com/intermem/intermem/pkg/lazyre"
	"github.com/intermem/intermem/pkg/source"
)

// Name is the source's name.
const Name = "compound"

// Source reads docs/solutions/**/*.md.
type Source struct{}

// Name returns "compound".
func (Source) Name() string { return Name }

// Patterns returns the solution documents' pattern.
func (Source) Patterns() []string { return []string{"docs/solutions/**/*.md"} }

// Parse returns the document's entry; see the package comment.
func (Source) Parse(p string, content []byte) ([]source.Entry, []source.Problem) {
	if strings.EqualFold(path.Base(p), "INDEX.md") {
		return nil, nil
	}
	d, problem := source.SplitDoc(content)
	var probs []source.Problem
	if problem != "" {
		probs = append(probs, source.Problem{Path: p, Line: 1, Message: problem})
	}
	body := strings.TrimSpace(d.Body)
	if body == "" && len(d.Front.Keys) == 0 {
		return nil, probs
	}
	hs := source.Headings(d.Body, d.BodyLine)
	e := source.Entry{
		ID:       source.ID(Name, p),
		Source:   Name,
		Kind:     source.Solution,
		Path:     p,
		Line:     1,
		EndLine:  max(d.Lines, 1),
		Text:     body,
		Sections: source.Sections(d.Body, hs, 2),
	}
	fm := &d.Front
	if v, ok := fm.Get("title"); ok {
		e.Title = oneLine(v.Scalar)
	}
	if e.Title == "" {
		for _, h := range hs {
			if h.Level == 1 {
				e.Title = oneLine(h.Text)
				break
			}
		}
	}
	if e.Title == "" {
		e.Title = nameTitle(p)
	}
	if v, ok := fm.Get("tags"); ok {
		e.Tags = source.Dedup(v.Strings())
	}
	if v, ok := fm.Get("symptoms"); ok {
		e.Symptoms = source.Dedup(v.Strings())
	}
	for _, k := range []string{"date", "date_discovered", "created"} {
		if v, ok := fm.Get(k); ok && e.Created.IsZero() {
			e.Created = v.Time()
		}
	}
	if e.Created.IsZero() {
		e.Created = nameDate(p)
	}
	for _, k := range []string{"updated", "last_updated"} {
		if v, ok := fm.Get(k); ok && e.Updated.IsZero() {
			e.Updated = v.Time()
		}
	}
	for _, k := range fm.Keys {
		switch k {
		case "title", "tags", "symptoms":
			continue
		}
		v, _ := fm.Get(k)
		source.SetField(&e, k, v.Scalar)
	}
	cs, escaped := cite.ExtractDoc(body, p)
	for _, c := range cs {
		e.Citations = append(e.Citations, c.Text)
	}
	e.Citations = source.Dedup(e.Citations)
	probs = append(probs, source.EscapedLinks(p, escaped)...)
	return []source.Entry{e}, probs
}

// RootCause returns a one-line root cause for a solution entry: the first
// sentence of its "Root Cause" section, else its root_cause field, else "".
func RootCause(e *source.Entry) string {
	if s, ok := e.Section("Root Cause"); ok {
		if line := firstSentence(s.Text); line != "" {
			return line
		}
	}
	return e.Fields["root_cause"]
}

// firstSentence returns the first line of markdown text that says
// something (not fenced code, a heading, table row or an introduction ending in
// ":"), without list numbering or emphasis marks, cut after its first
// sentence and at 200 bytes.
func firstSentence(text string) string {
	inFence := false
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~") {
			inFence = !inFence
			continue
		}
		if inFence || line == "" || strings.HasPrefix(line, "#") ||
			strings.HasPrefix(line, "|") || strings.HasSuffix(line, ":") {
			continue
		}
		line = listMark.Get().ReplaceAllString(line, "")
		line = strings.ReplaceAll(line, "**", "")
		if i := strings.Index(line, ". "); i > 0 {
			line = line[:i+1]
		}
		if line = strings.TrimSpace(line); line != "" {
			return source.Clip(line, 200)
		}
	}
	return ""
}

func oneLine(s string) string { return source.OneLine(s, 300) }

var (
	// Compiled on first use: the hooks link this package and must not pay
	// for patterns at start-up.
	listMark     = lazyre.New(`^(?:[-*+>]\s*|\d+[.)]\s+)+`)
	leadingDate  = lazyre.New(`^(\d{4}-\d{2}-\d{2})-`)
	trailingDate = lazyre.New(`-(\d{4})(\d{2})(\d{2})$`)
)

// nameDate reads the date in a solution file name: 2026-02-01-slug.md or
// slug-20260204.md.
func nameDate(p string) time.Time {
	base := strings.TrimSuffix(path.Base(p), path.Ext(p))
	if m := leadingDate.Get().FindStringSubmatch(base); m != nil {
		return source.ParseDate(m[1])
	}
	if m := trailingDate.Get().FindStringSubmatch(base); m != nil {
		return source.ParseDate(m[1] + "-" + m[2] + "-" + m[3])
	}
	return time.Time{}
}

// nameTitle makes a title from a file name: "loky-cpu-count" from
// 2026-02-01-loky-cpu-count.md, dashes and underscores as spaces.
func nameTitle(p string) string {
	base := strings.TrimSuffix(path.Base(p), path.Ext(p))
	base = leadingDate.Get().ReplaceAllString(base, "")
	base = trailingDate.Get().ReplaceAllString(base, "")
	return strings.Join(strings.FieldsFunc(base, func(r rune) bool { return r == '-' || r == '_' }), " ")
}
