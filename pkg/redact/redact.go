package redact

import (
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/intermem/intermem/pkg/keyscan"
)

// Finding is one detected secret: Kind is a short stable name ("github-token",
// "aws-access-key", "jwt", "private-key", "url-credentials", "password", …); Start/End are byte
// offsets of the SECRET VALUE only (not its label).
type Finding struct {
	Kind       string
	Start, End int
}

// Marker is the prefix of every replacement String writes: "[REDACTED:<kind>]".
const Marker = "[REDACTED:"

// Find reports the secrets in s, sorted by Start and non-overlapping. Overlapping detections
// (a GitHub token that is also the value of a "token:" label) are merged into one finding that
// covers both, named by the most specific rule.
func Find(s string) []Finding {
	return defaultEngine().find(s)
}

// String returns s with each secret value replaced by "[REDACTED:<kind>]", keeping labels and
// surrounding text. It is idempotent, and its result contains nothing Find reports.
func String(s string) string {
	// Replacing a value can, very rarely, make a neighbouring value newly recognisable (a
	// boundary that was a word character becomes "]"); iterate to a fixed point. Findings
	// never cover marker text, so every round strictly removes non-marker bytes.
	for range 8 {
		fs := Find(s)
		if len(fs) == 0 {
			return s
		}
		s = replace(s, fs)
	}
	return s
}

// Has reports whether s contains a secret.
func Has(s string) bool {
	return len(Find(s)) > 0
}

func replace(s string, fs []Finding) string {
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, f := range fs {
		b.WriteString(s[last:f.Start])
		b.WriteString(Marker)
		b.WriteString(f.Kind)
		b.WriteByte(']')
		last = f.End
	}
	b.WriteString(s[last:])
	return b.String()
}

// rule is one detector. It runs only where the prefilter saw one of its anchors
// (ASCII-case-insensitive literals that every match contains), in one of four ways:
//   - hit: a hand-written matcher called at each anchor occurrence;
//   - anchored: re (which starts with ^) runs on the text starting exactly back bytes
//     before the anchor, at most span bytes long; for patterns that match at the anchor
//     and whose attempts stop at the next anchor, so the total work stays linear;
//   - span > 0: re runs unanchored on a window from back bytes before the anchor to 2*span
//     bytes after it; a hit is skipped when the previous window already covers it, so
//     windows are at least span apart (re has a literal prefix, which regexp skips to);
//   - otherwise: re runs on each line that holds an anchor (for rare, contextual anchors).
type rule struct {
	kind    string
	anchors []string
	re      *regexp.Regexp
	group   int // submatch holding the secret value
	// edge, when set, lists bytes that must not touch the value on either side (so
	// "xghp_…" or a token that runs on past the expected length is not a match).
	edge *byteSet
	// check, when set, validates a match (m holds absolute offsets into s) and returns the
	// secret; it replaces the default group/edge handling.
	check      func(s string, m []int) (Finding, bool)
	back, span int
	anchored   bool
	// lineOK, when set, is a precondition on the line (or window) a line rule searches.
	lineOK func(region string) bool
	// hit is called with the anchor occurrence s[start:end]; it may look anywhere in s.
	hit func(m *scanMemo, s string, start, end int) (Finding, bool)
}

type engine struct {
	rules       []*rule
	ac          *keyscan.Matcher
	anchorLen   []int
	anchorRules [][]int32 // anchor id -> rule indexes
}

var (
	engineOnce sync.Once
	engineVal  *engine
)

func defaultEngine() *engine {
	engineOnce.Do(func() { engineVal = newEngine(buildRules()) })
	return engineVal
}

func newEngine(rules []*rule) *engine {
	e := &engine{rules: rules}
	index := map[string]int32{}
	var anchors []string
	for ri, r := range rules {
		for _, a := range r.anchors {
			a = strings.ToLower(a)
			id, ok := index[a]
			if !ok {
				id = int32(len(anchors))
				index[a] = id
				anchors = append(anchors, a)
				e.anchorLen = append(e.anchorLen, len(a))
				e.anchorRules = append(e.anchorRules, nil)
			}
			e.anchorRules[id] = append(e.anchorRules[id], int32(ri))
		}
	}
	e.ac = keyscan.New(anchors)
	return e
}

const (
	// Lines up to this long are searched whole by line rules; longer lines are searched in
	// windows around each anchor, which keeps the work linear in the input for any input.
	maxWholeLine = 32 << 10
	windowBefore = 1 << 10
	windowAfter  = 16 << 10
)

type task struct {
	rule       int32
	start, end int
}

