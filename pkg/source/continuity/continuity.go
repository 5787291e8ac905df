// Package continuity is the source of session continuity's long-term
// records — decisions with their rationale, phase closeouts, checkpoints
// saved to project memory — so that search, get and provenance find them
// ("why did we choose X") like any other memory.
//
// The records live in intermem's store (package continuity); every
// command that changes them rewrites .intermem/continuity.jsonl, one JSON
// record a line, from the store. The file is also the phase state for
// other tools. Only records on the agreed timeline are written: what a
// backtrack invalidated or archived is never recalled, so it is not in the
// file (intermem decisions --all and checkpoints --all list it).
//
//	{"kind":"decision","id":"d…","text":"…","why":"…","phase":1,"time":"…"}
//	{"kind":"phase","n":1,"name":"…","summary":"…","artifacts":["…"],"issues":["…"],"decisions":["d…"],"started":"…","closed":"…"}
//	{"kind":"checkpoint","id":"cp-…","summary":"…","phase":1,"time":"…","branch":"…","commit":"…"}
//	{"kind":"head","phase":1,"checkpoint":"…"}
//	{"kind":"memory","scope":"phase","phase":1,"type":"insight","title":"…","text":"…","tags":["…"],"files":["…"],"time":"…"}
//
// A memory of scope phase (intermem write --scope phase) holds while its
// phase is on the agreed timeline; its id is MemoryID of its scope,
// phase, type, title and text.
//
// The file is intermem's own but read back as hostile, like every source
// file: a line that is not a well-formed record is a problem and the rest
// is read; ids are recomputed from the record's kind and key; the catalog
// redacts and screens every entry.
package continuity

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/intermem/intermem/pkg/source"
)

// Name is the source's name.
const Name = "continuity"

// Path is the file's path relative to the project root.
const Path = ".intermem/continuity.jsonl"

// FileName is the file's name in the state directory.
const FileName = "continuity.jsonl"

// MaxText bounds a text read back.
const MaxText = 8 << 10

// Record is one line of the file.
type Record struct {
	Kind       string    `json:"kind"`
	ID         string    `json:"id,omitempty"`
	N          *int      `json:"n,omitempty"`
	Name       string    `json:"name,omitempty"`
	Text       string    `json:"text,omitempty"`
	Why        string    `json:"why,omitempty"`
	Summary    string    `json:"summary,omitempty"`
	Artifacts  []string  `json:"artifacts,omitempty"`
	Issues     []string  `json:"issues,omitempty"`
	Decisions  []string  `json:"decisions,omitempty"`
	Phase      *int      `json:"phase,omitempty"`
	Checkpoint string    `json:"checkpoint,omitempty"`
	Time       time.Time `json:"time,omitzero"`
	Started    time.Time `json:"started,omitzero"`
	Closed     time.Time `json:"closed,omitzero"`
	// Memories (kind "memory"): their scope, type, title, tags, files.
	Scope string   `json:"scope,omitempty"`
	Type  string   `json:"type,omitempty"`
	Title string   `json:"title,omitempty"`
	Tags  []string `json:"tags,omitempty"`
	Files []string `json:"files,omitempty"`
	// Checkpoints (kind "checkpoint"): the git branch and HEAD commit it
	// was taken on, so a session on that branch resumes from it after the
	// store is rebuilt from this file.
	Branch string `json:"branch,omitempty"`
	Commit string `json:"commit,omitempty"`
}

// MaxListed bounds the tags or files a memory record keeps when read back.
const MaxListed = 32

// MemoryID is the id of a scoped memory (package continuity stores them):
// the continuity source's id keyed by the scope, the phase ("-" for
// none), the session (scope session only), the type, the title and the
// text, so the same memory written twice in one place is one memory, and
// the id intermem write prints is the one search and get show.
func MemoryID(scope string, phase *int, session, typ, title, text string) string {
	ph := "-"
	if phase != nil {
		ph = strconv.Itoa(*phase)
	}
	return source.ID(Name, "memory\x00"+scope+"\x00"+ph+"\x00"+session+"\x00"+typ+"\x00"+title+"\x00"+text)
}

// Source reads .intermem/continuity.jsonl.
type Source struct{}

// Name returns "continuity".
func (Source) Name() string { return Name }

// Patterns returns the file's path.
func (Source) Patterns() []string { return []string{Path} }

