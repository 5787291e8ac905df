package cite

import (
	"path/filepath"
	"testing"
)

// TestGate is the acceptance gate: every known-stale memory is caught (broken
// or moved) and no valid-but-unusual citation is reported broken.
func TestGate(t *testing.T) {
	dir := buildProject(t, filepath.Join("testdata", "gate", "project.txtar"), filepath.Join("testdata", "gate", "history.txt"))
	c := NewChecker(dir)

	stale := bullets(t, filepath.Join("testdata", "gate", "stale.md"))
	if len(stale) < 40 {
		t.Fatalf("stale set has %d entries, want at least 40", len(stale))
	}
	caught := 0
	for _, e := range stale {
		rs := c.Check(Extract(e))
		hit := false
		for _, r := range rs {
			if r.Status == Broken || r.Status == Moved {
				hit = true
			}
		}
		if testing.Verbose() {
			t.Logf("%s\n%s", e, dump(rs))
		}
		if hit {
			caught++
		} else {
			t.Errorf("stale entry not caught: %s\n%s", e, dump(rs))
		}
	}
	t.Logf("stale: %d/%d caught", caught, len(stale))

	valid := bullets(t, filepath.Join("testdata", "gate", "valid.md"))
	if len(valid) < 40 {
		t.Fatalf("valid set has %d entries, want at least 40", len(valid))
	}
	total, broken := 0, 0
	for _, e := range valid {
		ok := false
		for _, r := range c.Check(Extract(e)) {
			total++
			switch r.Status {
			case Valid:
				ok = true
			case Broken, Moved:
				broken++
				t.Errorf("valid entry: %q is %s (%s)\n  in: %s", r.Text, r.Status, r.Detail, e)
			default:
				t.Logf("valid entry: %q is %s (%s)", r.Text, r.Status, r.Detail)
			}
		}
		if !ok {
			t.Errorf("valid entry has no valid citation: %s", e)
		}
	}
	t.Logf("valid: %d citations, %d broken or moved", total, broken)
}

func dump(rs []Result) string {
	s := ""
	for _, r := range rs {
		s += "  " + r.Text + " [" + string(r.Kind) + " " + r.Path + "] " + string(r.Status) + ": " + r.Detail + "\n"
	}
	if s == "" {
		s = "  (no citations)\n"
	}
	return s
}