type found struct {
	Finding
	prio int32 // index of the rule; lower is more specific
}

func (e *engine) find(s string) []Finding {
	if len(s) == 0 {
		return nil
	}
	// Per rule: the region last scheduled, and the end of the last hit-rule finding;
	// allocated at the first anchor, since most short texts (names, titles) have none.
	var lastStart, lastEnd []int
	var tasks []task
	var fs []found
	var memo *scanMemo

	// Line bookkeeping: hits arrive in increasing order of end, so the current line start
	// only moves forward and is found by searching the gap since the previous hit.
	lineStart, searched := 0, 0
	lineEndFor, lineEnd := -1, 0

	e.ac.Scan(s, func(id int32, end int) {
		if lastStart == nil {
			n := len(e.rules)
			lastStart, lastEnd = make([]int, n), make([]int, n)
			for i := range n {
				lastStart[i], lastEnd[i] = -1, -1
			}
		}
		start := end - e.anchorLen[id]
		if end > searched {
			if i := strings.LastIndexByte(s[searched:end], '\n'); i >= 0 {
				lineStart = searched + i + 1
			}
			searched = end
		}
		lineEndKnown := false
		getLineEnd := func() int {
			if !lineEndKnown {
				lineEndKnown = true
				if lineEndFor != lineStart {
					lineEndFor = lineStart
					if i := strings.IndexByte(s[end:], '\n'); i >= 0 {
						lineEnd = end + i
					} else {
						lineEnd = len(s)
					}
				}
			}
			return lineEnd
		}
		for _, ri := range e.anchorRules[id] {
			r := e.rules[ri]
			switch {
			case r.hit != nil:
				if start < lastEnd[ri] {
					continue
				}
				if memo == nil {
					memo = &scanMemo{}
				}
				if f, ok := r.hit(memo, s, start, end); ok {
					fs = append(fs, found{f, ri})
					lastEnd[ri] = f.End
				}
				continue
			case r.anchored:
				ws := start - r.back
				if ws < lineStart || start < lastEnd[ri] {
					continue
				}
				we := min(getLineEnd(), ws+r.span)
				if m := r.re.FindStringSubmatchIndex(s[ws:we]); m != nil {
					for i := range m {
						if m[i] >= 0 {
							m[i] += ws
						}
					}
					if f, ok := r.accept(s, m); ok {
						fs = append(fs, found{f, ri})
						lastEnd[ri] = f.End
					}
				}
				continue
			case r.span > 0:
				le := getLineEnd()
				ws := max(lineStart, start-r.back)
				// Skip the hit if the previous window already holds any match around it.
				if lastStart[ri] >= 0 && lastStart[ri] <= ws && min(le, start+r.span) <= lastEnd[ri] {
					continue
				}
				we := min(le, start+2*r.span)
				lastStart[ri], lastEnd[ri] = ws, we
				tasks = append(tasks, task{ri, ws, we})
				continue
			}
			le := getLineEnd()
			if le-lineStart <= maxWholeLine {
				if lastStart[ri] == lineStart {
					continue
				}
				lastStart[ri] = lineStart
				tasks = append(tasks, task{ri, lineStart, le})
				continue
			}
			// Long line: a window around the hit, unless the previous one covers it.
			if lastEnd[ri] >= 0 && min(le, end+windowAfter/2) <= lastEnd[ri] {
				continue
			}
			ws := max(lineStart, end-windowBefore)
			we := min(le, end+windowAfter)
			lastEnd[ri] = we
			tasks = append(tasks, task{ri, ws, we})
		}
	})
	for _, t := range tasks {
		fs = e.runRule(fs, s, t, e.rules[t.rule])
	}
	return merge(dropMarkers(s, fs))
}

// dropMarkers removes findings that touch a marker String wrote: a rule that reads a
// marker's kind as a value ("creds: [REDACTED:aws-access-key]" looks like user:password)
// would nest markers and break idempotence. A marker is "[REDACTED:" up to the first
// "]"; the rare input that holds one is checked in one extra pass.
func dropMarkers(s string, fs []found) []found {
	if len(fs) == 0 || !strings.Contains(s, Marker) {
		return fs
	}
	var spans [][2]int
	for i := 0; ; {
		j := strings.Index(s[i:], Marker)
		if j < 0 {
			break
		}
		start := i + j
		end := len(s)
		if k := strings.IndexByte(s[start+len(Marker):], ']'); k >= 0 {
			end = start + len(Marker) + k + 1
		}
		spans = append(spans, [2]int{start, end})
		i = start + len(Marker)
	}
	out := fs[:0]
	for _, f := range fs {
		// Spans are sorted: the first one ending after f starts is the only candidate.
		k, _ := slices.BinarySearchFunc(spans, f.Start, func(sp [2]int, x int) int {
			if sp[1] <= x {
				return -1
			}
			return 1
		})
		if k < len(spans) && spans[k][0] < f.End {
			continue
		}
		out = append(out, f)
	}
	return out
}

