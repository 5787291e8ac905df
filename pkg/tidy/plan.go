package tidy

import (
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/lazy"
	"github.com/intermem/intermem/pkg/redact"
)

// The target tidy brings MEMORY.md to: three quarters of Claude Code's
// load cap, so the index can grow for a while before entries fall off its
// end again.
const (
	TargetLines = automem.MaxLoadLines * 3 / 4
	TargetChars = automem.MaxLoadChars * 3 / 4
)

// Bounds of the text a pointer line carries.
const (
	titleRunes = 60
	hookRunes  = 100
	slugBytes  = 60
)

// Move is one section that moves into a topic file.
type Move struct {
	// Title is the section's heading title, as written (unredacted: show
	// it through redact and an escaping writer).
	Title string
	// Line is the heading's line in MEMORY.md (1-based); Lines and Chars
	// measure what moves (heading through last non-blank line; chars in
	// UTF-16 code units, as the cap counts them).
	Line, Lines, Chars int
	// Entries are the ids of the entries that move, in order.
	Entries []string
	// File is the new topic file's name, beside MEMORY.md.
	File string
	// Hash is the SHA-256 of the section's bytes, which are exactly the
	// topic file's content (Content).
	Hash    string
	Content []byte
	// Pointer is the line that replaces the section in the index.
	Pointer string
}

// Plan is what tidy would do to one memory directory's index.
type Plan struct {
	// Before and After measure MEMORY.md as Claude Code loads it, now and
	// after the moves.
	Before, After automem.LoadInfo
	// Moves are in the order of the sections in MEMORY.md.
	Moves []Move
	// Index is MEMORY.md's content after the moves.
	Index []byte
	// Why says, when nothing moves or the target is not reached, why.
	Why string
}

// Over reports whether an index measured by info is over Claude Code's
// load cap: some of it is not loaded.
func Over(info automem.LoadInfo) bool {
	return info.Truncated || info.Lines > automem.MaxLoadLines || info.Chars > automem.MaxLoadChars
}

