// Package clavain reads clavain learnings: .clavain/learnings/*.md and the
// older config/flux-drive/knowledge/*.md, one learning per file.
//
// A learning is a short claim about the code that review agents keep
// re-confirming:
//
//	---
//	lastConfirmed: 2026-02-10
//	provenance: independent
//	---
//	Auth middleware swallows context cancellation errors.
//
//	Evidence: middleware/auth.go:47-52, handleRequest()
//	Verify: grep for ctx.Err() after http.Do() calls in middleware/*.go.
//
// Mapping: Confirmed is lastConfirmed (a YAML date, quoted or not, or a
// timestamp); Created is date, created or firstSeen when present. Title is
// the first "#" heading, else the body's first line that is not an
// Evidence or Verify line. Each Evidence line ("Evidence:", "**Evidence:**",
// "- Evidence:", any case) is split at commas and semicolons into
// Citations, as written without backticks; the paths and symbols
// cite.ExtractDoc finds in the rest of the body follow (Verify lines are
// instructions, not citations), a link relative to the learning resolved
// against its directory and one leaving the project a Problem. Verify lines become the "verify" field
// (joined with "; "), provenance and every other frontmatter key are Fields.
// A lastConfirmed that is not a date is a Problem. Learnings are committed
// markdown the review agents curate, so they are not promotable.
//
// The id is keyed by the file's path (see package source): re-confirming a
// learning, which rewrites lastConfirmed, keeps its id and its history.
package clavain

import (
	"strconv"
	"strings"

	"github.com/intermem/intermem/pkg/cite"
	"github.com/intermem/intermem/pkg/lazyre"
	"github.com/intermem/intermem/pkg/redact"
	"github.com/intermem/intermem/pkg/source"
)

// Name is the source's name.
const Name = "clavain"

// Source reads clavain learnings.
type Source struct{}

// Name returns "clavain".
func (Source) Name() string { return Name }

// Patterns returns where learnings live, current and older layout.
func (Source) Patterns() []string {
	return []string{".clavain/learnings/*.md", "config/flux-drive/knowledge/*.md"}
}

// labelLine matches an "Evidence:" or "Verify:" line, with optional list
// mark and bold. It is compiled on first use: the hooks link this package.
var labelLine = lazyre.New(`(?i)^(?:[-*+]\s+)?(?:\*\*|__)?(evidence|verify)(?:\*\*|__)?\s*:\s*(?:\*\*|__)?\s*(.*)$`)

// Parse returns the file's learning; see the package comment.
func (Source) Parse(p string, content []byte) ([]source.Entry, []source.Problem) {
	d, problem := source.SplitDoc(content)
	var probs []source.Problem
	if problem != "" {
		probs = append(probs, source.Problem{Path: p, Line: 1, Message: problem})
	}
	body := strings.TrimSpace(d.Body)
	if body == "" {
		return nil, probs
	}
	e := source.Entry{
		ID:      source.ID(Name, p),
		Source:  Name,
		Kind:    source.Learning,
		Path:    p,
		Line:    1,
		EndLine: max(d.Lines, 1),
		Text:    body,
	}
	fm := &d.Front
	if v, ok := fm.Get("lastConfirmed"); ok {
		if e.Confirmed = v.Time(); e.Confirmed.IsZero() && strings.TrimSpace(v.Scalar) != "" {
			probs = append(probs, source.Problem{Path: p, Line: 1, Message: "lastConfirmed " + quote(v.Scalar) + " is not a date"})
		}
	}
	for _, k := range []string{"date", "created", "firstSeen"} {
		if v, ok := fm.Get(k); ok && e.Created.IsZero() {
			e.Created = v.Time()
		}
	}
	if v, ok := fm.Get("tags"); ok {
		e.Tags = source.Dedup(v.Strings())
	}
	for _, k := range fm.Keys {
		switch k {
		case "lastConfirmed", "tags":
			continue
		}
		v, _ := fm.Get(k)
		source.SetField(&e, k, v.Scalar)
	}
	var verify, prose []string
	for _, h := range source.Headings(d.Body, d.BodyLine) {
		if h.Level == 1 {
			e.Title = oneLine(h.Text)
			break
		}
	}
	for _, line := range strings.Split(body, "\n") {
		line = strings.TrimSpace(line)
		if m := labelLine.Get().FindStringSubmatch(line); m != nil {
			rest := strings.TrimSpace(strings.Trim(strings.TrimSpace(m[2]), "*_"))
			if strings.EqualFold(m[1], "evidence") {
				for _, c := range strings.FieldsFunc(rest, func(r rune) bool { return r == ',' || r == ';' }) {
					if c = strings.Trim(strings.TrimSpace(c), "`"); c != "" {
						e.Citations = append(e.Citations, c)
					}
				}
			} else if rest != "" {
				verify = append(verify, rest)
			}
			continue
		}
		prose = append(prose, line)
		if e.Title == "" && line != "" && !strings.HasPrefix(line, "```") {
			e.Title = oneLine(strings.TrimLeft(line, "#-*+> "))
		}
	}
	if len(verify) > 0 {
		source.SetField(&e, "verify", strings.Join(verify, "; "))
	}
	cs, escaped := cite.ExtractDoc(strings.Join(prose, "\n"), p)
	for _, c := range cs {
		e.Citations = append(e.Citations, c.Text)
	}
	e.Citations = source.Dedup(e.Citations)
	probs = append(probs, source.EscapedLinks(p, escaped)...)
	return []source.Entry{e}, probs
}

// quote shows a value in a problem message: redacted whole, since problems
// are shown as they are (the catalog redacts entries, not problems).
func quote(s string) string { return strconv.Quote(source.Clip(redact.String(s), 40)) }

func oneLine(s string) string { return source.OneLine(s, 300) }
