// Package source is the abstraction over every memory system intermem reads
// without owning: a Source names the files it reads under a project root and
// turns one file's bytes into Entries. Each source is its own package under
// pkg/source/ (compound, clavain, interfluence, …); pkg/source/sources lists
// them, so adding a source is one package plus one line there. The catalog
// fingerprints the files Find returns, re-parses only those that changed and
// keeps what intermem knows about each entry (confidence, validation,
// provenance) in its own store, keyed by Entry.ID.
//
// # Invariants
//
//   - Read-only: nothing in a source writes, and a parser never opens a file.
//     Parse receives bytes; paths that appear in the data (a cited file, the
//     file an edit observation concerns) are data, never opened here. Find
//     is the only code that touches the filesystem: it walks below the
//     project root without following directory links (nor descending into
//     a directory below which no pattern can match; FindWalk takes the
//     listings of directories unchanged since a previous walk from it), reads a linked file
//     only when the link resolves inside the root to a regular file, skips
//     anything but regular files (a FIFO named x.md would block forever), and
//     caps the number of files, their depth and their size (MaxFiles,
//     MaxDepth, MaxFileBytes).
//   - Never fatal: any bytes parse. What a parser could not make sense of is a
//     Problem, reported once per file (a malformed frontmatter, 37 bad log
//     blocks), and the rest of the file is still indexed. Parsers recover
//     from panics in third-party code (the YAML library) and report them as a
//     Problem; fuzz targets in each source package hold them to it.
//   - Text as written: entries carry the source's text unredacted and
//     unscreened. Whatever stores or shows them (the catalog, search output,
//     SessionStart) redacts and screens first, in one place for all sources.
//
// # For the catalog
//
// The catalog runs each enabled source (Registry.Enabled with the switches
// of .intermem/config.json; Registry.Unknown names the misspelt ones) like
// this: Find its files; a file whose Size and ModTime match the stored
// fingerprint keeps its stored entries and problems; a changed document is
// read with ReadFile and Parse'd, its entries and problems replacing the
// file's; a changed log of an Appender goes through ParseLog with the
// stored Cursor, and its entries replace those at or after the returned
// from.Line. A file Find no longer returns is gone: its entries are
// tombstoned. Problems belong to the content that produced them, so they
// are stored with the fingerprint and reported once, not at every scan.
// Scan is the same without fingerprints, for tests and first scans. Before
// anything is stored or shown, the entries' text is redacted and screened.
//
// # Ids
//
// An Entry.ID is 16 lowercase hex digits: the first 8 bytes of the SHA-256 of
// the source name, a NUL byte and a key the source chooses (see [ID]). The
// source name in the hash makes ids unique across sources; the key makes them
// stable across runs. Document-shaped sources (compound solutions, clavain
// learnings) key an entry by its path relative to the project root, not by
// its text: the catalog hangs an entry's provenance on its id (first seen,
// sessions, validation history, confidence), and a solution document is
// edited in place for years (a better root cause, a new prevention step, a
// typo) while remaining the same document. A text hash would orphan all of
// that at every edit and report the document as deleted and re-created. The
// path is also the name other documents use for it (synthesized_from,
// synthesized_into, links). A rename therefore starts a new id; the catalog
// may carry the overlay across when git records the rename. Record-shaped
// sources whose records never change once written (an edit observation in
// an append-only log) key by content instead: the record is its own
// identity, and two identical records are the same observation.
package source
