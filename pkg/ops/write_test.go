package ops

import (
	"errors"
	"testing"
	"time"

	"github.com/intermem/intermem/pkg/journal"
)

const writeLine = `{"id":"c1de124b816f280f","type":"insight","title":"Builds are static","content":"Every binary is built with CGO_ENABLED=0.","source":"cli","created_at":"2026-11-01T10:00:00Z"}` + "\n"

func TestWriteAppend(t *testing.T) {
	op, err := Write("/p/.intermem/written.jsonl", []byte(writeLine))
	if err != nil {
		t.Fatal(err)
	}
	if op.Kind != KindWrite || len(op.Steps) != 1 || op.Steps[0].ID != "c1de124b816f280f" || op.Entries[0] != "c1de124b816f280f" {
		t.Fatalf("op = %+v", op)
	}
	s := &op.Steps[0]
	// Absent log: created holding the line.
	got, keep, err := applyWriteAppend(s, nil, false, nil)
	if err != nil || !keep || string(got) != writeLine {
		t.Fatalf("new log = %q, %v, %v", got, keep, err)
	}
	// Applied to its own output: unchanged (a replay never duplicates).
	again, _, err := applyWriteAppend(s, got, true, nil)
	if err != nil || string(again) != writeLine {
		t.Fatalf("replay = %q, %v", again, err)
	}
	// A log whose last line was cut short: the record starts its own line.
	got, _, _ = applyWriteAppend(s, []byte(`{"id":"cut`), true, nil)
	if string(got) != "{\"id\":\"cut\n"+writeLine {
		t.Fatalf("after a cut line = %q", got)
	}
	// Undo removes exactly the line it added.
	undone, _, _ := undoWriteAppend(s, []byte("a\n"+writeLine+"b\n"), true, nil)
	if string(undone) != "a\nb\n" {
		t.Fatalf("undo = %q", undone)
	}
}

// A step read back from the journal is checked: a record that is not the
// id it names, or a path that is not the log, is refused.
func TestWriteAppendForged(t *testing.T) {
	for _, s := range []journal.Step{
		{Path: "/p/.intermem/written.jsonl", ID: "0000000000000000", Block: writeLine},
		{Path: "/p/CLAUDE.md", ID: "c1de124b816f280f", Block: writeLine},
		{Path: "/p/.intermem/written.jsonl", ID: "c1de124b816f280f", Block: writeLine + writeLine},
	} {
		if _, _, err := applyWriteAppend(&s, nil, false, nil); err == nil {
			t.Errorf("forged step %+v applied", s)
		}
	}
	s := journal.Step{Path: "/p/.intermem/written.jsonl", ID: "0000000000000000", Block: writeLine}
	if _, _, err := applyWriteAppend(&s, nil, false, nil); !errors.Is(err, ErrNotWritten) {
		t.Errorf("err = %v, want ErrNotWritten", err)
	}
}

// TestWriteRetire: a retire line is appended once, only while the memory
// is in the written set; a revive appends the record again after it, once;
// a forged retire step (another id, another file) is refused; the undo of
// a revive removes the last copy, the one it added.
func TestWriteRetire(t *testing.T) {
	at := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	s, err := RetireStep(2, "/p/.intermem/written.jsonl", "c1de124b816f280f", "promoted", at)
	if err != nil {
		t.Fatal(err)
	}
	retire := `{"retired":"c1de124b816f280f","reason":"promoted","at":"2026-11-02T09:00:00Z"}` + "\n"
	if s.Block != retire || s.Action != ActWriteRetire || s.Phase != 2 {
		t.Fatalf("step = %+v", s)
	}
	got, keep, err := applyWriteRetire(&s, []byte(writeLine), true, nil)
	if err != nil || !keep || string(got) != writeLine+retire {
		t.Fatalf("retired = %q, %v, %v", got, keep, err)
	}
	// Replayed: retired already, unchanged.
	if again, _, _ := applyWriteRetire(&s, got, true, nil); string(again) != writeLine+retire {
		t.Fatalf("replay = %q", again)
	}
	// A log that never held it, or no log: unchanged.
	if other, ok, _ := applyWriteRetire(&s, nil, false, nil); other != nil || ok {
		t.Fatalf("no log = %q, %v", other, ok)
	}
	// Revived: the record again, once.
	rv := journal.Step{Phase: 1, Path: "/p/.intermem/written.jsonl", Action: ActWriteRevive, ID: "c1de124b816f280f", Block: writeLine}
	back, _, err := applyWriteRevive(&rv, got, true, nil)
	if err != nil || string(back) != writeLine+retire+writeLine {
		t.Fatalf("revived = %q, %v", back, err)
	}
	if again, _, _ := applyWriteRevive(&rv, back, true, nil); string(again) != string(back) {
		t.Fatalf("revive replayed = %q", again)
	}
	if undone, _, _ := undoWriteAppend(&rv, back, true, nil); string(undone) != writeLine+retire {
		t.Fatalf("revive undone = %q", undone)
	}
	for _, f := range []journal.Step{
		{Path: "/p/.intermem/written.jsonl", ID: "0000000000000000", Block: retire},
		{Path: "/p/CLAUDE.md", ID: "c1de124b816f280f", Block: retire},
		{Path: "/p/.intermem/written.jsonl", ID: "c1de124b816f280f", Block: writeLine},
	} {
		if _, _, err := applyWriteRetire(&f, []byte(writeLine), true, nil); err == nil {
			t.Errorf("forged retire step %+v applied", f)
		}
	}
}
