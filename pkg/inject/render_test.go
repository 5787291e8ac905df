package inject

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

var now = time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)

// small is a hand-made input whose full rendering is written out below.
func small() *Inputs {
	return &Inputs{
		Now:       now,
		Budget:    1200,
		MemoryDir: "/home/u/.claude/projects/-p/memory",
		Branch:    "feature/late-fees",
		Index: &IndexInfo{
			Path: "/home/u/.claude/projects/-p/memory/MEMORY.md", Lines: 203, Chars: 9120,
			LoadedLines: 200, Truncated: true,
			Beyond: []LedgerEntry{{Line: 201, Text: "Run `make db` before\n  the integration tests."}, {Line: 203, Text: "Mailer retries twice."}},
		},
		Ready:       2,
		Interrupted: []string{"promote 3 entries"},
		Agents:      &AgentsInfo{Facts: 1, Why: "CLAUDE.md does not import it"},
		Stale:       []StaleFact{{ID: "aaaaaaaaaaaaaaaa", Doc: "AGENTS.md", Section: "Architecture", Text: "PDFs render via `internal/render/pdf.go`.", Confidence: 0.1}},
		Docs: []DocIndex{
			{Name: "CLAUDE.md", Loaded: true, Sections: []SectionCount{{"Working agreements", 2}}},
			{Name: "AGENTS.md", Sections: []SectionCount{{"Architecture", 1}, {"", 1}}},
		},
		Details: []Detail{{Name: "docs/intermem/billing.md", Title: "Billing", Facts: 3}},
		Candidates: []Candidate{
			{ID: "1111111111111111", File: "debugging.md", Line: 4, Kind: "fact", Text: "Flaky test: rerun with -count=1.", Sessions: 5, Confidence: -1},
			{ID: "2222222222222222", File: "project_late_fees.md", Line: 1, Kind: "memory", Type: "project",
				Text: "Late fees are computed at render time", Body: "late_fees\nNever stored.", Sessions: 1, Confidence: -1},
		},
	}
}

const smallWant = `# intermem: project memory not already in your context
Health:
- An intermem change was interrupted (promote 3 entries): ask the user to run ` + "`intermem-recover`" + `.
- MEMORY.md is 203 lines / 9,120 chars, over its load cap (200 lines / 25,000 chars): only lines 1–200 were loaded. 2 entries past the cap (Read /home/u/.claude/projects/-p/memory/MEMORY.md for them):
  - L201: Run ` + "`make db`" + ` before the integration tests.
  - L203: Mailer retries twice.
- 1 promoted fact is stale (confidence < 0.3): do not rely on it unchecked:
  - AGENTS.md § Architecture: "PDFs render via ` + "`internal/render/pdf.go`" + `." (0.10)
- AGENTS.md holds 1 promoted fact Claude Code may not load (CLAUDE.md does not import it): Read it when relevant; suggest adding ` + "`@AGENTS.md`" + ` to CLAUDE.md.
- 2 memories are ready for ` + "`/intermem:synthesize`" + `: suggest it to the user.
Promoted knowledge (curated documents):
- CLAUDE.md (loaded): Working agreements (2)
- AGENTS.md (not loaded; Read it when relevant): Architecture (1), (top) (1)
- docs/intermem/billing.md: Billing (3 facts)
Memories not loaded (topic files in /home/u/.claude/projects/-p/memory/; Read for detail):
- project_late_fees.md [project]: Late fees are computed at render time (relevant: branch)
- debugging.md:4: Flaky test: rerun with -count=1.`

func TestRenderSmall(t *testing.T) {
	res := Render(small())
	if res.Text != smallWant {
		t.Fatalf("got:\n%s\n\nwant:\n%s", res.Text, smallWant)
	}
	if res.Items != 13 || res.Omitted != 0 {
		t.Errorf("items %d omitted %d, want 13 and 0", res.Items, res.Omitted)
	}
	if res.Tokens != (len(smallWant)+2)/3 || res.Chars != utf8.RuneCountInString(smallWant) {
		t.Errorf("tokens %d chars %d", res.Tokens, res.Chars)
	}
}

