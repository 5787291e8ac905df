package snapshot

import (
	"fmt"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/source/automemory"
	"github.com/intermem/intermem/pkg/store"
)

// TestRerecordBounded: Rerecord starts no file past its deadline and
// leaves the rest for the next call; it renews only stored parses of
// another version (or damaged), never reads a file with no stored parse
// or a current one, and a parse it stores is current, one file a
// transaction here.
func TestRerecordBounded(t *testing.T) {
	defer func(n int) { rerecordFiles = n }(rerecordFiles)
	rerecordFiles = 1
	m := newMemDir(t)
	m.write("MEMORY.md", "# Memory\n- The index fact.\n")
	for i := range 3 {
		m.write(fmt.Sprintf("topic_%d.md", i), fmt.Sprintf("# Topic %d\n- Fact of topic %d.\n", i, i))
	}
	m.pass("A", Pass{})
	l, err := List(m.dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	stored := func(name string) []byte {
		var b []byte
		m.s.View(func(tx *bolt.Tx) error {
			b = append([]byte(nil), store.Catalog(tx).Blob(parseKey(name))...)
			return nil
		})
		return b
	}
	// Two old parses and one with no stored parse at all.
	if err := m.s.Update(func(tx *bolt.Tx) error {
		ct := store.Catalog(tx)
		for _, name := range []string{"topic_0.md", "topic_1.md"} {
			if err := ct.PutBlob(parseKey(name), []byte(`{"file":{"safe_name":"`+name+`"}}`)); err != nil {
				return err
			}
		}
		return ct.DeleteBlob(parseKey("topic_2.md"))
	}); err != nil {
		t.Fatal(err)
	}
	index := stored("MEMORY.md")
	var logged []string
	logf := func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }

	if n, all, err := Rerecord(m.s, l, m.at, time.Now().Add(-time.Second), logf); err != nil || n != 0 || all {
		t.Fatalf("past its deadline: %d re-recorded, all %v, %v; want none, not all", n, all, err)
	}
	if n, all, err := Rerecord(m.s, l, m.at, time.Time{}, logf); err != nil || n != 2 || !all {
		t.Fatalf("without a deadline: %d re-recorded, all %v, %v; want 2, all", n, all, err)
	}
	for _, name := range []string{"topic_0.md", "topic_1.md"} {
		f, _, screened, err := automemory.Decode(name, stored(name))
		if err != nil || screened || len(f.Entries) != 1 || f.Entries[0].Text != "Fact of topic "+name[6:7]+"." {
			t.Errorf("%s re-recorded: %+v, screened %v, %v; want its one entry, unscreened", name, f, screened, err)
		}
	}
	if b := stored("topic_2.md"); b != nil {
		t.Errorf("a file with no stored parse was read and stored: %q", b)
	}
	if b := stored("MEMORY.md"); string(b) != string(index) {
		t.Errorf("MEMORY.md's current parse was rewritten")
	}
	if n, all, err := Rerecord(m.s, l, m.at, time.Time{}, logf); err != nil || n != 0 || !all {
		t.Errorf("again: %d re-recorded, all %v, %v; want none, all", n, all, err)
	}
	if len(logged) != 0 {
		t.Errorf("logged %q", logged)
	}
}
