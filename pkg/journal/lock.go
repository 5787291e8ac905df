package journal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// ErrBusy is returned when another intermem writer holds the project's
// write lock past the wait.
var ErrBusy = errors.New("another intermem command is changing this project")

// Lock takes the project's writer lock (.intermem/write.lock, an flock),
// so two writers (two applies, an apply and a sweep) can never interleave
// and promote an entry twice. It is separate from the store's own lock:
// the store lock guards one database session, this one guards a whole
// read-plan-write cycle over user files. The returned function releases it.
func Lock(stateDir string, wait time.Duration) (func(), error) {
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(stateDir, "write.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	deadline := time.Now().Add(wait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock: %w", err)
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, ErrBusy
		}
		time.Sleep(20 * time.Millisecond)
	}
}
