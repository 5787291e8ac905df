// Package catalog is the one place intermem sees memory entries through:
// every source's entries (auto-memory, promoted facts, instruction files,
// compound solutions, clavain learnings, interfluence observations),
// redacted and screened once, kept in intermem's store with what intermem
// knows about each (the overlay), and searchable. Plan, validate, sweep,
// search, status, context and the hooks all read entries here — the
// session start (and `intermem context`) its memory files as the parses
// stored here (automemory.Encode) resolved over its own listing, the
// documents Claude Code loads and intermem curates as the records the
// instructions and promoted sources keep here (docrecord), and the other
// sources' entries as stored.
//
// # API
//
//	c, err := catalog.Build(tx, cfg) // bring the catalog up to date with the files
//	c.Entries()                      // every live entry of the enabled sources
//	c.Get(id)                        // one entry (live, else its tombstone) with its overlay
//	c.Search(q)                      // ranked hits (pkg/search over the cached index)
//	c.Rank(q)                        // the same, each hit read when asked for (Ranked.Hit)
//	c.Settle()                       // a writer, last: store the index if it is stale
//	c.Sources()                      // each source: on/off, files, entries, last scan, problems
//	c.Fresh()                        // problems found by this Build (report them once)
//	c.Memory(threshold)              // auto-memory whole, for plan and status
//
// A Catalog is bound to the transaction it was built in and must not be
// used after it ends. Build with a writable transaction stores what it
// finds; with a read-only one (or nil: no store yet) it holds the same
// result in memory (store.CatalogTx), so read-only commands always show the
// files as they are and never write.
//
// # Build, incrementally
//
// For each enabled source, in name order:
//
//   - First, whether the source changed at all, at the cost of a stat per
//     file and per directory walked (sourceState): the last scan stored a
//     key over the stats that decided it (a per-file source: its listing,
//     every file's path and fingerprint, the listing's problems; a Whole source: the stats, as
//     a link and followed, of every path its scan looked at, found or not,
//     and of their directories up to its base, all taken before the scan
//     read anything). The same key now means the same scan: SourceInfo is
//     the stored one and no file record, blob or entry is read. The key
//     is stored empty (never matched) when a stat in it was within
//     RacyWindow of its modification, a file record is racy, a listed
//     file has a problem of its own, or a Whole source's scan looked at a
//     path not stat'd before it — but a Whole source's file modified within
//     RacyWindow that its scan read is keyed by the sum of what was read
//     (racyKey, fresh.go), and the next Build reads that file alone.
//     Fresh reports nothing for an unchanged source, as a full scan of
//     unchanged files would not. A per-file
//     source's key is summed as source.SumWalk finds its files, no File
//     made, unless the walk cannot be summed or the key differs (then its
//     listing is taken, for the scan). The per-file sources' states are
//     decoded and their files walked before Build reaches them, each on a
//     goroutine of its own (walkAhead): the stats of thousands of files
//     are most of what a search of unchanged sources costs, and they run
//     on every CPU; the result is the walk's in turn.
//   - Files are found by source.FindWalk under the project root (or the
//     source's own Locate); each has a Fingerprint (size, mtime, inode,
//     ctime). The walk takes the listing of a directory whose fingerprint
//     is the one stored with the source's state (sourceState.Dirs) from
//     there instead of reading it: a name added, removed or renamed
//     changes its directory's mtime, a subdirectory is stat'd in its own
//     right, and a file edited in place changes its own fingerprint, which
//     is still taken. A directory modified within RacyWindow of its stat
//     is not kept (read again at the next walk). A file whose stored fingerprint is equal, and was not taken
//     while the file could still change unseen (Racy: modified less than
//     RacyWindow before it was parsed), costs that stat: its stored ids
//     and problems stand and nothing is read.
//   - A changed document is read (source.ReadFile) and Parse'd; its
//     entries replace the file's. A source.Recorder's record of the bytes
//     read is stored as the file's blob at the same fingerprint (deleted
//     when the file cannot be read); an unchanged file whose blob is not of
//     the source's RecordVersion is read again, and the version is part of
//     the source's key, so a new form is stored at the next Build. A changed append-only log (an Appender)
//     is parsed from its stored cursor when it only grew (source.ParseLog):
//     the entries it returns replace those at or after the cursor's line.
//   - A Whole source (auto-memory) is handed a cache of what it kept of each
//     file (store.CatalogTx blobs) and returns all its entries; a file's
//     entries are stored again only when their hash (CatalogFile.Sum)
//     changed. Auto-memory's blob is the file's parse alone with its
//     screening flags (automemory.Encode), which the Stop hook's sweep
//     also stores, unscreened, for every file it reads
//     (store.CatalogTx.PutParse: the fingerprint and blob, the file's ids
//     and sum left as they were), so Build decodes what a turn already
//     read, and the session start (package inject) takes its memory files
//     from the same blobs. A file decoded from its blob whose key of what
//     the directory decided of its entries (source.ByFile.Resolved: which
//     index lines are pointers, which memories a secret's line points to)
//     is the one stored with them (CatalogFile.Resolved; PutParse clears
//     it) keeps its entries without their being made: a refresh after one
//     memory file changed makes, screens and sums that file's entries (and
//     those of files the change re-decided) alone, not 20,000. An entry
//     that a changed file dropped and an unchanged one still holds (the
//     same fact in two files) is made again from the holder (rehome), so
//     the store is what a whole refresh stores.
//   - Every entry a source did not redact itself (source.Entry.Redacted) is
//     redacted here (pkg/redact, every text field; Secret set when anything
//     was), and every entry is screened (pkg/screen): the flags are kept
//     with the entry, and consumers that inject text withhold flagged
//     entries (Entry.Withheld). Auto-memory is redacted by automem.Parse and
//     never twice.
//   - An id a source no longer yields anywhere is tombstoned (Gone set; the
//     record and its overlay kept, so provenance still answers); an id that
//     reappears is revived. A file that vanished is forgotten and its
//     entries tombstoned.
//   - Problems belong to the file content that produced them: stored with
//     its fingerprint, returned by Fresh only when that content is parsed,
//     so a hook logs each once; Sources lists them all.
//
// Any change to an entry bumps the catalog's generation. The search index
// (pkg/search) is encoded into the store at the generation it was built
// at and decoded in place (DecodeShared) while it is current; a change
// makes the next Search rebuild it (stored again when the transaction is
// writable).
//
// # Invariants
//
//   - The store never holds a secret: entries are redacted before they are
//     stored, file keys of auto-memory use the redacted file name.
//   - Source files are never written: the catalog reads.
//   - Ids are unique within a source; an id may name one fact in two
//     sources (a memory and its promoted copy share the marker's id).
//   - A switched-off source is not scanned and its entries are in no
//     result; what the store holds of it stays for when it is switched
//     back on.
package catalog

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/config"
	"github.com/intermem/intermem/pkg/project"
	"github.com/intermem/intermem/pkg/source"
	"github.com/intermem/intermem/pkg/source/sources"
	"github.com/intermem/intermem/pkg/store"
)

