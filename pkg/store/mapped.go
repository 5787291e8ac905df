package store

import (
	"sync/atomic"

	bolt "go.etcd.io/bbolt"
)

// Mapped pages
//
// bbolt reads the store through one shared, read-only mapping of the
// whole file. A page a transaction reads stays mapped into the process
// until the store is closed, and at each fault the kernel also maps the
// neighbouring pages the page cache holds (fault-around: 16 pages, 64 KiB,
// by default), whatever bbolt's MADV_RANDOM says. Those pages are the
// kernel's page cache, not memory of the process's own, but they count in
// its resident set, which is what a hook's memory bound is measured by: a
// session start reading every entry of a 20,000-entry store had 10 MB of
// the file resident, and the resident set only grows with the store.
//
// So in a read transaction, every checkEvery record accesses through this
// package (Get, Each, EachRaw, the catalog's and the Glancer's reads; see
// touched), the process's resident file pages are read (/proc/self/statm,
// one pread), and once they have grown by shedAbove since the last shed,
// the pages of the transaction's store mapped into this process are given
// back: madvise MADV_DONTNEED on the mapping, which drops the page-table
// entries while the page cache keeps the pages, so a later read maps them
// again from it, without I/O. A small store never grows the resident set
// that much and is never shed (its pages stay mapped, read once); a large
// one read at random costs about a page fault per record read, as it
// would cold; one read in key order (a scan) costs nothing more.
//
// A write transaction is not shed as it goes: its commit reads again the
// page each record it wrote replaces (bbolt frees it), and holds a page
// buffer for each, so its peak is set by what it writes, not by what it
// read before; shedding while it read cost a Stop turn meeting 10,000 new
// entries more than half of what it got through in its budget, for a
// fifth less resident memory. (Shed, called where a write transaction
// reads pages it will not write — a bucket it deletes — is cheap.)
//
// What a transaction holds stays valid: bbolt never writes the file
// through the mapping and never rewrites a page an open transaction can
// see, so what is read again is what was read before. The mapping cannot
// move meanwhile: bbolt remaps only in a write transaction's commit, which
// waits for every read transaction, and shedding runs inside a
// transaction, on its goroutine. A mapping that cannot be told apart (the
// file mapped twice in this process) is left alone. Elsewhere than on
// Linux, nothing is shed.

// checkEvery is how many record accesses pass between two looks at the
// resident set: a record read maps at most a few 64 KiB windows, so the
// store's mapped pages exceed shedAbove by at most a few megabytes.
const checkEvery = 32

// shedAbove is how far the resident file pages may grow past what they
// were after the last shed (or at the first read access) before the
// store's are shed.
const shedAbove = 6 << 20

// shedWriteAbove is shedAbove for a write transaction that sheds its reads
// (CatalogTx.ShedReads: a session end's catalog refresh), whose heap
// and, at its commit, the pages it rewrites are on top of what it read.
// Session ends taking in a 1,500-line CLAUDE.md and an edit log of 2,000
// observations at 19,905 entries peaked at 23.2–25.0 MB with shedAbove,
// 22.6–24.0 MB with 3 MiB (the refresh's part 22–23.9 MB, the search
// index's segment built after it the rest) and 22.3–24.0 MB with 2 MiB
// (load 8–13); the refresh's time did not tell apart.
const shedWriteAbove = 3 << 20

var (
	// accesses counts record accesses (touched) since the process started.
	accesses atomic.Uint64
	// base is the resident file pages, in bytes, after the last shed, or
	// at the first access of a read transaction; 0 before.
	base atomic.Int64
	// sheds counts the sheds done (tests).
	sheds atomic.Uint64
)

// touched counts one record access in tx and, in a read transaction,
// sheds the store's mapped pages once the resident set has grown by
// shedAbove.
func touched(tx *bolt.Tx) { touchedShed(tx, false) }

// touchedShed is touched that, with writable, sheds a write transaction's
// pages too (CatalogTx.ShedReads), once grown by shedWriteAbove.
func touchedShed(tx *bolt.Tx, writable bool) {
	n := accesses.Add(1)
	if (tx.Writable() && !writable) || (n%checkEvery != 0 && base.Load() != 0) {
		return
	}
	if tx.Writable() {
		ShedGrown(tx, shedWriteAbove)
		return
	}
	ShedGrown(tx, shedAbove)
}

// ShedGrown gives back the pages of tx's store mapped into this process
// once they have grown by above since the last shed (0: now), in a write
// transaction too: for a writer that reads at random far more records
// than it writes, at the places it chooses (the Stop hook's pass over
// changed memory files reads the record and count of each of their
// entries, and the kernel maps 64 KiB around each, to write a few). The
// pages its commit rewrites are mapped again from the page cache. It
// must be called inside tx, on its goroutine; it costs a read of
// /proc/self/statm.
func ShedGrown(tx *bolt.Tx, above int64) {
	now, ok := residentFile()
	if !ok {
		return
	}
	if above > 0 && (base.CompareAndSwap(0, now) || now-base.Load() < above) {
		return
	}
	Shed(tx)
	if after, ok := residentFile(); ok {
		base.Store(after)
	}
}

// Accesses returns how many record accesses this package made since the
// process started (Get, Put, Each, EachRaw, the catalog's and the
// Glancer's reads): what a test measures of what an operation reads.
func Accesses() uint64 { return accesses.Load() }

// Shed gives back the pages of tx's store file mapped into this process
// (see Mapped pages). It must be called inside tx, on its goroutine.
func Shed(tx *bolt.Tx) {
	if tx == nil || tx.DB() == nil {
		return
	}
	if shed(tx.DB().Path()) {
		sheds.Add(1)
	}
}
