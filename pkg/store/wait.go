package store

import (
	"os"
	"syscall"
)

// Commands before hooks
//
// bbolt's file lock is not fair: a waiter polls every 50 ms, so a stream
// of hooks, each taking the lock a moment after the last let go of it,
// can keep a command the user is waiting on (apply, sweep) out until it
// gives up. Hooks can always do their work later — Stop spools its
// observation, a checkpoint waits for the next turn, SessionStart serves
// its cached copy — a person cannot. So a command that opens the store
// to write announces that it is waiting by holding a shared flock on the
// store's ".wait" file for as long as it waits, and a hook that opens
// with Options.Yield finds the store busy at once while one is waiting
// (Store.Waited lets a hook that holds the store stop early too).
//
// The file is created in the state directory beside the store, never
// through a link (O_NOFOLLOW). It holds nothing; only its lock matters.

// waitPath is the file whose lock says a command waits for the store.
func waitPath(path string) string { return path + ".wait" }

// announceWait takes a shared lock on path's wait file and returns its
// release. Failing to announce is no reason to fail the open: the
// command waits as it always could, unannounced.
func announceWait(path string) func() {
	f, err := os.OpenFile(waitPath(path), os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return func() {}
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return func() {}
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
		f.Close()
		return func() {}
	}
	return func() { f.Close() } // closing the last descriptor drops the lock
}

// commandWaiting reports whether a command holds path's wait file's lock.
func commandWaiting(path string) bool {
	f, err := os.OpenFile(waitPath(path), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return err == syscall.EWOULDBLOCK
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}

// Waited reports whether a command is waiting for the store: a hook
// holding it across several transactions stops at the next one.
func (s *Store) Waited() bool { return commandWaiting(s.Path) }
