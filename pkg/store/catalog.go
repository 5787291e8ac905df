package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/source"
)

// The catalog's buckets (schema 3). Package catalog is their only user,
// through CatalogTx.
var (
	// BucketCatFiles maps "<source>\x00<path>" to the CatalogFile of every
	// file a source read: its fingerprint, entry ids, problems, cursor.
	BucketCatFiles = []byte("catalog_files")
	// BucketCatBlobs maps the same keys to what a Whole source kept of the
	// file (auto-memory: the parsed file, redacted).
	BucketCatBlobs = []byte("catalog_blobs")
	// BucketCatEntries maps "<id>\x00<source>" to a CatalogEntry: an id may
	// name one fact in two sources (a memory and its promoted copy carry
	// the same id), never twice in one.
	BucketCatEntries = []byte("catalog_entries")
	// BucketCatMeta holds the generation, the search index's delta over
	// its base, the generation they are current at and the ids changed
	// since the base, and each source's last scan.
	BucketCatMeta = []byte("catalog")
	// BucketCatIndex holds the encoded base of the search index (key
	// "base"), alone: it is megabytes, and bbolt writes a leaf's every
	// value again when one of its keys is written, and keeps at least two
	// keys in a leaf. In BucketCatMeta (where an older intermem kept it,
	// under "index"), it shared a leaf with the generation, so that every
	// commit that changed an entry read and wrote the whole base again:
	// at 20,000 entries 1.9 MB, read through the store's mapping and
	// copied into a buffer of its size, the largest part of a session
	// end's peak memory. Created when a base is first stored.
	BucketCatIndex = []byte("catalog_index")
)

// CatalogFile is what the catalog keeps of one file of a source.
type CatalogFile struct {
	Source string             `json:"source"`
	Path   string             `json:"path"`
	FP     source.Fingerprint `json:"fp"`
	// Racy marks a fingerprint taken while the file could still change
	// within the clock's granularity: the next scan reads the file again.
	Racy bool `json:"racy,omitempty"`
	// IDs are the ids of the file's entries, in file order.
	IDs []string `json:"ids"`
	// Sum is a hash of the file's entries as stored: a Whole source's file
	// whose entries changed without the file changing (a pointer whose
	// target was deleted) is told by it.
	Sum string `json:"sum,omitempty"`
	// Resolved is a Whole source's key of what decided the file's entries
	// beyond its parse (source.ByFile.Resolved), stored with the entries
	// made from the parse its blob holds: while both stand, a scan keeps
	// the entries without making them. A writer that stores a new parse
	// without the entries (PutParse) clears it.
	Resolved string `json:"resolved,omitempty"`
	// Problems are what the source could not make sense of in the file as
	// fingerprinted: reported when found, kept for `intermem sources`.
	Problems []source.Problem `json:"problems,omitempty"`
	// Cursor is where an append-only log's parse resumes.
	Cursor *source.Cursor `json:"cursor,omitempty"`
	// Parsed is when the file was last read and parsed.
	Parsed time.Time `json:"parsed"`
}

// CatalogEntry is one entry of a source as the catalog keeps it: the
// source's entry with every text redacted, what screening found, and when
// the catalog first saw it and saw it go.
type CatalogEntry struct {
	source.Entry
	// Flags are the screening findings (screen.Check details) of the
	// entry's text: an entry with flags is withheld from every text
	// intermem injects into a session.
	Flags []string `json:"flags,omitempty"`
	// File is the key of the CatalogFile it came from.
	File string `json:"file"`
	// FirstSeen is when a scan first found the entry; Changed when its
	// stored form last changed.
	FirstSeen time.Time `json:"first_seen"`
	Changed   time.Time `json:"changed"`
	// Gone is the tombstone: when its source stopped holding it (zero
	// while it exists). The record and the entry's overlay are kept, so
	// provenance can still answer for it; a reappearing entry is revived.
	Gone time.Time `json:"gone,omitzero"`
}

// FileKey is the key of a source's file in BucketCatFiles.
func FileKey(src, path string) string { return src + "\x00" + path }

