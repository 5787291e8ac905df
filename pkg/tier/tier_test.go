package tier

import (
	"strings"
	"testing"
)

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Build & Test":                         "build-test",
		"Déploiement":                          "déploiement",
		"배포 절차":                                "배포-절차",
		"modernc.org/sqlite (pure Go, no CGO)": "modernc-org-sqlite-pure-go-no-cgo",
		"Cross-Cutting Lessons (not covered by any single guide)": "cross-cutting-lessons-not-covered-by",
		"!!!":    "notes",
		"  Ops ": "ops",
	} {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}

// A date or a dated note at the end of a heading does not make a new
// topic; a date that is the title, or one inside it, stays.
func TestTopicTitle(t *testing.T) {
	for in, want := range map[string]string{
		"Block Metrics Hygiene (updated 2026-04-02)": "Block Metrics Hygiene",
		"Block Metrics Hygiene (updated 2026-05-11)": "Block Metrics Hygiene",
		"Block Metrics Hygiene":                      "Block Metrics Hygiene",
		"BOT Strategy (2026-03-26)":                  "BOT Strategy",
		"对话记录摘要（2026-02-28）":                         "对话记录摘要",
		"Architecture Patterns Applied (2026)":       "Architecture Patterns Applied",
		"Deploy notes — 2026-04-02":                  "Deploy notes",
		"Deploy notes [2026-04-02]":                  "Deploy notes",
		"Deploy notes (added April 2)":               "Deploy notes",
		"Deploy notes (as of v2.3)":                  "Deploy notes",
		"Deploy notes (updated Apr 2, 2026) (2026)":  "Deploy notes",
		"Deploy notes 2026-04-02":                    "Deploy notes",
		"2026-04-02":                                 "2026-04-02",
		"Q3 2026 roadmap":                            "Q3 2026 roadmap",
		"Python 3.12 (pure Go, no CGO)":              "Python 3.12 (pure Go, no CGO)",
		"Port 8080":                                  "Port 8080",
	} {
		if got := TopicTitle(in); got != want {
			t.Errorf("TopicTitle(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSetIndexRoundTrip(t *testing.T) {
	block := RenderIndex([]Topic{{Title: "Architecture", Path: "docs/intermem/architecture.md", Facts: []string{"Money is integer cents everywhere.", "Handlers never build SQL."}}})
	for name, doc := range map[string]string{
		"lf":         "# Guide\n\n- a\n",
		"crlf":       "# Guide\r\n\r\n- a\r\n",
		"no-newline": "# Guide\n\n- a",
		"empty":      "",
	} {
		t.Run(name, func(t *testing.T) {
			with := SetIndex([]byte(doc), block)
			if !strings.Contains(string(with), IndexBegin) || !strings.Contains(string(with), "→ docs/intermem/architecture.md") {
				t.Fatalf("no index:\n%s", with)
			}
			if name == "crlf" && strings.Contains(strings.ReplaceAll(string(with), "\r\n", ""), "\n") {
				t.Errorf("CRLF document got bare LF lines:\n%q", with)
			}
			if !strings.HasPrefix(string(with), strings.TrimRight(doc, "\r\n")) {
				t.Errorf("content before the index changed:\n%q", with)
			}
			// Rewriting with the same block changes nothing; a new block
			// replaces the old one in place.
			if again := SetIndex(with, block); string(again) != string(with) {
				t.Errorf("SetIndex is not idempotent:\n%q\n%q", with, again)
			}
			other := RenderIndex([]Topic{{Title: "Ops", Path: "docs/intermem/ops.md", Facts: []string{"Deploy on Tuesdays."}}})
			replaced := SetIndex(with, other)
			if strings.Count(string(replaced), IndexBegin) != 1 || strings.Contains(string(replaced), "Architecture") {
				t.Errorf("replace did not swap the block:\n%s", replaced)
			}
			// Removing the index restores the document, up to the blank line
			// it was separated by.
			gone := SetIndex(with, "")
			if strings.TrimRight(string(gone), "\r\n") != strings.TrimRight(doc, "\r\n") {
				t.Errorf("removing the index left:\n%q\nwant:\n%q", gone, doc)
			}
		})
	}
}

func TestOneLiner(t *testing.T) {
	facts := []string{"**Money** is integer `cents` everywhere in the ledger.", "Handlers never build SQL themselves.", "Third fact."}
	// Part one is 35 runes (+2 for "; "), part two 36: it fits in 80, not in 64.
	for max, want := range map[int]string{
		64: "Money is integer cents everywhere …; …",
		80: "Money is integer cents everywhere …; Handlers never build SQL themselves.; …",
		90: "Money is integer cents everywhere …; Handlers never build SQL themselves.; Third fact.",
	} {
		if got := OneLiner(facts, max); got != want {
			t.Errorf("OneLiner(max %d) = %q\nwant %q", max, got, want)
		}
	}
}
