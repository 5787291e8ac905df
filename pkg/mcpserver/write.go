package mcpserver

import (
	"context"
	"fmt"
)

// Write is not offered yet: the write API (journaled, deduplicated against
// the catalog, redacted and screened before it is stored) replaces this
// method, and its memories join the catalog as the `written` source, so
// the read tools find them with no change here.
func (b *Catalog) Write(context.Context, WriteRequest) (*WriteResult, error) {
	return nil, fmt.Errorf("memory_write is %w: intermem stores memories only through its hooks and commands so far", ErrNotAvailable)
}
