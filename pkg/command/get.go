package command

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/intermem/intermem/pkg/catalog"
	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/project"
	"github.com/intermem/intermem/pkg/retrieve"
	"github.com/intermem/intermem/pkg/source"
	"github.com/intermem/intermem/pkg/store"
)

const getUsage = `Usage: intermem get ID [--source S] [--project DIR] [--json]

Prints the whole entry with the id ID (as intermem search prints it), from
whichever source holds it: its text, where it lives, its dates, tags,
citations and sections, and intermem's overlay (confidence, validation
status, promotion). A memory written through intermem (intermem write,
memory_write) shows its scope, where it is kept (the per-user store for
scope user), and who wrote it, in which session, by which agent and tool
call as recorded, and when. An entry its source no longer holds is shown
with the day it went; a fact intermem archived, from its promotion record.
intermem-mcp's memory_get returns the same entry. Nothing is written.

More than one source can hold an id: a fact promoted into CLAUDE.md keeps
the id of the memory it came from, and an intermem marker typed by hand
names any id. get then shows the entry of the first source, in name order,
that holds it live, and names the others ("also in"; "also" in --json);
--source S shows the entry source S holds (search shows one result per id,
with its source in brackets). memory_get takes the same source.
`

// EntryJSON is an entry as get and provenance print it.
type EntryJSON struct {
	ID        string            `json:"id"`
	Source    string            `json:"source"`
	Kind      string            `json:"kind"`
	Path      string            `json:"path"`
	File      string            `json:"file"`
	Line      int               `json:"line"`
	EndLine   int               `json:"end_line"`
	Title     string            `json:"title"`
	Text      string            `json:"text"`
	Tags      []string          `json:"tags,omitempty"`
	Symptoms  []string          `json:"symptoms,omitempty"`
	Citations []string          `json:"citations,omitempty"`
	Sections  []source.Section  `json:"sections,omitempty"`
	Fields    map[string]string `json:"fields,omitempty"`
	Created   time.Time         `json:"created,omitzero"`
	Updated   time.Time         `json:"updated,omitzero"`
	Confirmed time.Time         `json:"confirmed,omitzero"`
	Secret    bool              `json:"secret,omitempty"`
	Flags     []string          `json:"flags,omitempty"`
	// FirstSeen is when a scan first found it; Changed when its text last
	// changed; Gone its tombstone.
	FirstSeen time.Time        `json:"first_seen,omitzero"`
	Changed   time.Time        `json:"changed,omitzero"`
	Gone      time.Time        `json:"gone,omitzero"`
	Also      []retrieve.Place `json:"also,omitempty"`
	// FromRecord: no source holds it; rebuilt from the promotion record.
	FromRecord bool `json:"from_record,omitempty"`
	// Written is who wrote a memory written through intermem (or the
	// fact it was promoted to), and where it is kept.
	Written *retrieve.Writer `json:"written,omitempty"`
	Overlay OverlayJSON      `json:"overlay"`
}

// OverlayJSON is what intermem knows of an entry beyond its text.
type OverlayJSON struct {
	Confidence float64           `json:"confidence"`
	Known      bool              `json:"known"`
	Status     string            `json:"status"`
	Validated  time.Time         `json:"validated,omitzero"`
	Commit     string            `json:"commit,omitempty"`
	Blobs      map[string]string `json:"blobs,omitempty"`
	// ChangedSince are the cited files whose content differs from what it
	// was at the validation.
	ChangedSince []catalog.Drift `json:"changed_since_validated,omitempty"`
	Agent        string          `json:"agent,omitempty"`
	AgentType    string          `json:"agent_type,omitempty"`
	Session      string          `json:"session,omitempty"`
	SeenFirst    time.Time       `json:"seen_first,omitzero"`
	SeenLast     time.Time       `json:"seen_last,omitzero"`
	Sessions     int             `json:"sessions"`
	Replaced     string          `json:"replaced,omitempty"`
	Promoted     *store.Promoted `json:"promoted,omitempty"`
	PromotedBy   string          `json:"promoted_by,omitempty"`
	ArchivedBy   string          `json:"archived_by,omitempty"`
}

