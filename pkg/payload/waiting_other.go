//go:build !linux

package payload

import "io"

// fileWaiting is 0 where FIONREAD is not asked: a file's reads past the
// first go through readRest's timer.
func fileWaiting(io.Reader) int { return 0 }
