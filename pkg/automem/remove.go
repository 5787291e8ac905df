package automem

// Remove returns the content with the blocks of the entries whose IDs are
// given removed, and with the cleanups pruning needs so the file reads as if
// the entries had never been written:
//
//   - a heading whose section (up to the next heading of the same or a
//     higher level) held a removed line and is left with no non-blank
//     content is removed too, and so, recursively, is a parent emptied that
//     way; a section that was already empty is left alone;
//   - blank lines around the gap are settled so that removal never creates
//     a doubled blank line, nor a blank line at the start or end of the
//     file, and blank lines that only separated removed blocks go (see
//     dropGapBlanks for the exact rule);
//   - every other byte is kept as it is (CRLF, BOM, a missing final
//     newline).
//
// Every entry with a given ID is removed (identical entries are one fact).
// Removing a Memory entry returns empty content: the caller deletes the
// file. Unknown IDs are ignored; with nothing to remove, Remove returns a
// copy of the content.
func (f *File) Remove(ids ...string) []byte {
	if len(ids) == 0 || len(f.Entries) == 0 {
		return clone(f.Content)
	}
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	lines := splitLines(f.Content)
	var drop []bool
	for _, e := range f.Entries {
		if !want[e.ID] {
			continue
		}
		if e.Kind == Memory {
			return []byte{}
		}
		if drop == nil {
			drop = make([]bool, len(lines))
		}
		for k := e.StartLine - 1; k < e.EndLine && k < len(lines); k++ {
			if k >= 0 {
				drop[k] = true
			}
		}
	}
	if drop == nil {
		return clone(f.Content)
	}
	blank := func(k int) bool {
		for _, c := range f.Content[lines[k].start:lines[k].text] {
			if c != ' ' && c != '\t' {
				return false
			}
		}
		return true
	}
	f.dropEmptiedHeadings(lines, drop, blank)
	dropGapBlanks(drop, blank)

	out := make([]byte, 0, len(f.Content))
	if len(lines) > 0 {
		out = append(out, f.Content[:lines[0].start]...) // BOM
	}
	for k, l := range lines {
		if !drop[k] {
			out = append(out, f.Content[l.start:l.end]...)
		}
	}
	return out
}

// dropEmptiedHeadings marks for removal each heading whose section lost a
// line and kept no non-blank line. Headings are visited last to first, so
// a sub-heading is decided before the section that contains it.
func (f *File) dropEmptiedHeadings(lines []line, drop []bool, blank func(int) bool) {
	hs := f.Headings
	for h := len(hs) - 1; h >= 0; h-- {
		k := hs[h].Line - 1
		if k < 0 || k >= len(lines) {
			continue
		}
		end := len(lines)
		for n := h + 1; n < len(hs); n++ {
			if hs[n].Level <= hs[h].Level {
				end = hs[n].Line - 1
				break
			}
		}
		touched, content := false, false
		for j := k + 1; j < end && !content; j++ {
			if drop[j] {
				touched = true
			} else if !blank(j) {
				content = true
			}
		}
		if touched && !content {
			drop[k] = true
		}
	}
}

// dropGapBlanks settles the blank lines around removed blocks so that the
// file reads as if the blocks had never been there. It looks at each region
// between two kept non-blank lines that contains removed lines: L blank
// lines lead up to the first removed line, T blank lines follow the last
// one, and any blank lines between removed lines (they separated removed
// blocks) go. Then:
//
//   - in the middle of the file, the L leading blank lines stay and only
//     the trailing lines beyond L stay, so the region keeps max(L, T) blank
//     lines and removal never doubles a blank line;
//   - at the start of the file, the T trailing blank lines go (no new
//     leading blank line);
//   - at the end of the file, the L leading blank lines go (no new trailing
//     blank line).
func dropGapBlanks(drop []bool, blank func(int) bool) {
	n := len(drop)
	prev := -1 // last kept non-blank line
	for k := 0; k < n; k++ {
		if !drop[k] {
			if !blank(k) {
				prev = k
			}
			continue
		}
		// A region with removed lines: find its end, the next kept
		// non-blank line, and its first and last removed lines.
		first, last, next := k, k, k
		for next < n && (drop[next] || blank(next)) {
			if drop[next] {
				last = next
			}
			next++
		}
		lead := first - (prev + 1)
		for j := first; j <= last; j++ {
			drop[j] = true // interior blank lines
		}
		trail := next - (last + 1)
		switch {
		case next == n: // end of file
			for j := prev + 1; j < first; j++ {
				drop[j] = true
			}
		case prev < 0: // start of file
			for j := last + 1; j < next; j++ {
				drop[j] = true
			}
		default:
			for j := last + 1; j < last+1+min(lead, trail); j++ {
				drop[j] = true
			}
		}
		k = next - 1
	}
}

func clone(b []byte) []byte {
	return append([]byte{}, b...)
}
