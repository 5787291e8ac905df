package continuity

import (
	"fmt"
	"strings"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/screen"
	"github.com/intermem/intermem/pkg/store"
)

// recentDecisions is how many of the latest decisions SessionStart names.
const recentDecisions = 3

// Bootstrap renders where the work stands for SessionStart (package
// inject puts it ahead of the rest, see Boot) in at most maxBytes: the
// current phase (when one is started), the resume note of
// checkpoint c (Note; nil: none), and the latest decisions with why, each
// line escaped and what screening flags left out. Lines are cut or dropped
// from the end until it fits: decisions first, the phase line last. ""
// when there is nothing to say.
func Bootstrap(phase *store.Phase, c *store.Checkpoint, ds []store.PhaseDecision, maxBytes int) string {
	return Boot("", phase, c, ds, maxBytes)
}

// maxIdentity bounds the identity line, in bytes.
const maxIdentity = 200

// Boot is Bootstrap headed by the project's identity (one line, already
// redacted by the caller; "" for none): "Project: …", the line dropped
// last when the budget is short, left out when screening flags it.
func Boot(identity string, phase *store.Phase, c *store.Checkpoint, ds []store.PhaseDecision, maxBytes int) string {
	var lines []string
	if id := strings.Join(strings.Fields(identity), " "); id != "" && len(screen.Check(id)) == 0 {
		lines = append(lines, cli.Escape("Project: "+clip(id, maxIdentity)))
	}
	if phase != nil {
		l := fmt.Sprintf("Current phase: %d", phase.N)
		if phase.Name != "" {
			l += " (" + phase.Name + ")"
		}
		if phase.Closed.IsZero() {
			l += ", started " + phase.Started.UTC().Format("2006-01-02")
		} else {
			l += ", closed " + phase.Closed.UTC().Format("2006-01-02")
		}
		if len(screen.Check(l)) == 0 {
			lines = append(lines, cli.Escape(l+"."))
		}
	}
	if c != nil {
		lines = append(lines, noteLines(*c)...)
	}
	var named []string
	for i := len(ds) - 1; i >= 0 && len(named) < recentDecisions; i-- {
		d := strings.Join(strings.Fields(ds[i].Text+" (why: "+ds[i].Why+")"), " ")
		if len(screen.Check(d)) == 0 {
			named = append(named, cli.Escape(clip(d, 160)))
		}
	}
	if len(named) > 0 {
		lines = append(lines, "Recent decisions (intermem decisions lists them all): "+strings.Join(named, "; "))
	}
	return fit(lines, maxBytes)
}

// Note renders checkpoint c as a resume note of at most maxBytes: a
// heading line (when, where, which turn and phase), the summary or the
// last message (withheld when screening flags it, now or when it was
// recorded), and the files changed, each line escaped. "" when even the
// heading does not fit, or when it would be all there is (noteLines).
func Note(c store.Checkpoint, maxBytes int) string {
	return fit(noteLines(c), maxBytes)
}

// noteLines are the lines of checkpoint c's resume note; none when c
// holds nothing to resume from (no summary, last reply or file changed: a
// checkpoint of a session whose transcript could not be read), whose
// heading alone would say "Resume from …" and nothing after it.
func noteLines(c store.Checkpoint) []string {
	var head strings.Builder
	head.WriteString("Resume from the last session")
	var where []string
	if c.Branch != "" {
		where = append(where, "branch "+c.Branch)
	}
	if c.Commit != "" {
		where = append(where, "at "+c.Commit[:min(len(c.Commit), 12)])
	}
	where = append(where, c.Time.UTC().Format("2006-01-02 15:04 UTC"))
	if c.Turn > 0 {
		where = append(where, fmt.Sprintf("turn %d", c.Turn))
	}
	if c.Phase != nil {
		where = append(where, fmt.Sprintf("phase %d", *c.Phase))
	}
	switch c.Kind {
	case store.CheckpointFinal:
		where = append(where, "at its end")
	case store.CheckpointManual:
		where = append(where, "a saved checkpoint")
	case store.CheckpointCloseout:
		where = append(where, "its closeout")
	}
	fmt.Fprintf(&head, " (%s):", strings.Join(where, ", "))
	lines := []string{cli.Escape(head.String())}
	text := c.Summary
	label := "Summary: "
	if text == "" {
		text, label = c.Message, "Last reply: "
	}
	text = strings.Join(strings.Fields(text), " ")
	if text != "" {
		if c.Flagged || len(screen.Check(text)) > 0 {
			lines = append(lines, "(its text is withheld: it may be a prompt injection; see intermem checkpoints)")
		} else {
			lines = append(lines, cli.Escape(label+text))
		}
	}
	var files []string
	for _, f := range c.Files {
		if len(screen.Check(f)) == 0 {
			files = append(files, cli.Escape(f))
		}
	}
	if len(files) > 0 {
		lines = append(lines, "Files changed: "+strings.Join(files, ", "))
	}
	if len(lines) == 1 {
		return nil
	}
	return lines
}

// fit cuts or drops lines from the end until they fit in maxBytes (a line
// is cut while at least 20 bytes of it stay) and joins them; "" when not
// even the first line fits.
func fit(lines []string, maxBytes int) string {
	if len(lines) == 0 {
		return ""
	}
	for {
		n := 0
		for _, l := range lines {
			n += len(l) + 1
		}
		if n <= maxBytes {
			break
		}
		if len(lines) == 1 {
			return ""
		}
		over := n - maxBytes
		last := lines[len(lines)-1]
		if len(last)-over >= 20 {
			lines[len(lines)-1] = clip(last, len(last)-over-len("…"))
		} else {
			lines = lines[:len(lines)-1]
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

// clip cuts s to at most n bytes at a rune boundary and marks the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && (s[n]&0xC0) == 0x80 {
		n--
	}
	return strings.TrimRight(s[:n], " ") + "…"
}
