package inject

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/source"
	"github.com/intermem/intermem/pkg/source/clavain"
	"github.com/intermem/intermem/pkg/source/compound"
	"github.com/intermem/intermem/pkg/source/interfluence"
	"github.com/intermem/intermem/pkg/store"
)

// Related knowledge from the project's other sources
//
// Besides memory, SessionStart names what the catalog (package catalog)
// holds that matters now, within the same budget:
//
//   - a compound solution whose component, module, title or tags hold the
//     branch's words, or that cites a file changed within RecentFor, with
//     its title and one-line root cause (compound.RootCause);
//   - a clavain learning that cites a file changed within RecentFor, with
//     its title;
//   - interfluence's style corrections of files changed within RecentFor,
//     summarised in one line: how many for which files, and the latest.
//
// The hook reads these from the store, as the last session end left the
// catalog (snapshot.RefreshCatalog), never by scanning the sources: the
// store's file is one of the render cache's dependencies, and every cited
// file's state is recorded like a memory's citations. Each entry's text
// was redacted and screened when it was stored; a flagged entry is
// withheld, and what is shown is screened again as built.

// RecentFor is how recently a cited file must have changed for a solution,
// learning or correction to be named for it.
const RecentFor = 7 * 24 * time.Hour

// Bounds on related knowledge.
const (
	maxRelatedEach   = 3   // solutions, and learnings, named
	maxCorrections   = 200 // newest interfluence observations looked at
	maxRelatedRead   = 4000
	clipRootCause    = 140
	clipCorrection   = 60
	maxCorrectedList = 3 // files named in the corrections line
	// relatedShedAbove is how far the store's pages mapped into the
	// process may grow while readRelated reads, and relatedShedEvery how
	// many entries it reads between two looks at them (see readRelated).
	relatedShedAbove = 2 << 20
	relatedShedEvery = 32
)

// Related is one entry of another source that may matter now.
type Related struct {
	Source string // compound, clavain
	Path   string // relative to the project root
	Title  string
	// Detail is a solution's one-line root cause ("" when none).
	Detail string
	// Match is where the branch's words are looked for: a solution's
	// component, module, tags and title.
	Match string
	Cites []Cited
	// Flags: screening flagged the entry when it was stored.
	Flags []Flag

	cited []string // the project paths it cites, for statRelated
}

// Correction is one interfluence observation of a recently changed file.
type Correction struct {
	File     string // the file corrected, relative to the project root
	State    Cited  // the corrected file's state
	Old, New string
	At       time.Time
	Path     string // the log, relative to the project root
	Line     int
	Flags    []Flag
}

