package catalog

import (
	"reflect"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/source"
	"github.com/intermem/intermem/pkg/source/docrecord"
	"github.com/intermem/intermem/pkg/source/instructions"
	"github.com/intermem/intermem/pkg/source/promoted"
	"github.com/intermem/intermem/pkg/store"
)

// noRecords is the promoted source of an intermem before records: the
// same files and entries, no source.Recorder.
type noRecords struct{ s promoted.Source }

func (n noRecords) Name() string       { return n.s.Name() }
func (n noRecords) Patterns() []string { return n.s.Patterns() }
func (n noRecords) Parse(p string, b []byte) ([]source.Entry, []source.Problem) {
	return n.s.Parse(p, b)
}

// records returns the decoded records of source src's files, by path.
func (f *fixture) records(src string) map[string]*docrecord.Record {
	out := map[string]*docrecord.Record{}
	f.st.View(func(tx *bolt.Tx) error {
		store.Catalog(tx).Records(src, func(path string, _ source.Fingerprint, blob []byte) {
			r, err := docrecord.Decode(blob)
			if err != nil {
				f.t.Errorf("%s: %v", path, err)
				return
			}
			out[path] = r
		})
		return nil
	})
	return out
}

// TestDocumentRecords: Build keeps, beside the entries of each document
// the instructions and promoted sources parse, its docrecord — the one a
// session start takes — stored again when the file changes, and stored for
// an unchanged file that has none (a catalog an older intermem built).
func TestDocumentRecords(t *testing.T) {
	f := newFixture(t)
	f.write("CLAUDE.md", "# Project\n\n- Tests run with make test.\n")
	f.write("docs/intermem/deploys.md", "# Deploys\n\n- Staging first. <!-- intermem:00000000000000ee -->\n")
	reg, err := source.NewRegistry(noRecords{}, instructions.Source{})
	if err != nil {
		t.Fatal(err)
	}
	old := func() {
		if err := f.st.Update(func(tx *bolt.Tx) error {
			_, err := Build(store.Catalog(tx), Config{Env: source.Env{Root: f.root, MemoryDir: f.mem}, Registry: reg, Now: f.now})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	old()
	if got := f.records(promoted.Name); len(got) != 0 {
		t.Fatalf("a source that is no Recorder has records: %v", got)
	}
	if got := f.records(instructions.Name); len(got) != 1 || got["CLAUDE.md"].Title != "Project" {
		t.Errorf("instructions' records: %+v", got)
	}
	// The promoted source as it is now: its unchanged files get records.
	f.update(func(*Catalog) {})
	got := f.records(promoted.Name)
	if len(got) != 2 || got["CLAUDE.md"].Title != "Project" || got["docs/intermem/deploys.md"].Title != "Deploys" ||
		!reflect.DeepEqual(got["docs/intermem/deploys.md"].Marks, []docrecord.Mark{{ID: "00000000000000ee", Section: "Deploys", Text: "Staging first."}}) {
		t.Errorf("promoted's records after an upgrade: %+v", got)
	}
	// A change is stored again.
	f.write("docs/intermem/deploys.md", "# Releases\n")
	f.update(func(*Catalog) {})
	if got := f.records(promoted.Name)["docs/intermem/deploys.md"]; got == nil || got.Title != "Releases" || len(got.Marks) != 0 {
		t.Errorf("after a change: %+v", got)
	}
}
