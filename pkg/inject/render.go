package inject

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/continuity"
	"github.com/intermem/intermem/pkg/redact"
	"github.com/intermem/intermem/pkg/score"
	"github.com/intermem/intermem/pkg/settings"
)

// DefaultBudget is the token budget when INTERMEM_TOKEN_BUDGET is unset.
const DefaultBudget = settings.DefaultBudget

// MaxChars bounds the rendered text whatever the budget: Claude Code
// replaces a hook's context of 10,000 characters or more with a 2 KB
// preview, so the text always stays below 9,000 (counted in UTF-16 code
// units, as Claude Code counts; UTF-8 bytes are never fewer).
const MaxChars = 9000

// BytesPerToken is the conservative token estimate: tokens =
// ceil(UTF-8 bytes / 3). English prose runs near 4 bytes a token and CJK
// text near 3, so the estimate errs towards more tokens.
const BytesPerToken = 3

// Tokens estimates the tokens of s.
func Tokens(s string) int { return (len(s) + BytesPerToken - 1) / BytesPerToken }

// Chars counts s in UTF-16 code units, as Claude Code measures context.
func Chars(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// Clip lengths, in bytes of UTF-8.
const (
	clipFact    = 200
	clipMemory  = 180
	clipLedger  = 110
	clipStale   = 120
	clipTitle   = 80
	clipSummary = 80
)

// omitReserve is kept free for the closing "… N more" line: its longest
// form, "\n… 99999 more (past the 9,000-character limit): intermem
// context --json", is 73 bytes.
const omitReserve = 80

// Result is a rendering and its measurements.
type Result struct {
	Text    string `json:"context"`
	Tokens  int    `json:"tokens"`
	Budget  int    `json:"budget"`
	Chars   int    `json:"chars"`
	Items   int    `json:"items"`
	Omitted int    `json:"omitted"`
	// Need estimates the budget that would show every item (0 when
	// nothing was left out).
	Need int `json:"need,omitempty"`
	// Withheld lists what screening kept out, in rendering order (see
	// screen.go): every flagged memory entry, document text and journal
	// summary, and any line flagged as built.
	Withheld []Withheld `json:"withheld,omitempty"`
}

// Sections of the rendering, in order.
const (
	secHealth = iota
	secIndex
	secMemories
	secRelated
)

// Priorities: which items get the budget first.
const (
	prioHealth   = iota // one line per health finding
	prioStale           // names of stale promoted facts
	prioRelevant        // memories that matter now
	prioRelated         // other sources' knowledge that matters now
	prioIndex           // where promoted knowledge lives
	prioLedger          // MEMORY.md entries past the cap
	prioOther           // the remaining memories, best first
)

// Lists whose items are shown as a prefix.
const (
	listNone = iota - 1 // health findings: each on its own
	listStale
	listLedger
	listIndex
	listMemories
	listRelated
)

type item struct {
	sec    int
	prio   int
	list   int
	parent int // index of the item that must be shown first, or -1
	build  func() string
	est    int // estimated bytes, for items never built
	// from says where the item's text comes from; flags, when set, are
	// what screening found in it: the item is withheld.
	from  Withheld
	flags []Flag
}

// Render turns in into the context text within in.Budget. It is pure:
// the same Inputs always give the same bytes.
//
// The bootstrap (in.Boot: the project's identity, the current phase, the
// resume note, the latest decisions; continuity.Boot) comes first, in at
// most a quarter of the budget and maxBootTokens; the rest renders in
// what it left, a blank line between. The identity alone is not worth a
// context.
func Render(in *Inputs) Result {
	budget := in.Budget
	if budget <= 0 {
		budget = DefaultBudget
	}
	if in.Boot == nil {
		return render(in, budget, MaxChars)
	}
	b := in.Boot
	rd := in.redactor()
	note := continuity.Boot(rd(b.Identity), b.Phase, b.Checkpoint, b.Decisions, bootBytes(budget))
	if note == "" {
		return render(in, budget, MaxChars)
	}
	said := continuity.Bootstrap(b.Phase, b.Checkpoint, b.Decisions, bootBytes(budget)) != ""
	res := Result{Budget: budget}
	if rest := budget - Tokens(note); rest > 0 {
		res = render(in, rest, MaxChars-Chars(note)-1)
		res.Budget = budget
	}
	if res.Text == "" && !said {
		return Result{Budget: budget, Withheld: res.Withheld}
	}
	if res.Text != "" {
		note += "\n" + res.Text
	}
	res.Text, res.Tokens, res.Chars = note, Tokens(note), Chars(note)
	return res
}

// render is the context after the bootstrap, within budget tokens and
// under maxChars characters.
func render(in *Inputs, budget, maxChars int) Result {
	res := Result{Budget: budget}
	limitBytes := BytesPerToken * budget
	rd := in.redactor()
	sc := in.screener()
	items, worth, withheld := buildItems(in, rd, sc)
	for i := range items {
		if it := &items[i]; len(it.flags) > 0 {
			w := it.from
			w.Flags = it.flags
			withheld = append(withheld, w)
		}
	}
	res.Withheld = withheld
	if !worth || len(items) == 0 {
		return res
	}

	header := "# intermem: project memory not already in your context"
	secHeaders := [...]string{
		"Health:",
		"Promoted knowledge (curated documents):",
		cli.Escape(rd.safe("Memories not loaded (topic files in " + clean(in.MemoryDir) + "/; Read for detail):")),
		"Related knowledge (other sources in this project; Read for detail):",
	}
	usedBytes := len(header) + 1
	usedChars := Chars(header) + 1
	fits := func(b, c int) bool {
		return usedBytes+b+omitReserve <= limitBytes && usedChars+c+omitReserve < maxChars
	}
	// Once anything is withheld, room is kept for the line that says so.
	reserved := false
	reserve := func() {
		if !reserved {
			reserved = true
			r := noticeReserve()
			usedBytes += r
			usedChars += r
		}
	}
	if len(withheld) > 0 {
		reserve()
	}
	if !fits(0, 0) {
		return res
	}

	lines := make([]string, len(items))
	selected := make([]bool, len(items))
	cost := make([][2]int, len(items)) // bytes and characters a selected item added
	opened := [len(secHeaders)]bool{}
	omitted, omittedBytes := 0, 0
	// A list (the ledger, the stale facts, the index, the memories) is
	// shown as a prefix of its own order: once one of its items does not
	// fit, the rest of it is left out, so a lower-ranked item never
	// displaces a higher one. Health findings are independent: a long one
	// does not hold back a shorter one after it.
	closed := map[int]bool{}
	for prio := prioHealth; prio <= prioOther; prio++ {
		relevantCap, deferring := 0, false
		if prio == prioRelevant {
			// Memories that matter now get at most half of what the
			// health lines left; the rest of them compete after the
			// index and the ledger, in the same order.
			relevantCap = usedBytes + (limitBytes-omitReserve-usedBytes)/2
		}
		for i := range items {
			it := &items[i]
			if it.prio != prio {
				continue
			}
			if len(it.flags) > 0 {
				continue // withheld
			}
			if prio == prioRelevant && (deferring || usedBytes+it.est+1 > relevantCap) {
				deferring = true
				it.prio = prioOther
				continue
			}
			if (it.list != listNone && closed[it.list]) || (it.parent >= 0 && !selected[it.parent]) {
				omitted++
				omittedBytes += it.est + 1
				continue
			}
			line := it.build()
			// The line as built is screened too (what is shown is what
			// counts), then escaped: no control, bidi or invisible
			// character reaches the model as itself.
			if fl := sc.flags(line); len(fl) > 0 {
				it.flags = fl
				w := it.from
				w.Flags = fl
				res.Withheld = append(res.Withheld, w)
				reserve()
				continue
			}
			line = cli.Escape(line)
			b, c := len(line)+1, Chars(line)+1
			if !opened[it.sec] {
				b += len(secHeaders[it.sec]) + 1
				c += Chars(secHeaders[it.sec]) + 1
			}
			if !fits(b, c) {
				closed[it.list] = true
				omitted++
				omittedBytes += len(line) + 1
				continue
			}
			lines[i], selected[i] = line, true
			cost[i] = [2]int{b, c}
			opened[it.sec] = true
			usedBytes += b
			usedChars += c
			res.Items++
		}
	}
	// A line withheld as built reserved room for the notice after other
	// lines were chosen: give it back from the lowest priority, last
	// first, so every list stays a prefix of its order and a section's
	// first item (which paid for its header) goes last.
	for !fits(0, 0) {
		j := -1
		for i := range items {
			if selected[i] && (j < 0 || items[i].prio >= items[j].prio) {
				j = i
			}
		}
		if j < 0 {
			break
		}
		selected[j] = false
		usedBytes -= cost[j][0]
		usedChars -= cost[j][1]
		res.Items--
		omitted++
		omittedBytes += len(lines[j]) + 1
	}
	if res.Items == 0 && len(res.Withheld) == 0 {
		return Result{Budget: budget}
	}

	var sb strings.Builder
	sb.Grow(usedBytes + omitReserve)
	sb.WriteString(header)
	sec := -1
	if n := len(res.Withheld); n > 0 {
		sec = secHealth
		sb.WriteByte('\n')
		sb.WriteString(secHeaders[secHealth])
		sb.WriteByte('\n')
		sb.WriteString(withheldNotice(n))
	}
	for i, it := range items {
		if !selected[i] {
			continue
		}
		if it.sec != sec {
			sec = it.sec
			sb.WriteByte('\n')
			sb.WriteString(secHeaders[sec])
		}
		sb.WriteByte('\n')
		sb.WriteString(lines[i])
	}
	if omitted > 0 {
		res.Omitted = omitted
		// The budget that would show everything, but no more than the
		// character limit allows at this text's bytes per character.
		shown := sb.String()
		need := roundUp(Tokens(shown)+(omittedBytes+omitReserve+BytesPerToken-1)/BytesPerToken, 100)
		ceiling := roundUp(maxChars*len(shown)/max(Chars(shown), 1)/BytesPerToken, 100)
		res.Need = min(need, ceiling)
		if res.Need > budget {
			fmt.Fprintf(&sb, "\n… %d more: intermem context --budget %d", omitted, res.Need)
		} else {
			fmt.Fprintf(&sb, "\n… %d more (past the %s-character limit): intermem context --json", omitted, cli.Thousands(MaxChars))
			res.Need = 0
		}
	}
	res.Text = sb.String()
	res.Tokens = Tokens(res.Text)
	res.Chars = Chars(res.Text)
	return res
}

func roundUp(n, to int) int { return (n + to - 1) / to * to }

// buildItems lists every item in rendering order. worth reports whether
// anything is worth saying at all: the index of documents Claude Code
// already loaded is not, on its own.
func buildItems(in *Inputs, rd redactor, sc screener) (items []item, worth bool, withheld []Withheld) {
	n := 8 + len(in.Stale) + len(in.Docs) + len(in.Details) + len(in.Candidates)
	if in.Index != nil {
		n += len(in.Index.Beyond)
	}
	items = make([]item, 0, n)
	add := func(sec, prio, parent int, est int, build func() string) int {
		list := listNone
		switch prio {
		case prioStale:
			list = listStale
		case prioLedger:
			list = listLedger
		case prioIndex:
			list = listIndex
		case prioRelevant, prioOther:
			list = listMemories
		case prioRelated:
			list = listRelated
		}
		items = append(items, item{sec: sec, prio: prio, list: list, parent: parent, build: build, est: est})
		return len(items) - 1
	}
	fixed := func(s string) func() string {
		return func() string { return rd.safe(s) }
	}
	// from marks item i as coming from file (line, what); flags withhold it.
	from := func(i int, file string, line int, what string, flags []Flag) {
		items[i].from = Withheld{File: file, Line: line, What: what}
		items[i].flags = flags
	}

	// Health, most urgent first.
	if in.ConfigUnusable {
		s := "- .intermem/config.json is unusable and is ignored (no source is switched off): tell the user; `intermem sources` says what is wrong."
		add(secHealth, prioHealth, -1, len(s), fixed(s))
		worth = true
	}
	if n := len(in.Interrupted); n > 0 {
		// A flagged summary is left out of the line, not the warning.
		s := "- An intermem change was interrupted: ask the user to run `intermem-recover`."
		if fl := sc.flags(in.Interrupted[0]); len(fl) > 0 {
			withheld = append(withheld, Withheld{File: ".intermem/intermem.db", What: "interrupted operation", Flags: fl})
		} else {
			s = fmt.Sprintf("- An intermem change was interrupted (%s", rd.clip(in.Interrupted[0], clipSummary))
			if n > 1 {
				s += fmt.Sprintf(", and %d more", n-1)
			}
			s += "): ask the user to run `intermem-recover`."
		}
		add(secHealth, prioHealth, -1, len(s), fixed(s))
		worth = true
	}
	if n := in.Refused; n > 0 {
		s := fmt.Sprintf("- %d interrupted intermem %s could not be verified as this user's and will not be replayed: ask the user to run `intermem-recover`, which lists %s.",
			n, cli.Plural(n, "change", "changes"), cli.Plural(n, "it", "them"))
		add(secHealth, prioHealth, -1, len(s), fixed(s))
		worth = true
	}
	if ix := in.Index; ix != nil {
		pct := max(100*ix.Lines/200, 100*ix.Chars/25000)
		switch {
		case ix.Truncated:
			s := fmt.Sprintf("- MEMORY.md is %d lines / %s chars, over its load cap (200 lines / 25,000 chars): only lines 1–%d were loaded.",
				ix.Lines, cli.Thousands(ix.Chars), ix.LoadedLines)
			if n := len(ix.Beyond); n > 0 {
				s += fmt.Sprintf(" %d %s past the cap (Read %s for %s):", n, cli.Plural(n, "entry", "entries"), clean(ix.Path), cli.Plural(n, "it", "them"))
			}
			parent := add(secHealth, prioHealth, -1, len(s), fixed(s))
			for _, e := range ix.Beyond {
				e := e
				i := add(secHealth, prioLedger, parent, 10+min(len(e.Text), clipLedger), func() string {
					return rd.safe(fmt.Sprintf("  - L%d: %s", e.Line, rd.clip(e.Text, clipLedger)))
				})
				from(i, automem.IndexName, e.Line, "entry past the load cap", e.Flags)
			}
			worth = true
		case pct >= 80:
			// Near the cap. Synthesize helps only with memories ready to
			// promote (the ready line below says so when there are), and
			// tidy only once lines are past the cap: what helps now is
			// where new memories go.
			s := fmt.Sprintf("- MEMORY.md is %d lines / %s chars, %d%% of its load cap (200 lines / 25,000 chars): put new memories in topic files, one pointer line each in MEMORY.md, before entries fall off the end.",
				ix.Lines, cli.Thousands(ix.Chars), pct)
			add(secHealth, prioHealth, -1, len(s), fixed(s))
			worth = true
		}
	}
	if n := len(in.Stale); n > 0 {
		s := fmt.Sprintf("- %d promoted %s stale (confidence < %.1f): do not rely on %s unchecked:",
			n, cli.Plural(n, "fact is", "facts are"), score.StaleBelow, cli.Plural(n, "it", "them"))
		parent := add(secHealth, prioHealth, -1, len(s), fixed(s))
		for _, f := range in.Stale {
			f := f
			i := add(secHealth, prioStale, parent, 30+min(len(f.Text), clipStale), func() string {
				where := f.Doc
				if f.Section != "" {
					where += " § " + rd.clip(f.Section, clipTitle)
				}
				return rd.safe(fmt.Sprintf("  - %s: %q (%.2f)", where, rd.clip(f.Text, clipStale), f.Confidence))
			})
			from(i, f.Doc, 0, "stale fact", sc.flags(f.Section, f.Text))
		}
		worth = true
	}
	if n := in.MemFilesUnread; n > 0 {
		s := fmt.Sprintf("- The memory directory holds %s more topic %s than a session start reads (%s): they are not shown here; Read or grep %s when needed.",
			cli.Thousands(n), cli.Plural(n, "file", "files"), cli.Thousands(maxMemFiles), clean(in.MemoryDir))
		add(secHealth, prioHealth, -1, len(s), fixed(s))
		worth = true
	}
	if a := in.Agents; a != nil {
		s := fmt.Sprintf("- AGENTS.md holds %d promoted %s Claude Code may not load (%s): Read it when relevant; suggest adding `@AGENTS.md` to CLAUDE.md.",
			a.Facts, cli.Plural(a.Facts, "fact", "facts"), strings.TrimSuffix(a.Why, "."))
		add(secHealth, prioHealth, -1, len(s), fixed(s))
		worth = true
	}
	if due, since := in.SweepDue(); due {
		what := "No `intermem sweep` has run since facts were first promoted"
		if !in.LastSweep.IsZero() {
			what = "The last `intermem sweep` ran"
		}
		s := fmt.Sprintf("- %s over a week ago (%s): suggest `/intermem:synthesize` to the user; it starts with `intermem sweep --dry-run`, showing what would be archived.",
			what, since.UTC().Format("2006-01-02"))
		add(secHealth, prioHealth, -1, len(s), fixed(s))
		worth = true
	}
	if n := in.Ready; n > 0 {
		// Memories, not entries: auto-memory's and those written through
		// intermem are counted alike (plan.World.Judge).
		s := fmt.Sprintf("- %d %s ready for `/intermem:synthesize`: suggest it to the user.",
			n, cli.Plural(n, "memory is", "memories are"))
		add(secHealth, prioHealth, -1, len(s), fixed(s))
		worth = true
	} else if in.Index != nil && in.Index.Truncated {
		// Promoting would shrink MEMORY.md, but nothing is ready: moving
		// its largest sections into topic files does it now.
		s := "- Nothing is ready to promote, so MEMORY.md stays over its cap: suggest `/intermem:tidy` to the user (it moves MEMORY.md's largest sections into topic files, one pointer line each, so all of it loads)."
		add(secHealth, prioHealth, -1, len(s), fixed(s))
		worth = true
	}

	// Index of promoted knowledge.
	for _, d := range in.Docs {
		if len(d.Sections) == 0 {
			continue
		}
		var b strings.Builder
		b.WriteString("- " + d.Name)
		if d.Loaded {
			b.WriteString(" (loaded): ")
		} else {
			b.WriteString(" (not loaded; Read it when relevant): ")
			worth = true
		}
		shown := 0
		for _, s := range d.Sections {
			if fl := sc.flags(s.Title); len(fl) > 0 {
				withheld = append(withheld, Withheld{File: d.Name, What: "section title", Flags: fl})
				continue
			}
			if shown > 0 {
				b.WriteString(", ")
			}
			shown++
			title := s.Title
			if title == "" {
				title = "(top)"
			}
			fmt.Fprintf(&b, "%s (%d)", rd.clip(title, clipTitle), s.Facts)
		}
		if shown == 0 {
			continue
		}
		s := rd.clip(b.String(), 400)
		add(secIndex, prioIndex, -1, len(s), fixed(s))
	}
	for _, d := range in.Details {
		s := "- " + d.Name
		if d.Title != "" {
			s += ": " + rd.clip(d.Title, clipTitle)
		}
		if d.Facts > 0 {
			s += fmt.Sprintf(" (%d %s)", d.Facts, cli.Plural(d.Facts, "fact", "facts"))
		}
		i := add(secIndex, prioIndex, -1, len(s), fixed(s))
		from(i, d.Name, 0, "document", sc.flags(d.Name, d.Title))
		worth = true
	}

	// Memories, best first. The most relevant one-memory files show the
	// memory itself under their line, not only its description.
	bodies := 0
	for _, r := range Rank(in) {
		r := r
		prio := prioOther
		if r.rel.Points > 0 && !r.c.Stale {
			prio = prioRelevant
		}
		c := r.c
		lim := clipFact
		if c.Kind == "memory" {
			lim = clipMemory
		}
		i := add(secMemories, prio, -1, len(c.File)+8+min(len(c.Text), lim), func() string {
			var s string
			if c.Kind == "memory" {
				s = "- " + c.File
				if c.Type != "" {
					s += " [" + c.Type + "]"
				}
				s += ": " + rd.clip(c.Text, clipMemory)
			} else {
				s = fmt.Sprintf("- %s:%d: %s", c.File, c.Line, rd.clip(c.Text, clipFact))
			}
			if c.Stale {
				return rd.safe(s + " [stale: its citations are broken; check before relying on it]")
			}
			return rd.safe(s + r.rel.why())
		})
		from(i, c.File, c.Line, c.Kind, c.Flags)
		if prio == prioRelevant && c.Kind == "memory" && len(c.Flags) == 0 && bodies < maxBodies && showsMore(c) {
			bodies++
			j := add(secMemories, prioRelevant, i, 2+min(len(c.Content), clipBody), func() string {
				return rd.safe("  " + rd.clip(c.Content, clipBody))
			})
			items[j].list = listNone // a body that does not fit holds back no other memory
			from(j, c.File, c.Line, c.Kind, nil)
		}
		worth = true
	}

	// Other sources' knowledge that matters now.
	for _, it := range rankRelated(in, Words(in.Branch)) {
		line := relatedLine(rd, it)
		i := add(secRelated, prioRelated, -1, len(line), func() string { return line })
		what := "solution"
		if it.r.Source != "compound" {
			what = "learning"
		}
		from(i, it.r.Path, 0, what, append(append([]Flag(nil), it.r.Flags...), sc.flags(it.r.Title, it.r.Detail)...))
		worth = true
	}
	if line, shown, flagged := correctionsLine(rd, in); line != "" || len(flagged) > 0 {
		for _, c := range flagged {
			withheld = append(withheld, Withheld{File: c.Path, Line: c.Line, What: "correction", Flags: c.Flags})
		}
		if line != "" {
			i := add(secRelated, prioRelated, -1, len(line), func() string { return line })
			from(i, shown.Path, shown.Line, "corrections", sc.flags(shown.Old, shown.New))
			worth = true
		}
	}
	return items, worth, withheld
}

// SweepEvery is how old the last sweep (or, before any, the first
// promotion) may get before SessionStart suggests one. Hooks never edit
// documents, so a sweep needs a person (or the synthesize skill).
const SweepEvery = 7 * 24 * time.Hour

// SweepDue reports whether a sweep is due at in.Now, and since when the
// clock runs: the last sweep, or the first promotion when none has run.
// Nothing promoted, nothing to sweep.
func (in *Inputs) SweepDue() (bool, time.Time) {
	if in.FirstPromoted.IsZero() {
		return false, time.Time{}
	}
	since := in.FirstPromoted
	if in.LastSweep.After(since) {
		since = in.LastSweep
	}
	return in.Now.Sub(since) > SweepEvery, since
}

// maxBodies is how many of the most relevant one-memory files show their
// body, clipped to clipBody bytes.
const (
	maxBodies = 3
	clipBody  = 280
)

// showsMore reports whether a memory's body says more than the line that
// names it.
func showsMore(c *Candidate) bool {
	body := strings.Join(strings.Fields(c.Content), " ")
	return body != "" && body != strings.Join(strings.Fields(c.Text), " ")
}

// redactor scrubs secrets. Render uses Inputs.Redact, which must return
// what redact.String returns (a memo of it, say).
type redactor func(string) string

// plain redacts with redact.String itself.
var plain = redactor(redact.String)

func (in *Inputs) redactor() redactor {
	if in.Redact != nil {
		return redactor(in.Redact)
	}
	return plain
}

// safe makes a line printable with redact.String.
func safe(s string) string { return plain.safe(s) }

// clip is redactor.clip with redact.String.
func clip(text string, n int) string { return plain.clip(text, n) }

// safe makes a line printable: secrets redacted, valid UTF-8, one line.
// Render screens the result and then escapes it (cli.Escape).
func (red redactor) safe(s string) string {
	s = red(s)
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return strings.ReplaceAll(s, "\n", " ")
}

// clean makes a path or title printable on one line.
func clean(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return strings.Join(strings.Fields(s), " ")
}

// clip redacts text, puts it on one line and cuts it to at most n bytes
// at a character boundary, marking a cut with "…". Redaction comes first
// so that a cut can never hide part of a secret from the detector.
func (red redactor) clip(text string, n int) string {
	// Bound the work on huge entries; whatever is past this is never shown.
	if len(text) > 8*n+1024 {
		text = text[:8*n+1024]
	}
	s := clean(red(text))
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.TrimRight(s[:cut], " ") + "…"
}
