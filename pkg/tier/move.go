package tier

import (
	"strings"

	"github.com/intermem/intermem/pkg/mdoc"
)

// Move is one fact moved by a migration (ops.Migrate, ops.Flatten).
type Move struct {
	ID      string `json:"id"`
	From    string `json:"from"` // document, relative to the root
	To      string `json:"to"`
	Section string `json:"section"`
	Line    int    `json:"line"`
	Text    string `json:"text"`
}

// RawBlock returns a marked entry's markdown as it stands in the document,
// without its marker, with "\n" line endings: what moves when the entry
// moves.
func RawBlock(content []byte, m mdoc.Marked) string {
	b := string(content[m.Start:m.End])
	b = mdoc.StripMarkers(b)
	b = strings.ReplaceAll(b, "\r\n", "\n")
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(b, "\n"), "\n") {
		lines = append(lines, strings.TrimRight(l, " \t"))
	}
	return strings.Join(lines, "\n")
}
