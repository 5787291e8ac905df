package rendercache

import (
	"sync/atomic"
	"syscall"
	"unsafe"
)

// A cache file of many facts is checked on two goroutines: at 20,000
// entries a hit checks about 650 facts (most of them stats, grouped by
// directory), most of what it costs over a process that does nothing,
// and while it runs the runtime's other threads sit idle on a machine
// with a second CPU. The rules stay those of the package doc:
//
//   - The whole file is read into one buffer (at most MaxBytes) and every
//     record decoded strictly, by the same functions and bounds as a
//     streamed file, on the calling goroutine before any fact is checked
//     (plan): a malformed record anywhere is a miss, and nothing is handed
//     over before it is known well formed.
//   - The records are cut into units at record boundaries: a group's
//     records, a group of more than unitMax records in runs of unitMax
//     (a run that does not start at the group's record opens the group's
//     directory itself, unless its goroutine has it open already), the
//     records before the first group in runs of unitMax. A unit checked
//     alone decides exactly as the same records checked in the sequence:
//     its group, if any, is the one the sequence would be in.
//   - The caller and one helper goroutine claim units in order from one
//     counter until none is left; the first fact that fails on either
//     sets a flag at which both stop, and the cache misses. The helper
//     is always waited for before Load returns. A helper that no CPU is
//     free for costs little: the caller claims what is left and, waiting,
//     hands its own thread to the helper, which finds nothing to do. (A
//     helper preempted in the middle of a unit does cost: the caller waits
//     for it. On a machine whose CPUs are both busy a hit is a few percent
//     slower than in sequence.)
//
// Nothing is written, no link is followed that the sequence would not
// follow: the checks are the sequence's own (reader.record).

// parMin is the fewest records that are checked on two goroutines; fewer
// are streamed and checked in sequence. What the second CPU saves is half
// the check less the wait for it: on a 2-vCPU VM an idle thread starts
// the helper 70–130 µs after the go statement (a thread waking from
// idle, and the runtime's short sleep before it takes a goroutine another
// thread has just made runnable), when checking 650 facts takes about
// 400 µs. A session start at 19,905 entries (655 records) gains 5–7% of
// its wall time; at 2,047 entries (302 records) the gain was within the
// noise (0.5–3%), so a file of that size is checked in sequence.
var parMin int64 = 400

// unitMax is the most records of one unit: short enough that a group
// of many stats is shared, long enough that a run of one directory
// rarely costs the other goroutine an open of it.
var unitMax int32 = 16

// mainShares is false only in tests that leave every unit to the
// helper.
var mainShares = true

// unit is a run of records: n records from offset at in the buffer; g
// is the offset of their group's 'g' record (-1: before any group).
type unit struct{ g, at, n int32 }

// shares is what the two goroutines share: the units, the next one to
// claim, and whether a fact has failed.
type shares struct {
	units  []unit
	next   atomic.Int64
	failed atomic.Bool
}

// parallel reads the rest of the file whole, decodes all of it, and
// checks its facts on two goroutines (see above); the rendering is the
// end of the buffer read.
//
//go:noinline
func (rd *reader) parallel() (string, bool) {
	if !rd.whole() {
		return "", false
	}
	units, end, ok := rd.plan()
	if !ok {
		return "", false
	}
	text := rd.buf[rd.r:]
	sh := &shares{units: units}
	checker := reader{buf: rd.buf[:end], w: end, fd: -1, dir: -1, at: -1, stop: &sh.failed}
	if len(units) > 1 {
		done := make(chan struct{})
		h := checker
		go h.help(sh, done)
		if mainShares {
			checker.claim(sh)
		}
		<-done
	} else {
		checker.claim(sh)
	}
	if sh.failed.Load() {
		return "", false
	}
	if len(text) == 0 {
		return "", true
	}
	return unsafe.String(&text[0], len(text)), true
}

// whole reads the rest of the file into one buffer of its size: what the
// streaming buffer holds not yet decoded and what the file holds past it.
func (rd *reader) whole() bool {
	buf := heapBytes(rd.w - rd.r + int(rd.left))
	got := copy(buf, rd.buf[rd.r:rd.w])
	for got < len(buf) {
		n, err := syscall.Read(rd.fd, buf[got:])
		if err != nil || n <= 0 {
			return false
		}
		got += n
	}
	rd.buf, rd.r, rd.w, rd.left = buf, 0, len(buf), 0
	return true
}

// plan decodes the records and what follows them without checking any
// fact: the units of the records, the offset where they end, and whether
// the file is well formed (rd is then at the rendering, which runs to the
// end of the buffer).
func (rd *reader) plan() ([]unit, int, bool) {
	rd.dry = true
	var units []unit
	g := int32(-1)
	for range rd.n {
		at := int32(rd.r)
		switch {
		case rd.r < rd.w && rd.buf[rd.r] == 'g':
			g = at
			units = append(units, unit{g, at, 0})
		case len(units) == 0 || units[len(units)-1].n >= unitMax:
			units = append(units, unit{g, at, 0})
		}
		units[len(units)-1].n++
		if !rd.record() {
			return nil, 0, false
		}
	}
	end := rd.r
	rd.dry = false
	rd.closeDir()
	if l, ok := rd.line(""); !ok || len(l) != 0 {
		return nil, 0, false
	}
	l, ok := rd.line("text ")
	if !ok {
		return nil, 0, false
	}
	size, ok := number(l)
	if !ok || size != int64(rd.w-rd.r) {
		return nil, 0, false
	}
	return units, end, true
}

// help claims units on the helper goroutine, and says when it is done.
func (rd *reader) help(sh *shares, done chan<- struct{}) {
	rd.claim(sh)
	close(done)
}

// claim checks units in the order they are claimed until none is left or
// a fact has failed (here or on the other goroutine).
func (rd *reader) claim(sh *shares) {
	for !sh.failed.Load() {
		i := sh.next.Add(1) - 1
		if i >= int64(len(sh.units)) {
			break
		}
		if !rd.unit(sh.units[i]) {
			sh.failed.Store(true)
			break
		}
	}
	rd.closeDir()
}

// unit checks the records of u, in the group they are in: opened here
// unless this reader has it open already.
func (rd *reader) unit(u unit) bool {
	switch {
	case u.g < 0:
		rd.closeDir()
	case u.g != u.at && int(u.g) != rd.at:
		rd.r = int(u.g)
		if !rd.record() {
			return false
		}
	}
	rd.r = int(u.at)
	for range u.n {
		if rd.stop.Load() || !rd.record() {
			return false
		}
	}
	return true
}
