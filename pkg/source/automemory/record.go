package automemory

import (
	"errors"
	"fmt"
	"strings"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/redact"
	"github.com/intermem/intermem/pkg/screen"
	"github.com/intermem/intermem/pkg/wire"
)

// The stored parse of one memory file
//
// What the catalog keeps of each memory file (its blob, store.CatalogTx)
// is the file's parse alone, unresolved — automem.AppendFile of
// automem.ParseMeasured, before any directory-wide resolution — with what
// screening found in each entry's block as written, or a mark that it was
// not screened. Encode is the one function that makes it: catalog.Build
// (through the source's cache) screens, since it screens every entry
// anyway; the Stop hook's sweep (package snapshot), which stores it for
// every file it reads, does not (Encode with screened false): screening
// compiles its patterns on first use, which no turn should pay for a
// session start that may never come. Decode reads it back, for the
// catalog and for the session start (package inject), which resolves
// pointers against the directory it lists and screens an unscreened
// parse against the file's bytes (ScreenWith, memoized).

// maxScreenBytes bounds the bytes of one entry's block that are screened.
const maxScreenBytes = 64 << 10

// Flag is one screening finding (screen.Check) in a memory file: a session
// start withholds the entry it belongs to.
type Flag struct {
	Kind   string `json:"kind"`
	Detail string `json:"detail"`         // redacted
	Line   int    `json:"line,omitempty"` // 1-based line in the file, when known
}

// magic starts every stored parse; its last byte is the format's version.
// A blob without it — the JSON an older intermem stored — is ErrOldRecord.
const magic = "IMAM\x01"

// The stored form, after magic, in package wire's values:
//
//	screened   bool
//	file       automem.AppendFile
//	flags:     present (bool); then one list per entry, in file order:
//	           count, each kind, detail, line
//
// Flags are absent when nothing was flagged, or when not screened.

// ErrOldRecord is returned by Decode for a blob of another format or
// version (an older intermem's JSON): the file is parsed again, never
// misread.
var ErrOldRecord = errors.New("automemory: stored parse of another version")

// Encode returns the stored form of f, which ParseMeasured (or Scan)
// returned with its Content: the parse and, when screened, every entry's
// flags. It returns false when f cannot be stored (automem.AppendFile: a
// link holding a secret), and the file is then parsed at every read
// instead.
func Encode(f *automem.File, screened bool) ([]byte, bool) {
	b := make([]byte, 0, 256+len(f.Content)+64*len(f.Entries))
	b = append(b, magic...)
	b = wire.AppendBool(b, screened)
	b, ok := automem.AppendFile(b, f)
	if !ok {
		return nil, false
	}
	var flags [][]Flag
	if screened {
		flags = Screen(f)
	}
	b = wire.AppendBool(b, flags != nil)
	if flags != nil {
		for _, fl := range flags {
			b = wire.AppendUint(b, uint64(len(fl)))
			for _, x := range fl {
				b = wire.AppendString(b, x.Kind)
				b = wire.AppendString(b, x.Detail)
				b = wire.AppendInt(b, int64(x.Line))
			}
		}
	}
	return b, true
}

// Decode returns the file and flags that Encode stored for the file called
// name, and whether it was screened (flags nil and screened false: the
// file's entries are screened by nobody yet). The file has no Content.
// Bytes of another version are ErrOldRecord; bytes that do not decode are
// an error wrapping wire.ErrCorrupt. Either way the caller parses the file.
func Decode(name string, b []byte) (f *automem.File, flags [][]Flag, screened bool, err error) {
	if !wire.HasPrefix(b, magic) {
		return nil, nil, false, ErrOldRecord
	}
	r := wire.NewReader(b, magic)
	screened = r.Bool("screened")
	f = automem.ReadFile(r, name)
	if r.Bool("flags") {
		flags = make([][]Flag, len(f.Entries))
		for i := range flags {
			n := r.Count("flag count", 3)
			if n == 0 {
				continue
			}
			flags[i] = make([]Flag, n)
			for j := range flags[i] {
				flags[i][j] = Flag{Kind: r.String("flag kind"), Detail: r.String("flag detail"), Line: r.Small("flag line", 0)}
			}
		}
	}
	if err := r.Done(); err != nil {
		return nil, nil, false, fmt.Errorf("automemory: stored parse of %s: %w", name, err)
	}
	return f, flags, screened, nil
}

// Screen screens every entry of f that a session may be shown — all but
// the part of MEMORY.md Claude Code loads itself — on its block as
// written (up to maxScreenBytes; a one-memory file's frontmatter and body)
// and, outside MEMORY.md, on the file's name, so that each flag knows its
// line. It returns one list per entry (nil when nothing was flagged
// anywhere); f must have its Content, the bytes it was parsed from.
func Screen(f *automem.File) [][]Flag { return ScreenWith(f, screen.Check) }

// ScreenWith is Screen with check in place of screen.Check, which it must
// equal (a memo of it).
func ScreenWith(f *automem.File, check func(string) []screen.Flag) [][]Flag {
	index := f.Name == automem.IndexName
	var name []Flag
	if !index {
		for _, fl := range check(f.Name) {
			name = append(name, Flag{Kind: fl.Kind, Detail: "file name: " + redact.String(fl.Detail)})
		}
	}
	loaded := f.Loaded().LoadedLines
	var out [][]Flag
	for i, en := range f.Entries {
		if index && en.StartLine <= loaded {
			continue
		}
		var fl []Flag
		if en.Start >= 0 && en.Start <= en.End && en.End <= len(f.Content) {
			fl = screenBlock(string(f.Content[en.Start:en.End]), en.StartLine, check)
		}
		fl = append(fl, name...)
		if len(fl) == 0 {
			continue
		}
		if out == nil {
			out = make([][]Flag, len(f.Entries))
		}
		out[i] = fl
	}
	return out
}

// screenBlock screens an entry's block, which starts at line first of its
// file, and returns its flags with their lines, details redacted.
func screenBlock(block string, first int, check func(string) []screen.Flag) []Flag {
	if len(block) > maxScreenBytes {
		block = block[:maxScreenBytes]
	}
	var out []Flag
	line, at := first, 0
	for _, f := range check(block) {
		line += strings.Count(block[at:f.Start], "\n")
		at = f.Start
		out = append(out, Flag{Kind: f.Kind, Detail: redact.String(f.Detail), Line: line})
	}
	return out
}
