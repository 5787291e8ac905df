package catalog

import (
	"errors"
	"io/fs"
	"time"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/source/automemory"
	"github.com/intermem/intermem/pkg/stability"
	"github.com/intermem/intermem/pkg/store"
)

// Item is one current entry with its history.
type Item struct {
	automem.Entry
	Rec    *store.Entry // nil when never observed by a hook
	Status stability.Status
}

// Memory is auto-memory as the plan and status judge it: a whole scan of
// the memory directory (with every file's bytes, for the byte-exact
// pruning a plan prepares) joined with what the store remembers about each
// entry (sessions seen, lineage), each entry's stability classified. Plan,
// status and "ready" all start from a Memory, so they agree on what
// "stable" means.
type Memory struct {
	Dir         *automem.Dir // nil when the memory directory does not exist
	Items       []Item
	Sessions    int
	LastSession time.Time
	Threshold   int
	Counts      map[stability.Status]int
}

// Memory is auto-memory whole, for the plan and status: read afresh with
// every file's bytes (a plan prepares byte-exact pruning), joined with the
// history the hooks recorded. With auto-memory switched off it is empty.
func (c *Catalog) Memory(threshold int) (*Memory, error) {
	if !c.on[automemory.Name] {
		return &Memory{Threshold: threshold, Counts: map[stability.Status]int{}}, nil
	}
	return loadMemory(c.tx, c.cfg.Env.MemoryDir, threshold)
}

func loadMemory(tx *store.CatalogTx, memDir string, threshold int) (*Memory, error) {
	c := &Memory{Threshold: threshold, Counts: map[stability.Status]int{}}
	d, err := automem.Scan(memDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err == nil {
		c.Dir = d
	}
	_ = tx.Sessions(func(s *store.Session) error {
		c.Sessions++
		if s.Last.After(c.LastSession) {
			c.LastSession = s.Last
		}
		return nil
	})
	if c.Dir == nil {
		return c, nil
	}
	for _, e := range c.Dir.Entries() {
		it := Item{Entry: e}
		if rec, ok := tx.Seen(e.ID); ok {
			it.Rec = &rec
		}
		it.Status = stability.Of(it.Rec, threshold)
		c.Counts[it.Status]++
		c.Items = append(c.Items, it)
	}
	return c, nil
}

// Sessions returns how many distinct sessions an item was seen in.
func (it *Item) Sessions() int {
	if it.Rec == nil {
		return 0
	}
	return it.Rec.Sessions
}
