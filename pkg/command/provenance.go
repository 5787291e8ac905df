package command

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/retrieve"
	"github.com/intermem/intermem/pkg/source"
)

const provenanceUsage = `Usage: intermem provenance ID [--project DIR] [--json]

Prints where the entry with the id ID came from and what happened to it:
its source and file; for a memory written through intermem (intermem
write, memory_write), its scope, where it is kept (the per-user store for
scope user), who wrote it, in which session, by which agent and tool call
as recorded, and when; the dates the source records, when intermem first
found it and when its source stopped holding it, the sessions that saw it
(auto-memory), the subagent whose hook first saw it, the operations that
promoted and archived it, its last validation (the commit, the cited files'
hashes then, and which of them changed since), and the source's own
provenance fields. intermem-mcp's memory_provenance returns the same.
Nothing is written; a store busy with another intermem process is an
error (try again).
`

// ProvenanceJSON is what provenance --json prints.
type ProvenanceJSON struct {
	Entry          EntryJSON         `json:"entry"`
	RecentSessions []SessionJSON     `json:"recent_sessions"`
	Fields         map[string]string `json:"provenance_fields,omitempty"`
	Notes          []string          `json:"notes"`
}

// SessionJSON is one session that saw an entry.
type SessionJSON struct {
	ID    string    `json:"id"`
	First time.Time `json:"first"`
	Last  time.Time `json:"last"`
}

func runProvenance(ctx context.Context, env *cli.Env, args []string) error {
	c, id, p, err := idCommand(env, "intermem provenance", provenanceUsage, args)
	if err != nil {
		return err
	}
	return readView(env, p, true, func(v *retrieve.View) error {
		pv, err := v.Provenance(id)
		if err != nil {
			return err
		}
		e := entryJSON(v, pv.Record)
		out := ProvenanceJSON{Entry: e, RecentSessions: []SessionJSON{}, Fields: pv.Fields, Notes: pv.Notes}
		for _, s := range pv.RecentSessions {
			out.RecentSessions = append(out.RecentSessions, SessionJSON{ID: s.ID, First: s.First, Last: s.Last})
		}
		if out.Notes == nil {
			out.Notes = []string{}
		}
		if c.json {
			return writeJSON(env.Stdout, out)
		}
		w := env.Stdout
		o := &e.Overlay
		fmt.Fprintf(w, "%s  %s\n\n", e.ID, cli.Line(source.OneLine(e.Title, 100)))
		row := func(k, v string) {
			if v != "" {
				fmt.Fprintf(w, "  %-11s %s\n", k, cli.Line(v))
			}
		}
		where := e.Path
		if e.Line > 0 {
			where += fmt.Sprintf(":%d", e.Line)
		}
		row("source", e.Source+", "+where)
		writerRows(e.Written, row)
		row("its dates", entryDates(&e))
		var seen []string
		if !e.FirstSeen.IsZero() {
			seen = append(seen, "first found "+stamp(e.FirstSeen))
		}
		if !e.Changed.IsZero() && !e.Changed.Equal(e.FirstSeen) {
			seen = append(seen, "changed "+stamp(e.Changed))
		}
		if !e.Gone.IsZero() {
			seen = append(seen, "gone "+stamp(e.Gone))
		}
		row("scans", strings.Join(seen, ", "))
		if o.Sessions > 0 {
			row("sessions", fmt.Sprintf("%d (first %s, last %s)", o.Sessions, stamp(o.SeenFirst), stamp(o.SeenLast)))
			for _, s := range pv.RecentSessions {
				row("", fmt.Sprintf("%s  %s – %s", s.ID, stamp(s.First), stamp(s.Last)))
			}
		}
		if o.Replaced != "" {
			row("replaced", o.Replaced+" (it is an edit of that entry)")
		}
		if o.Agent != "" {
			a := o.Agent
			if o.AgentType != "" {
				a += " (" + o.AgentType + ")"
			}
			row("agent", a)
		}
		if pr := o.Promoted; pr != nil {
			s := "into " + pr.Target
			if pr.Section != "" {
				s += " § " + pr.Section
			}
			s += " on " + stamp(pr.At)
			if by := o.PromotedBy; by != "" {
				s += " by operation " + by
			}
			row("promoted", s)
			if pr.Archived {
				s := "on " + stamp(pr.ArchivedAt)
				if o.ArchivedBy != "" {
					s += " by operation " + o.ArchivedBy
				}
				if pr.Reason != "" {
					s += ": " + pr.Reason
				}
				row("archived", s)
			}
		}
		if !o.Validated.IsZero() {
			s := fmt.Sprintf("%s: %s, confidence %.2f", stamp(o.Validated), entryStatusWords(p.Root, o.Status, &pv.Record.Entry.Entry), o.Confidence)
			if o.Commit != "" {
				s += fmt.Sprintf(" at commit %.12s", o.Commit)
			}
			row("validated", s)
			if len(o.Blobs) > 0 {
				row("", fmt.Sprintf("%d %s hashed then", len(o.Blobs), cli.Plural(len(o.Blobs), "cited file", "cited files")))
			}
			for _, d := range o.ChangedSince {
				what := "changed since"
				if d.Now == "" {
					what = "gone since"
				}
				row("", d.Path+" "+what)
			}
		} else if o.Status == retrieve.StatusObservation {
			row("validated", "not applicable: "+statusWords(o.Status))
		} else {
			row("validated", "never")
		}
		fieldRows(pv.Fields, nil, row)
		for _, n := range pv.Notes {
			fmt.Fprintf(w, "\n  note: %s", cli.Line(n))
		}
		if len(pv.Notes) > 0 {
			fmt.Fprintln(w)
		}
		return nil
	})
}
