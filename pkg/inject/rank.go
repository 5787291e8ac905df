package inject

import (
	"bytes"
	"cmp"
	"path"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/intermem/intermem/pkg/lazy"
	"github.com/intermem/intermem/pkg/score"
)

// Relevance points. An entry's relevance is the sum of three signals, each
// an integer so ranking never depends on floating-point rounding:
//
//   - branch: PointsBranch × (branch words found in the entry) / (branch
//     words);
//   - recently changed files: the best of its existing cited files,
//     PointsHour if modified within the hour before Now (or after it),
//     PointsDay within a day, PointsWeek within a week, PointsMonth within
//     30 days, else 0;
//   - cwd: PointsCwdCited when it cites a path at or below the session's
//     cwd, else PointsCwdWords × (cwd segments found) / (cwd segments).
const (
	PointsBranch   = 100
	PointsHour     = 100
	PointsDay      = 60
	PointsWeek     = 30
	PointsMonth    = 10
	PointsCwdCited = 60
	PointsCwdWords = 40
)

// maxScanText bounds how much of an entry's text relevance reads.
const maxScanText = 4096

// stopWords are branch and path words that say nothing about a topic.
var stopWords = lazy.NewSet(
	"feature", "features", "feat", "fix", "fixes", "bugfix", "hotfix", "chore", "main", "master",
	"trunk", "develop", "dev", "release", "wip", "the", "and", "for", "with", "add", "update",
	"remove", "new", "claude", "codex", "src", "lib", "pkg", "internal", "cmd", "app", "apps",
	"packages", "docs", "refactor", "tmp", "temp",
)

