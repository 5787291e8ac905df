// Package automem scans Claude Code's per-project auto-memory directory
// (~/.claude/projects/<enc>/memory/) into entries: the units intermem
// observes across sessions, promotes into curated documents and prunes.
//
// Two generations of memory coexist, often in one directory. Fact lists
// (MEMORY.md, older topic files) hold "## Section" headings over "- bullet"
// facts. One-memory-per-file topic files start with YAML frontmatter
// (name, description, type or metadata.type) and are indexed from MEMORY.md
// by pointer lines such as "- [Title](file.md) — hook". A pointer is not
// knowledge; the file it points to is. Whatever the parser does not
// understand it leaves out of the entries and keeps, byte for byte, in the
// content, so that pruning changes nothing else.
//
// # Algorithm
//
// Parse splits the content into lines (only "\n" ends a line; any "\r"
// right before it belongs to the terminator, a leading UTF-8 BOM to no
// line) and then:
//
//  1. Frontmatter: if line 1 is "---" and a later line is "---", the lines
//     between are read by a small lenient YAML reader (flat and nested maps,
//     the "metadata: " key with a trailing space, quoted scalars with
//     escapes, inline and block lists, block scalars) that never fails: a
//     line it cannot read is skipped with a warning. Without a closing line
//     there is no frontmatter (and a warning).
//  2. A file with frontmatter is one Memory entry covering the whole file;
//     its body is scanned for headings only. MEMORY.md is the exception: it
//     is always scanned as a fact list, since treating the index as one
//     memory would hide every entry in it.
//  3. A fact list is scanned once, top to bottom, by a line classifier and
//     a one-item state machine. Headings (ATX, "#" to "######", at most 3
//     columns of indentation, not indented under an open item) set the
//     Section of the entries after them. Fenced code (``` or ~~~, three or
//     more, at any indentation, closed by a line of at least as many of the
//     same character and nothing else) and multi-line HTML comments are
//     opaque: nothing inside them is a heading, an item or a table.
//
// Only ATX headings are headings: a "---" or "===" under a line of text is
// a thematic break or text, never a setext heading, because Claude Code
// does not write setext headings and a "---" under a fact must not turn it
// into a section.
//
// Time is linear in the size of the file: every line is classified once,
// the searches for a fence's or a comment's closer are remembered when they
// fail, and link parsing is bounded. There is no regular expression.
//
// # Entries
//
// A Fact is a top-level list item ("-", "*", "+", "1." or "1)") with
// everything that belongs to it:
//
//   - any following line indented more than its marker: nested items at any
//     depth (2 or 4 spaces, tabs), continuation text, indented fences and
//     tables, even after blank lines ("- a\n\n  more" is one item);
//   - lazy continuation: a non-blank, non-indented line of plain text (or a
//     table row) directly after the item, as in CommonMark;
//   - a fence that opens on the line right after the item, even at column
//     0, with no blank line between. CommonMark would end the list there,
//     but in memory files "- Restart with:" followed by a fenced command is
//     one fact whose payload is the fence: splitting them would promote a
//     fact without its command and leave the code orphaned when pruning.
//     After a blank line a column-0 fence stands alone and is not an
//     entry.
//
// An item ends at a blank line followed by a line that is not indented, and
// at any heading, list item at or left of its marker, thematic break,
// blockquote, HTML comment or (after a blank line) fence. A run of lines
// starting with "|" is one Fact (a table). A list marker with no text at
// all is not an entry.
//
// A paragraph (lines of text outside any item) under a section heading
// (level 2 or deeper) is a Fact: "Note: idle_prompt was removed — it
// double-notified." is remembered knowledge like any bullet. Before the
// first section (a title's blurb: "Auto-memory index, keep it short.") and
// when every line is wholly italic or bold (a caption, a label) it is not.
// Two shapes of paragraph keep what a person wrote as one thought whole,
// wherever they are:
//
//   - A lead-in: a paragraph ending in a colon ("…makes tsc fail. Fixes:",
//     "**Steps:**", "结论："), or a bold-lead paragraph right above what
//     follows, introduces the list, table or fence after it (blank lines
//     between are allowed after a colon). The lead-in and all of it are one
//     Fact: promoting the items without the sentence that gives them their
//     meaning, or pruning them and leaving "…Fixes:" above nothing, would
//     damage both copies. The list runs over items of one kind (bulleted or
//     numbered) and ends at anything else. When the list holds a pointer,
//     the lead-in is an index label ("Topic files:") and the items stay
//     entries of their own. Other text right above a list ("Last updated
//     in May." under a title) is no lead-in: it would make a whole index
//     one entry.
//   - A bold-lead paragraph: one opening, after optional emoji, with a bold
//     run and saying more than that label ("**Rule:** never…", "**The
//     worker stops after 30 s.** Module state resets…"), hard-wrapped over
//     any number of lines. Learnings files are written this way; a bold
//     line alone is a label, not an entry.
//
// A fence of its own in a section is a Fact too: the section's title says
// what it is ("## How to start the bot" over the command). Blockquotes,
// thematic breaks, HTML comments, and anything of these before the first
// section, are not entries.
//
// A Pointer is a top-level item whose subject is another memory file: a
// markdown link, a back-ticked name, a [[wikilink]] or a bare name
// ("notes/debugging.md — …") at the start, after optional emoji and bold
// or italic markers, whatever follows it; or a link that ends the line
// after a separator, the hook first ("always restart → [f.md](f.md)",
// "详细设计见：[f.md](./f.md)", "See [f](f.md) for details"). The target is
// a ".md" path inside the memory directory (no scheme, drive, "~", leading
// "/" or ".."); a bare name must be followed by a separator or nothing, so
// "README.md is stale" stays a fact. Link text may hold balanced brackets
// and code spans (`[$ x: r[["e"]]](f.md)`); when its brackets never
// balance, the first "](" opening a valid destination ends it. An item with
// a link in mid-sentence or after a full stop ("Fact. [Detail](f.md)") is a
// Fact with Link set, and a pointer inside a heading is not an entry. Parse
// sees one file; Scan, which sees the directory, decides what a pointer
// whose file does not exist is (see Dir).
//
// Entry text drops the list marker of the first line (Marker keeps it, so a
// numbered item keeps its number), keeps continuation lines with their
// indentation, turns CRLF into LF and trims surrounding
// whitespace. The ID is the first 8 bytes of the SHA-256 of NormalizeText
// of the text (for a Memory, of description + "\n" + body), so whitespace,
// line endings and intermem's own markers never change an identity.
//
// # Unclosed fences
//
// A fence opener with no matching closer before the end of the file is not
// a fence: the line is treated as plain text and the File records a
// warning ("line 12: unclosed ``` fence treated as text"). CommonMark would
// run the fence to the end of the file; here one stray ``` never swallows
// every entry after it. An HTML comment opener without "-->" is treated
// the same way.
//
// # Pruning
//
// File.Remove deletes entries by ID, with two cleanups so the file reads as
// if the entries had never been written: a heading whose section lost a line
// and has no non-blank content left goes too (recursively up the outline;
// sections that were already empty stay), and the blank lines around each
// gap are settled so that no doubled blank line, and no blank line at the
// start or end of the file, appears where the block was. Every other byte,
// CRLF and BOM included, is kept. Removing a Memory entry returns empty
// content: the caller deletes the file.
//
// # Loading
//
// Load measures MEMORY.md the way Claude Code does: it loads the first 200
// lines, cut at a line boundary to at most 25,000 UTF-16 code units.
// Dir.BeyondCap lists the entries that fall past that point.
package automem