// RacyWindow is how recently before a parse a file may have been modified
// for its fingerprint to be trusted: file times advance in ticks (a few
// milliseconds on Linux), so a file written twice within one tick, at the
// same size, keeps its fingerprint. A file modified within the window of
// its parse is parsed again at the next Build.
const RacyWindow = 2 * time.Second

// ErrUnknownSource is returned for a source filter naming no source.
var ErrUnknownSource = errors.New("no such source")

// ErrSwitchedOff is returned for a source filter naming a source that
// .intermem/config.json switches off.
var ErrSwitchedOff = errors.New("source is switched off in .intermem/config.json")

// Config is what Build needs.
type Config struct {
	// Env locates the sources: the project root, the memory directory, the
	// user's directories.
	Env source.Env
	// Registry lists the sources; nil means every built-in source
	// (sources.Registry).
	Registry *source.Registry
	// Switches maps a source's name to false to switch it off (the
	// "sources" of .intermem/config.json).
	Switches map[string]bool
	// Now stamps first sightings, tombstones and scans.
	Now time.Time
	// MaxWrites, when not 0, bounds the entries a Build writes (its
	// tombstones apart): a Whole source's (auto-memory's) makes its
	// changed files in file order until they hold MaxWrites entries to
	// write (countWrites) and leaves the files after as stored; a
	// per-file source's writes at most MaxWrites entries in all
	// (MaxFileWrites when set). A file whose entries it did not all write
	// is stored to be parsed again, and Partial reports it (builder.store,
	// leave), so that a memory of thousands of entries, or one file of
	// thousands (a long CLAUDE.md, an edit log taken in whole), is brought
	// in over several transactions, and what they store in the end is
	// what one unbounded Build stores.
	// A hook sets it: its write transaction holds, and its commit maps,
	// pages in proportion to the entries written (at 20,000 entries a
	// memory file of 96 facts rewritten took a session's end from 25 to
	// 30 MB, 2,000 facts to 78 MB), and its memory is bounded.
	MaxWrites int
	// MaxFileWrites, when not 0, bounds the entries the Build of a
	// per-file source writes in place of MaxWrites (its tombstones apart;
	// see MaxWrites), which then bounds a Whole source's alone. A hook
	// sets it lower than MaxWrites, each bound what its own cost calls
	// for: a Whole source's transaction decodes every memory file's
	// stored parse whatever it writes, a per-file source's reads only its
	// changed files.
	MaxFileWrites int
	// MaxFiles, when not 0, bounds how many changed files of a per-file
	// source one Build parses and stores: the others keep their stored
	// records (their entries stand as they were), the source's state is
	// left untrusted, and Partial reports it, for the caller to go on in
	// another transaction. A hook sets it, for the reason of MaxWrites: a
	// pull that brings 2,600 solution docs and learnings took a session's
	// end to 81 MB in one transaction a source.
	MaxFiles int
	// Memo, when not nil, carries the listings and file records this
	// Build reads of per-file sources to the next Build given the same
	// Memo, for a caller that goes on in another transaction while
	// Partial: see Memo.
	Memo *Memo
}

