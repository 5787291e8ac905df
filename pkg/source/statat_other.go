//go:build !linux

package source

// dirFD: statAt is Linux's; elsewhere every file is stat'd by its path.
func dirFD(string) int { return -1 }

func closeFD(int) {}

func statAt(int, string, *[]byte) (bool, Fingerprint, error) { panic("statAt without dirFD") }
