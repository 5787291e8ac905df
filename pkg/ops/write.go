package ops

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/journal"
	"github.com/intermem/intermem/pkg/source/written"
)

// ActWriteAppend (phase 1) appends one written memory to the log of
// written memories (package written), unless the log already holds it.
// Path: <state dir>/written.jsonl; ID: the memory's id; Block: the
// record's line (redacted and screened before the op was built).
const ActWriteAppend = "write-append"

// ErrNotWritten is returned when a write step's record is not the memory
// it names: a step read back from the journal is checked before it is
// applied.
var ErrNotWritten = errors.New("the step's record is not the memory it names")

// Write builds the operation that stores the written memory whose log
// line is line (written.Encode) in the log at logPath. It has one step:
// the log, replaced with the line appended, so a crash leaves the log
// either without the memory or with it whole, and a replay never adds it
// twice.
func Write(logPath string, line []byte) (*journal.Op, error) {
	rec, err := written.Decode(bytes.TrimSuffix(line, []byte("\n")))
	if err != nil {
		return nil, err
	}
	op := &journal.Op{Kind: KindWrite, Entries: []string{rec.ID},
		Summary: fmt.Sprintf("write: store a %s memory (%s)", rec.Type, rec.ID)}
	op.Steps = []journal.Step{{Phase: 1, Path: logPath, Action: ActWriteAppend, ID: rec.ID, Block: string(line)}}
	return op, nil
}

// checkWrite validates a write step read back from the journal: the log's
// name, and a block that is one record whose id is the step's.
func checkWrite(s *journal.Step) ([]byte, error) {
	return checkLine(s, func(line []byte) (string, error) {
		rec, err := written.Decode(line)
		if err != nil {
			return "", err
		}
		return rec.ID, nil
	})
}

// checkLine validates a step on the log of written memories read back from
// the journal: the log's name, and a block that is one line which idOf
// decodes to the step's id.
func checkLine(s *journal.Step, idOf func(line []byte) (string, error)) ([]byte, error) {
	if filepath.Base(s.Path) != written.FileName {
		return nil, fmt.Errorf("write: %q is not the log of written memories", s.Path)
	}
	line := []byte(s.Block)
	if !bytes.HasSuffix(line, []byte("\n")) || bytes.Count(line, []byte("\n")) != 1 {
		return nil, fmt.Errorf("write: %w (not one line)", ErrNotWritten)
	}
	id, err := idOf(line[:len(line)-1])
	if err != nil || id != s.ID {
		return nil, fmt.Errorf("write: %w", ErrNotWritten)
	}
	return line, nil
}

func applyWriteAppend(s *journal.Step, cur []byte, exists bool, _ journal.Reader) ([]byte, bool, error) {
	line, err := checkWrite(s)
	if err != nil {
		return nil, false, err
	}
	if exists && written.Holds(cur, s.ID) {
		return cur, true, nil
	}
	return appendLine(cur, line), true, nil
}

// undoWriteAppend removes the memory's line, for discarding an
// interrupted write: only the line the operation added, exactly.
func undoWriteAppend(s *journal.Step, cur []byte, exists bool, _ journal.Reader) ([]byte, bool, error) {
	// The last copy: a revive appends a line the log already holds
	// earlier, retired.
	return removeLastLine(s, cur, exists)
}

// removeLastLine removes the last whole-line copy of the step's block
// from cur: the line the step appended, exactly; nothing when there is none.
func removeLastLine(s *journal.Step, cur []byte, exists bool) ([]byte, bool, error) {
	if !exists {
		return cur, exists, nil
	}
	line := []byte(s.Block)
	i := bytes.LastIndex(cur, line)
	if i < 0 || (i > 0 && cur[i-1] != '\n') {
		return cur, exists, nil
	}
	return append(append([]byte{}, cur[:i]...), cur[i+len(line):]...), true, nil
}

// ActWriteRetire (phase 2 of a promotion; phase 1 of a written memory's
// archive) takes a memory out of the written set by appending a retire
// line (written.Retire) to the log, unless the memory is no longer in the
// set. Path: <state dir>/written.jsonl; ID: the memory's id; Block: the
// retire line. The record stays in the log, so an undo or a restore has
// its bytes.
const ActWriteRetire = "write-retire"

