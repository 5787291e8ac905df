package e2e

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/intermem/intermem/e2e/fakeapi"
)

// resumeMarker is what the model answers in the first session: the final
// checkpoint keeps the last reply, and the second session's resume note
// shows it.
const resumeMarker = "RESUME-MARK: the login form is done; next is the session cookie."

// TestResume checks session continuity across two real sessions: the
// first one's SessionEnd records the final checkpoint (its last reply,
// from the transcript), and the SessionStart context of a second, new
// session — as Claude Code sends it to the model — carries the resume
// note made from it.
func TestResume(t *testing.T) {
	begin(t)
	snapshotPiece.require(t)
	injectPiece.require(t)
	cliPiece.require(t)
	t.Parallel()
	u := newUser(t)
	proj := mkdir(t, scratch(t), "proj")
	seedMemory(t, u.observe(t, proj).MemoryDir, "RESUME-MEM")

	first := u.claude(t, proj, "build the login form", model(func(r *fakeapi.Request) fakeapi.Reply {
		return fakeapi.Text(resumeMarker)
	}))
	first.requireHooksRan("SessionEnd", 1)
	id := first.sessionID()

	// The final checkpoint is in the store when the process has exited.
	cmd := exec.Command(filepath.Join(repo, "bin", "intermem"), "checkpoints", "--json", "--project", proj)
	cmd.Env = u.environ()
	cmd.Dir = u.home
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("intermem checkpoints: %v\n%s%s", err, out, stderr.String())
	}
	var rep struct {
		Checkpoints []struct {
			Kind, Session, Message string
		} `json:"checkpoints"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("intermem checkpoints --json: %v\n%s", err, out)
	}
	final := false
	for _, c := range rep.Checkpoints {
		final = final || (c.Kind == "final" && c.Session == id && strings.Contains(c.Message, "RESUME-MARK"))
	}
	if !final {
		t.Fatalf("no final checkpoint of session %s holding its last reply after SessionEnd:\n%s", id, out)
	}

	second := u.claude(t, proj, "where were we?")
	if second.sessionID() == id {
		t.Fatalf("the second run reused session %s", id)
	}
	second.requireSent("Resume from the last session", "the resume note in SessionStart's context")
	second.requireSent("Last reply: "+resumeMarker, "the first session's last reply in the resume note")
}