// readRelated reads, from the catalog as stored, the entries of the
// enabled sources that SessionStart may name: solutions and learnings
// with the project paths they cite, and the newest corrections. It reads
// the store only; statRelated then looks at the files, outside the
// store's transaction.
//
// Its reads are the session start's largest over the store — up to
// maxRelatedRead entries, each at its own place in the catalog, at random
// — and they come last, on top of everything the session start holds
// already (the memory files' parses, the memos, the documents). So the
// store's pages mapped into the process are given back before it reads
// (those the memory entries' records mapped) and whenever they grow by
// relatedShedAbove while it reads, not store's default: a session start
// right after a first intake's session end (5,000 solutions and
// learnings, ~20,000 entries) had 5–6 MB of the store resident at its
// peak, 25–28 MB in all; the pages read again come from the page cache.
func readRelated(tx *bolt.Tx, on func(string) bool) (rel []Related, corr []Correction) {
	ct := store.Catalog(tx)
	store.ShedGrown(tx, 0)
	read := 0
	each := func(src string, fn func(e *store.CatalogEntry)) {
		if !on(src) {
			return
		}
		_ = ct.Files(src, func(f *store.CatalogFile) error {
			for _, id := range f.IDs {
				if read >= maxRelatedRead {
					return nil
				}
				if e, ok := ct.Entry(id, src); ok && e.Gone.IsZero() {
					read++
					if read%relatedShedEvery == 0 {
						store.ShedGrown(tx, relatedShedAbove)
					}
					fn(&e)
				}
			}
			return nil
		})
	}
	flagsOf := func(e *store.CatalogEntry) []Flag {
		var out []Flag
		for _, d := range e.Flags {
			out = append(out, Flag{Kind: "screened", Detail: d})
		}
		return out
	}
	each(compound.Name, func(e *store.CatalogEntry) {
		match := strings.Join([]string{e.Fields["component"], e.Fields["module"], strings.Join(e.Tags, " "), e.Title}, "\n")
		rel = append(rel, Related{Source: compound.Name, Path: e.Path, Title: e.Title, Detail: compound.RootCause(&e.Entry),
			Match: match, Flags: flagsOf(e), cited: projectPaths(e.Citations)})
	})
	each(clavain.Name, func(e *store.CatalogEntry) {
		rel = append(rel, Related{Source: clavain.Name, Path: e.Path, Title: e.Title, Flags: flagsOf(e), cited: projectPaths(e.Citations)})
	})
	each(interfluence.Name, func(e *store.CatalogEntry) {
		if file := e.Fields["file"]; isProjectPath(file) {
			corr = append(corr, Correction{File: file, Old: e.Fields["old"], New: e.Fields["new"], At: e.Created,
				Path: e.Path, Line: e.Line, Flags: flagsOf(e)})
		}
	})
	// The newest corrections first.
	slices.SortStableFunc(corr, func(a, b Correction) int { return b.At.Compare(a.At) })
	return rel, corr[:min(len(corr), maxCorrections)]
}

// statRelated looks at the files related entries cite and corrections
// correct (through st: recorded, bounded), drops the corrections of files
// that are gone, and drops the related entries that would be shown whose
// own document is gone (shownExist).
func statRelated(in *Inputs, st *statCache) {
	for i := range in.Related {
		c := in.Related[i].cited
		in.Related[i].Cites = st.cites(c[:min(len(c), maxCitesPerItem)])
	}
	out := in.Corrections[:0]
	for _, c := range in.Corrections {
		if got, ok := st.one(c.File); ok && got.Exists {
			c.State = got
			out = append(out, c)
		}
	}
	in.Corrections = out
	shownExist(in, st)
}

// shownExist drops from in.Related each entry the rendering would name
// (rankRelated, as render ranks them) whose document is gone, until every
// one it would name exists. The catalog is as the last session end left
// it: a document deleted since would otherwise be recommended ("Read for
// detail") when nothing can read it, while search, which reads the
// sources, finds nothing. Only the documents that would be named are
// stat'ed — a handful, however many the catalog holds — each through st,
// so recorded in the render cache's dependencies: a cached rendering
// naming a document is not served once it is gone. A document past st's
// bound is kept: no evidence either way.
func shownExist(in *Inputs, st *statCache) {
	words := Words(in.Branch)
	for {
		gone := map[*Related]bool{}
		for _, it := range rankRelated(in, words) {
			if got, ok := st.one(it.r.Path); ok && !got.Exists {
				gone[it.r] = true
			}
		}
		if len(gone) == 0 {
			return
		}
		kept := in.Related[:0]
		for i := range in.Related {
			if !gone[&in.Related[i]] {
				kept = append(kept, in.Related[i])
			}
		}
		in.Related = kept
	}
}

// projectPaths keeps the citations that name a project path (a file name
// with a directory or an extension), without line numbers.
func projectPaths(cites []string) []string {
	var out []string
	for _, c := range cites {
		if p, _, _ := strings.Cut(c, ":"); isProjectPath(p) {
			out = append(out, p)
		}
	}
	return source.Dedup(out)
}

// isProjectPath reports whether p can name a file of the project: relative,
// clean, not out of it, with a directory or an extension.
func isProjectPath(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") || path.Clean(p) != p ||
		p == ".." || strings.HasPrefix(p, "../") || strings.ContainsAny(p, " \t\n\x00\\") {
		return false
	}
	return strings.Contains(p, "/") || path.Ext(p) != ""
}