// entryKey is the key of an entry in BucketCatEntries.
func entryKey(id, src string) string { return id + "\x00" + src }

// Meta keys of BucketCatMeta.
var (
	metaGeneration = []byte("generation")
	metaIndex      = []byte("index") // an older intermem's place of the base: see BucketCatIndex
	indexBase      = "base"
	metaIndexGen   = []byte("index_generation")
	metaIndexDelta = []byte("index_delta")
	metaChanged    = "changed\x00" // + entry id → "1": an older intermem's mark of metaChanges
	metaChanges    = "changes\x00" // + the generation (8 bytes, big-endian) + entry id → "1": changed since the index's base was stored
	metaScanned    = "scanned\x00" // + source name → RFC 3339
	metaState      = "state\x00"   // + source name → the catalog's freshness record
)

// CatalogTx is the catalog's typed access to the store inside one
// transaction. With a writable transaction, writes go to the store; with a
// read-only one or none (no store yet), they are held in memory for the
// life of the CatalogTx, so a command that must not write (status,
// search) still sees the catalog brought up to date with the files, and
// the next writer stores the same result. Reads see the held writes.
type CatalogTx struct {
	tx  *bolt.Tx
	mem map[string]map[string][]byte // bucket → key → value; nil value: deleted
	// based is whether a search index base is stored (0: not looked yet,
	// 1: no, 2: yes): ids changed are recorded only over a base.
	based int8
	// shed: a write transaction's reads shed its mapped pages as a read
	// transaction's do (ShedReads).
	shed bool
	// markGen is the generation the marks of changed ids this transaction
	// writes are keyed by (markChanged), once read.
	markGen []byte
}

// ShedReads makes the reads of c's write transaction give back the
// store's mapped pages as they grow, as a read transaction's do (see
// Mapped pages): for a hook's write transaction that reads far more than
// it writes — a catalog refresh that decodes every memory file's stored
// parse to write one file's entries read 11 MB of the store, at 20,000
// entries, on top of what its commit maps — so that its resident set
// stays within the hook's bound. The pages a commit rewrites are mapped
// again from the page cache.
func (c *CatalogTx) ShedReads() { c.shed = c.tx != nil && c.tx.Writable() }

// touched counts one record access (see Mapped pages).
func (c *CatalogTx) touched() { touchedShed(c.tx, c.shed) }

// Catalog returns the catalog's access through tx (nil: no store).
func Catalog(tx *bolt.Tx) *CatalogTx {
	c := &CatalogTx{tx: tx}
	if tx == nil || !tx.Writable() {
		c.mem = map[string]map[string][]byte{}
	}
	return c
}

// Persistent reports whether writes reach the store.
func (c *CatalogTx) Persistent() bool { return c.mem == nil }

// Committed reports, once c's write transaction has committed, its id to
// done (bbolt's: a write transaction's id is the last committed one's
// plus one, so the next write transaction that finds id+1 knows that
// nothing was committed in between); never when it rolls back, nor for a
// CatalogTx whose writes do not reach the store.
func (c *CatalogTx) Committed(done func(id int)) {
	if c.mem != nil {
		return
	}
	id := c.tx.ID()
	c.tx.OnCommit(func() { done(id) })
}

// ID returns the id of c's transaction (see Committed), 0 without a store.
func (c *CatalogTx) ID() int {
	if c.tx == nil {
		return 0
	}
	return c.tx.ID()
}

func (c *CatalogTx) get(bucket []byte, key string) []byte {
	if c.mem != nil {
		if m, ok := c.mem[string(bucket)]; ok {
			if v, ok := m[key]; ok {
				return v
			}
		}
	}
	if c.tx == nil {
		return nil
	}
	b := c.tx.Bucket(bucket)
	if b == nil {
		return nil
	}
	c.touched()
	return b.Get([]byte(key))
}

