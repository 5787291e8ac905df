package source

import (
	"io/fs"
	"time"
)

// Env is where a project's sources are found: the project root that most
// sources' patterns are relative to, and the places outside it that some
// sources read (auto-memory's directory, the user's Claude Code
// configuration for the instruction files every session loads).
type Env struct {
	// Root is the project root.
	Root string
	// MemoryDir is Claude Code's auto-memory directory for the project.
	MemoryDir string
	// Home and ConfigDir are the user's home and Claude Code's
	// configuration directory ("" skips what lives there).
	Home, ConfigDir string
}

// Locator is implemented by a source that finds its files itself, instead
// of by its Patterns under the project root: under another directory
// (FindUnder), or by a rule of its own (the instruction files Claude Code
// loads, found by package loaded). Locate must keep Find's rules: only
// regular files, bounded in number, each File made by Find, FindUnder or
// StatFile.
type Locator interface {
	Source
	Locate(env Env) ([]File, []Problem)
}

// Recorder is a per-file source whose files the catalog keeps a record of
// beside their entries (the file's blob, store.CatalogTx), for a reader
// that needs more of a file than its entries, without parsing it: the
// instruction documents' (package docrecord), which the session start
// reads. Record returns the record of a file's content (never nil);
// RecordVersion is the prefix every record of the current form starts
// with: a file whose stored record lacks it is read again, even unchanged,
// and the version is part of the source's freshness key, so that a new
// form is stored at the next scan.
type Recorder interface {
	Source
	Record(content []byte) []byte
	RecordVersion() string
}

// Files returns the files of s in env: Locate for a Locator, else Find
// under the project root.
func Files(env Env, s Source) ([]File, []Problem) {
	if l, ok := s.(Locator); ok {
		return l.Locate(env)
	}
	return Find(env.Root, s)
}

// Whole is implemented by a source whose files must be read together,
// because what one file's entries are depends on the others: in
// auto-memory, an index line pointing to a file that exists is navigation,
// and the same line pointing to a deleted file is the only copy of a fact.
// The catalog cannot re-parse such a source file by file, so it hands the
// source a Cache of what the source stored at the last scan and takes
// every entry back: the source re-reads only files whose fingerprint
// changed and resolves the rest from the cache.
type Whole interface {
	Source
	// ScanAll returns every entry of the source, the files they came from
	// (each entry's Path names one), and the problems met.
	ScanAll(env Env, c Cache) ([]Entry, []File, []Problem)
}

// WholeByFile is a Whole source that hands its entries over a file at a
// time: the catalog asks for each file's entries as it brings that file
// up to date, and so never holds every entry of the source at once (at
// 10,000 memory entries, the source's entries are most of what a session
// end's refresh would hold, against a hook's bound on memory).
type WholeByFile interface {
	Whole
	// ScanFiles is ScanAll with each file's entries made when asked.
	ScanFiles(env Env, c Cache) ByFile
}

// ByFile is what WholeByFile's ScanFiles returns.
type ByFile struct {
	// Files and Problems are ScanAll's.
	Files    []File
	Problems []Problem
	// Entries returns the entries whose Path is path, in ScanAll's order.
	Entries func(path string) []Entry
	// Resolved returns, for the file at path, a key of what the scan
	// decided of its entries beyond the file's own content (for
	// auto-memory: which index lines are pointers, which memories a
	// secret-bearing line points to), and of the form the source makes
	// its entries in; "" when it has none. A file whose content is what
	// the Cache held (Load at its fingerprint) and whose key is the one
	// stored with its entries has those entries still: the catalog keeps
	// them without asking Entries, so that a scan after one file changed
	// makes the entries of that file alone. nil: no file has a key.
	Resolved func(path string) string
}

// Cache keeps what a Whole source derived from each file between scans.
type Cache interface {
	// Load returns what Keep stored for the file at path, if the file
	// still has fingerprint fp.
	Load(path string, fp Fingerprint) ([]byte, bool)
	// Keep stores data for the file at path as it is at fingerprint fp.
	Keep(path string, fp Fingerprint, data []byte)
}

// Toucher is a Cache that is told, after a Whole source's scan, the paths
// (relative to the source's base, slash-separated) whose state the scan
// depended on beyond the files it returned: names it considered and
// skipped, link targets it looked for and did not find. The catalog stats
// them, and their directories, to tell an unchanged source without
// scanning it.
type Toucher interface {
	Cache
	Touched(paths []string)
}

// ContentKeeper is a Cache that is told what a Whole source's scan read of
// a file: the SHA-256 of its bytes, by its path relative to the source's
// base (slash-separated, as Toucher's). A file modified within the
// catalog's racy window of the scan cannot be told unchanged by its stat
// alone (written again within the clock's tick, it keeps it); with the sum
// of what the scan read, a later Build tells it by reading that one file
// instead of scanning the source again.
type ContentKeeper interface {
	Cache
	KeepContent(path string, sum [32]byte)
}

// Fingerprint is what the catalog compares to tell whether a file changed
// since it was parsed, at the cost of a stat: its size, modification time,
// and (where the system has them) inode and status-change time. A rename
// over the file changes the inode; a write changes the status-change time,
// which no program can set back. A file modified within the clock's
// granularity of being parsed is not trusted (see package catalog).
type Fingerprint struct {
	Size    int64  `json:"size"`
	ModTime int64  `json:"mtime"` // nanoseconds since the Unix epoch
	Inode   uint64 `json:"ino,omitempty"`
	Change  int64  `json:"ctime,omitempty"` // nanoseconds since the Unix epoch
}

// FingerprintOf returns the fingerprint of fi, from os.Stat or os.Lstat.
func FingerprintOf(fi fs.FileInfo) Fingerprint {
	fp := Fingerprint{Size: fi.Size(), ModTime: fi.ModTime().UnixNano()}
	fp.Inode, fp.Change = sysStat(fi)
	return fp
}

// Modified is the fingerprint's modification time.
func (fp Fingerprint) Modified() time.Time { return time.Unix(0, fp.ModTime) }