// relatedItem is a related entry with why it matters now.
type relatedItem struct {
	r   *Related
	rel Relevance
}

// rankRelated returns the solutions and the learnings that matter now,
// best first (relevance, then path), at most maxRelatedEach of each.
func rankRelated(in *Inputs, branchWords []string) []relatedItem {
	var sols, learns []relatedItem
	for i := range in.Related {
		r := &in.Related[i]
		c := Candidate{Cites: r.Cites}
		words := branchWords
		if r.Source != compound.Name {
			words = nil // a learning is named for the files it cites
		} else {
			c.Text = r.Match
		}
		rel := relevant(&c, words, "", nil, in.Now, nil)
		if rel.Branch == 0 && (rel.Recent == "" || rel.Age > RecentFor) {
			continue
		}
		if rel.Recent != "" && rel.Age > RecentFor {
			rel.Points -= recencyPoints(rel.Age)
			rel.Recent = ""
		}
		it := relatedItem{r: r, rel: rel}
		if r.Source == compound.Name {
			sols = append(sols, it)
		} else {
			learns = append(learns, it)
		}
	}
	order := func(a, b relatedItem) int {
		if a.rel.Points != b.rel.Points {
			return b.rel.Points - a.rel.Points
		}
		return cmp.Compare(a.r.Path, b.r.Path)
	}
	slices.SortFunc(sols, order)
	slices.SortFunc(learns, order)
	return append(sols[:min(len(sols), maxRelatedEach)], learns[:min(len(learns), maxRelatedEach)]...)
}

// relatedLine renders one related entry.
func relatedLine(rd redactor, it relatedItem) string {
	r := it.r
	s := "- " + r.Path + ": " + rd.clip(r.Title, clipTitle)
	if r.Detail != "" {
		s += " — root cause: " + rd.clip(r.Detail, clipRootCause)
	}
	return rd.safe(s + it.rel.why())
}

// correctionsLine summarises the corrections of recently changed files in
// one line: how many, for which files (most corrected first), and the
// latest, which it returns too (its text is screened with the line). A
// correction screening flagged when it was stored is left out of the line
// and returned in flagged, to be counted as withheld. line is "" when no
// unflagged correction is recent.
func correctionsLine(rd redactor, in *Inputs) (line string, latest *Correction, flagged []*Correction) {
	var recent []*Correction
	count := map[string]int{}
	for i := range in.Corrections {
		c := &in.Corrections[i]
		if !c.State.Exists || in.Now.Sub(c.State.ModTime) > RecentFor {
			continue
		}
		if len(c.Flags) > 0 {
			flagged = append(flagged, c)
			continue
		}
		recent = append(recent, c)
		count[c.File]++
	}
	if len(recent) == 0 {
		return "", nil, flagged
	}
	files := make([]string, 0, len(count))
	for f := range count {
		files = append(files, f)
	}
	slices.SortFunc(files, func(a, b string) int {
		if count[a] != count[b] {
			return count[b] - count[a]
		}
		return cmp.Compare(a, b)
	})
	var named []string
	for _, f := range files[:min(len(files), maxCorrectedList)] {
		named = append(named, fmt.Sprintf("%s (%d)", f, count[f]))
	}
	if len(files) > maxCorrectedList {
		named = append(named, fmt.Sprintf("%d more files", len(files)-maxCorrectedList))
	}
	latest = recent[0] // corrections are newest first
	line = fmt.Sprintf("- %d style %s (interfluence) of recently changed files: %s; latest: %q → %q",
		len(recent), cli.Plural(len(recent), "correction", "corrections"), strings.Join(named, ", "),
		rd.clip(oneLineText(latest.Old), clipCorrection), rd.clip(oneLineText(latest.New), clipCorrection))
	return rd.safe(line), latest, flagged
}

func oneLineText(s string) string { return strings.Join(strings.Fields(s), " ") }