func entryJSON(v *retrieve.View, r *retrieve.Record) EntryJSON {
	o := &r.Overlay
	return EntryJSON{ID: r.ID, Source: r.Source, Kind: string(r.Kind), Path: r.Path, File: r.File, Line: r.Line, EndLine: r.EndLine,
		Title: r.Title, Text: r.Text, Tags: r.Tags, Symptoms: r.Symptoms, Citations: r.Citations, Sections: r.Sections,
		Fields: r.Fields, Created: r.Created, Updated: r.Updated, Confirmed: r.Confirmed, Secret: r.Secret, Flags: r.Flags,
		FirstSeen: r.FirstSeen, Changed: r.Changed, Gone: r.Gone, Also: r.Also, FromRecord: r.FromRecord, Written: r.Written,
		Overlay: OverlayJSON{Confidence: o.Confidence, Known: o.Known, Status: o.Status, Validated: o.Validated,
			Commit: o.Commit, Blobs: o.Blobs, ChangedSince: o.Changed(v.Project.Root), Agent: o.Agent, AgentType: o.AgentType,
			Session: o.Session, SeenFirst: o.FirstSeen, SeenLast: o.LastSeen, Sessions: o.Sessions, Replaced: o.Replaced,
			Promoted: o.Promoted, PromotedBy: o.PromotedBy, ArchivedBy: o.ArchivedBy}}
}

// idCommand parses the flags and the one id of get and provenance (16
// hex digits, as search prints it) and resolves the project; flags, when
// not nil, registers a command's own flags.
func idCommand(env *cli.Env, name, usage string, args []string, flags ...func(*flag.FlagSet)) (*common, string, *project.Project, error) {
	c := &common{}
	fset := cli.FlagSet(name, usage, env.Stdout)
	c.register(fset, true)
	for _, f := range flags {
		f(fset)
	}
	rest, err := cli.Parse(fset, args)
	if err != nil {
		return nil, "", nil, err
	}
	if len(rest) != 1 {
		return nil, "", nil, cli.Usagef("give one id (16 hex digits, as intermem search prints it)")
	}
	p, err := c.resolve(env)
	if err != nil {
		return nil, "", nil, err
	}
	return c, strings.ToLower(strings.TrimSpace(rest[0])), p, nil
}

// entryDates are the dates an entry's source records, as get and
// provenance show them: "created 2026-02-04, confirmed 2026-03-01".
func entryDates(e *EntryJSON) string {
	var dates []string
	for _, d := range []struct {
		k string
		t time.Time
	}{{"created", e.Created}, {"updated", e.Updated}, {"confirmed", e.Confirmed}} {
		if !d.t.IsZero() {
			dates = append(dates, d.k+" "+day(d.t))
		}
	}
	return strings.Join(dates, ", ")
}

// writerRows show who wrote a memory written through intermem and where
// it is kept, as get and provenance print them; what was not recorded is
// not shown.
func writerRows(w *retrieve.Writer, row func(k, v string)) {
	if w == nil {
		return
	}
	row("scope", scopeWords(w.Scope, w.Phase))
	kept := w.Store
	if w.Scope == store.ScopeUser {
		kept += " (the per-user store, outside every project)"
	}
	row("kept in", kept)
	written := stamp(w.At)
	if w.By != "" {
		written = strings.TrimSpace(written + " by " + w.By)
	}
	row("written", written)
	row("session", w.Session)
	row("agent", w.Agent)
	row("tool call", w.ToolUse)
}

// writerFields are the fields writerRows shows for a written memory.
func writerFields() map[string]bool {
	return map[string]bool{"source": true, "agent_id": true, "session_id": true, "tool_use_id": true, "scope": true}
}

