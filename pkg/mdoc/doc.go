// Package mdoc parses and edits the curated markdown documents intermem
// promotes into (CLAUDE.md, AGENTS.md, docs/intermem/*.md) without disturbing
// a byte it did not mean to change.
//
// # Parsing model
//
// A document is a sequence of lines, each ended by "\n" or "\r\n" (the last
// one may have no terminator). Parse classifies lines with the parts of
// CommonMark that decide where things begin and end, and nothing more:
//
//   - Fenced code: an opener of three or more backticks or tildes, indented at
//     most three columns past its container, up to the first closer of the
//     same character at least as long with nothing after it. A fence in a
//     list item must keep to the item's content column. One deliberate
//     deviation: a fence with no closer before its container ends is not a
//     fence at all — its opener is plain text — so a stray "```" can never
//     swallow the rest of the document (CommonMark would let it).
//   - List items: "-", "*", "+" or "1."/"1)" markers, content column,
//     continuation by indentation, lazy continuation of a paragraph, nested
//     items and fences inside items.
//   - Sections: ATX headings ("#" to "######") outside fences and outside
//     list items. Sections[0] is a level-0 preamble for whatever precedes the
//     first heading. Setext headings ("Title" over "===") are not recognized;
//     such a title is paragraph text and "---" under it a thematic break.
//   - Managed blocks: regions other tools own and rewrite, from an opener to a
//     closer line such as "<!-- OPENSPEC:START -->"/"<!-- OPENSPEC:END -->",
//     "<!-- X:begin -->"/"<!-- X:end -->", "<!-- bv-agent-instructions-v1 -->"/
//     "<!-- end-bv-agent-instructions -->", "<!-- braindump: … -->"/
//     "<!-- /braindump -->" or "<claude-mem-context>"/"</claude-mem-context>".
//     Pairs nest; an opener that is never closed is not a block.
//   - Markers: "<!-- intermem:<hex> -->" outside fences and inline code spans
//     (8 hex digits from the original tool, 16 from this one).
//
// # Entries
//
// A marker tags an entry, and the entry is always whole: a list item with
// all its continuation lines, nested items and indented fences; for a marker
// on a line of its own, that line and the unit after it (how a block whose
// first line opens a fence is marked); for a marker on a heading, the
// heading line. See Doc.Marked.
//
// # Insertion
//
// Doc.Place puts an entry at the end of the own content of the best matching
// section (before its subsections), or in a new section at the end of the
// document, never inside a managed block. The marker goes at the end of the
// entry's first line, or on its own line before the entry when that line
// opens a fence or is a table's header row — never after a closing fence,
// where it would unterminate it, nor after a header row, where it would be
// one cell too many and GitHub would render no table. A list entry joins a list it lands next to without a blank line; any
// other entry gets one blank line before it. Nothing is added after the
// entry: whatever followed the line it was put after (blank lines, a
// heading, a block opener) follows the entry. Adding a blank line after the
// entry when the next line is not blank would turn both "A\nB" and
// "A\n\nB" into "A\n\nE\n\nB", and no removal could restore both. Lines
// take the document's dominant line ending.
//
// # Byte preservation
//
// Place adds one contiguous run of bytes; Remove deletes the entry's lines,
// one blank line that separated it, the line terminator it needed at the end
// of a document without a final newline, and, when asked, the heading of a
// section it leaves empty. No other byte changes: not line endings, not a
// missing final newline, not trailing spaces, not other tools' blocks.
// Insertion and removal are exact inverses — for any document d and any
// entry Place accepts, Parse(out).Remove(id, created) returns d byte for
// byte — and Place checks this on its own result before returning it,
// refusing (ErrUnsafe) rather than producing an edit it cannot undo.
package mdoc
