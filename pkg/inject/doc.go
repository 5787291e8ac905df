// Package inject builds the context intermem-inject gives Claude Code at
// SessionStart (startup, resume, clear, compact): a token-budgeted index
// of the project's memory, the memories that matter now, and health
// warnings — never a repeat of what Claude Code already loaded. The same
// rendering is what "intermem context" prints.
//
// # Pipeline
//
// Gather reads the inputs (files, the git branch, the store) into an
// Inputs value; Render is a pure function of Inputs. Render is what the
// unit tests and BenchmarkRender1000 exercise; Gather is what costs time.
//
// # What is already in context
//
// Package loaded is the one definition of what Claude Code loads at
// session start; Gather asks it through the
// recording Deps. Besides those files, the first 200 lines / 25,000
// characters of MEMORY.md are loaded. A memory entry is already in
// context when its normalized text (match.Key) equals a statement of one
// of those documents or an entry of MEMORY.md's loaded part (for a
// one-memory file, its description counts too), or when a loaded document
// carries its intermem marker. Such entries are never shown. A one-memory
// file that a loaded MEMORY.md pointer already names is shown only when it
// is relevant now (the model has its pointer). MEMORY.md entries past the
// cap are listed in the ledger, not ranked.
//
// # Content, in rendering order
//
//   - The bootstrap (bootstrap.go; not for a resumed or compacted
//     session, which continues its own history): the project's identity
//     in one line ("project" of .intermem/config.json, else the first
//     paragraph of README.md — CLAUDE.md is loaded already), the current
//     phase, the resume note (the latest checkpoint of another session on
//     the branch), the latest decisions; in at most a quarter of the
//     budget and 300 tokens (continuity.Boot drops lines from the end to
//     fit), then a blank line; the rest renders in what it left. The
//     identity alone is not worth a context.
//   - Health, one line each, only when true: an interrupted journal
//     operation that verifies (journal.Scan: this user's, for this
//     project, every step in its places), with its summary (ask for
//     intermem-recover); how many operations recovery refuses, never what
//     they say (a planted record is anyone's text); MEMORY.md over its load cap,
//     with the truncation ledger — each entry past the cap as "L<line>:
//     <clipped text>" under the path of MEMORY.md — or at 80% of it;
//     promoted facts whose confidence fell below score.StaleBelow and whose
//     marker is still in a curated document, named; AGENTS.md holding
//     promoted facts that not every client loads (in AGENTS.md or the
//     detail documents its index names); a sweep over a week overdue
//     (SweepDue); how many entries are ready for /intermem:synthesize —
//     plan.World.Judge over the Subjects cached per entry, the plan's own
//     decision, with citations judged by the verdict a plan or validate
//     recorded (the hook never runs git), or for an entry none judged yet
//     by whether its cited project paths exist; when none is ready and
//     MEMORY.md is over its cap, /intermem:tidy instead (promoting would
//     shrink it, but nothing can be promoted yet).
//   - The index of promoted knowledge, less what is already loaded: the
//     sections of an AGENTS.md Claude Code does not load, with counts, and
//     the docs/intermem/*.md documents with their titles that no loaded
//     document's topic index already names.
//   - Memories not loaded: topic-file entries, best first. A fact shows
//     "file:line: text", a one-memory file "file [type]: description", so
//     the model can Read it; the memory directory is named once. The
//     three most relevant one-memory files also show the memory itself
//     (its body, clipped to 280 bytes) on the next line. An entry whose
//     citations are broken (the recorded confidence, or a cited path
//     gone) ranks last, marked "[stale: …]".
//   - Related knowledge from the project's other sources (related.go),
//     as the catalog stored them at the last session end (the hook
//     scans no source): compound solutions whose component, module,
//     title or tags hold the branch's words or that cite a file changed
//     within RecentFor, with their root cause; clavain learnings citing
//     such a file; interfluence's corrections of such files in one line.
//     They get the budget right after the memories that matter now.
//
// # Ranking
//
// Relevance to now is an integer (see the Points constants): the branch
// name's words found in the entry (HEAD is read from the .git directory or
// a linked worktree's gitdir, never by running git); the cited files'
// modification times relative to Now (each file cited is stat'ed, relative
// to the work tree holding the session's cwd); the cwd below the work
// tree (a cited path under it, or its directory names in the text). Ties
// go to more sessions seen, then higher confidence (unknown counts as
// score.Base), then the latest sighting, then file and line, then id.
//
// # Budget
//
// Tokens are estimated conservatively as ceil(UTF-8 bytes / 3); the text
// stays within 3 × budget bytes and, whatever the budget, under MaxChars
// (9,000) characters counted in UTF-16 code units as Claude Code counts
// (its limit is 10,000). Items are whole lines, never cut; long texts are
// clipped at a character boundary with "…" before they become items.
// Items get the budget by priority — health lines (each independently),
// then names of stale facts, then memories relevant now (at most half of
// what is left), the index, the ledger, and the remaining memories — each
// group as a prefix of its own order, so a lower-ranked item never
// displaces a higher one. What is left out is counted on a closing line,
// "… N more: intermem context --budget B", B being the budget that would
// show it (rounded up to 100, capped where the character limit binds).
// Nothing is printed when nothing is worth saying (the index of documents
// Claude Code already loads is not worth a context on its own).
//
// # Determinism, secrets and screening
//
// Same inputs, same bytes: every list is sorted with every tie broken,
// relevance is integer arithmetic, and the clock is an input. Every
// printed line goes through redact.String; text is redacted before it is
// clipped, so a cut cannot hide part of a secret from the detector.
//
// Everything injected is screened for prompt injection (pkg/screen): a
// memory entry's whole block and its file's name (automemory.Screen, each
// flag with its line: kept with the catalog's stored parse, or done
// against the file's bytes when the Stop hook stored it unscreened),
// document titles,
// sections, stale facts and journal summaries as Render meets them, and
// every line as built. A flagged item is withheld — not shown, no budget —
// and the first health line says how many, and that `intermem context
// --withheld` lists them; a flagged journal summary leaves its warning
// without the summary. Then every line is escaped (cli.Escape), so no
// control, bidi or invisible character reaches the model as itself. The
// fail-open copy is screened and escaped again when served; the render
// cache is this executable's own output, keyed by its identity, and is
// served as written. See screen.go.
//
// # Speed and failure
//
// The hook opens the store read-only with a 50 ms lock wait, and reads
// only the fields it needs (the continuity records too); a render cache
// hit opens no store at all. It reads MEMORY.md and at most
// maxMemFiles-1 other memory files (the first by name): a memory directory
// of 100,000 files still gets its context in time, the files past the
// bound counted in one health line, never stat'ed. The listing is
// streamed (bounded memory), and the render cache records the directory's
// stat rather than its names (see listMem), so a cache hit never lists it.
//
// Memory files are seen through the catalog (memory.go): each file's
// parse alone is kept in the store by whoever read it last — the Stop
// hook's sweep at every turn for the files that changed (unscreened),
// catalog.Build for every command (with its screening flags) — and a
// session start takes it, in one short read transaction before the main
// one, for every file still at the fingerprint it was stored for
// (screening an unscreened one against the file's bytes, memoized),
// parsing only the others itself, outside the store's lock, and writing
// nothing. Pointer or fact
// is decided over the session start's own listing. Documents are seen
// through the catalog too (loaded.go): what a session start needs of each
// document Claude Code may load or intermem curates (normalized keys,
// markers, imports: docrecord.Record) is the record the instructions and
// promoted sources keep in the store, taken in the same short transaction
// and used while the file keeps the fingerprint it was stored at; any
// other document is derived by the session start itself, writing nothing
// to the store.
// .intermem/context.index holds memos of pure functions only: redaction,
// screening (and which memory files were found clean at their
// fingerprint), what is derived from a memory entry's fields
// (normalized keys, plan subject, cited paths: Index.derive), and the
// record of a document without a current stored one, by its bytes'
// SHA-256 (docmemo.go); an index an older intermem wrote is ignored.
// The last rendering is kept in .intermem/context.cache (written
// atomically, only when it changed); when the store is locked or damaged
// the hook serves it, headed by a line saying it is cached and from when,
// or prints nothing. Neither file is a store write; "intermem context"
// reads them and writes nothing. The hook always exits 0.
package inject