// ActWriteRevive (phase 1 of a restore) brings a memory back into the
// written set by appending its record line again, unless it is in the set.
// Path: <state dir>/written.jsonl; ID: the memory's id; Block: the record's
// line, as the log held it.
const ActWriteRevive = "write-revive"

// RetireStep is the step that takes the memory id out of the written set
// in the log at logPath, for reason (written.Promoted, Pruned, Archived),
// at the time at.
func RetireStep(phase int, logPath, id, reason string, at time.Time) (journal.Step, error) {
	line, err := written.EncodeRetire(&written.Retire{Retired: id, Reason: reason, At: at.UTC()})
	if err != nil {
		return journal.Step{}, err
	}
	return journal.Step{Phase: phase, Path: logPath, Action: ActWriteRetire, ID: id, Block: string(line)}, nil
}

// checkRetire validates a retire step read back from the journal.
func checkRetire(s *journal.Step) ([]byte, error) {
	return checkLine(s, func(line []byte) (string, error) {
		r, err := written.DecodeRetire(line)
		if err != nil {
			return "", err
		}
		return r.Retired, nil
	})
}

func applyWriteRetire(s *journal.Step, cur []byte, exists bool, _ journal.Reader) ([]byte, bool, error) {
	line, err := checkRetire(s)
	if err != nil {
		return nil, false, err
	}
	if !exists || !written.Holds(cur, s.ID) {
		return cur, exists, nil // not in the set (never, or retired already)
	}
	return appendLine(cur, line), true, nil
}

// undoWriteRetire removes the retire line the step appended, for
// discarding an interrupted archive: the memory is in the set again.
func undoWriteRetire(s *journal.Step, cur []byte, exists bool, _ journal.Reader) ([]byte, bool, error) {
	return removeLastLine(s, cur, exists)
}

func applyWriteRevive(s *journal.Step, cur []byte, exists bool, _ journal.Reader) ([]byte, bool, error) {
	line, err := checkWrite(s)
	if err != nil {
		return nil, false, err
	}
	if exists && written.Holds(cur, s.ID) {
		return cur, true, nil
	}
	return appendLine(cur, line), true, nil
}

// appendLine appends line to cur, starting a line of its own when a line
// cut short (by a hand edit) ends cur.
func appendLine(cur, line []byte) []byte {
	next := make([]byte, 0, len(cur)+1+len(line))
	next = append(next, cur...)
	if len(next) > 0 && next[len(next)-1] != '\n' {
		next = append(next, '\n')
	}
	return append(next, line...)
}

// ArchiveWritten builds the archive of the written memories ids (a sweep
// found them stale twice): one retire line each, reason "archived", at
// the time at, appended to the log at logPath in phase 1. A discard
// removes the lines again.
func ArchiveWritten(logPath string, ids []string, at time.Time) (*journal.Op, error) {
	op := &journal.Op{Kind: KindArchive, Entries: append([]string{}, ids...)}
	for _, id := range ids {
		st, err := RetireStep(1, logPath, id, written.Archived, at)
		if err != nil {
			return nil, err
		}
		op.Steps = append(op.Steps, st)
	}
	op.Summary = fmt.Sprintf("archive %d written %s", len(ids), cli.Plural(len(ids), "memory", "memories"))
	return op, nil
}

// RestoreWritten builds the restore of archived written memories: each
// record's line appended to the log at logPath again (phase 1), so the
// memory is back in the written set with its bytes.
func RestoreWritten(logPath string, recs []*written.Record) (*journal.Op, error) {
	op := &journal.Op{Kind: KindRestore}
	for _, r := range recs {
		cp := *r
		line, err := written.Encode(&cp)
		if err != nil {
			return nil, err
		}
		op.Entries = append(op.Entries, cp.ID)
		op.Steps = append(op.Steps, journal.Step{Phase: 1, Path: logPath, Action: ActWriteRevive, ID: cp.ID, Block: string(line)})
	}
	op.Summary = fmt.Sprintf("restore %d written %s", len(recs), cli.Plural(len(recs), "memory", "memories"))
	return op, nil
}
