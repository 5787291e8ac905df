package command

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/archive"
	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/catalog"
	"github.com/intermem/intermem/pkg/cite"
	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/project"
	"github.com/intermem/intermem/pkg/score"
	"github.com/intermem/intermem/pkg/source/automemory"
	"github.com/intermem/intermem/pkg/source/promoted"
	"github.com/intermem/intermem/pkg/source/sources"
	"github.com/intermem/intermem/pkg/store"
	"github.com/intermem/intermem/pkg/targets"
)

// item is one searchable unit of knowledge, wherever it lives.
type item struct {
	Kind    string  `json:"kind"` // memory | promoted | archived
	ID      string  `json:"id"`
	Where   string  `json:"where"`
	Section string  `json:"section"`
	Text    string  `json:"text"`
	Score   float64 `json:"score"`
}

// knowledge gathers every memory entry (pointers excluded), promoted fact
// and archived fact of a project, leaving out the sources on says are
// switched off: auto-memory's entries, and the promoted facts of the
// target documents (the promoted source's; archived facts are no source's
// and stay).
func knowledge(p *project.Project, on func(name string) bool) ([]item, *targets.Set, error) {
	var out []item
	var mem *automem.Dir
	if on(automemory.Name) {
		var err error
		if mem, err = scanMemory(p); err != nil {
			return nil, nil, err
		}
	}
	if mem != nil {
		for _, e := range mem.Entries() {
			if e.Kind == automem.Pointer {
				continue
			}
			text := e.Text
			if e.Kind == automem.Memory && e.Description != "" {
				text = e.Description + "\n" + text
			}
			out = append(out, item{Kind: "memory", ID: e.ID, Where: fmt.Sprintf("memory/%s:%d", e.File, e.StartLine), Section: e.Section, Text: text})
		}
	}
	ts, err := loadTargets(p)
	if err != nil {
		return nil, nil, err
	}
	for _, d := range ts.Docs() {
		if !on(promoted.Name) {
			break
		}
		for _, m := range d.Doc.Marked() {
			if m.Heading {
				continue
			}
			out = append(out, item{Kind: "promoted", ID: m.ID, Where: fmt.Sprintf("%s:%d", d.Name, m.Line), Section: m.Section, Text: m.Text})
		}
	}
	if ts.Archive.Exists {
		for _, r := range archive.Parse(ts.Archive.Content) {
			out = append(out, item{Kind: "archived", ID: r.ID, Where: fmt.Sprintf("%s/%s:%d", targets.DetailDir, targets.ArchiveName, r.Line), Section: r.Section, Text: r.Block})
		}
	}
	return out, ts, nil
}

const topicsUsage = `Usage: intermem topics [--project DIR] [--json]

Lists the sections of promoted knowledge (in CLAUDE.md, AGENTS.md and
docs/intermem/) and of auto-memory, with how many entries each holds and
their average confidence (from what they cite; see intermem validate).
A source switched off in .intermem/config.json (auto-memory, promoted) is
not listed.
`

// Topic is one line of intermem topics.
type Topic struct {
	Source     string  `json:"source"` // promoted | memory
	File       string  `json:"file"`
	Section    string  `json:"section"`
	Count      int     `json:"count"`
	Confidence float64 `json:"confidence"`
}

func runTopics(ctx context.Context, env *cli.Env, args []string) error {
	c, p, err := flagsOnly(env, "intermem topics", topicsUsage, args)
	if err != nil {
		return err
	}
	on, err := switches(env, p)
	if err != nil {
		return err
	}
	items, _, err := knowledge(p, on)
	if err != nil {
		return err
	}
	// Stored confidences for promoted facts; otherwise score from citations.
	stored := map[string]float64{}
	if st, err := openRead(p); err == nil && st != nil {
		_ = st.View(func(tx *bolt.Tx) error {
			return store.EachPromoted(tx, func(r *store.Promoted) error {
				id := r.ID
				if r.Confidence > 0 {
					stored[id] = r.Confidence
				}
				return nil
			})
		})
		st.Close()
	}
	checker := cite.NewChecker(p.Root)
	type key struct{ source, file, section string }
	sums := map[key]*Topic{}
	var order []key
	for _, it := range items {
		if it.Kind == "archived" {
			continue
		}
		file, _, _ := strings.Cut(it.Where, ":")
		if idx := strings.LastIndex(file, ":"); idx > 0 {
			file = file[:idx]
		}
		k := key{it.Kind, file, it.Section}
		t, ok := sums[k]
		if !ok {
			t = &Topic{Source: it.Kind, File: file, Section: it.Section}
			sums[k] = t
			order = append(order, k)
		}
		conf, ok := stored[it.ID]
		if !ok {
			conf = score.Of(score.Evidence{Results: checker.Check(cite.Extract(it.Text))}).Confidence
		}
		t.Count++
		t.Confidence += conf
	}
	topics := make([]Topic, 0, len(order))
	for _, k := range order {
		t := sums[k]
		t.Confidence = score.Clamp(t.Confidence / float64(t.Count))
		topics = append(topics, *t)
	}
	sort.SliceStable(topics, func(i, j int) bool { return topics[i].Source == "promoted" && topics[j].Source != "promoted" })
	if c.json {
		return writeJSON(env.Stdout, struct {
			Topics []Topic `json:"topics"`
		}{topics})
	}
	w := env.Stdout
	if len(topics) == 0 {
		fmt.Fprintln(w, "No memory or promoted knowledge yet.")
		return nil
	}
	fmt.Fprintf(w, "%-9s %-5s %-5s  %s\n", "source", "count", "conf", "section (file)")
	for _, t := range topics {
		sec := t.Section
		if sec == "" {
			sec = "(no section)"
		}
		fmt.Fprintf(w, "%-9s %5d %5.2f  %s (%s)\n", t.Source, t.Count, t.Confidence, cli.Line(sec), cli.Line(t.File))
	}
	return nil
}

// switches is the project's source switches as the catalog reads them
// (catalogConfig: an unusable config.json is an error with its hint; a
// name that is no source is catalog.ErrUnknownSource, catalogError's),
// for a command that reads a source's files without the catalog: on
// reports whether it may show the source name's entries.
func switches(env *cli.Env, p *project.Project) (on func(name string) bool, err error) {
	cfg, err := catalogConfig(env, p, time.Time{})
	if err != nil {
		return nil, err
	}
	reg := sources.Registry()
	if unknown := reg.Unknown(cfg.Switches); len(unknown) > 0 {
		for i, n := range unknown {
			unknown[i] = strconv.Quote(n)
		}
		return nil, catalogError(fmt.Errorf("%w: .intermem/config.json switches %s; the sources are %s",
			catalog.ErrUnknownSource, strings.Join(unknown, ", "), strings.Join(reg.Names(), ", ")))
	}
	return func(name string) bool {
		on, set := cfg.Switches[name]
		return on || !set
	}, nil
}