// TestRenderCutsWholeItems renders the same input under shrinking
// budgets: each rendering is a whole-line subset of the full one plus a
// closing "… N more" line whose N is exactly the number of item lines
// missing, within the budget.
func TestRenderCutsWholeItems(t *testing.T) {
	in := small()
	full := Render(in)
	fullLines := map[string]bool{}
	for _, l := range strings.Split(full.Text, "\n") {
		fullLines[l] = true
	}
	for _, b := range []int{40, 60, 100, 150, 200, 250, 300, 350, 400, 440} {
		in.Budget = b
		res := Render(in)
		if len(res.Text) > 3*b {
			t.Errorf("budget %d: %d bytes", b, len(res.Text))
		}
		if res.Text == "" {
			if b >= 100 {
				t.Errorf("budget %d: nothing rendered", b)
			}
			continue
		}
		lines := strings.Split(res.Text, "\n")
		shown := 0
		for i, l := range lines {
			if i == len(lines)-1 && strings.HasPrefix(l, "… ") {
				var n, need int
				if _, err := fmt.Sscanf(l, "… %d more: intermem context --budget %d", &n, &need); err != nil {
					t.Fatalf("budget %d: bad omission line %q", b, l)
				}
				if n != res.Omitted || n != full.Items-res.Items {
					t.Errorf("budget %d: omission line says %d, result %d, want %d", b, n, res.Omitted, full.Items-res.Items)
				}
				if need <= b || need%100 != 0 {
					t.Errorf("budget %d: suggests --budget %d", b, need)
				}
				continue
			}
			if !fullLines[l] {
				t.Errorf("budget %d: line %q is not a whole line of the full rendering", b, l)
			}
			if strings.HasPrefix(l, "-") || strings.HasPrefix(l, "  -") {
				shown++
			}
		}
		if shown != res.Items {
			t.Errorf("budget %d: %d item lines, result says %d", b, shown, res.Items)
		}
		if res.Omitted == 0 {
			t.Errorf("budget %d: nothing omitted from a %d-byte rendering", b, len(full.Text))
		}
	}
}

// TestRenderPriorities: under a tight budget the health lines come first,
// then the stale facts, the relevant memory, the index, the ledger and
// the other memories.
func TestRenderPriorities(t *testing.T) {
	in := small()
	in.Budget = 240 // 720 bytes
	res := Render(in)
	for _, want := range []string{"interrupted", "MEMORY.md is 203 lines", "1 promoted fact is stale", "AGENTS.md holds 1"} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("missing %q in\n%s", want, res.Text)
		}
	}
	if strings.Contains(res.Text, "debugging.md") {
		t.Errorf("the irrelevant memory was shown before higher priorities:\n%s", res.Text)
	}
	in.Budget = 420
	res = Render(in)
	if !strings.Contains(res.Text, "project_late_fees.md") || strings.Contains(res.Text, "L203") {
		t.Errorf("budget 420: want the relevant memory and not the whole ledger:\n%s", res.Text)
	}
}

func TestRenderDeterministic(t *testing.T) {
	in := many(300)
	a := Render(in)
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 5; i++ {
		rng.Shuffle(len(in.Candidates), func(x, y int) { in.Candidates[x], in.Candidates[y] = in.Candidates[y], in.Candidates[x] })
		b := Render(in)
		if a.Text != b.Text {
			t.Fatalf("rendering %d differs after shuffling the candidates", i)
		}
	}
	if a.Text == "" || a.Omitted == 0 {
		t.Fatalf("want a full budget with omissions, got %d omitted:\n%s", a.Omitted, a.Text)
	}
}

func TestRenderNothingWorthSaying(t *testing.T) {
	in := &Inputs{Now: now, Budget: 1200, Docs: []DocIndex{{Name: "CLAUDE.md", Loaded: true, Sections: []SectionCount{{"Build", 2}}}}}
	if res := Render(in); res.Text != "" || res.Items != 0 {
		t.Errorf("index of loaded documents alone rendered %q", res.Text)
	}
	if res := Render(&Inputs{Now: now}); res.Text != "" || res.Budget != DefaultBudget {
		t.Errorf("empty input rendered %q (budget %d)", res.Text, res.Budget)
	}
}

