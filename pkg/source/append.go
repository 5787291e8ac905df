package source

import (
	"bufio"
	"fmt"
	"io"
)

// ParseLog parses the file f of the appender a, resuming at prev when the
// file only grew since prev was sealed (see Resume). It returns the
// entries and problems of the part it parsed; from, the cursor it started
// at (the zero Cursor when it read the whole file); and next, the sealed
// cursor to pass as prev next time. The returned entries replace the file's
// entries at or after line from.Line (all of them when from is zero).
func ParseLog(a Appender, f File, prev Cursor) (entries []Entry, probs []Problem, from, next Cursor, err error) {
	fh, err := Open(f)
	if err != nil {
		return nil, nil, Cursor{}, Cursor{}, err
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return nil, nil, Cursor{}, Cursor{}, fmt.Errorf("stat %s: %w", f.Path, err)
	}
	from = Resume(fh, fi.Size(), prev)
	r := bufio.NewReaderSize(io.NewSectionReader(fh, from.Offset, fi.Size()-from.Offset), 64<<10)
	entries, probs, next = a.ParseFrom(f.Path, r, from)
	return entries, probs, from, Seal(fh, next), nil
}
