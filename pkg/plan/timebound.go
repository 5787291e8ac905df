package plan

import (
	"strings"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/lazyre"
)

// TimeBound reports whether an entry records the state of something at a
// moment rather than a lasting fact, and says why. Such an entry passes the
// stability test (a snapshot nobody updates is unchanged across sessions)
// yet goes stale the day after it was written, so it is listed apart in the
// plan, never offered. It is time-bound when:
//
//   - its section is a snapshot or a status, or says to run something for
//     the current state: "Pipeline snapshots — run `make status` for
//     current", "Status (2026-04-02)", "Current state";
//   - its lead (the first line up to its first separator, at most
//     leadRunes) dates a state: a date together with a state word, as in
//     "Pipeline state (2026-04-02): …", "[TODO #35 COMPLETE 2026-06-15 …]",
//     "현재(2026-05-24): …";
//   - it opens with "As of <date>" or "Currently, as of …".
//
// A date alone is not enough (28% of real memory bullets carry one: a fix's
// date, a commit's), nor is a state word alone ("the state machine lives in
// …"). A one-memory file is judged by its description (or name).
func TimeBound(e automem.Entry) (string, bool) {
	if why, ok := timeBoundSection(e.Section); ok && e.Kind != automem.Memory {
		return why, true
	}
	text := e.Text
	if e.Kind == automem.Memory {
		text = e.Description
		if strings.TrimSpace(text) == "" {
			text = e.Name
		}
	}
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	if asOfRE.Get().MatchString(line) {
		return "dated status: “" + clipRunes(line, 50) + "”", true
	}
	if lead := leadOf(line); datedState(lead) {
		return "dated status: “" + clipRunes(lead, 50) + "”", true
	}
	return "", false
}

// datedState reports whether s holds a state word right next to a date
// ("state (2026-04-02)", "COMPLETE 2026-06-15", "현재(2026-05-24)"): a
// date elsewhere in the line (a fix's date, a commit's) does not make it.
func datedState(s string) bool {
	dates := dateRE.Get().FindAllStringIndex(s, 4)
	if dates == nil {
		return false
	}
	for _, w := range stateWordRE.Get().FindAllStringIndex(s, 4) {
		for _, d := range dates {
			if gap(w, d) <= nearGap {
				return true
			}
		}
	}
	return false
}

// nearGap is how many bytes may separate a state word from its date: a
// space and a bracket, "state (2026-…", "COMPLETE 2026-…".
const nearGap = 4

func gap(a, b []int) int {
	if a[1] <= b[0] {
		return b[0] - a[1]
	}
	return a[0] - b[1]
}

// timeBoundSection reports whether a section title announces snapshots or
// a status.
func timeBoundSection(title string) (string, bool) {
	if title == "" {
		return "", false
	}
	switch {
	case snapshotRE.Get().MatchString(title),
		forCurrentRE.Get().MatchString(title),
		sectionStateRE.Get().MatchString(title) && (dateRE.Get().MatchString(title) || currentRE.Get().MatchString(title)):
		return "in section “" + clipRunes(title, 50) + "”", true
	}
	return "", false
}

// leadRunes bounds the lead of an entry's first line.
const leadRunes = 90

// leadOf returns the start of a line up to its first separator (": ",
// "：", " — ", " – ", " - "), at most leadRunes runes.
func leadOf(line string) string {
	end := len(line)
	for _, sep := range []string{": ", "：", " — ", " – ", " - "} {
		if k := strings.Index(line, sep); k >= 0 && k < end {
			end = k
		}
	}
	if strings.HasSuffix(line[:end], ":") {
		end--
	}
	return clipRunes(line[:end], leadRunes)
}

func clipRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

var (
	dateRE = lazyre.New(`\b(19|20)\d\d-\d\d(-\d\d)?\b|\b(19|20)\d\d/\d\d/\d\d\b|\d{4}年\d{1,2}月`)
	// Words that make a dated lead a record of a state. Status tokens
	// count in capitals only ("COMPLETE 2026-06-15"): "done" and
	// "complete" are ordinary words, and "TODO #60" is a reference.
	stateWordRE = lazyre.New(`(?i:\b(state|status|snapshot|progress|currently|current|as of|today|so far|in progress)\b)|\b(DONE|COMPLETE|COMPLETED|WIP|PENDING|BLOCKED)\b|현재|진행|当前|目前|进度|状态|現在|(?i:atualmente|estado atual|actualmente)`)
	asOfRE      = lazyre.New(`(?i)^\W{0,6}(as of|currently,? as of|state as of|status as of)\s+((19|20)\d\d|today|now|this)`)
	snapshotRE  = lazyre.New(`(?i)\bsnapshots?\b|스냅샷|快照`)
	// "… run `make status` for current", "see … for the latest".
	forCurrentRE   = lazyre.New(`(?i)\bfor (the )?(current|latest|live)\b`)
	sectionStateRE = lazyre.New(`(?i)\b(status|state|progress)\b|진행|进度|状态`)
	currentRE      = lazyre.New(`(?i)\b(current|currently|latest|today|now)\b|현재|当前|目前`)
)
