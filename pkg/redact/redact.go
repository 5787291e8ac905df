package redact

import (
	"regexp"
	"slices"
	"strings"
	"sync"
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

// rule is one detector. Its regular expression runs only where the prefilter saw one of its
// anchors (ASCII-case-insensitive literals that every match contains).
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
	check func(s string, m []int) (Finding, bool)
	// restart, when set, is the submatch at whose start a search resumes after a rejected
	// match (the value of a rejected label may hold another label).
	restart int
	// multi, when set, replaces re: it is called with the offset just past an anchor and
	// returns a secret that may span lines.
	multi func(s string, at int) (Finding, bool)
}

type engine struct {
	rules       []*rule
	ac          *acMatcher
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
				e.anchorRules = append(e.anchorRules, nil)
			}
			e.anchorRules[id] = append(e.anchorRules[id], int32(ri))
		}
	}
	e.ac = newACMatcher(anchors)
	return e
}

const (
	// Lines up to this long are searched whole; longer lines are searched in windows around
	// each anchor, which keeps the work linear in the input for any input.
	maxWholeLine = 32 << 10
	windowBefore = 1 << 10
	windowAfter  = 16 << 10
)

type scanState struct {
	lastWindowEnd []int // per rule: end of the last region searched (-1: none)
	lastLineStart []int // per rule: start of the last whole line searched (-1: none)
}

type task struct {
	rule       int32
	start, end int
}

func (e *engine) find(s string) []Finding {
	if len(s) == 0 {
		return nil
	}
	n := len(e.rules)
	st := scanState{lastWindowEnd: make([]int, n), lastLineStart: make([]int, n)}
	for i := range n {
		st.lastWindowEnd[i] = -1
		st.lastLineStart[i] = -1
	}
	var tasks []task
	var multiHits []task // rule, at

	// Line bookkeeping: hits arrive in increasing order, so the current line start only
	// moves forward and is found by searching the gap since the previous hit.
	lineStart, searched := 0, 0
	lineEndFor, lineEnd := -1, 0

	e.ac.scan(s, func(id int32, end int) {
		if end > searched {
			if i := strings.LastIndexByte(s[searched:end], '\n'); i >= 0 {
				lineStart = searched + i + 1
			}
			searched = end
		}
		if lineEndFor != lineStart {
			lineEndFor = lineStart
			if i := strings.IndexByte(s[end:], '\n'); i >= 0 {
				lineEnd = end + i
			} else {
				lineEnd = len(s)
			}
		}
		for _, ri := range e.anchorRules[id] {
			r := e.rules[ri]
			if r.multi != nil {
				multiHits = append(multiHits, task{rule: ri, start: end})
				continue
			}
			if lineEnd-lineStart <= maxWholeLine {
				if st.lastLineStart[ri] == lineStart {
					continue
				}
				st.lastLineStart[ri] = lineStart
				tasks = append(tasks, task{ri, lineStart, lineEnd})
				continue
			}
			// Long line: a window around the hit. Any match containing this anchor lies
			// within windowBefore before it and windowAfter/2 after it; skip the hit if the
			// previous window already covers that.
			if st.lastWindowEnd[ri] >= 0 && end+windowAfter/2 <= st.lastWindowEnd[ri] {
				continue
			}
			ws := max(lineStart, end-windowBefore)
			we := min(lineEnd, end+windowAfter)
			st.lastWindowEnd[ri] = we
			tasks = append(tasks, task{ri, ws, we})
		}
	})
	if len(tasks) == 0 && len(multiHits) == 0 {
		return nil
	}

	var fs []found
	for _, t := range tasks {
		r := e.rules[t.rule]
		fs = e.runRule(fs, s, t, r)
	}
	coveredTo := make(map[int32]int)
	for _, h := range multiHits {
		if h.start < coveredTo[h.rule] {
			continue
		}
		r := e.rules[h.rule]
		if f, ok := r.multi(s, h.start); ok {
			fs = append(fs, found{f, h.rule})
			coveredTo[h.rule] = f.End
		}
	}
	return merge(fs)
}

type found struct {
	Finding
	prio int32 // index of the rule; lower is more specific
}

func (e *engine) runRule(fs []found, s string, t task, r *rule) []found {
	region := s[t.start:t.end]
	abs := func(m []int) []int {
		for i := range m {
			if m[i] >= 0 {
				m[i] += t.start
			}
		}
		return m
	}
	if r.restart > 0 {
		pos := 0
		for pos < len(region) {
			m := r.re.FindStringSubmatchIndex(region[pos:])
			if m == nil {
				break
			}
			for i := range m {
				if m[i] >= 0 {
					m[i] += pos
				}
			}
			next := m[1]
			m = abs(m)
			if f, ok := r.accept(s, m); ok {
				fs = append(fs, found{f, t.rule})
			} else if rs := m[2*r.restart]; rs >= 0 {
				next = rs - t.start
			}
			if next <= pos {
				next = pos + 1
			}
			pos = next
		}
		return fs
	}
	for _, m := range r.re.FindAllStringSubmatchIndex(region, -1) {
		if f, ok := r.accept(s, abs(m)); ok {
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

// byteSet is a set of bytes.
type byteSet [256]bool

func newByteSet(ranges ...string) *byteSet {
	var b byteSet
	for _, r := range ranges {
		if len(r) == 3 && r[1] == '-' {
			for c := int(r[0]); c <= int(r[2]); c++ {
				b[c] = true
			}
			continue
		}
		for i := 0; i < len(r); i++ {
			b[r[i]] = true
		}
	}
	return &b
}

// clear reports whether the bytes just before start and just after end are not in the set.
func (b *byteSet) clear(s string, start, end int) bool {
	if start > 0 && b[s[start-1]] {
		return false
	}
	if end < len(s) && b[s[end]] {
		return false
	}
	return true
}

var (
	alnum    = newByteSet("a-z", "A-Z", "0-9")
	word     = newByteSet("a-z", "A-Z", "0-9", "_")
	tokenish = newByteSet("a-z", "A-Z", "0-9", "_-")
	base64ch = newByteSet("a-z", "A-Z", "0-9", "+/")
)
