//go:build !linux

package hookfront

import (
	"fmt"
	"os"
	"syscall"
)

// HandOver replaces the process with the full hook at path, its stdin
// the payload: an unlinked temporary file holding input, made fd 0 (no
// memfd outside Linux). It returns only when the exec failed.
func HandOver(path string, args []string, input []byte) error {
	f, err := os.CreateTemp("", "intermem-payload-")
	if err != nil {
		return fmt.Errorf("payload file: %w", err)
	}
	defer f.Close()
	_ = os.Remove(f.Name())
	if _, err := f.Write(input); err != nil {
		return fmt.Errorf("write payload: %w", err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		return fmt.Errorf("rewind payload: %w", err)
	}
	if err := syscall.Dup2(int(f.Fd()), 0); err != nil {
		return fmt.Errorf("payload as stdin: %w", err)
	}
	return syscall.Exec(path, append([]string{path}, args...), os.Environ())
}
