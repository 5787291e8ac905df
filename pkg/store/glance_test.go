package store

import (
	"fmt"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// Lookup searches in key order and calls fn for the recorded ids alone.
func TestGlancerLookup(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "intermem.db"), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Update(func(tx *bolt.Tx) error {
		for i, id := range []string{"a", "b", "c"} {
			if err := PutSeen(tx, &Entry{ID: id, Sessions: i + 1}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var got []string
	s.View(func(tx *bolt.Tx) error {
		NewGlancer(tx).Lookup([]string{"c", "x", "a"}, func(id string, g Glance) {
			got = append(got, fmt.Sprintf("%s:%d", id, g.Sessions))
		})
		return nil
	})
	if fmt.Sprint(got) != "[a:1 c:3]" {
		t.Errorf("Lookup called fn with %v, want [a:1 c:3]", got)
	}
}
