// Package archive keeps the facts intermem retires, in
// docs/intermem/.archived.md, so that nothing promoted is ever deleted: a
// fact that stopped holding is moved there whole (however many lines),
// with its id, the reason, the date and where it was, and can be put back
// (intermem restore ID, or automatically when auto-memory records it
// again). Claude Code never loads the archive.
//
// Format: a title, a paragraph, then one section per fact:
//
//	## 1a2b3c4d5e6f7a8b
//
//	- archived: 2026-11-25T10:00:00Z
//	- from: AGENTS.md § Architecture
//	- reason: cites internal/render/pdf.go, which no longer exists
//
//	~~~~ markdown
//	- Invoices render to PDF via `internal/render/pdf.go`.
//	~~~~
//
// The fact itself sits in a tilde fence longer than any tilde run inside
// it, so it is kept verbatim and no parser takes it for a live entry (it
// carries no marker while archived). Add and Remove are idempotent by id.
package archive

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/intermem/intermem/pkg/confine"
	"github.com/intermem/intermem/pkg/lazyre"
)

// Record is one archived fact.
type Record struct {
	ID      string    `json:"id"`
	At      time.Time `json:"archived_at"`
	From    string    `json:"from"`    // document relative to the root
	Section string    `json:"section"` // section it was under
	Reason  string    `json:"reason"`
	Block   string    `json:"text"` // the fact's markdown, without marker
	Line    int       `json:"line"` // line of its heading in the archive
	start   int
	end     int
}

// ErrOrigin is returned when an archived record's "from:" names no
// document a fact can be restored into.
var ErrOrigin = errors.New("names no document intermem restores into")

// CheckOrigin validates the document a record came from (its "from:"
// line, relative to the root): one of confine.TargetNames, or
// docs/intermem/<name>.md with a plain name (no directory, not hidden).
// Anything else — "docs/intermem/../../../home/u/.bashrc", an absolute
// path, README.md — is refused with an error naming the record, its line
// and the origin it gave.
func (r Record) CheckOrigin() error {
	if validOrigin(r.From) {
		return nil
	}
	return fmt.Errorf("archived fact %s (line %d of %s/.archived.md) came from %q, which %w: only %s or %s/*.md",
		r.ID, r.Line, confine.DetailDir, r.From, ErrOrigin, strings.Join(confine.TargetNames, ", "), confine.DetailDir)
}

func validOrigin(from string) bool {
	for _, t := range confine.TargetNames {
		if from == t {
			return true
		}
	}
	name, ok := strings.CutPrefix(from, confine.DetailDir+"/")
	if !ok || !strings.HasSuffix(name, ".md") || len(name) <= len(".md") || strings.HasPrefix(name, ".") {
		return false
	}
	for _, c := range name {
		if c == '/' || c == '\\' || c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}

// Header is the start of a new archive file.
const Header = "# Archived facts\n\nintermem moved these promoted facts out of the documents Claude Code loads because they\nstopped holding. Claude Code does not load this file. `intermem restore <id>` puts one back.\n"

// headingRE compiles on first use: the hooks link this package (through
// ops) and never parse an archive.
var headingRE = lazyre.New(`^## ([0-9a-f]{8,64})\s*$`)

// Parse reads an archive.
func Parse(content []byte) []Record {
	lines := splitLines(content)
	var out []Record
	off := 0
	var cur *Record
	var fence string
	var body []string
	flush := func(end int) {
		if cur != nil {
			cur.end = end
			cur.Block = strings.Join(body, "\n")
			out = append(out, *cur)
		}
		cur, body, fence = nil, nil, ""
	}
	for i, raw := range lines {
		line := strings.TrimRight(raw, "\r\n")
		switch {
		case fence != "" && strings.TrimSpace(line) == fence:
			fence = "-" // closed: later lines are not part of the block
		case fence != "" && fence != "-":
			body = append(body, line)
		case headingRE.Get().MatchString(line):
			flush(off)
			cur = &Record{ID: headingRE.Get().FindStringSubmatch(line)[1], Line: i + 1, start: off}
		case cur != nil && fence == "" && strings.HasPrefix(line, "~~~~"):
			fence = strings.Fields(line)[0]
		case cur != nil && strings.HasPrefix(line, "- archived: "):
			cur.At, _ = time.Parse(time.RFC3339, strings.TrimPrefix(line, "- archived: "))
		case cur != nil && strings.HasPrefix(line, "- from: "):
			from := strings.TrimPrefix(line, "- from: ")
			cur.From, cur.Section, _ = strings.Cut(from, " § ")
		case cur != nil && strings.HasPrefix(line, "- reason: "):
			cur.Reason = strings.TrimPrefix(line, "- reason: ")
		}
		off += len(raw)
	}
	flush(off)
	return out
}

func splitLines(b []byte) []string {
	var out []string
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			out = append(out, string(b))
			break
		}
		out = append(out, string(b[:i+1]))
		b = b[i+1:]
	}
	return out
}

// Find returns the record with id.
func Find(content []byte, id string) (Record, bool) {
	for _, r := range Parse(content) {
		if r.ID == id {
			return r, true
		}
	}
	return Record{}, false
}

// Render renders one record as its archive section.
func Render(r Record) string {
	fence := "~~~~"
	for strings.Contains(r.Block, fence) {
		fence += "~"
	}
	from := r.From
	if r.Section != "" {
		from += " § " + r.Section
	}
	reason := strings.Join(strings.Fields(r.Reason), " ")
	return fmt.Sprintf("## %s\n\n- archived: %s\n- from: %s\n- reason: %s\n\n%s markdown\n%s\n%s\n",
		r.ID, r.At.UTC().Format(time.RFC3339), from, reason, fence, strings.TrimRight(r.Block, "\n"), fence)
}

// Add appends r to the archive content (creating it from Header when
// empty). A record with the same id is left as it is.
func Add(content []byte, r Record) []byte {
	if _, ok := Find(content, r.ID); ok {
		return content
	}
	out := append([]byte{}, content...)
	if len(bytes.TrimSpace(out)) == 0 {
		out = []byte(Header)
	}
	if !bytes.HasSuffix(out, []byte("\n")) {
		out = append(out, '\n')
	}
	out = append(out, '\n')
	return append(out, Render(r)...)
}

// Remove deletes the record with id (and the blank line before it).
func Remove(content []byte, id string) []byte {
	r, ok := Find(content, id)
	if !ok {
		return content
	}
	start := r.start
	if start >= 1 && content[start-1] == '\n' && start >= 2 && content[start-2] == '\n' {
		start-- // the blank line that separated it
	}
	out := append([]byte{}, content[:start]...)
	return append(out, content[r.end:]...)
}