// Words splits s into lower-case words of letters and digits, dropping
// stop words, words shorter than 3 characters and duplicates; the order of
// first appearance is kept.
func Words(s string) []string {
	var out []string
	seen := map[string]bool{}
	f := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	for _, w := range f {
		if utf8.RuneCountInString(w) < 3 || stopWords.Has(w) || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}

// hasWord reports whether lower (lower-cased text) contains w as a word,
// or, for words of 4 or more characters, as the start of a word ("invoice"
// finds "invoices").
func hasWord(lower []byte, w string) bool {
	for i := 0; ; {
		j := bytes.Index(lower[i:], []byte(w))
		if j < 0 {
			return false
		}
		at := i + j
		end := at + len(w)
		if boundaryBefore(lower, at) && (len(w) >= 4 || boundaryAfter(lower, end)) {
			return true
		}
		i = at + 1
	}
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

func boundaryBefore(s []byte, i int) bool {
	if i == 0 {
		return true
	}
	r, _ := utf8.DecodeLastRune(s[:i])
	return !isWordRune(r)
}

func boundaryAfter(s []byte, i int) bool {
	if i >= len(s) {
		return true
	}
	r, _ := utf8.DecodeRune(s[i:])
	return !isWordRune(r)
}

// Relevance is why an entry matters now.
type Relevance struct {
	Points int
	Branch int // branch words found
	Recent string
	Age    time.Duration
	Cwd    bool
}

// Relevant scores one candidate against the branch words, the cwd and the
// clock.
func Relevant(c *Candidate, branchWords []string, cwdRel string, cwdWords []string, now time.Time) Relevance {
	return relevant(c, branchWords, cwdRel, cwdWords, now, nil)
}

// relevant is Relevant with a scratch buffer for the lower-cased text.
func relevant(c *Candidate, branchWords []string, cwdRel string, cwdWords []string, now time.Time, buf *[]byte) Relevance {
	var r Relevance
	var lower []byte
	if len(branchWords) > 0 || len(cwdWords) > 0 {
		var b []byte
		if buf != nil {
			b = (*buf)[:0]
		}
		b = appendLower(b, c.Text, maxScanText)
		if c.Body != "" {
			b = append(b, '\n')
			b = appendLower(b, c.Body, maxScanText)
		}
		if buf != nil {
			*buf = b
		}
		lower = b
	}
	if len(branchWords) > 0 {
		for _, w := range branchWords {
			if hasWord(lower, w) {
				r.Branch++
			}
		}
		r.Points += PointsBranch * r.Branch / len(branchWords)
	}
	best := 0
	for _, f := range c.Cites {
		if !f.Exists {
			continue
		}
		p := recencyPoints(now.Sub(f.ModTime))
		if p > best || (p == best && p > 0 && f.Path < r.Recent) {
			best, r.Recent, r.Age = p, f.Path, now.Sub(f.ModTime)
		}
	}
	if best == 0 {
		r.Recent = ""
	}
	r.Points += best
	if cwdRel != "" {
		for _, f := range c.Cites {
			if f.Path == cwdRel || strings.HasPrefix(f.Path, cwdRel+"/") {
				r.Cwd = true
				break
			}
		}
		if r.Cwd {
			r.Points += PointsCwdCited
		} else if len(cwdWords) > 0 {
			n := 0
			for _, w := range cwdWords {
				if hasWord(lower, w) {
					n++
				}
			}
			if n > 0 {
				r.Cwd = true
				r.Points += PointsCwdWords * n / len(cwdWords)
			}
		}
	}
	return r
}

func recencyPoints(age time.Duration) int {
	switch {
	case age <= time.Hour:
		return PointsHour
	case age <= 24*time.Hour:
		return PointsDay
	case age <= 7*24*time.Hour:
		return PointsWeek
	case age <= 30*24*time.Hour:
		return PointsMonth
	}
	return 0
}

// why renders a relevance as a short parenthetical, or "".
func (r Relevance) why() string {
	var parts []string
	if r.Branch > 0 {
		parts = append(parts, "branch")
	}
	if r.Recent != "" {
		parts = append(parts, path.Base(r.Recent)+" changed "+ago(r.Age))
	}
	if r.Cwd {
		parts = append(parts, "cwd")
	}
	if len(parts) == 0 {
		return ""
	}
	return " (relevant: " + strings.Join(parts, "; ") + ")"
}

func ago(d time.Duration) string {
	switch {
	case d <= time.Hour:
		return "within the hour"
	case d <= 24*time.Hour:
		return "today"
	case d <= 7*24*time.Hour:
		return "this week"
	}
	return "this month"
}

// ranked is a candidate with its relevance.
type ranked struct {
	c    *Candidate
	rel  Relevance
	conf float64
}

// Rank orders the candidates: relevance points, then sessions seen, then
// confidence (score.Base when unknown), then the latest sighting, then
// file and line (document order, so related facts stay together), then
// id, so that every tie is broken. Repeated ids (the same text in two
// files) are kept once, at their best rank. A candidate that a
// loaded MEMORY.md pointer already names is dropped unless it is relevant
// now: the model already has its pointer.
func Rank(in *Inputs) []*ranked {
	bw := Words(in.Branch)
	var cw []string
	if in.CwdRel != "" {
		cw = Words(in.CwdRel)
	}
	all := make([]ranked, 0, len(in.Candidates))
	var buf []byte
	for i := range in.Candidates {
		c := &in.Candidates[i]
		r := relevant(c, bw, in.CwdRel, cw, in.Now, &buf)
		if c.Pointed && r.Points == 0 {
			continue
		}
		all = append(all, ranked{c: c, rel: r, conf: confidence(c)})
	}
	rs := make([]*ranked, len(all))
	for i := range all {
		rs[i] = &all[i]
	}
	slices.SortFunc(rs, compare)
	seen := make(map[string]bool, len(rs))
	out := rs[:0]
	for _, r := range rs {
		if seen[r.c.ID] {
			continue
		}
		seen[r.c.ID] = true
		out = append(out, r)
	}
	return out
}

// appendLower appends at most n bytes of s, lower-cased, to b: ASCII
// byte by byte, anything else through strings.ToLower.
func appendLower(b []byte, s string, n int) []byte {
	if len(s) > n {
		s = s[:n]
	}
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return append(b, strings.ToLower(s)...)
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	return b
}

func confidence(c *Candidate) float64 {
	if c.Confidence < 0 {
		return score.Base
	}
	return c.Confidence
}

// compare orders a before b when a ranks higher. A stale entry (its
// citations are broken) ranks after every other, whatever its relevance.
func compare(a, b *ranked) int {
	if a.c.Stale != b.c.Stale {
		if a.c.Stale {
			return 1
		}
		return -1
	}
	if a.rel.Points != b.rel.Points {
		return cmp.Compare(b.rel.Points, a.rel.Points)
	}
	x, y := a.c, b.c
	if x.Sessions != y.Sessions {
		return cmp.Compare(y.Sessions, x.Sessions)
	}
	if a.conf != b.conf {
		return cmp.Compare(b.conf, a.conf)
	}
	if c := y.LastSeen.Compare(x.LastSeen); c != 0 {
		return c
	}
	// Document order keeps related facts together; the id settles the
	// rest (two entries on one line of one file do not exist).
	if c := strings.Compare(x.File, y.File); c != 0 {
		return c
	}
	if c := cmp.Compare(x.Line, y.Line); c != 0 {
		return c
	}
	return strings.Compare(x.ID, y.ID)
}
