package automem

import "unicode/utf8"

// The part of MEMORY.md Claude Code loads into a session: the first 200
// lines, cut further at a line boundary so that at most 25,000 characters
// are loaded. Characters are UTF-16 code units, because that is what the
// JavaScript client measures.
const (
	MaxLoadLines = 200
	MaxLoadChars = 25000
)

// LoadInfo describes how much of MEMORY.md Claude Code loads.
type LoadInfo struct {
	// Lines and Chars measure the whole file. A final line without a
	// terminator counts as a line; Chars counts UTF-16 code units (an
	// emoji outside the BMP is 2), each invalid UTF-8 byte counting 1.
	Lines, Chars int
	// LoadedLines and LoadedChars measure what is loaded: the first k whole
	// lines, k ≤ MaxLoadLines, whose chars including line terminators total
	// at most MaxLoadChars. A first line longer than that loads nothing.
	LoadedLines, LoadedChars int
	// Truncated reports whether some lines are not loaded.
	Truncated bool
}

// Load measures content as Claude Code's loader sees it.
func Load(content []byte) LoadInfo {
	var info LoadInfo
	full := true // every line so far was loaded
	lineChars := 0
	endLine := func() {
		info.Lines++
		info.Chars += lineChars
		if full && info.Lines <= MaxLoadLines && info.Chars <= MaxLoadChars {
			info.LoadedLines, info.LoadedChars = info.Lines, info.Chars
		} else {
			full = false
		}
		lineChars = 0
	}
	for i := 0; i < len(content); {
		c := content[i]
		if c < utf8.RuneSelf {
			lineChars++
			i++
			if c == '\n' {
				endLine()
			}
			continue
		}
		r, size := utf8.DecodeRune(content[i:])
		if r >= 0x10000 {
			lineChars += 2
		} else {
			lineChars++
		}
		i += size
	}
	if len(content) > 0 && content[len(content)-1] != '\n' {
		endLine()
	}
	info.Truncated = info.LoadedLines < info.Lines
	return info
}
