package score

import (
	"testing"
	"time"

	"github.com/intermem/intermem/pkg/cite"
)

func res(st ...cite.Status) []cite.Result {
	var out []cite.Result
	for _, s := range st {
		out = append(out, cite.Result{Citation: cite.Citation{Path: "p"}, Status: s, MovedTo: "q"})
	}
	return out
}

func TestConfidence(t *testing.T) {
	for _, tt := range []struct {
		name  string
		ev    Evidence
		want  float64
		stale bool
	}{
		{"nothing to check", Evidence{}, 0.5, false},
		{"one valid", Evidence{Results: res(cite.Valid)}, 0.8, false},
		{"valid counted once", Evidence{Results: res(cite.Valid, cite.Valid, cite.Valid)}, 0.8, false},
		{"one broken", Evidence{Results: res(cite.Broken)}, 0.1, true},
		{"valid and broken", Evidence{Results: res(cite.Valid, cite.Broken)}, 0.4, false},
		{"one moved", Evidence{Results: res(cite.Moved)}, 0.3, false},
		{"two moved", Evidence{Results: res(cite.Moved, cite.Moved)}, 0.1, true},
		{"unchecked is not evidence", Evidence{Results: res(cite.Unchecked, cite.Unchecked)}, 0.5, false},
		{"long stable bonus", Evidence{Results: res(cite.Valid), Sessions: 6, Threshold: 3}, 0.9, false},
		{"clamped at 0", Evidence{Results: res(cite.Broken, cite.Broken)}, 0, true},
		{"not in this project: lower, not stale", Evidence{Results: nip(1)}, 0.4, false},
		{"not in this project counted once", Evidence{Results: nip(4)}, 0.4, false},
		{"not in this project beside a valid one", Evidence{Results: append(res(cite.Valid), nip(1)...)}, 0.7, false},
	} {
		s := Of(tt.ev)
		if s.Confidence != tt.want || s.Stale != tt.stale {
			t.Errorf("%s: confidence %.2f stale %v, want %.2f %v", tt.name, s.Confidence, s.Stale, tt.want, tt.stale)
		}
	}
}

func TestDecayPenalty(t *testing.T) {
	day := 24 * time.Hour
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		age     time.Duration
		cited   bool
		penalty float64
		periods int
	}{
		{14 * day, true, 0, 0},
		{14*day + time.Second, true, 0.1, 1},
		{28 * day, true, 0.1, 1},
		{28*day + time.Second, true, 0.2, 2},
		{89 * day, false, 0, 0},
		{90 * day, false, 0, 0},
		{90*day + time.Hour, false, 0.1, 1},
		{104*day + time.Hour, false, 0.2, 2},
		{118*day + time.Hour, false, 0.30000000000000004, 3},
	} {
		p, n := DecayPenalty(t0, t0.Add(tt.age), tt.cited, DefaultReview)
		if n != tt.periods || p != tt.penalty {
			t.Errorf("age %v cited %v: penalty %v (%d periods), want %v (%d)", tt.age, tt.cited, p, n, tt.penalty, tt.periods)
		}
	}
	// Uncited facts from 0.5 cross the stale line only after three periods.
	p, _ := DecayPenalty(t0, t0.Add(118*day+time.Hour), false, DefaultReview)
	if c := Clamp(Base - p); c >= StaleBelow {
		t.Errorf("an uncited fact four months unconfirmed is at %.2f, not stale", c)
	}
	p, _ = DecayPenalty(t0, t0.Add(104*day+time.Hour), false, DefaultReview)
	if c := Clamp(Base - p); c < StaleBelow {
		t.Errorf("an uncited fact is stale already at %.2f", c)
	}
}

func nip(n int) []cite.Result {
	var out []cite.Result
	for range n {
		out = append(out, cite.Result{Citation: cite.Citation{Path: "templates/invoice.html"}, Status: cite.Unchecked, NotInProject: true})
	}
	return out
}

func TestNotInProjectReason(t *testing.T) {
	s := Of(Evidence{Results: nip(1)})
	if len(s.Reasons) != 1 || s.Reasons[0] != "cites templates/invoice.html: not in this project" {
		t.Errorf("reasons %q", s.Reasons)
	}
	if s.NotInProject != 1 || s.Unchecked != 1 {
		t.Errorf("counts: not in project %d, unchecked %d; want 1, 1", s.NotInProject, s.Unchecked)
	}
}
