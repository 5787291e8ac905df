package ops

import (
	"errors"
	"testing"

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