func TestRenderMaxChars(t *testing.T) {
	in := many(2000)
	for _, b := range []int{3000, 5000, 100000} {
		in.Budget = b
		res := Render(in)
		if res.Chars >= MaxChars || Chars(res.Text) != res.Chars {
			t.Errorf("budget %d: %d chars", b, res.Chars)
		}
		if res.Chars < MaxChars-400 {
			t.Errorf("budget %d: only %d chars used of %d", b, res.Chars, MaxChars)
		}
	}
	// Korean text: 3 bytes a character; bytes bind before characters.
	in.Budget = 100000
	for i := range in.Candidates {
		in.Candidates[i].Text = strings.Repeat("메모리 항목 ", 40)
	}
	res := Render(in)
	if res.Chars >= MaxChars || !utf8.ValidString(res.Text) {
		t.Errorf("korean: %d chars, valid %v", res.Chars, utf8.ValidString(res.Text))
	}
	for _, l := range strings.Split(res.Text, "\n") {
		if strings.Contains(l, "메모리") && !strings.Contains(l, "…") {
			t.Errorf("long line not clipped: %q", l)
		}
	}
}

func TestRenderRedacts(t *testing.T) {
	secret := "ghp_" + strings.Repeat("aB3dE5", 6)
	in := small()
	in.Candidates[0].Text = "Push with token: " + secret
	in.Index.Beyond[0].Text = "token " + secret
	in.MemoryDir = "/home/u/" + secret
	res := Render(in)
	if strings.Contains(res.Text, secret) || strings.Contains(res.Text, "aB3dE5aB3dE5") {
		t.Fatalf("secret in output:\n%s", res.Text)
	}
	if !strings.Contains(res.Text, "[REDACTED:") {
		t.Errorf("no redaction marker:\n%s", res.Text)
	}
}