func (c *CatalogTx) put(bucket []byte, key string, v []byte) error {
	if c.mem != nil {
		m := c.mem[string(bucket)]
		if m == nil {
			m = map[string][]byte{}
			c.mem[string(bucket)] = m
		}
		m[key] = v
		return nil
	}
	b, err := c.tx.CreateBucketIfNotExists(bucket)
	if err != nil {
		return err
	}
	c.touched()
	return b.Put([]byte(key), v)
}

func (c *CatalogTx) del(bucket []byte, key string) error {
	if c.mem != nil {
		return c.put(bucket, key, nil)
	}
	if b := c.tx.Bucket(bucket); b != nil {
		return b.Delete([]byte(key))
	}
	return nil
}

// each calls fn with every key starting with prefix and its value, in key
// order, held writes included.
func (c *CatalogTx) each(bucket []byte, prefix string, fn func(key string, v []byte) error) error {
	return c.eachAfter(bucket, prefix, "", fn)
}

// eachAfter is each for the keys past after alone.
func (c *CatalogTx) eachAfter(bucket []byte, prefix, after string, fn func(key string, v []byte) error) error {
	held := c.mem[string(bucket)]
	var keys []string
	for k, v := range held {
		if v != nil && len(k) >= len(prefix) && k[:len(prefix)] == prefix && k > after {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var b *bolt.Bucket
	if c.tx != nil {
		b = c.tx.Bucket(bucket)
	}
	next := 0 // next held key not yet visited
	flush := func(upTo string, all bool) error {
		for next < len(keys) && (all || keys[next] < upTo) {
			if err := fn(keys[next], held[keys[next]]); err != nil {
				return err
			}
			next++
		}
		return nil
	}
	if b != nil {
		cur := b.Cursor()
		p := []byte(prefix)
		k, v := cur.Seek(p)
		if after > prefix {
			k, v = cur.Seek([]byte(after))
		}
		for ; k != nil && bytes.HasPrefix(k, p); k, v = cur.Next() {
			if v == nil || (after != "" && string(k) <= after) {
				continue
			}
			c.touched()
			ks := string(k)
			if err := flush(ks, false); err != nil {
				return err
			}
			if _, ok := held[ks]; ok {
				if next < len(keys) && keys[next] == ks {
					if err := fn(ks, held[ks]); err != nil {
						return err
					}
					next++
				}
				continue // held: overwritten or deleted
			}
			if err := fn(ks, v); err != nil {
				return err
			}
		}
	}
	return flush("", true)
}

func putJSON(c *CatalogTx, bucket []byte, key string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s/%q: %w", bucket, key, err)
	}
	return c.put(bucket, key, raw)
}

// File returns the record of the file key (FileKey); ok is false when
// there is none or it no longer decodes (the file is then read again).
func (c *CatalogTx) File(key string) (f CatalogFile, ok bool) {
	raw := c.get(BucketCatFiles, key)
	if raw == nil || json.Unmarshal(raw, &f) != nil {
		return CatalogFile{}, false
	}
	return f, true
}

// PutFile stores the record of a file.
func (c *CatalogTx) PutFile(f *CatalogFile) error {
	return putJSON(c, BucketCatFiles, FileKey(f.Source, f.Path), f)
}

// DeleteFile forgets a file and what its source kept of it.
func (c *CatalogTx) DeleteFile(key string) error {
	if err := c.del(BucketCatFiles, key); err != nil {
		return err
	}
	return c.del(BucketCatBlobs, key)
}

// Files calls fn with every file record of source src, in path order.
// Records that no longer decode are skipped (their files are read again).
func (c *CatalogTx) Files(src string, fn func(f *CatalogFile) error) error {
	return c.each(BucketCatFiles, src+"\x00", func(_ string, raw []byte) error {
		var f CatalogFile
		if json.Unmarshal(raw, &f) != nil {
			return nil
		}
		return fn(&f)
	})
}

// FilePaths calls fn with the path of every file of source src the
// catalog holds a record of, in path order, from the records' keys alone
// (no record decoded): what a scan compares its listing with to find the
// files gone, at every transaction of a refresh that goes on in several.
func (c *CatalogTx) FilePaths(src string, fn func(path string) error) error {
	prefix := src + "\x00"
	return c.each(BucketCatFiles, prefix, func(key string, _ []byte) error {
		return fn(key[len(prefix):])
	})
}

// Blob returns what a Whole source kept of the file key.
func (c *CatalogTx) Blob(key string) []byte { return c.get(BucketCatBlobs, key) }

// PutBlob stores what a Whole source keeps of the file key.
func (c *CatalogTx) PutBlob(key string, b []byte) error { return c.put(BucketCatBlobs, key, b) }

// DeleteBlob forgets what a source kept of the file key.
func (c *CatalogTx) DeleteBlob(key string) error { return c.del(BucketCatBlobs, key) }

// Entry returns the entry id of source src.
func (c *CatalogTx) Entry(id, src string) (e CatalogEntry, ok bool) {
	raw := c.get(BucketCatEntries, entryKey(id, src))
	if raw == nil || json.Unmarshal(raw, &e) != nil {
		return CatalogEntry{}, false
	}
	return e, true
}

// EntriesOf returns every source's entry with id, in source-name order.
func (c *CatalogTx) EntriesOf(id string) []CatalogEntry {
	var out []CatalogEntry
	_ = c.each(BucketCatEntries, id+"\x00", func(_ string, raw []byte) error {
		var e CatalogEntry
		if json.Unmarshal(raw, &e) == nil {
			out = append(out, e)
		}
		return nil
	})
	return out
}

// PutEntry stores an entry.
func (c *CatalogTx) PutEntry(e *CatalogEntry) error {
	if err := putJSON(c, BucketCatEntries, entryKey(e.ID, e.Source), e); err != nil {
		return err
	}
	return c.markChanged(e.ID)
}

// DeleteEntry removes an entry's record (its tombstone too).
func (c *CatalogTx) DeleteEntry(id, src string) error {
	if err := c.del(BucketCatEntries, entryKey(id, src)); err != nil {
		return err
	}
	return c.markChanged(id)
}

// Entries calls fn with every entry record, tombstones included, in id
// order.
func (c *CatalogTx) Entries(fn func(e *CatalogEntry) error) error {
	return c.each(BucketCatEntries, "", func(_ string, raw []byte) error {
		var e CatalogEntry
		if json.Unmarshal(raw, &e) != nil {
			return nil
		}
		return fn(&e)
	})
}

// EntriesAfter is Entries for the records whose keys come after the key
// after ("" for all), each given with its key: a caller that reads the
// entries in runs (a base of the search index built a segment at a time)
// goes on from the last key it read. fn returning ErrStop ends the run
// without an error.
func (c *CatalogTx) EntriesAfter(after string, fn func(key string, e *CatalogEntry) error) error {
	err := c.eachAfter(BucketCatEntries, "", after, func(key string, raw []byte) error {
		var e CatalogEntry
		if json.Unmarshal(raw, &e) != nil {
			return nil
		}
		return fn(key, &e)
	})
	if errors.Is(err, ErrStop) {
		return nil
	}
	return err
}

// ErrStop is returned by a callback of EntriesAfter to end the run early;
// EntriesAfter itself then returns nil.
var ErrStop = errors.New("stop")

func (c *CatalogTx) metaInt(key []byte) uint64 {
	n, _ := strconv.ParseUint(string(c.get(BucketCatMeta, string(key))), 10, 64)
	return n
}

// Generation counts the changes to the catalog's entries and their
// overlays; the search index is rebuilt when it is behind.
func (c *CatalogTx) Generation() uint64 { return c.metaInt(metaGeneration) }

// Bump records a change to the entries or their overlays.
func (c *CatalogTx) Bump() error {
	return c.put(BucketCatMeta, string(metaGeneration), []byte(strconv.FormatUint(c.Generation()+1, 10)))
}

// The search index is stored as a base segment, built over every entry,
// and a delta over it of the entries changed since (package catalog's
// Index): the ids whose entries or overlays changed after the base was
// stored are recorded as they are written (PutEntry, DeleteEntry,
// PutOverlay), so that the index is brought up to date by indexing those
// alone.

// Index returns the encoded base of the search index and the generation
// the base and its delta (IndexDelta) are current at; the bytes are valid
// only during the transaction.
func (c *CatalogTx) Index() ([]byte, uint64) {
	return c.indexBase(), c.metaInt(metaIndexGen)
}

// indexBase returns the stored base of the search index, from where an
// older intermem stored it when it is not in its own bucket.
func (c *CatalogTx) indexBase() []byte {
	if b := c.get(BucketCatIndex, indexBase); b != nil {
		return b
	}
	return c.get(BucketCatMeta, string(metaIndex))
}

// moveBase moves a base of the search index that an older intermem stored
// in BucketCatMeta to its own bucket, where writing another key does not
// write it again (a copy: bytes read from the store are valid only until
// the commit remaps it).
func (c *CatalogTx) moveBase() error {
	old := c.get(BucketCatMeta, string(metaIndex))
	if old == nil {
		return nil
	}
	if err := c.put(BucketCatIndex, indexBase, bytes.Clone(old)); err != nil {
		return err
	}
	return c.del(BucketCatMeta, string(metaIndex))
}

// IndexDelta returns the encoded delta over the stored base (nil when
// none); the bytes are valid only during the transaction.
func (c *CatalogTx) IndexDelta() []byte { return c.get(BucketCatMeta, string(metaIndexDelta)) }

// PutIndex stores the encoded base of the search index, built at
// generation gen over every entry: it has no delta, and no id has changed
// since.
func (c *CatalogTx) PutIndex(b []byte, gen uint64) error {
	for _, k := range c.changedKeys() {
		if err := c.del(BucketCatMeta, k); err != nil {
			return err
		}
	}
	if err := c.del(BucketCatMeta, string(metaIndexDelta)); err != nil {
		return err
	}
	if err := c.del(BucketCatMeta, string(metaIndex)); err != nil {
		return err
	}
	if err := c.DropIndexBuild(); err != nil {
		return err
	}
	if err := c.put(BucketCatIndex, indexBase, b); err != nil {
		return err
	}
	c.based = 2
	return c.put(BucketCatMeta, string(metaIndexGen), []byte(strconv.FormatUint(gen, 10)))
}

// PutIndexDelta stores the encoded delta over the stored base, which
// together are current at generation gen.
func (c *CatalogTx) PutIndexDelta(b []byte, gen uint64) error {
	if err := c.moveBase(); err != nil {
		return err
	}
	if err := c.put(BucketCatMeta, string(metaIndexDelta), b); err != nil {
		return err
	}
	return c.put(BucketCatMeta, string(metaIndexGen), []byte(strconv.FormatUint(gen, 10)))
}

// A new base is built a segment at a time when a hook builds it (package
// catalog's base build: a segment over each run of entries in key order,
// stored in a transaction of its own, so that a session's end that runs
// out of time keeps what it built and the next goes on from there). The
// segments and the build's record are in BucketCatIndex beside the base,
// under indexBuild and indexSegment + the segment's number (4 bytes,
// big-endian). While a build goes on no base is stored, and the ids
// changed are marked as over a base: from its first segment on, the marks
// are of the ids changed since the build began, which a delta over the
// base it ends in indexes again.
const (
	indexBuild   = "build"
	indexSegment = "segment\x00"
)

// IndexBuild returns the record of the base being built (package
// catalog's), nil when none; the bytes are valid only during the
// transaction.
func (c *CatalogTx) IndexBuild() []byte { return c.get(BucketCatIndex, indexBuild) }

// IndexSegment returns the stored segment i of the base being built, nil
// when none; the bytes are valid only during the transaction.
func (c *CatalogTx) IndexSegment(i int) []byte {
	return c.get(BucketCatIndex, segmentKey(i))
}

func segmentKey(i int) string {
	return indexSegment + string(binary.BigEndian.AppendUint32(nil, uint32(i)))
}

// StartIndexBuild stores the first segment of a new base and the build's
// record: the stored base, its delta, the segments of an earlier build and
// the marks of ids changed are dropped, and the ids changed from now on
// are marked.
func (c *CatalogTx) StartIndexBuild(seg, build []byte) error {
	if err := c.DropIndexBuild(); err != nil {
		return err
	}
	for _, k := range c.changedKeys() {
		if err := c.del(BucketCatMeta, k); err != nil {
			return err
		}
	}
	for _, k := range [][]byte{metaIndexDelta, metaIndex, metaIndexGen} {
		if err := c.del(BucketCatMeta, string(k)); err != nil {
			return err
		}
	}
	if err := c.del(BucketCatIndex, indexBase); err != nil {
		return err
	}
	c.based = 2
	return c.PutIndexSegment(0, seg, build)
}

// PutIndexSegment stores segment i of the base being built and the
// build's record as it stands with it.
func (c *CatalogTx) PutIndexSegment(i int, seg, build []byte) error {
	if err := c.put(BucketCatIndex, segmentKey(i), seg); err != nil {
		return err
	}
	return c.put(BucketCatIndex, indexBuild, build)
}

// PutIndexBuilt stores the base a build ended in, current at generation
// gen but for the ids marked changed since the build began, which are
// kept (a delta indexes them again); the build's segments and record are
// dropped.
func (c *CatalogTx) PutIndexBuilt(base []byte, gen uint64) error {
	if err := c.DropIndexBuild(); err != nil {
		return err
	}
	if err := c.put(BucketCatIndex, indexBase, base); err != nil {
		return err
	}
	c.based = 2
	return c.put(BucketCatMeta, string(metaIndexGen), []byte(strconv.FormatUint(gen, 10)))
}

// DropIndexBuild forgets a base being built: its record and segments.
func (c *CatalogTx) DropIndexBuild() error {
	var keys []string
	_ = c.each(BucketCatIndex, indexSegment, func(key string, _ []byte) error {
		keys = append(keys, key)
		return nil
	})
	keys = append(keys, indexBuild)
	for _, k := range keys {
		if err := c.del(BucketCatIndex, k); err != nil {
			return err
		}
	}
	return nil
}

// IndexChanged returns the ids whose entries or overlays changed since
// the stored base of the search index was built, in order.
func (c *CatalogTx) IndexChanged() []string {
	var ids []string
	for _, k := range c.changedKeys() {
		if id, ok := strings.CutPrefix(k, metaChanged); ok {
			ids = append(ids, id)
		} else if len(k) > len(metaChanges)+8 {
			ids = append(ids, k[len(metaChanges)+8:])
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// changedKeys returns the keys of every mark of an id changed since the
// index's base, in either form.
func (c *CatalogTx) changedKeys() []string {
	var keys []string
	for _, prefix := range []string{metaChanged, metaChanges} {
		_ = c.each(BucketCatMeta, prefix, func(key string, _ []byte) error {
			keys = append(keys, key)
			return nil
		})
	}
	return keys
}

// markChanged records that id's entries or overlay changed, when a base
// of the search index is stored (without one, the next index is built
// over every entry anyway).
func (c *CatalogTx) markChanged(id string) error {
	if c.based == 0 {
		c.based = 1
		if c.indexBase() != nil || c.IndexBuild() != nil {
			c.based = 2
		}
	}
	if c.based == 1 {
		return nil
	}
	// Keyed by the generation first: the marks a transaction writes are
	// next to each other, after every earlier one, in a leaf or two of
	// the store, where keyed by id alone each was in a leaf of its own
	// (at random among thousands), which the commit wrote again and, to
	// free it, mapped again: half of the pages a session's end that brings
	// in 64 changed documents writes.
	if c.markGen == nil {
		c.markGen = binary.BigEndian.AppendUint64(nil, c.Generation())
	}
	return c.put(BucketCatMeta, metaChanges+string(c.markGen)+id, []byte("1"))
}

// Scanned returns when a scan last changed what the catalog holds of
// source src; zero when never.
func (c *CatalogTx) Scanned(src string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, string(c.get(BucketCatMeta, metaScanned+src)))
	if err != nil {
		return time.Time{}
	}
	return t
}

// SetScanned records when a scan changed what the catalog holds of src.
func (c *CatalogTx) SetScanned(src string, t time.Time) error {
	return c.put(BucketCatMeta, metaScanned+src, []byte(t.UTC().Format(time.RFC3339Nano)))
}

// State returns the record the catalog keeps of source src as a whole, to
// tell an unchanged source at the cost of a stat per file (package
// catalog's sourceState); nil when none. The bytes are valid only during
// the transaction.
func (c *CatalogTx) State(src string) []byte { return c.get(BucketCatMeta, metaState+src) }

// PutState stores the record State returns.
func (c *CatalogTx) PutState(src string, b []byte) error {
	return c.put(BucketCatMeta, metaState+src, b)
}

// PutParse stores what a Whole source keeps of one file (its blob: for
// auto-memory the file's parse alone, automemory.Encode) at fp, the
// fingerprint the file had when it was read, for a writer that parsed the
// file without bringing the catalog's entries up to date — the Stop hook's
// sweep. The file's stored ids, sum and problems stand: they still say
// which entries the catalog holds (its Resolved key is cleared: they are
// no longer made from the blob). The next catalog.Build finds the blob
// at the file's fingerprint, decodes it rather than reading the file, and
// stores the entries when their sum differs; a session start reads the
// blob (Parse) instead of parsing the file. racy marks a fingerprint that
// cannot be trusted (the file modified within the clock's granularity of
// the read): the blob is then used by nobody, and the file read again.
func (c *CatalogTx) PutParse(src, path string, fp source.Fingerprint, racy bool, blob []byte, now time.Time) error {
	key := FileKey(src, path)
	f, ok := c.File(key)
	if !ok {
		f = CatalogFile{Source: src, Path: path, IDs: []string{}, Parsed: now}
	}
	if f.FP == fp && !f.Racy && !racy && bytes.Equal(c.get(BucketCatBlobs, key), blob) {
		return nil
	}
	f.FP, f.Racy = fp, racy
	f.Resolved = "" // the ids are no longer the blob's
	if err := c.PutFile(&f); err != nil {
		return err
	}
	return c.PutBlob(key, blob)
}

// Parse returns the blob kept of the file path of source src when it was
// stored for the file at fingerprint fp and that fingerprint is trusted
// (not racy); the bytes are valid only during the transaction.
func (c *CatalogTx) Parse(src, path string, fp source.Fingerprint) ([]byte, bool) {
	key := FileKey(src, path)
	raw := c.get(BucketCatFiles, key)
	if raw == nil {
		return nil, false
	}
	// Only the fingerprint is needed: the file's ids are not decoded.
	var f struct {
		FP   source.Fingerprint `json:"fp"`
		Racy bool               `json:"racy"`
	}
	if json.Unmarshal(raw, &f) != nil || f.FP != fp || f.Racy {
		return nil, false
	}
	b := c.get(BucketCatBlobs, key)
	return b, b != nil
}

// Records calls fn with the path, fingerprint and blob of every file of
// source src whose blob was stored at a trusted (not racy) fingerprint, in
// path order: a per-file source's records (source.Recorder), which a
// session start takes in one short transaction before it knows which
// files it will need. Only each file record's fingerprint is decoded; the
// blob is valid only during the transaction.
func (c *CatalogTx) Records(src string, fn func(path string, fp source.Fingerprint, blob []byte)) {
	prefix := src + "\x00"
	_ = c.each(BucketCatFiles, prefix, func(key string, raw []byte) error {
		var f struct {
			FP   source.Fingerprint `json:"fp"`
			Racy bool               `json:"racy"`
		}
		if json.Unmarshal(raw, &f) != nil || f.Racy {
			return nil
		}
		if b := c.get(BucketCatBlobs, key); b != nil {
			fn(key[len(prefix):], f.FP, b)
		}
		return nil
	})
}
