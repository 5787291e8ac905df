//go:build linux

package hookfront

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// HandOver replaces the process with the full hook at path, its stdin
// the payload: an anonymous memory file holding input, made fd 0. The
// full hook reads it as it would the pipe Claude Code gave (which the
// front read to its end); no extra process is started. It returns only
// when the exec failed.
func HandOver(path string, args []string, input []byte) error {
	fd, err := unix.MemfdCreate("intermem-payload", unix.MFD_CLOEXEC)
	if err != nil {
		return fmt.Errorf("memfd: %w", err)
	}
	f := os.NewFile(uintptr(fd), "payload")
	defer f.Close()
	if _, err := f.Write(input); err != nil {
		return fmt.Errorf("write payload: %w", err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		return fmt.Errorf("rewind payload: %w", err)
	}
	// dup3 without O_CLOEXEC: fd 0 survives the exec.
	if err := unix.Dup3(fd, 0, 0); err != nil {
		return fmt.Errorf("payload as stdin: %w", err)
	}
	return syscall.Exec(path, append([]string{path}, args...), os.Environ())
}
