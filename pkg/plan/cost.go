package plan

import (
	"fmt"
	"strings"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/loaded"
	"github.com/intermem/intermem/pkg/match"
	"github.com/intermem/intermem/pkg/targets"
	"github.com/intermem/intermem/pkg/tier"
)

// Per-session cost. What Claude Code loads at every session start is paid
// for in every session: a candidate promoted inline into CLAUDE.md (or a
// loaded AGENTS.md) adds its text and marker, a new section its heading;
// one that goes to a detail document adds only a line to the topic index
// in AGENTS.md when its topic is new. Pruning removes what MEMORY.md's
// loaded part held for the entry: its lines, or the pointer lines naming a
// one-memory file. Tokens are loaded.Tokens estimates.

// costs fills each candidate's Tokens and the plan's totals.
func costs(p *Plan, in Inputs) {
	topics := map[string]bool{}
	for _, d := range in.Targets.Details {
		topics[match.Normalize(tier.Title(d.Content))] = true
	}
	sections := map[string]map[string]bool{}
	for i := range p.Candidates {
		c := &p.Candidates[i]
		if c.Action == ActionPromote {
			c.Tokens = promoteCost(c, in, topics, sections)
		}
		p.TokensAdded += c.Tokens
		p.TokensSaved += c.TokensSaved
	}
}

func promoteCost(c *Candidate, in Inputs, topics map[string]bool, sections map[string]map[string]bool) int {
	if in.Layout.Tiers(c.Target) {
		key := match.Normalize(c.Section)
		if topics[key] {
			return 0
		}
		topics[key] = true
		title := c.Section
		if r := []rune(title); len(r) > 40 {
			title = string(r[:39]) + "…"
		}
		return loaded.Tokens(fmt.Sprintf("- %s (1): %s → %s/%s.md\n", title, tier.OneLiner([]string{c.Text}, 64), targets.DetailDir, tier.Slug(c.Section)))
	}
	first, rest, multi := strings.Cut(c.Block, "\n")
	text := first + " <!-- intermem:" + c.ID + " -->\n"
	if multi {
		text += rest + "\n"
	}
	have := sections[c.Target]
	if have == nil {
		have = map[string]bool{}
		for _, s := range in.Targets.Target(c.Target).Doc.Sections {
			have[match.Normalize(s.Title)] = true
		}
		sections[c.Target] = have
	}
	if key := match.Normalize(c.Section); !have[key] {
		have[key] = true
		text += "\n## " + c.Section + "\n\n"
	}
	return loaded.Tokens(text)
}

// savedTokens is what pruning e removes from MEMORY.md's loaded part.
func savedTokens(dir *automem.Dir, e *automem.Entry) int {
	if dir == nil || dir.Index == nil {
		return 0
	}
	idx, limit := dir.Index, dir.Load.LoadedLines
	var lines []automem.Entry
	switch {
	case e.Kind == automem.Memory:
		for _, p := range dir.PointersTo(e.File) {
			if p.File == automem.IndexName {
				lines = append(lines, p)
			}
		}
	case e.File == automem.IndexName:
		lines = append(lines, *e)
	}
	n := 0
	for _, l := range lines {
		if l.EndLine <= limit && l.Start >= 0 && l.End <= len(idx.Content) && l.Start <= l.End {
			n += loaded.Tokens(string(idx.Content[l.Start:l.End]))
		}
	}
	return n
}