// Parse returns one entry per decision, closed phase and saved checkpoint.
func (Source) Parse(p string, content []byte) ([]source.Entry, []source.Problem) {
	var out []source.Entry
	var probs []source.Problem
	bad := 0
	firstBad := 0
	for i, line := range bytes.Split(content, []byte("\n")) {
		n := i + 1
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var r Record
		if err := json.Unmarshal(line, &r); err != nil {
			if bad == 0 {
				firstBad = n
			}
			bad++
			continue
		}
		e, ok := entry(p, n, &r)
		if !ok {
			continue
		}
		out = append(out, e)
	}
	if bad > 0 {
		probs = append(probs, source.Problem{Path: p, Line: firstBad, Message: fmt.Sprintf("%d %s not a JSON record; skipped", bad, plural(bad, "line is", "lines are"))})
	}
	return out, probs
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// clip trims s and cuts it to MaxText bytes, redacted first when it must be
// cut (source.Cut): a secret cut in half would escape the catalog's
// redaction.
func clip(s string) string {
	return source.Cut(strings.TrimSpace(s), MaxText)
}

func phaseTag(ph *int) []string {
	if ph == nil {
		return nil
	}
	return []string{"phase-" + strconv.Itoa(*ph)}
}

// entry turns a record into an entry; ok is false for a record that
// makes none (the head, an open phase, an incomplete record).
func entry(p string, line int, r *Record) (source.Entry, bool) {
	e := source.Entry{Source: Name, Path: p, Line: line, EndLine: line, Kind: source.Fact, Fields: map[string]string{"type": r.Kind}}
	if r.Phase != nil {
		e.Fields["phase"] = strconv.Itoa(*r.Phase)
	}
	switch r.Kind {
	case "decision":
		text, why := clip(r.Text), clip(r.Why)
		if text == "" || r.ID == "" {
			return e, false
		}
		e.ID = source.ID(Name, "decision\x00"+r.ID)
		e.Title = firstLine(text)
		e.Text = text + "\nWhy: " + why
		e.Fields["why"] = why
		e.Tags = append([]string{"decision"}, phaseTag(r.Phase)...)
		e.Created = r.Time
	case "phase":
		if r.N == nil || r.Closed.IsZero() || clip(r.Summary) == "" {
			return e, false
		}
		e.ID = source.ID(Name, "phase\x00"+strconv.Itoa(*r.N)+"\x00"+r.Closed.UTC().Format(time.RFC3339))
		e.Title = "Phase " + strconv.Itoa(*r.N) + " closeout"
		if name := clip(r.Name); name != "" {
			e.Title += ": " + firstLine(name)
		}
		var b strings.Builder
		b.WriteString(clip(r.Summary))
		if len(r.Artifacts) > 0 {
			b.WriteString("\nArtifacts: " + clip(strings.Join(r.Artifacts, ", ")))
			e.Citations = append(e.Citations, r.Artifacts...)
		}
		for _, is := range r.Issues {
			b.WriteString("\nIssue: " + clip(is))
		}
		e.Text = b.String()
		e.Fields["phase"] = strconv.Itoa(*r.N)
		e.Tags = []string{"phase-closeout", "phase-" + strconv.Itoa(*r.N)}
		e.Created, e.Updated = r.Started, r.Closed
	case "checkpoint":
		summary := clip(r.Summary)
		if summary == "" || r.ID == "" {
			return e, false
		}
		e.ID = source.ID(Name, "checkpoint\x00"+r.ID)
		e.Title = "Checkpoint: " + firstLine(summary)
		e.Text = summary
		e.Tags = append([]string{"checkpoint"}, phaseTag(r.Phase)...)
		e.Created = r.Time
	case "memory":
		text, title := clip(r.Text), clip(firstLine(r.Title))
		if text == "" || title == "" || r.Scope != "phase" || r.Phase == nil || *r.Phase < 0 {
			return e, false
		}
		e.ID = MemoryID(r.Scope, r.Phase, "", r.Type, r.Title, r.Text)
		e.Title, e.Text = title, text
		e.Fields["type"] = "memory"
		e.Fields["scope"] = r.Scope
		if typ := clip(firstLine(r.Type)); typ != "" {
			e.Fields["memory_type"] = typ
		}
		e.Tags = append(capList(r.Tags), phaseTag(r.Phase)...)
		e.Citations = capList(r.Files)
		e.Created = r.Time
	default:
		return e, false
	}
	e.Title = source.Cut(e.Title, 120)
	return e, true
}

// capList keeps at most MaxListed non-empty items, each clipped to a line.
func capList(in []string) []string {
	var out []string
	for _, s := range in {
		if s = clip(firstLine(s)); s != "" && len(out) < MaxListed {
			out = append(out, s)
		}
	}
	return out
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}