// fileWrites is the bound on the entries a per-file source's Build
// writes: MaxFileWrites, else MaxWrites (0: none).
func (cfg *Config) fileWrites() int {
	if cfg.MaxFileWrites > 0 {
		return cfg.MaxFileWrites
	}
	return cfg.MaxWrites
}

// SourceEnv is where the sources of p are found for the user of env: the
// project root, its auto-memory directory, the user's home (HOME as set,
// "" skips what lives there) and Claude Code's configuration directory.
// It is the one place a source.Env is made, for the commands, the MCP
// server and the hooks alike.
func SourceEnv(p *project.Project, env *cli.Env) source.Env {
	return source.Env{Root: p.Root, MemoryDir: p.MemoryDir, Home: env.Get("HOME"), ConfigDir: project.ConfigDir(env)}
}

// ProjectConfig is the catalog's configuration for project p as the user
// of env sees it: its sources found where SourceEnv says, switched on
// and off by p's .intermem/config.json, scans stamped now. The one way the
// commands, the MCP server and the hooks configure a project's catalog;
// an unusable config.json is config.Read's error.
func ProjectConfig(env *cli.Env, p *project.Project, now time.Time) (Config, error) {
	file, err := config.Read(p.StateDir)
	if err != nil {
		return Config{}, err
	}
	return Config{Env: SourceEnv(p, env), Switches: file.Sources, Now: now}, nil
}

// Entry is one entry as the catalog keeps it: the source's entry,
// redacted, with what screening found and when the catalog saw it come
// and go.
type Entry struct {
	source.Entry
	// Flags are the screening findings: non-empty means the entry may be a
	// prompt injection and is never injected into a session.
	Flags []string
	// FirstSeen is when a Build first found the entry; Changed when its
	// text last changed.
	FirstSeen, Changed time.Time
	// Gone is its tombstone: when its source stopped holding it.
	Gone time.Time
}

// Withheld reports whether screening flagged the entry: whatever injects
// text into a session leaves it out.
func (e *Entry) Withheld() bool { return len(e.Flags) > 0 }

