// Package catalog joins what is in auto-memory now (a fresh scan) with what
// the store remembers about each entry (sessions seen, lineage), and
// classifies every entry's stability. Status, plan and injection all start
// from a Catalog, so they agree on what "stable" means.
package catalog

import (
	"errors"
	"io/fs"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/stability"
	"github.com/intermem/intermem/pkg/store"
)

// Item is one current entry with its history.
type Item struct {
	automem.Entry
	Rec    *store.Entry // nil when never observed by a hook
	Status stability.Status
}

// Catalog is the joined view.
type Catalog struct {
	Dir         *automem.Dir // nil when the memory directory does not exist
	Items       []Item
	Sessions    int
	LastSession time.Time
	Threshold   int
	Counts      map[stability.Status]int
}

// Load scans memDir and joins it with s (which may be nil: no store yet).
func Load(tx *bolt.Tx, memDir string, threshold int) (*Catalog, error) {
	c := &Catalog{Threshold: threshold, Counts: map[stability.Status]int{}}
	d, err := automem.Scan(memDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err == nil {
		c.Dir = d
	}
	if tx != nil {
		_ = store.Each(tx, store.BucketSessions, func(_ string, s *store.Session) error {
			c.Sessions++
			if s.Last.After(c.LastSession) {
				c.LastSession = s.Last
			}
			return nil
		})
	}
	if c.Dir == nil {
		return c, nil
	}
	for _, e := range c.Dir.Entries() {
		it := Item{Entry: e}
		if tx != nil {
			var rec store.Entry
			if ok, _ := store.Get(tx, store.BucketEntries, e.ID, &rec); ok {
				it.Rec = &rec
			}
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
