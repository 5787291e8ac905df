package promote

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/plan"
	"github.com/intermem/intermem/pkg/source/written"
	"github.com/intermem/intermem/pkg/targets"
	"github.com/intermem/intermem/pkg/tier"
)

// Preview makes the plan show what apply writes: each candidate's Text
// becomes the text that lands when every candidate is approved as the plan
// routes it (and every entry kept private is promoted redacted), its links
// rewritten for the document it goes to (links.go); a changed Text keeps
// the memory's wording in Original and says why in an annotation. Block
// stays the memory's markdown, which apply rewrites again for the batch
// the user approves: a link to a memory left out of that batch becomes a
// plain mention, and when that changes the text, an annotation quotes it
// as it then reads. homes are the memory files promoted before
// (Request.Homes).
//
// It is Prepare's own work, so the two cannot disagree; an error (the
// plan no longer describes the memory) leaves the plan as it is.
func Preview(pl *plan.Plan, mem *automem.Dir, ts *targets.Set, layout tier.Config, homes map[string]string) error {
	req := Request{ImportAgents: true, Homes: homes, Written: map[string]automem.Entry{}}
	// The written memories the plan offers are there now: it was just
	// built from them.
	for _, cs := range [][]plan.Candidate{pl.Candidates, pl.Private} {
		for _, c := range cs {
			if c.Source == written.Name {
				req.Written[c.ID] = automem.Entry{ID: c.ID, Kind: automem.Memory, File: c.File, StartLine: c.Line}
			}
		}
	}
	for _, c := range pl.Candidates {
		if c.Action == plan.ActionPromote {
			req.Approve = append(req.Approve, c.N)
		}
	}
	for _, c := range pl.Private {
		if c.Action == plan.ActionPromote {
			req.PromoteRedacted = append(req.PromoteRedacted, c.N)
		}
	}
	if len(req.Approve)+len(req.PromoteRedacted) == 0 {
		return nil
	}
	prep, err := Prepare(pl, req, mem, ts, layout)
	if err != nil {
		return fmt.Errorf("preview the plan: %w", err)
	}
	byN := pl.Numbers()
	for n, c := range pl.PrivateNumbers() {
		byN[n] = c
	}
	// The same entry approved without the other candidates it links to:
	// only memories promoted before have a home.
	abs := func(rel string) string { return filepath.Join(ts.Root, filepath.FromSlash(rel)) }
	creates := map[string]bool{ts.Target(targets.Claude).Path: true, ts.Target(targets.Agents).Path: true}
	for _, p := range prep.Promotions {
		creates[abs(p.File)] = true
	}
	for _, p := range prep.Promotions {
		c := byN[p.N]
		if c == nil || c.Text == p.Text {
			continue
		}
		if c.Original == "" {
			c.Original = c.Text
		}
		c.Text = p.Text
		c.Annotations = append(c.Annotations, "links rewritten for "+p.File)
		own := map[string]string{}
		for f, home := range homes {
			own[f] = abs(home)
		}
		if p.Kind == string(automem.Memory) {
			own[p.Origin] = abs(p.File)
		}
		alone := strings.TrimPrefix(newLinker(ts.Root, mem, own, creates).rewrite(c.Block, p.Origin, abs(p.File)), "- ")
		if alone != p.Text {
			c.Annotations = append(c.Annotations, fmt.Sprintf("approved without the memories it links to, it reads: %q", alone))
		}
	}
	return nil
}