// SourceInfo is what `intermem sources` says of one source.
type SourceInfo struct {
	Name string
	// On is false when .intermem/config.json switches the source off.
	On bool
	// Patterns are where the source looks, relative to Base.
	Patterns []string
	// Base is the directory the patterns are relative to ("" for a source
	// that locates its files by its own rule).
	Base string
	// Files are the files it read, as entry paths name them.
	Files []string
	// Entries counts its live entries.
	Entries int
	// Scanned is when a Build last changed what the catalog holds of it;
	// zero when never.
	Scanned time.Time
	// Problems are every problem of its files as they are now.
	Problems []source.Problem
	// filesAt are Files still encoded, as a source found unchanged kept
	// them in its stored state (decoded by Sources).
	filesAt []byte
}

// Catalog is the catalog inside one transaction.
type Catalog struct {
	cfg     Config
	tx      *store.CatalogTx
	srcs    []SourceInfo
	on      map[string]bool
	fresh   []source.Problem
	changed bool
	// partial: a source's changed files were left past Config.MaxFiles.
	partial bool
	// memo holds the per-file sources' file records read, lists their
	// listings, parses the parses of files left to be parsed again
	// (Config.Memo), nil when none are kept; reads counts the records
	// looked up in the store.
	memo   map[string]memoFile
	lists  map[string]*listing
	parses map[string]*fileParse
	reads  int
	// read counts the files of per-file sources read and parsed.
	read int
	// ahead are the per-file sources' states and listings, taken on
	// goroutines of their own while Build goes through the sources
	// (walkAhead).
	ahead map[string]*ahead
}

// Build brings the catalog up to date with the files and returns it,
// bound to tx (see the package comment). tx may be nil (no store yet) or
// read-only: the result is the same, held in memory.
func Build(tx *store.CatalogTx, cfg Config) (*Catalog, error) {
	if cfg.Registry == nil {
		cfg.Registry = sources.Registry()
	}
	if unknown := cfg.Registry.Unknown(cfg.Switches); len(unknown) > 0 {
		return nil, fmt.Errorf("%w: .intermem/config.json switches %s; the sources are %s", ErrUnknownSource, quoteList(unknown), strings.Join(cfg.Registry.Names(), ", "))
	}
	c := &Catalog{cfg: cfg, tx: tx, on: map[string]bool{}}
	c.memo, c.lists, c.parses = cfg.Memo.start(tx)
	for _, s := range cfg.Registry.Enabled(cfg.Switches) {
		c.on[s.Name()] = true
	}
	c.walkAhead(cfg.Registry.Enabled(cfg.Switches))
	defer c.walked()
	for _, s := range cfg.Registry.All() {
		info := SourceInfo{Name: s.Name(), On: c.on[s.Name()], Patterns: s.Patterns(), Base: base(cfg.Env, s)}
		if info.On {
			b := builder{c: c, s: s, info: &info}
			if c.unchanged(s, &b) {
				info.Scanned = tx.Scanned(s.Name())
				c.srcs = append(c.srcs, info)
				continue
			}
			if err := b.run(); err != nil {
				cfg.Memo.drop()
				return nil, fmt.Errorf("catalog: source %s: %w", s.Name(), err)
			}
		}
		info.Scanned = tx.Scanned(s.Name())
		c.srcs = append(c.srcs, info)
	}
	if !c.partial {
		cfg.Memo.drop() // no Build goes on from this one
	}
	return c, nil
}

// base is the directory a source's patterns are relative to.
func base(env source.Env, s source.Source) string {
	if b, ok := s.(interface{ Base(source.Env) string }); ok {
		return b.Base(env)
	}
	if _, ok := s.(source.Locator); ok {
		return ""
	}
	return env.Root
}

// Changed reports whether this Build changed anything the catalog holds.
func (c *Catalog) Changed() bool { return c.changed }

// Partial reports whether this Build left changed files of a source as
// they were stored, past Config.MaxFiles, or entries of a file unwritten,
// past Config.MaxWrites: another Build goes on with them.
func (c *Catalog) Partial() bool { return c.partial }