func TestClip(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"two\n  lines\there", 20, "two lines here"},
		{"abcdefghij", 8, "abcde…"},
		{"ab cdefghij", 6, "ab…"},
		{"ééééé", 8, "éé…"}, // 10 bytes; cut at a character boundary
		{"a\xffb", 10, "a\uFFFDb"},
	} {
		if got := clip(c.in, c.n); got != c.want || len(got) > max(c.n, len(c.want)) {
			t.Errorf("clip(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

// many builds an input with n ranked candidates of varied text and a
// 60-entry ledger, for determinism and size tests and the benchmark.
func many(n int) *Inputs {
	in := &Inputs{
		Now: now, Budget: 1200, MemoryDir: "/home/u/.claude/projects/-home-u-proj/memory",
		Branch: "feat/invoice-render", CwdRel: "internal/invoice",
		Index: &IndexInfo{Path: "/home/u/.claude/projects/-home-u-proj/memory/MEMORY.md", Lines: 260, Chars: 21000, LoadedLines: 200, Truncated: true},
		Ready: 17,
	}
	for i := 0; i < 60; i++ {
		in.Index.Beyond = append(in.Index.Beyond, LedgerEntry{Line: 201 + i, Text: fmt.Sprintf("Capped fact %d about `cmd/tool/flags.go` and the release checklist", i)})
	}
	for i := 0; i < n; i++ {
		c := Candidate{
			ID: fmt.Sprintf("%016x", uint64(i)*0x9e3779b97f4a7c15), File: fmt.Sprintf("topic_%02d.md", i%50), Line: 3 + i/50,
			Kind: "fact", Sessions: i % 7, Confidence: -1, LastSeen: now.Add(-time.Duration(i%13) * time.Hour),
			Text: fmt.Sprintf("Fact %d: `internal/pkg%d/file%d.go` handles case %d; keep it in sync with the docs and the tests.", i, i%20, i%9, i),
		}
		if i%5 == 0 {
			c.Text += " Rendering invoices needs this."
		}
		if i%11 == 0 {
			c.Kind, c.Type, c.File, c.Line = "memory", "feedback", fmt.Sprintf("feedback_%03d.md", i), 1
			c.Text = fmt.Sprintf("Preference %d: terse reviews that cite file:line", i)
		}
		c.Cites = []Cited{{Path: fmt.Sprintf("internal/pkg%d/file%d.go", i%20, i%9), Exists: i%3 != 0, ModTime: now.Add(-time.Duration(i) * 3 * time.Hour)}}
		in.Candidates = append(in.Candidates, c)
	}
	return in
}

func BenchmarkRender1000(b *testing.B) {
	in := many(1000)
	b.ReportAllocs()
	for b.Loop() {
		Render(in)
	}
}

// TestRenderPrefixes: under any budget, the memories shown are the first
// k of the ranking and the ledger lines the first j past the cap — a
// higher-ranked item that does not fit is never passed over for a
// shorter, lower-ranked one.
func TestRenderPrefixes(t *testing.T) {
	in := many(300)
	in.MemoryDir = "/" + strings.Repeat("long/", 30) + "memory"
	// Make the most relevant memory long, so that shorter ones would fit
	// where it does not.
	in.Candidates[5].Text = strings.Repeat("Rendering invoices is subtle. ", 6)
	var ranked []string
	for _, r := range Rank(in) {
		if r.c.Kind == "memory" {
			ranked = append(ranked, "- "+r.c.File+" [")
		} else {
			ranked = append(ranked, fmt.Sprintf("- %s:%d: ", r.c.File, r.c.Line))
		}
	}
	for b := 100; b <= 3000; b += 37 {
		in.Budget = b
		res := Render(in)
		mem, ledger := 0, 0
		section := ""
		for _, l := range strings.Split(res.Text, "\n") {
			switch {
			case !strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "  -"):
				section = l
			case strings.HasPrefix(section, "Memories"):
				if !strings.HasPrefix(l, ranked[mem]) {
					t.Fatalf("budget %d: memory %d is %q, want %q", b, mem, l, ranked[mem])
				}
				mem++
			case strings.HasPrefix(l, "  - L"):
				if want := fmt.Sprintf("  - L%d: ", 201+ledger); !strings.HasPrefix(l, want) {
					t.Fatalf("budget %d: ledger line %q, want %q", b, l, want)
				}
				ledger++
			}
		}
	}
}

// TestRenderSuggestsTidy: over the cap with nothing ready to promote, the
// health lines suggest /intermem:tidy; with something ready, or under the
// cap, they do not.
func TestRenderSuggestsTidy(t *testing.T) {
	const tidyLine = "- Nothing is ready to promote, so MEMORY.md stays over its cap: suggest `/intermem:tidy` to the user (it moves MEMORY.md's largest sections into topic files, one pointer line each, so all of it loads)."
	in := small()
	in.Ready = 0
	text := Render(in).Text
	if !strings.Contains(text, "\n"+tidyLine+"\n") {
		t.Fatalf("over the cap, nothing ready: no tidy line in\n%s", text)
	}
	if strings.Contains(text, "ready for `/intermem:synthesize`") {
		t.Fatalf("nothing is ready, yet:\n%s", text)
	}
	in.Ready = 2
	if text := Render(in).Text; strings.Contains(text, "/intermem:tidy") {
		t.Fatalf("entries are ready, yet tidy is suggested:\n%s", text)
	}
	in.Ready = 0
	in.Index.Lines, in.Index.LoadedLines, in.Index.Truncated, in.Index.Beyond = 150, 150, false, nil
	if text := Render(in).Text; strings.Contains(text, "/intermem:tidy") {
		t.Fatalf("under the cap, yet tidy is suggested:\n%s", text)
	}
}

// Near the load cap: the line says where new memories go, and suggests
// synthesize only through the ready line, when something is ready.
func TestRenderNearCap(t *testing.T) {
	const near = "- MEMORY.md is 170 lines / 9,120 chars, 85% of its load cap (200 lines / 25,000 chars): put new memories in topic files, one pointer line each in MEMORY.md, before entries fall off the end."
	in := small()
	in.Index.Lines, in.Index.LoadedLines, in.Index.Truncated, in.Index.Beyond = 170, 170, false, nil
	in.Ready = 0
	text := Render(in).Text
	if !strings.Contains(text, "\n"+near+"\n") {
		t.Fatalf("near the cap: no line\n%s\nin\n%s", near, text)
	}
	if strings.Contains(text, "/intermem:synthesize") || strings.Contains(text, "/intermem:tidy") {
		t.Fatalf("nothing is ready and nothing is past the cap, yet a command is suggested:\n%s", text)
	}
	in.Ready = 2
	text = Render(in).Text
	if !strings.Contains(text, "\n- 2 memories are ready for `/intermem:synthesize`: suggest it to the user.\n") {
		t.Fatalf("near the cap with 2 ready: no ready line in\n%s", text)
	}
}
