package plan

import (
	"strings"

	"github.com/intermem/intermem/pkg/cite"
	"github.com/intermem/intermem/pkg/score"
)

// What is known of an entry's citations without checking them.
//
// Checking citations may run git (a rename, a deletion, a symbol's
// file): only a plan and validate do it, and they record the verdict
// (store.Fact, the overlay). Every other view of an entry — the
// SessionStart hook, "intermem context", status's "ready" count, search,
// get and the MCP tools — reads that verdict, and for an entry none has
// judged yet looks at its cited project paths on disk, by one rule
// (Known): a missing path under a top-level directory that exists is
// broken, as package cite judges it when git history has nothing to add.
// So a file git recorded as renamed counts as broken everywhere until a
// plan or validate has seen the rename, and every view tells the same
// story meanwhile.

// MaxCites bounds the cited paths looked at per entry (CitePaths).
const MaxCites = 8

// CitePaths lists the project paths text cites that can be stat'ed:
// files, directories, paths and the files of symbols, relative, inside
// the project, at most MaxCites, each once.
func CitePaths(text string) []string {
	var out []string
	for _, c := range cite.Extract(text) {
		if len(out) >= MaxCites {
			break
		}
		switch c.Kind {
		case cite.File, cite.Dir, cite.Path, cite.Symbol:
		default:
			continue
		}
		p := c.Path
		if c.Outside || p == "" || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") || strings.HasPrefix(p, "..") ||
			strings.ContainsAny(p, "\t\n\r") {
			continue
		}
		dup := false
		for _, q := range out {
			dup = dup || q == p
		}
		if !dup {
			out = append(out, p)
		}
	}
	return out
}

// Exists answers whether the project path p (slash-separated, relative to
// the root) exists; known is false when the caller did not look (a bound
// on how many paths it stats), which counts as no evidence.
type Exists func(p string) (exists, known bool)

// Known is the citation evidence of an entry that is not checked here:
// the confidence a plan or validate recorded (recorded ≥ 0), else, when
// one of its cited project paths (CitePaths) is missing under a top-level
// directory that exists, broken; else unchecked.
func Known(recorded float64, cites []string, exists Exists) Evidence {
	if recorded >= 0 || len(cites) == 0 {
		return Recorded(recorded)
	}
	if Missing(cites, exists) != "" {
		return Recorded(score.Base - score.BrokenEach)
	}
	return Recorded(-1)
}

// Missing returns the first of cites that is missing by Known's rule, or
// "" when none is.
func Missing(cites []string, exists Exists) string {
	for _, p := range cites {
		if !strings.Contains(p, "/") {
			continue
		}
		if ok, known := exists(p); !known || ok {
			continue
		}
		first, _, _ := strings.Cut(p, "/")
		if ok, known := exists(first); known && ok {
			return p
		}
	}
	return ""
}
