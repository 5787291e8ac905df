// Package docrecord is what a session start needs of an instruction
// document — a file Claude Code loads (CLAUDE.md, AGENTS.md, rules,
// imports) or one intermem curates (docs/intermem/*.md) — derived from its
// bytes alone, and the stored form of it that the catalog keeps beside the
// file's entries (the blob of the instructions and promoted sources'
// file records, store.CatalogTx).
//
// Derive is the one derivation: catalog.Build stores Encode(Derive(b))
// for every document it parses (source.Recorder), and the session start
// (package inject) takes Decode of that record while the file has the
// fingerprint it was stored at, or Derives from the file's bytes itself
// when there is none to use, writing nothing. Either way it reads the
// same.
//
// # Invariants
//
// Every text of a Record that came from the document is redacted and
// clipped (Title, marks' sections and texts); paths that must stay as
// written to be followed (Imports, Indexed) are not, so a record holding
// a secret in one of them is never stored: Encode keeps a mark saying so
// (Decode: ErrNotKept) and the reader derives from the file. Decode reads
// stored bytes as hostile (package wire) and returns ErrOldRecord for a
// record of another version: never a wrong Record.
package docrecord

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/intermem/intermem/pkg/loaded"
	"github.com/intermem/intermem/pkg/match"
	"github.com/intermem/intermem/pkg/mdoc"
	"github.com/intermem/intermem/pkg/redact"
	"github.com/intermem/intermem/pkg/targets"
	"github.com/intermem/intermem/pkg/tier"
	"github.com/intermem/intermem/pkg/wire"
)

// Magic starts every stored record; its last byte is the format's
// version. Change it whenever Derive or the form changes: every stored
// record is then of another version, and the catalog stores new ones.
const Magic = "IMDR\x01"

// Bounds of what is kept.
const (
	// KeepMark bounds a title, section or marked text: enough for every
	// clip a session start makes.
	KeepMark = 300
	// MaxIndexed bounds the detail documents a managed index is read for.
	MaxIndexed = 64
)

// ErrOldRecord is returned by Decode for bytes of another format or
// version: the document is derived from its bytes again.
var ErrOldRecord = errors.New("docrecord: stored record of another version")

// ErrNotKept is returned by Decode for the mark Encode stores in place of
// a record holding a secret in a path.
var ErrNotKept = errors.New("docrecord: record not kept (a path holds a secret)")

// Record is what a session start needs of one document.
type Record struct {
	// HasPaths: frontmatter with a "paths:" key (a rule loaded only on
	// demand).
	HasPaths bool
	// TopicIdx: the document holds intermem's managed index of detail
	// documents; Indexed are the detail documents (root-relative, slash
	// separated) it lists.
	TopicIdx bool
	Indexed  []string
	// Title is the first heading, or the first line of text.
	Title string
	// Keys are match.Key of every statement (mdoc.Doc.AllStatements).
	Keys []uint64
	// Marks are intermem's markers, in document order.
	Marks []Mark
	// Imports are the @imports as written (mdoc.Doc.Imports).
	Imports []string
}

// Mark is one marked (promoted) fact: its id, section and text, redacted
// and clipped.
type Mark struct {
	ID, Section, Text string
}

// Derive returns the Record of a document's bytes.
func Derive(content []byte) *Record { return DeriveWith(content, redact.String) }

// DeriveWith is Derive with redactText in place of redact.String, which
// it must equal (a memo of it: a session start that derives a document
// whose texts it redacted before then never builds the redaction engine).
func DeriveWith(content []byte, redactText func(string) string) *Record {
	keep := func(text string, n int) string {
		// Redaction reads more than is kept, so a secret straddling the
		// cut is still recognised.
		if len(text) > 4*n {
			text = text[:4*n]
		}
		return Clip(redactText(text), n)
	}
	d := mdoc.Parse(content)
	r := &Record{HasPaths: loaded.HasPathsKey(content), Title: keep(title(d), KeepMark),
		TopicIdx: bytes.Contains(content, []byte(tier.IndexBegin))}
	if r.TopicIdx {
		r.Indexed = indexedDocs(content)
	}
	for _, s := range d.AllStatements() {
		r.Keys = append(r.Keys, match.Key(s.Text))
	}
	for _, m := range d.Marked() {
		r.Marks = append(r.Marks, Mark{ID: m.ID, Section: keep(m.Section, KeepMark), Text: keep(m.Text, KeepMark)})
	}
	r.Imports = d.Imports()
	return r
}

