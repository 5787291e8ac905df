// Package fifotest lets a test tell code that waits on a FIFO (an open
// for reading blocks until a writer comes, forever in a repository where
// none will) from code that does not, without hanging when the code does.
package fifotest

import (
	"os"
	"syscall"
	"time"
)

// Grace is how long the code under test may run before it is taken to be
// waiting on the FIFO: far longer than code that does not wait takes on a
// loaded machine. Code that opens the FIFO without blocking and judges it
// by its mode holds it open for a moment, as a waiting reader does, so a
// writer found at once does not tell the two apart; time does.
const Grace = 10 * time.Second

// Fed runs f and, once it has run for Grace without returning, gives a
// writer (and data) to whoever has the FIFO at path open for reading,
// again and again until f returns, so that code that would wait on it
// forever ends instead of hanging the test. It reports whether f had to
// be fed.
func Fed(path string, data []byte, f func()) (waited bool) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
		return false
	case <-time.After(Grace):
	}
	for {
		select {
		case <-done:
			return true
		default:
		}
		// Fails with ENXIO at once unless a reader has the FIFO open.
		w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			time.Sleep(time.Millisecond)
			continue
		}
		w.Write(data)
		w.Close()
	}
}