// Fresh returns the problems this Build found in files it parsed: what a
// caller reports once (the same problems of unchanged files are not
// repeated). A Build that stores what it parsed (a writable transaction:
// a command that writes, the SessionEnd hook) must report them, or nobody
// will: the next Build finds the file unchanged. A read-only Build's are
// parsed again by the next, so it need not.
func (c *Catalog) Fresh() []source.Problem { return c.fresh }

// Sources returns every registered source, in name order.
func (c *Catalog) Sources() []SourceInfo {
	for i := range c.srcs {
		if s := &c.srcs[i]; s.Files == nil && s.filesAt != nil {
			s.Files, s.filesAt = decodeFiles(s.filesAt), nil
		}
	}
	return c.srcs
}

// Problems returns, for each switched-on source by name, every problem of
// its files as they are now: what Sources says of them, without the
// files, which a source found unchanged keeps encoded until Sources is
// called.
func (c *Catalog) Problems() map[string][]source.Problem {
	out := map[string][]source.Problem{}
	for _, s := range c.srcs {
		if s.On && len(s.Problems) > 0 {
			out[s.Name] = s.Problems
		}
	}
	return out
}

// On reports whether the source called name is registered and switched on.
func (c *Catalog) On(name string) bool { return c.on[name] }

// Names returns every registered source's name, in order.
func (c *Catalog) Names() []string { return c.cfg.Registry.Names() }

// quoteList gives names as an error lists them to a user: each quoted,
// separated by commas ("a", "b"), not as Go prints a slice.
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// CheckSources validates a source filter: every name must be a registered
// source that is switched on, or one of also — a name the caller's
// results carry that no catalog source has (search's "scoped"), which an
// unknown name's error lists with the others.
func (c *Catalog) CheckSources(names []string, also ...string) error {
	for _, n := range names {
		if slices.Contains(also, n) {
			continue
		}
		if _, ok := c.cfg.Registry.Lookup(n); !ok {
			return fmt.Errorf("%w %q: the sources are %s", ErrUnknownSource, n, strings.Join(slices.Concat(c.Names(), also), ", "))
		}
		if !c.on[n] {
			return fmt.Errorf("%q: %w", n, ErrSwitchedOff)
		}
	}
	return nil
}

// Entries returns every live entry of the enabled sources (of only those
// named, when names are given), ordered by source, path and line.
func (c *Catalog) Entries(names ...string) []Entry {
	want := c.on
	if len(names) > 0 {
		want = map[string]bool{}
		for _, n := range names {
			want[n] = c.on[n]
		}
	}
	var out []Entry
	for _, s := range c.cfg.Registry.Names() {
		if !want[s] {
			continue
		}
		seen := map[string]bool{}
		_ = c.tx.Files(s, func(f *store.CatalogFile) error {
			for _, id := range f.IDs {
				if seen[id] {
					continue
				}
				seen[id] = true
				if e, ok := c.tx.Entry(id, s); ok && e.Gone.IsZero() {
					out = append(out, fromStore(&e))
				}
			}
			return nil
		})
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := &out[i], &out[j]
		if a.Source != b.Source {
			return a.Source < b.Source
		}
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.Line < b.Line
	})
	return out
}

// Get returns the entry with id: a live entry of an enabled source first,
// else its tombstone. An id two sources share returns the first by source
// name; GetAll returns both.
func (c *Catalog) Get(id string) (Entry, bool) {
	all := c.GetAll(id)
	for _, e := range all {
		if e.Gone.IsZero() {
			return e, true
		}
	}
	if len(all) > 0 {
		return all[0], true
	}
	return Entry{}, false
}

// GetAll returns every enabled source's entry with id, live or not, in
// source-name order.
func (c *Catalog) GetAll(id string) []Entry {
	var out []Entry
	for _, e := range c.tx.EntriesOf(id) {
		if c.on[e.Source] {
			out = append(out, fromStore(&e))
		}
	}
	return out
}

func fromStore(e *store.CatalogEntry) Entry {
	return Entry{Entry: e.Entry, Flags: e.Flags, FirstSeen: e.FirstSeen, Changed: e.Changed, Gone: e.Gone}
}