// Build plans the moves for the index content. taken reports whether a
// file name (lower-cased) is already used in the memory directory: such a
// name is never chosen.
func Build(content []byte, taken func(lower string) bool) (*Plan, error) {
	pl := &Plan{Before: automem.Load(content), Index: content}
	pl.After = pl.Before
	if !Over(pl.Before) {
		pl.Why = "MEMORY.md is under its load cap: nothing needs to move"
		return pl, nil
	}
	f := automem.Parse(automem.IndexName, content)
	ls := splitLines(content)
	secs := sections(f, ls)
	for k := range secs {
		secs[k].describe()
	}
	dup := map[string]int{}
	for _, s := range secs {
		dup[s.hash]++
	}
	type cand struct {
		k         int // index in secs
		lines     int // lines that leave, the blank ones after included
		chars     int // and their characters
		gainChars int // chars less the pointer's (estimated with its name's stem)
	}
	var cands []cand
	for k, s := range secs {
		// The pointers' own section stays, and two sections with the same
		// bytes cannot be told apart by a step.
		if isTopics(s.title) || dup[s.hash] > 1 {
			continue
		}
		chars := automem.Load(content[s.start:ls[s.gap-1].end]).Chars
		ptr := automem.Load([]byte(pointerFor(s, s.slug+".md") + "\n")).Chars
		cands = append(cands, cand{k: k, lines: s.gap - s.first, chars: chars, gainChars: chars - ptr})
	}
	// better orders candidates: most lines freed (a pointer line takes one
	// back), then most characters, then the earlier section; for the
	// characters alone, most characters first.
	better := func(c, b cand, byLines bool) bool {
		x, y := [3]int{c.lines, c.chars, -c.k}, [3]int{b.lines, b.chars, -b.k}
		if !byLines {
			x[0], x[1], y[0], y[1] = x[1], x[0], y[1], y[0]
		}
		for i := range x {
			if x[i] != y[i] {
				return x[i] > y[i]
			}
		}
		return false
	}
	// Sections are chosen against an estimate of the index (each move
	// frees its lines and characters less its pointer's; the first adds
	// the pointers' heading and a blank line), and the estimate is checked
	// by the real rewrite once it reaches the target: a handful of
	// rewrites, not one per section, however large the index.
	chosen := map[int]bool{}
	est := pl.Before
	project := func() error {
		moves := movesFor(content, secs, chosen, taken)
		idx, err := rewrite(content, ls, secs, moved(moves), nil)
		if err != nil {
			return fmt.Errorf("tidy: projecting the index: %w", err)
		}
		pl.Moves, pl.Index, pl.After = moves, idx, automem.Load(idx)
		est = pl.After
		return nil
	}
	for {
		byLines := est.Lines > TargetLines
		if !byLines && est.Chars <= TargetChars {
			if len(chosen) == len(pl.Moves) {
				break // the estimate is the real index
			}
			if err := project(); err != nil {
				return nil, err
			}
			continue
		}
		best := -1
		for i, c := range cands {
			if chosen[c.k] || (byLines && c.lines < 2) || (!byLines && c.gainChars < 1) {
				continue
			}
			if best < 0 || better(c, cands[best], byLines) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		c := cands[best]
		if len(chosen) == 0 {
			est.Lines += 2
			est.Chars += len("## " + TopicsTitle + "\n\n")
		}
		chosen[c.k] = true
		est.Lines -= c.lines - 1
		est.Chars -= c.gainChars
	}
	if len(chosen) != len(pl.Moves) {
		if err := project(); err != nil {
			return nil, err
		}
	}
	switch {
	case len(pl.Moves) == 0 && len(secs) == 0:
		pl.Why = "MEMORY.md has no ## sections to move: tidy moves whole sections, so its entries need ## headings first"
	case len(pl.Moves) == 0:
		pl.Why = "no ## section of MEMORY.md is worth moving (each is one line, or the topic files' own section)"
	case Over(pl.After):
		pl.Why = "MEMORY.md stays over its load cap: what remains is outside ## sections, or in sections too small to move"
	case pl.After.Lines > TargetLines || pl.After.Chars > TargetChars:
		pl.Why = fmt.Sprintf("MEMORY.md is back under its load cap but not under %d lines / %d chars: the rest is outside ## sections, or in sections too small to move", TargetLines, TargetChars)
	}
	return pl, nil
}

// movesFor names the chosen sections' topic files, in document order, and
// builds their pointers.
func movesFor(content []byte, secs []section, chosen map[int]bool, taken func(string) bool) []Move {
	used := map[string]bool{}
	var out []Move
	for k, s := range secs {
		if !chosen[k] {
			continue
		}
		name := uniqueName(s.slug, func(n string) bool { return used[n] || taken != nil && taken(n) })
		used[strings.ToLower(name)] = true
		m := Move{
			Title: s.title, Line: s.first + 1, Lines: s.last - s.first + 1,
			Chars: automem.Load(content[s.start:s.end]).Chars,
			File:  name, Hash: s.hash, Content: content[s.start:s.end:s.end],
			Pointer: pointerFor(s, name),
		}
		for _, e := range s.entries {
			m.Entries = append(m.Entries, e.ID)
		}
		out = append(out, m)
	}
	return out
}

// moved is what a journal step records of the moves.
// Moved is how the plan's moves are named in a journal step.
func (pl *Plan) Moved() []Moved { return moved(pl.Moves) }

func moved(moves []Move) []Moved {
	out := make([]Moved, len(moves))
	for i, m := range moves {
		out[i] = Moved{Hash: m.Hash, File: m.File, Pointer: m.Pointer}
	}
	return out
}

// describe computes, once, what a section's pointer and file name say:
// the stem of its file name, and its pointer's title and hook (the
// entries' first lines). Each goes through redact, which is not free.
func (s *section) describe() {
	s.slug = slugOf(s.title)
	title := clean(s.title, titleRunes)
	s.ptitle = strings.NewReplacer("[", "(", "]", ")").Replace(title)
	// The hook is as many entries' first lines as fit whole, "; " between
	// them, and "…" when some are left out; a first line too long alone
	// is clipped.
	hook, more := "", false
	for i, e := range s.entries {
		p := clean(hookOf(e), hookRunes)
		if p == "" {
			continue
		}
		next := p
		if hook != "" {
			next = hook + "; " + p
		}
		if utf8.RuneCountInString(next) > hookRunes {
			more = true
			break
		}
		hook = next
		more = i+1 < len(s.entries) && strings.HasSuffix(p, "…")
	}
	if more && !strings.HasSuffix(hook, "…") {
		hook += "…"
	}
	s.hook = hook
}

// pointerFor is the pointer line of a section moved to file (describe
// has run).
func pointerFor(s section, file string) string {
	title := s.ptitle
	if title == "" {
		title = strings.TrimSuffix(file, ".md")
	}
	return pointerLine(title, file, s.hook)
}

// hookOf is what an entry contributes to a pointer's hook: its first
// line, without the link of a pointer whose text is only a file name
// ("[feedback_x.md](feedback_x.md) — hook" gives "hook").
func hookOf(e automem.Entry) string {
	first, _, _ := strings.Cut(e.Text, "\n")
	if e.Kind != automem.Pointer {
		return first
	}
	refs := automem.Refs(first)
	if len(refs) == 0 || strings.TrimSpace(first[:refs[0].Start]) != "" ||
		!strings.HasSuffix(strings.ToLower(strings.TrimSpace(refs[0].Label)), ".md") {
		return first
	}
	if rest := strings.TrimLeft(first[refs[0].End:], " \t—–-:→"); rest != "" {
		return rest
	}
	return first
}

// clean makes memory text fit a pointer line: links become their text,
// secrets are redacted, control and format characters go, whitespace is
// folded, and the result is clipped to max runes with "…".
func clean(s string, max int) string {
	if refs := automem.Refs(s); len(refs) > 0 {
		var b strings.Builder
		at := 0
		for _, r := range refs {
			b.WriteString(s[at:r.Start])
			b.WriteString(r.Label)
			at = r.End
		}
		b.WriteString(s[at:])
		s = b.String()
	}
	s = redact.String(s)
	s = strings.Map(func(r rune) rune {
		if r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > max {
		r := []rune(s)
		s = strings.TrimSpace(string(r[:max-1])) + "…"
	}
	return s
}

// slugOf turns a section title into a file name stem: secrets redacted
// first, then lower-case letters, marks and digits of any script, every
// other run of characters one "-", at most slugBytes bytes. It can hold no
// "/", "\", "." or control character, so it never leaves the directory nor
// hides as a dotfile. An empty or reserved stem gets a suffix.
func slugOf(title string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(redact.Name(redact.String(title))) {
		ok := unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) && b.Len() > 0 && !dash
		if !ok {
			dash = true
			continue
		}
		if b.Len()+utf8.RuneLen(r)+1 > slugBytes {
			break
		}
		if dash && b.Len() > 0 {
			b.WriteByte('-')
		}
		dash = false
		b.WriteRune(r)
	}
	s := b.String()
	switch {
	case s == "":
		return "topic"
	case reserved.Has(s):
		return s + "-topic"
	}
	return s
}

// reserved are stems that would collide with MEMORY.md on a
// case-insensitive disk or name a device on Windows.
var reserved = lazy.NewSet("memory", "con", "prn", "aux", "nul",
	"com1", "com2", "com3", "com4", "com5", "com6", "com7", "com8", "com9",
	"lpt1", "lpt2", "lpt3", "lpt4", "lpt5", "lpt6", "lpt7", "lpt8", "lpt9")

// uniqueName returns stem.md, or stem-2.md, stem-3.md… the first whose
// lower-cased form is not taken.
func uniqueName(stem string, taken func(lower string) bool) string {
	name := stem + ".md"
	for i := 2; taken(strings.ToLower(name)); i++ {
		name = fmt.Sprintf("%s-%d.md", stem, i)
	}
	return name
}

// Names returns the moves' topic file names, sorted.
func (pl *Plan) Names() []string {
	out := make([]string, len(pl.Moves))
	for i, m := range pl.Moves {
		out[i] = m.File
	}
	sort.Strings(out)
	return out
}
