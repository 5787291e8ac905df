// Package tidy brings an auto-memory index (MEMORY.md) that has grown past
// Claude Code's load cap back under it without promoting anything: whole
// "##" sections move, byte for byte, into topic files beside it, and the
// index keeps one pointer line per moved section.
//
// # Why sections move whole
//
// Claude Code loads the first 200 lines of MEMORY.md, cut to at most
// 25,000 characters (automem.Load); everything after that is silently
// invisible to every session. Topic files are not loaded, but the model
// reads one when a pointer in the index tells it what the file holds
// ("- [Title](file.md) — hook", the line format Claude Code's own memory
// prompt asks for). Moving a section keeps its knowledge one Read away
// instead of out of reach.
//
// # The plan (Build)
//
//  1. Nothing moves unless MEMORY.md is over the cap (some line is not
//     loaded). The plan then aims at TargetLines and TargetChars, three
//     quarters of the cap, so that the index has room to grow again.
//  2. A section is a level-2 heading (a real one: automem's headings, never
//     a "##" inside a fence) with everything up to the next heading of
//     level 1 or 2: its "###" subsections move with it. The lines before
//     the first section (the title, a blurb) never move, and neither does
//     the "## Topic files" section that holds the pointers. What moves is
//     the heading through the last non-blank line; the blank lines after it
//     go from the index.
//  3. Sections are chosen greedily: while the projected index is over the
//     target lines, the section whose move frees the most lines (then the
//     most characters, then the earlier one); once only the characters are
//     over, the one that frees the most characters. A move must free at least one line or,
//     for the character target, some characters; a one-line section never
//     moves (its pointer would be no shorter). Sections are chosen against
//     an estimate (each move frees its lines and characters less its
//     pointer's), and the estimate is checked by the real rewrite once it
//     reaches the target; the figures a plan reports are always the real
//     rewrite's. An index of many small sections may stay over the cap:
//     every moved section still costs its pointer line.
//  4. Each moved section gets a new file name: a slug of its title with
//     secrets redacted (redact.String, then redact.Name, which also takes
//     out random words a name would not hold) before slugging, made of lower-case
//     letters, digits and "-" only, so no name from data can leave the
//     memory directory, hide as a dotfile or name MEMORY.md on a
//     case-insensitive disk. A name already in the directory (compared
//     case-insensitively, files and directories alike) or already chosen is
//     never reused: "-2", "-3"… are tried instead, so no file is ever
//     overwritten.
//  5. The topic file is exactly the section's bytes: heading line included,
//     CRLF and a missing final newline kept, nothing added. Since every
//     entry's identity is the hash of its normalized text (automem), and
//     the heading keeps every entry in the same section, each moved entry
//     is parsed in its topic file into the same entry with the same id and
//     the same bytes: its stability history (sessions seen) follows it.
//     This is why a moved section becomes a fact-list topic file, never a
//     one-memory file: frontmatter would make the whole file one entry with
//     a new id, and reset the history of everything in it.
//  6. In the index the moved sections are replaced by pointer lines, in
//     the order the sections had, under "## Topic files": appended to that
//     section when the index has one that ends with a pointer (appended
//     after anything else, a pointer could join a paragraph or a lead-in's
//     list and change that entry), otherwise a new section placed where
//     the first moved section was (so the pointers sit where the knowledge
//     sat, inside the loaded part). The title and hook of a pointer are
//     redacted, links reduced to their text, whitespace folded, and
//     clipped; the hook is the section's entries, first lines, joined.
//
// # The steps (package ops)
//
// A tidy is one journaled operation, built and given meaning by package
// ops (ops.Tidy): phase 1 creates each topic file, phase 2 rewrites the
// index with Rewrite. Steps carry no memory text (the store holds only
// redacted text): a section is named by the SHA-256 of its bytes (Section
// finds it in MEMORY.md as it is when a step runs). Creating a topic file
// writes the section's bytes to a file that does not exist, accepts one
// that already holds exactly them, and refuses anything else. Rewrite
// removes a section from the index only when its topic file holds exactly
// its bytes, and adds each pointer once; a section already gone whose
// pointer is present is done. Both are idempotent by content, so a replay
// after a crash at any point converges, and at every moment each moved
// byte is in MEMORY.md, in its topic file, or in both. Discarding before
// phase 2 deletes the topic files that still hold exactly what phase 1
// wrote.
//
// # Stale counts
//
// Counts reports numbers in memory text that can be checked against the
// project and no longer hold: "48 plugins" when plugins/ now holds 52.
// It is deliberately narrow (see Counts): a count is checked only when its
// noun names exactly one directory of the project, and it is called stale
// only when it matches none of that directory's sub-directories, files,
// or both together.
package tidy