// fieldRows shows a source's fields in name order, each on one line;
// those in skip are left out.
func fieldRows(fields map[string]string, skip map[string]bool, row func(k, v string)) {
	keys := make([]string, 0, len(fields))
	for k := range fields {
		if !skip[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		row(k, source.OneLine(fields[k], 160))
	}
}

func runGet(ctx context.Context, env *cli.Env, args []string) error {
	var src string
	c, id, p, err := idCommand(env, "intermem get", getUsage, args, func(fs *flag.FlagSet) {
		fs.StringVar(&src, "source", "", "show the entry source `S` holds, when more than one holds the id")
	})
	if err != nil {
		return err
	}
	src = strings.TrimSpace(src)
	return readView(env, p, false, func(v *retrieve.View) error {
		r, err := v.GetFrom(id, src)
		if errors.Is(err, retrieve.ErrNotInSource) {
			return cli.WithHint(err, "name one of the sources it is in, or leave --source out")
		}
		if err != nil {
			return err
		}
		e := entryJSON(v, r)
		if c.json {
			return writeJSON(env.Stdout, struct {
				Entry EntryJSON `json:"entry"`
			}{e})
		}
		w := env.Stdout
		fmt.Fprintf(w, "%s\n\n", cli.Line(source.OneLine(e.Title, 200)))
		var rows labelled
		row := rows.add
		row("id", e.ID)
		row("source", e.Source+" ("+e.Kind+")")
		where := e.Path
		if e.Line > 0 {
			where += fmt.Sprintf(":%d", e.Line)
			if e.EndLine > e.Line {
				where += fmt.Sprintf("-%d", e.EndLine)
			}
		}
		row("where", where)
		status := entryStatusWords(p.Root, e.Overlay.Status, &r.Entry.Entry)
		row("status", fmt.Sprintf("%s, confidence %.2f", status, e.Overlay.Confidence))
		if !e.Gone.IsZero() {
			row("gone", "its source no longer holds it (since "+day(e.Gone)+")")
		}
		if e.FromRecord {
			row("record", "no source holds it; shown from intermem's promotion record")
		}
		row("dates", entryDates(&e))
		row("tags", strings.Join(e.Tags, ", "))
		row("symptoms", strings.Join(e.Symptoms, "; "))
		if e.Kind == string(source.Observation) {
			// The file an edit observation names was edited; it is no
			// claim about it (validate checks no observation).
			row("edited", strings.Join(e.Citations, ", "))
		} else {
			row("cites", strings.Join(e.Citations, ", "))
		}
		var skip map[string]bool
		if e.Written != nil {
			skip = writerFields()
		}
		writerRows(e.Written, row)
		fieldRows(e.Fields, skip, row)
		for _, a := range e.Also {
			s := fmt.Sprintf("%s %s:%d", a.Source, a.Path, a.Line)
			if a.Gone {
				s += " (gone)"
			}
			row("also in", s)
		}
		if pr := e.Overlay.Promoted; pr != nil {
			s := "into " + pr.Target
			if pr.Section != "" {
				s += " § " + pr.Section
			}
			row("promoted", s+" on "+day(pr.At))
		}
		if len(e.Flags) > 0 {
			row("flagged", strings.Join(e.Flags, "; ")+" (never put into a session)")
		}
		if e.Secret {
			row("redacted", "a secret in it is shown redacted")
		}
		rows.print(w)
		if len(e.Also) > 0 {
			fmt.Fprintf(w, "\n(more than one source holds this id: intermem get %s --source S shows the entry of source S)\n", e.ID)
		}
		fmt.Fprintf(w, "\n%s\n", e.Text)
		return nil
	})
}

// labelled is get's rows of a label and its value, printed in two columns:
// the labels at least minLabel wide, as wide as the longest (up to
// maxLabel: a source's field names are the document's own, of any length);
// a row without a value is not shown.
type labelled struct{ rows [][2]string }

// minLabel fits get's own labels; maxLabel is the widest label column: a
// longer label overflows it by itself.
const minLabel, maxLabel = 10, 24

func (l *labelled) add(k, v string) {
	if v != "" {
		l.rows = append(l.rows, [2]string{k, v})
	}
}

func (l *labelled) print(w io.Writer) {
	width := minLabel
	for _, r := range l.rows {
		if n := utf8.RuneCountInString(r[0]); n <= maxLabel {
			width = max(width, n)
		}
	}
	for _, r := range l.rows {
		fmt.Fprintf(w, "  %-*s %s\n", width, r[0], cli.Line(r[1]))
	}
}
