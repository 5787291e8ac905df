package ops

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"

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
	if filepath.Base(s.Path) != written.FileName {
		return nil, fmt.Errorf("write: %q is not the log of written memories", s.Path)
	}
	line := []byte(s.Block)
	if !bytes.HasSuffix(line, []byte("\n")) || bytes.Count(line, []byte("\n")) != 1 {
		return nil, fmt.Errorf("write: %w (not one line)", ErrNotWritten)
	}
	rec, err := written.Decode(line[:len(line)-1])
	if err != nil || rec.ID != s.ID {
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
	next := make([]byte, 0, len(cur)+1+len(line))
	next = append(next, cur...)
	if len(next) > 0 && next[len(next)-1] != '\n' {
		// A line cut short (by a hand edit) ends here, so the record starts
		// a line of its own.
		next = append(next, '\n')
	}
	return append(next, line...), true, nil
}

// undoWriteAppend removes the memory's line, for discarding an
// interrupted write: only the line the operation added, exactly.
func undoWriteAppend(s *journal.Step, cur []byte, exists bool, _ journal.Reader) ([]byte, bool, error) {
	if !exists {
		return cur, exists, nil
	}
	line := []byte(s.Block)
	i := bytes.Index(cur, line)
	if i < 0 || (i > 0 && cur[i-1] != '\n') {
		return cur, exists, nil
	}
	return append(append([]byte{}, cur[:i]...), cur[i+len(line):]...), true, nil
}
