package sources

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/intermem/intermem/pkg/source"
	"github.com/intermem/intermem/pkg/source/sourcetest"
)

// project lays out a project with every source: the Clavain repository's
// solution documents from the corpus under their real paths, the clavain
// fixtures and the interfluence log fixture, plus a too-large document.
func project(t *testing.T) string {
	root := t.TempDir()
	put := func(rel string, data []byte) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range sourcetest.Corpus(t, "../../../testdata/corpus") {
		if f.Repo == "mistakeknot/Clavain" {
			data, err := os.ReadFile(f.File)
			if err != nil {
				t.Fatal(err)
			}
			put(f.Path, data)
		}
	}
	for _, fx := range sourcetest.Fixtures(t, "../clavain/testdata/learnings.txtar") {
		put(fx.Name, fx.Data)
	}
	for _, fx := range sourcetest.Fixtures(t, "../interfluence/testdata/log.txtar") {
		put(fx.Name, fx.Data)
	}
	put("docs/solutions/huge.md", []byte("# Huge\n"+strings.Repeat("x", source.MaxFileBytes)))
	put("docs/notes/not-a-solution.md", []byte("# Not read\n"))
	return root
}

// TestScanEverySource scans a project with every registered source and
// counts what each yields: 24 Clavain solution documents (the corpus holds
// 24 from that repository), 7 learnings (8 fixtures, one with an empty
// body), 6 edit observations.
func TestScanEverySource(t *testing.T) {
	root := project(t)
	want := map[string]struct {
		entries  int
		problems []string
	}{
		"compound": {24, []string{"docs/solutions/huge.md: cannot be read: read docs/solutions/huge.md: file is larger than the limit (1048576 bytes)"}},
		"clavain": {7, []string{
			".clavain/learnings/bad-date.md:1: lastConfirmed \"last tuesday\" is not a date",
			".clavain/learnings/relative-links.md: a link leads out of the project, not followed: \"../../../elsewhere/notes.md\"",
		}},
		"interfluence": {6, []string{
			".interfluence/learnings-raw.log:1: 3 lines outside an OLD:/NEW: block; ignored",
			".interfluence/learnings-raw.log:22: 1 block with neither OLD: nor NEW:; ignored",
			".interfluence/learnings-raw.log:19: 1 block header with a time that is not RFC 3339; kept without a date",
		}},
	}
	ids := map[string]bool{}
	for _, s := range Registry().All() {
		es, ps := source.Scan(source.Env{Root: root}, s)
		w := want[s.Name()]
		if len(es) != w.entries {
			t.Errorf("%s: %d entries, want %d", s.Name(), len(es), w.entries)
		}
		var got []string
		for _, p := range ps {
			got = append(got, p.String())
		}
		if strings.Join(got, "\n") != strings.Join(w.problems, "\n") {
			t.Errorf("%s: problems\n%s\nwant\n%s", s.Name(), strings.Join(got, "\n"), strings.Join(w.problems, "\n"))
		}
		for _, e := range es {
			if e.Source != s.Name() {
				t.Errorf("%s: entry of source %q", s.Name(), e.Source)
			}
			if ids[e.ID] && e.Source != "interfluence" {
				t.Errorf("id %s is not unique", e.ID)
			}
			ids[e.ID] = true
		}
	}
	// Switched off in the configuration: not scanned.
	on := Registry().Enabled(map[string]bool{"interfluence": false})
	var names []string
	for _, s := range on {
		names = append(names, s.Name())
	}
	if got := strings.Join(names, " "); got != "auto-memory clavain compound continuity instructions promoted written" {
		t.Errorf("Enabled(interfluence off) = %s", got)
	}
}
