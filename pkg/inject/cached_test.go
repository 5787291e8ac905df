package inject

import (
	"errors"
	"fmt"
	"testing"

	"github.com/intermem/intermem/pkg/store"
)

// TestServesCached: a session start serves its last rendering when the
// store could not be opened, is damaged, or its read transaction panicked
// (store.ErrPanicked, which is not damage since the store tells the two
// apart), and not for another error.
func TestServesCached(t *testing.T) {
	for _, c := range []struct {
		name         string
		openErr, err error
		want         bool
	}{
		{"open failed", store.ErrLocked, fmt.Errorf("open: %w", store.ErrLocked), true},
		{"damaged", nil, fmt.Errorf("gather: %w", store.ErrCorrupt), true},
		{"panicked", nil, fmt.Errorf("gather: %w at x.go:1: boom", store.ErrPanicked), true},
		{"other", nil, errors.New("CLAUDE.md: permission denied"), false},
	} {
		if got := servesCached(c.openErr, c.err); got != c.want {
			t.Errorf("%s: servesCached = %v, want %v", c.name, got, c.want)
		}
	}
}
