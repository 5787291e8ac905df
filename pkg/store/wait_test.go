package store

import (
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// TestHooksYieldToWaitingCommand: while a command waits for the store, a
// hook's open (Yield) is refused at once, even one that could share the
// lock; before and after, it opens as usual.
func TestHooksYieldToWaitingCommand(t *testing.T) {
	path := filepath.Join(t.TempDir(), "intermem.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()

	// A reader holds the store (a shared lock): a writer must wait.
	reader, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	// Nobody waits yet: a yielding reader shares the lock.
	if h, err := Open(path, Options{ReadOnly: true, Yield: true}); err != nil {
		t.Fatalf("a hook with no command waiting: %v", err)
	} else {
		h.Close()
	}

	opened := make(chan error, 1)
	go func() {
		cmd, err := Open(path, Options{Timeout: time.Minute})
		if err == nil {
			cmd.Close()
		}
		opened <- err
	}()
	for !commandWaiting(path) {
		select {
		case err := <-opened:
			t.Fatalf("the command opened while a reader held the store: %v", err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	if h, err := Open(path, Options{ReadOnly: true, Yield: true}); !errors.Is(err, ErrLocked) {
		if h != nil {
			h.Close()
		}
		t.Fatalf("a hook while a command waits: %v, want ErrLocked", err)
	}
	if h, err := Open(path, Options{Yield: true, Timeout: time.Millisecond}); !errors.Is(err, ErrLocked) {
		if h != nil {
			h.Close()
		}
		t.Fatalf("a writing hook while a command waits: %v, want ErrLocked", err)
	}
	reader.Close()
	if err := <-opened; err != nil {
		t.Fatalf("the command: %v", err)
	}
	if commandWaiting(path) {
		t.Fatal("the wait is still announced after the command opened and closed")
	}
	if h, err := Open(path, Options{ReadOnly: true, Yield: true}); err != nil {
		t.Fatalf("a hook after the command: %v", err)
	} else {
		h.Close()
	}
}