func (e *engine) runRule(fs []found, s string, t task, r *rule) []found {
	if r.lineOK != nil && !r.lineOK(s[t.start:t.end]) {
		return fs
	}
	for _, m := range r.re.FindAllStringSubmatchIndex(s[t.start:t.end], -1) {
		for i := range m {
			if m[i] >= 0 {
				m[i] += t.start
			}
		}
		if f, ok := r.accept(s, m); ok {
			fs = append(fs, found{f, t.rule})
		}
	}
	return fs
}

func (r *rule) accept(s string, m []int) (Finding, bool) {
	if r.check != nil {
		f, ok := r.check(s, m)
		if ok && (f.Start < 0 || f.End > len(s) || f.Start >= f.End) {
			return Finding{}, false
		}
		if ok && f.Kind == "" {
			f.Kind = r.kind
		}
		return f, ok
	}
	start, end := m[2*r.group], m[2*r.group+1]
	if start < 0 || start >= end {
		return Finding{}, false
	}
	if r.edge != nil && !r.edge.clear(s, start, end) {
		return Finding{}, false
	}
	if strings.Contains(s[start:end], Marker) {
		return Finding{}, false
	}
	return Finding{r.kind, start, end}, true
}

// merge sorts findings and fuses overlapping ones: the union of their spans, named by the
// most specific rule involved.
func merge(fs []found) []Finding {
	if len(fs) == 0 {
		return nil
	}
	slices.SortFunc(fs, func(a, b found) int {
		if a.Start != b.Start {
			return a.Start - b.Start
		}
		if a.End != b.End {
			return b.End - a.End
		}
		return int(a.prio - b.prio)
	})
	out := fs[:1]
	for _, f := range fs[1:] {
		last := &out[len(out)-1]
		if f.Start < last.End {
			if f.End > last.End {
				last.End = f.End
			}
			if f.prio < last.prio {
				last.prio = f.prio
				last.Kind = f.Kind
			}
			continue
		}
		out = append(out, f)
	}
	res := make([]Finding, len(out))
	for i, f := range out {
		res[i] = f.Finding
	}
	return res
}

// byteSet is a set of bytes, a bit per byte value. The sets are written as
// constants so that the package has no initialisation (every hook links it):
// TestByteSets holds each to the ranges it names.
type byteSet [4]uint64

// has reports whether c is in the set.
func (b *byteSet) has(c byte) bool { return b[c>>6]&(1<<(c&63)) != 0 }

// add puts c in the set.
func (b *byteSet) add(c byte) { b[c>>6] |= 1 << (c & 63) }

// newByteSet is the set of the bytes that ranges name: "a-z" a range, any
// other string its bytes. The rules' sets are built with them, on first use.
func newByteSet(ranges ...string) *byteSet {
	var b byteSet
	for _, r := range ranges {
		if len(r) == 3 && r[1] == '-' {
			for c := int(r[0]); c <= int(r[2]); c++ {
				b.add(byte(c))
			}
			continue
		}
		for i := 0; i < len(r); i++ {
			b.add(r[i])
		}
	}
	return &b
}

// clear reports whether the bytes just before start and just after end are not in the set.
func (b *byteSet) clear(s string, start, end int) bool {
	if start > 0 && b.has(s[start-1]) {
		return false
	}
	if end < len(s) && b.has(s[end]) {
		return false
	}
	return true
}

// The bits of the ASCII letters and digits: digits in the first word of a
// byteSet (bytes 0–63), letters in the second (64–127).
const (
	digitBits = (1<<10 - 1) << '0'
	upperBits = (1<<26 - 1) << ('A' - 64)
	lowerBits = (1<<26 - 1) << ('a' - 64)
)

var (
	alnum    = &byteSet{digitBits, upperBits | lowerBits}                        // a-z A-Z 0-9
	word     = &byteSet{digitBits, upperBits | lowerBits | 1<<('_'-64)}          // a-z A-Z 0-9 _
	tokenish = &byteSet{digitBits | 1<<'-', upperBits | lowerBits | 1<<('_'-64)} // a-z A-Z 0-9 _ -
	base64ch = &byteSet{digitBits | 1<<'+' | 1<<'/', upperBits | lowerBits}      // a-z A-Z 0-9 + /
)
