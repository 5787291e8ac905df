package plan

import (
	"testing"

	"github.com/intermem/intermem/pkg/automem"
)

func TestTimeBound(t *testing.T) {
	fact := func(section, text string) automem.Entry {
		return automem.Entry{Kind: automem.Fact, Section: section, Text: text}
	}
	for _, c := range []struct {
		e    automem.Entry
		want bool
	}{
		{fact("Pipeline", "Pipeline state (2026-04-02): ingest green, export blocked on the S3 quota."), true},
		{fact("Pipeline snapshots — run `make status` for current", "ingest 41 jobs, export 3 failing"), true},
		{fact("Status (2026-04-02)", "3 of 5 migrations applied"), true},
		{fact("Current state", "the beta flag is on for 10% of users"), true},
		{fact("Notes", "As of 2026-04-02 the staging cluster runs 1.29."), true},
		{fact("Notes", "[TODO #35 COMPLETE 2026-06-15 (Tdata 5.10.29): Ssjacent→Symbol + Underlying col](p.md)"), true},
		{fact("Notes", "현재(2026-05-24): Phase 1~4 main 머지 완료"), true},
		{automem.Entry{Kind: automem.Memory, Name: "release", Description: "Release status (2026-04-02): RC2 cut, waiting on QA", Text: "body"}, true},

		{fact("Notes", "Fixed 2026-04-02: the exporter retries on 503; use `--retries 3`."), false},
		{fact("Notes", "The state machine lives in `internal/fsm`; transitions are table-driven."), false},
		{fact("Notes", "De-gated 2026-06-02 (TODO #60): provenance vocab LIVE/CACHED/NO DATA"), false},
		{fact("Notes", "MA50→EMA switch — BOT trend gate now EMA50 (commit 0223a0c, 2026-06-08)"), false},
		{fact("BOT Strategy (2026-03-26)", "Impl: `score_breakout()` in swing_scanner/scoring.R"), false},
		{fact("当前项目：员工报销智能助手", "核心痛点：合规风险"), false},
		{fact("Current Architecture", "Handlers never build SQL."), false},
		{fact("Notes", "T-0017 verify-before-done over-fire fix (2026-05-28): new `is_verification_command`"), false},
		{automem.Entry{Kind: automem.Memory, Name: "deploy", Description: "Deploys need a manual approval", Text: "Status (2026-04-02): x"}, false},
	} {
		why, got := TimeBound(c.e)
		if got != c.want {
			t.Errorf("TimeBound(§%q %q) = %v (%s), want %v", c.e.Section, c.e.Text+c.e.Description, got, why, c.want)
		}
	}
}
