// Package statefile reads a small file of the state directory as hostile
// input, the way the hooks' light packages (turns, quiet) read theirs:
// opened without following a link and without blocking (a FIFO planted
// in its place cannot hold a hook), used only when it is a regular file of
// at most a given size, read whole.
//
// It works on the descriptor with the system calls themselves, not
// through os.File: an os.File of a regular file registers with the
// runtime's network poller (an epoll instance, an eventfd and a refused
// epoll_ctl, the first time in a process), which the hook front, a process
// of a few milliseconds that reads two such files at every turn, never
// needs.
package statefile

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
)

// ErrNotRegular is returned for a path that is not a regular file (a
// link, a FIFO, a directory, a device).
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is returned for a file larger than the bound it is read
// with.
var ErrTooLarge = errors.New("file too large")

// Read returns the content of the regular file at path, at most max bytes,
// in one allocation sized by its fstat. A missing file is an error
// matching fs.ErrNotExist; a link (never followed) or any other file type
// is ErrNotRegular; a file over max bytes, or one that grew past max while
// it was read, is ErrTooLarge.
func Read(path string, max int64) ([]byte, error) {
	return read(path, max, syscall.O_NOFOLLOW)
}

// ReadLinked is Read for a file that may be a link, followed (a user's
// settings file kept in a dotfiles repository): what it leads to must
// still be a regular file of at most max bytes, opened without blocking,
// so that a link to a FIFO or to /dev/zero costs nothing.
func ReadLinked(path string, max int64) ([]byte, error) {
	return read(path, max, 0)
}

func read(path string, max int64, flags int) ([]byte, error) {
	fd, err := open(path, flags)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("%s: %w", path, ErrNotRegular)
		}
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := fstat(fd, &st); err != nil {
		return nil, &fs.PathError{Op: "fstat", Path: path, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, fmt.Errorf("%s: %w", path, ErrNotRegular)
	}
	if st.Size > max {
		return nil, fmt.Errorf("%s: %w", path, ErrTooLarge)
	}
	// One byte beyond the size seen, so that a file that grew is noticed
	// without a second buffer (and read on while it stays within max).
	b := make([]byte, 0, st.Size+1)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		want := cap(b) - len(b)
		n, err := syscall.Read(fd, b[len(b):cap(b)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n <= 0 {
			return b, nil
		}
		b = b[:len(b)+n]
		if int64(len(b)) > max {
			return nil, fmt.Errorf("%s: %w", path, ErrTooLarge)
		}
		// The size seen, in a read that stopped short of the byte past
		// it: a regular file's read stops short only at its end, so no
		// read to be told so (a system call a state file fewer: a quiet
		// turn reads two).
		if n < want && int64(len(b)) == st.Size {
			return b, nil
		}
	}
}

// open opens path for reading with flags: never blocking, not inherited
// by a process the caller starts.
func open(path string, flags int) (int, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC|flags, 0)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

func fstat(fd int, st *syscall.Stat_t) error {
	for {
		err := syscall.Fstat(fd, st)
		if err != syscall.EINTR {
			return err
		}
	}
}