// Clip keeps at most n bytes of text, at a character boundary.
func Clip(text string, n int) string {
	if len(text) <= n {
		return text
	}
	cut := n
	for cut > 0 && text[cut]&0xC0 == 0x80 {
		cut--
	}
	return text[:cut]
}

// title is a document's first heading, or its first line of text.
func title(d *mdoc.Doc) string {
	for _, s := range d.Sections {
		if s.Level > 0 && s.Title != "" {
			return s.Title
		}
	}
	for _, s := range d.AllStatements() {
		first, _, _ := strings.Cut(s.Text, "\n")
		if t := strings.TrimSpace(first); t != "" {
			return t
		}
	}
	return ""
}

// indexedDocs lists the detail documents named by the managed topic index
// in content: each line of the block ends "→ docs/intermem/<slug>.md".
func indexedDocs(content []byte) []string {
	_, rest, ok := bytes.Cut(content, []byte(tier.IndexBegin))
	if !ok {
		return nil
	}
	block, _, _ := bytes.Cut(rest, []byte(tier.IndexEnd))
	var out []string
	for _, line := range bytes.Split(block, []byte("\n")) {
		_, p, ok := bytes.Cut(line, []byte("→ "))
		if !ok {
			continue
		}
		if p := strings.TrimSpace(string(p)); strings.HasPrefix(p, targets.DetailDir+"/") && len(out) < MaxIndexed {
			out = append(out, p)
		}
	}
	return out
}

// Encode returns the stored form of r, after Magic, in package wire's
// values:
//
//	kept       bool (false: a path holds a secret; nothing follows)
//	haspaths, topicindex   bool
//	indexed    count; each path
//	title      string
//	keys       count; each uvarint
//	marks      count; each id, section, text
//	imports    count; each import
func Encode(r *Record) []byte {
	b := []byte(Magic)
	if redact.Has(strings.Join(r.Imports, "\n")) || redact.Has(strings.Join(r.Indexed, "\n")) {
		return wire.AppendBool(b, false)
	}
	b = wire.AppendBool(b, true)
	b = wire.AppendBool(b, r.HasPaths)
	b = wire.AppendBool(b, r.TopicIdx)
	b = wire.AppendStrings(b, r.Indexed)
	b = wire.AppendString(b, r.Title)
	b = wire.AppendUint(b, uint64(len(r.Keys)))
	for _, k := range r.Keys {
		b = wire.AppendUint(b, k)
	}
	b = wire.AppendUint(b, uint64(len(r.Marks)))
	for _, m := range r.Marks {
		b = wire.AppendString(b, m.ID)
		b = wire.AppendString(b, m.Section)
		b = wire.AppendString(b, m.Text)
	}
	return wire.AppendStrings(b, r.Imports)
}

// Decode returns the Record Encode stored: ErrOldRecord for bytes of
// another version, ErrNotKept for a record not kept, an error wrapping
// wire.ErrCorrupt for bytes that do not decode.
func Decode(b []byte) (*Record, error) {
	if !wire.HasPrefix(b, Magic) {
		return nil, ErrOldRecord
	}
	rd := wire.NewReader(b, Magic)
	if !rd.Bool("kept") {
		if err := rd.Done(); err != nil {
			return nil, fmt.Errorf("docrecord: %w", err)
		}
		return nil, ErrNotKept
	}
	r := &Record{HasPaths: rd.Bool("haspaths"), TopicIdx: rd.Bool("topicindex")}
	r.Indexed = rd.Strings("indexed")
	r.Title = rd.String("title")
	if n := rd.Count("keys", 1); n > 0 {
		r.Keys = make([]uint64, n)
		for i := range r.Keys {
			r.Keys[i] = rd.Uint("key", 1<<64-1)
		}
	}
	if n := rd.Count("marks", 3); n > 0 {
		r.Marks = make([]Mark, n)
		for i := range r.Marks {
			r.Marks[i] = Mark{ID: rd.String("mark id"), Section: rd.String("mark section"), Text: rd.String("mark text")}
		}
	}
	r.Imports = rd.Strings("imports")
	if err := rd.Done(); err != nil {
		return nil, fmt.Errorf("docrecord: %w", err)
	}
	return r, nil
}
