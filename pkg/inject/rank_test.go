package inject

import (
	"reflect"
	"testing"
	"time"
)

// TestRankOrder checks every tie-breaker, with the expected order written
// out by hand.
func TestRankOrder(t *testing.T) {
	old := now.Add(-90 * 24 * time.Hour)
	in := &Inputs{
		Now: now, Branch: "feature/late-fees", CwdRel: "internal/mail",
		Candidates: []Candidate{
			{ID: "aaaa", File: "a.md", Text: "Plain fact.", Sessions: 5, Confidence: -1, LastSeen: now.Add(-48 * time.Hour)},
			{ID: "bbbb", File: "b.md", Text: "Late fees are computed at render time.", Confidence: -1},
			{ID: "cccc", File: "c.md", Text: "Totals are rounded in `internal/invoice/total.go`.", Sessions: 2, Confidence: -1,
				Cites: []Cited{{Path: "internal/invoice/total.go", Exists: true, ModTime: now.Add(-30 * time.Minute)}}},
			{ID: "dddd", File: "d.md", Text: "The mailer retries twice: `internal/mail/send.go`.", Confidence: -1,
				Cites: []Cited{{Path: "internal/mail/send.go", Exists: true, ModTime: old}}},
			{ID: "eeee", File: "e.md", Text: "Confident fact.", Sessions: 5, Confidence: 0.9},
			{ID: "ffff", File: "f.md", Text: "Recently seen fact.", Sessions: 5, Confidence: -1, LastSeen: now.Add(-1 * time.Hour)},
			{ID: "0000", File: "g.md", Text: "Seen once.", Sessions: 1, Confidence: -1},
			{ID: "1111", File: "h.md", Text: "Seen once, larger id.", Sessions: 1, Confidence: -1},
			// The same text in a second file: shown once, at its best rank.
			{ID: "0000", File: "z.md", Text: "Seen once.", Sessions: 1, Confidence: -1},
			// A memory a loaded MEMORY.md pointer already names: dropped
			// unless relevant now.
			{ID: "2222", File: "p.md", Kind: "memory", Text: "Pointed to.", Sessions: 9, Confidence: -1, Pointed: true},
			{ID: "3333", File: "q.md", Kind: "memory", Text: "Pointed to, about late fees.", Confidence: -1, Pointed: true},
			// A cited file that does not exist, and one changed 3 weeks ago.
			{ID: "4444", File: "i.md", Text: "Cites `gone.go`.", Confidence: -1, Cites: []Cited{{Path: "gone.go"}}},
			{ID: "5555", File: "j.md", Text: "Cites `x/y.go`.", Confidence: -1,
				Cites: []Cited{{Path: "x/y.go", Exists: true, ModTime: now.Add(-21 * 24 * time.Hour)}}},
			{ID: "6666", File: "k.md", Line: 9, Text: "Second in k.md.", Confidence: -1},
			{ID: "7777", File: "k.md", Line: 3, Text: "First in k.md.", Confidence: -1},
		},
	}
	var got []string
	var points []int
	for _, r := range Rank(in) {
		got = append(got, r.c.ID+" "+r.c.File)
		points = append(points, r.rel.Points)
	}
	want := []string{
		"cccc c.md", // changed within the hour: 100, 2 sessions
		"bbbb b.md", // both branch words: 100, 0 sessions, b.md
		"3333 q.md", // both branch words: 100, pointed but relevant, q.md
		"dddd d.md", // cites a file under the cwd: 60
		"5555 j.md", // cites a file changed this month: 10
		"eeee e.md", // 5 sessions, confidence 0.9
		"ffff f.md", // 5 sessions, unknown confidence (0.5), seen an hour ago
		"aaaa a.md", // 5 sessions, seen two days ago
		"0000 g.md", // 1 session, g.md; its copy in z.md is dropped
		"1111 h.md",
		"4444 i.md", // nothing: the cited file is gone
		"7777 k.md", // document order before id: line 3
		"6666 k.md", // line 9
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("order:\n got %q\nwant %q", got, want)
	}
	wantPoints := []int{100, 100, 100, 60, 10, 0, 0, 0, 0, 0, 0, 0, 0}
	if !reflect.DeepEqual(points, wantPoints) {
		t.Errorf("points %v, want %v", points, wantPoints)
	}
}

func TestRelevantPartial(t *testing.T) {
	c := &Candidate{Text: "Fees are charged monthly; see `internal/billing/run.go`.",
		Cites: []Cited{{Path: "internal/billing/run.go", Exists: true, ModTime: now.Add(-3 * time.Hour)}}}
	r := Relevant(c, Words("feature/late-fees"), "internal/billing/cron", Words("internal/billing/cron"), now)
	// One of two branch words (50), changed today (60), one of two cwd
	// words ("billing" of billing, cron: 20).
	if r.Points != 50+60+20 || r.Branch != 1 || r.Recent != "internal/billing/run.go" || !r.Cwd {
		t.Errorf("got %+v", r)
	}
	if got := r.why(); got != " (relevant: branch; run.go changed today; cwd)" {
		t.Errorf("why %q", got)
	}
}

func TestWords(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"feature/late-fees", []string{"late", "fees"}},
		{"main", nil},
		{"fix/JIRA-1234_Invoice-PDF", []string{"jira", "1234", "invoice", "pdf"}},
		{"claude/add-vat-rates", []string{"vat", "rates"}},
		{"internal/invoice", []string{"invoice"}},
		{"feat/메모리-정리", []string{"메모리"}}, // "정리" has two characters
	} {
		if got := Words(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Words(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestHasWord(t *testing.T) {
	for _, c := range []struct {
		text, w string
		want    bool
	}{
		{"late fees apply", "fees", true},
		{"invoices render", "invoice", true}, // prefix of a longer word, 4+ characters
		{"vatrates", "vat", false},           // 3 characters: whole words only
		{"the vat rate", "vat", true},
		{"prelate", "late", false}, // must start a word
		{"x-late", "late", true},
	} {
		if got := hasWord([]byte(c.text), c.w); got != c.want {
			t.Errorf("hasWord(%q, %q) = %v", c.text, c.w, got)
		}
	}
}
