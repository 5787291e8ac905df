// Package cite finds the files, directories, globs and symbols a memory entry
// cites, and checks them against the project, so that a fact about code that
// has since moved or gone is caught before it is promoted (and flagged after).
//
// A false "broken" costs a good fact its promotion, so the package is built
// around one rule: only what is evidently a project path is ever judged, and
// anything doubtful is Unchecked, never Broken.
//
// # What is a citation
//
// Extract(text) scans one markdown entry, skipping fenced code blocks (``` and
// ~~~) and HTML comments (tool markers such as <!-- intermem:… -->):
//
//   - Back-ticked spans that are one path: `pkg/store/db.go`, `internal/`,
//     `pkg/store`, `Makefile`, `go.mod`, `.github/workflows/ci.yml`, bare
//     file names with a known extension (`conftest.py`) and bare dotfiles
//     (`.env`, `.gitignore`, `.needs-verification`). A span with spaces is one
//     path only when it ends in a known extension and reads as a name
//     (`docs/Design Notes.md`); a span that is a command cites just the script
//     it runs (`scripts/bump.sh <version>`, `python tools/gen.py --out x/`).
//   - Markdown link and image destinations that are not URLs or anchors,
//     percent-decoded, with #anchors dropped: [guide](docs/guide.md#setup).
//   - Paths in prose: a word with a slash whose last segment has a known file
//     extension (pkg/store/db.go), a trailing-slash directory (the pkg/store/
//     directory), a ./ path, a glob, a ~/ path, an absolute path under a system
//     directory (/etc/hosts, /Users/…, /mnt/…) or a C:\ path.
//   - Globs with a directory part (src/**/*.go, web/{a,b}/*.tsx, plugins/*);
//     *.md alone describes files rather than citing them.
//   - Line forms: path:42, path:42:7, path:10-20, path#L10, path#L10-L20; the
//     path is what gets checked.
//   - Symbols: Func(), Type.Method(), pkg::Func() (empty parentheses; a call
//     with arguments is quoted code) when the entry cites exactly one code
//     file (documents and link targets such as memory pointers do not count),
//     and pytest node ids (tests/test_x.py::TestA::test_b). An entry that
//     describes a change ("renamed", "replaced", "no longer", "instead of", …)
//     yields no symbols, since they may be gone on purpose.
//
// Not citations — never returned as checkable, so never broken: URLs and any
// scheme:// value, www.*, e-mail addresses and anything with @, MIME types
// (application/json, image/*), numbers with slashes (1/2, 24/7, 2026/02/18,
// 02/18/2026, v1.2/3), module paths and hosts (a first segment that is a
// lower-case domain: github.com/foo/bar, golang.org/x/tools, gopkg.in/…),
// CLI flags (--foo/bar), assignments (FOO=bar/baz), variables ($VAR/…,
// ${VAR}/…, $(cmd)/…, %APPDATA%\…), regular expressions (^, \, |, ]+, {2,3}),
// shell syntax (|, &, ;, <, >, quotes), placeholders (<name>, {module},
// path/to/…, …), conventional branch names (feat/x, fix/y), JS-style
// properties (.textContent), extension lists (.png/.jpg), and words joined by
// a slash in prose without an extension or trailing slash (and/or,
// read/write, client/server, TCP/IP, w/, n/a). Back-ticked a/b words are
// returned as Kind Path and judged by the checker's top-level rule below.
//
// A leading-slash path outside the system directories is written either from
// the project root (/src/main.py) or as a URL route (/api/v1/users). Extract
// returns it only with an extension or a trailing slash (a bare /a/b or /word
// is a route or a slash command) and leaves Outside unset; the Checker treats
// it as project-relative only if its first segment exists in the project (or
// in its git history), and otherwise reports it Unchecked.
//
// Results are de-duplicated by (kind, path, line, symbol), in order of first
// appearance, at most MaxCitations. Work is linear in the entry's length:
// backtick runs are matched with a precomputed next-run-of-the-same-length
// table, link destinations and tokens are bounded (512 and 1024 bytes), and
// repeated tokens are classified once.
//
// # Resolution and safety
//
// A Checker resolves paths under one root only. Outside citations (~/ paths,
// system absolute paths, drive letters, paths escaping with ..) are never
// checked. Resolution walks one component at a time from the real root and
// reads symlinks instead of opening through them: a symlink whose target
// leaves the root makes the citation Unchecked, never followed. Globs are
// expanded by doublestar over an os.Root file system (which refuses escapes),
// without following symlinked directories, skipping .git, node_modules,
// .intermem, .venv and __pycache__ unless the pattern names them, stopping at
// the first match and within a budget of directory entries. Symbol checks
// read at most 1 MiB of the file. Stats, the tree index, git history, glob and
// symbol results are cached per Checker.
//
// # intermem's own files
//
// The directories intermem itself creates, docs/intermem/ (detail documents
// and the archive) and .intermem/ (state), are not evidence about the
// project: promoting a fact must not change how another fact is judged. A
// directory that holds nothing but one of them (docs/ above docs/intermem/)
// counts as absent; the tree index, glob walks (unless the pattern is under
// one of them) and git history (top-level names, base names, directory
// moves and removals) leave them out. A path under them cited as such is
// judged like any other.
//
// # Status model
//
//   - Valid: the path exists with the cited nature (a File that is a directory,
//     or a Dir that is a file, is Broken; a Path may be either), the glob
//     matches, or the symbol occurs as a whole word in its file. A path missing
//     at the root but present under a subdirectory (written relative to a
//     subproject), or a bare name found anywhere in the tree, is Valid with
//     "found at …".
//   - Moved: the path is missing and git recorded it renamed; MovedTo is the
//     latest name in the rename chain, which exists. A directory whose files
//     were renamed into one new directory is Moved there.
//   - Broken: the path is missing and git recorded its deletion (or its rename
//     to a name that is gone too), or it is missing under a top-level entry the
//     project has or had; a glob matches nothing; a symbol is absent from an
//     existing file. A symbol in a missing file takes the file's status.
//   - Unchecked: outside the project, a symlink leaving the root, an I/O error,
//     a search budget exhausted, a bare name found nowhere and unknown to git
//     (.env, a sibling memory file: the name may live elsewhere), or a path
//     whose first segment the project never had (feat/x, owner/repo): it is
//     not evidently a project path. Unchecked is never evidence of staleness.
//     When such a path reads as one (a file with an extension, a directory,
//     a glob: templates/invoice.html, lib/**/*.rb), NotInProject is set, so
//     that callers can say "not in this project" and rank it below a
//     verified citation.
//
// Git history comes from one `git log --relative --diff-filter=RD -M
// --name-status -z`, run lazily the first time a citation is missing and at
// most once per Checker; without git, or outside a repository, judgement
// rests on the disk alone.
package cite
