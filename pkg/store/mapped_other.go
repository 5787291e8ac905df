//go:build !linux

package store

// shed does nothing: only Linux's /proc/self/maps names the mapping.
func shed(string) bool { return false }

// residentFile is unknown: nothing is shed.
func residentFile() (int64, bool) { return 0, false }
