package ops

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/intermem/intermem/pkg/journal"
	"github.com/intermem/intermem/pkg/tidy"
)

// files is an in-memory directory for running steps.
type files map[string]string

func (fs files) read(path string) ([]byte, bool, error) {
	s, ok := fs[path]
	if !ok {
		return nil, false, nil
	}
	return []byte(s), true, nil
}

// run applies the steps in order, as the journal does.
func (fs files) run(t *testing.T, steps []journal.Step) error {
	t.Helper()
	for i := range steps {
		s := &steps[i]
		cur, ok, _ := fs.read(s.Path)
		if s.Action != ActTidyCreate && s.Action != ActTidyIndex {
			t.Fatalf("step %s is not tidy's", s.Action)
		}
		next, keep, err := Kinds.Apply(s, cur, ok, fs.read)
		if err != nil {
			return err
		}
		if keep {
			fs[s.Path] = string(next)
		} else {
			delete(fs, s.Path)
		}
	}
	return nil
}

func bullets(word string, n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "- %s fact %d\n", word, i)
	}
	return b.String()
}

func tidyFixture(t *testing.T) (string, files, *tidy.Plan) {
	dir := "/mem"
	index := "# Memory\n\n## Big\n" + bullets("big", 120) + "\n## Keep\n- kept\n\n## Medium\n" + bullets("medium", 90)
	pl, err := tidy.Build([]byte(index), func(n string) bool { return n == "big.md" })
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.Moves) != 1 || pl.Moves[0].File != "big-2.md" {
		t.Fatalf("moves %+v", pl.Moves)
	}
	return dir, files{filepath.Join(dir, "MEMORY.md"): index, filepath.Join(dir, "big.md"): "someone else's\n"}, pl
}

func TestSteps(t *testing.T) {
	dir, fs, pl := tidyFixture(t)
	op, err := Tidy(dir, pl)
	if err != nil {
		t.Fatal(err)
	}
	if op.Kind != KindTidy || len(op.Steps) != 2 || op.Steps[0].Phase != 1 || op.Steps[1].Phase != 2 {
		t.Fatalf("op %+v", op)
	}
	// The step records name sections by hash: no memory text but the
	// redacted pointers.
	for _, s := range op.Steps {
		if strings.Contains(s.Extra+s.Block, "big fact 50") {
			t.Fatalf("a step carries memory text: %+v", s)
		}
	}
	if err := fs.run(t, op.Steps); err != nil {
		t.Fatal(err)
	}
	want := files{
		"/mem/MEMORY.md": string(pl.Index),
		"/mem/big.md":    "someone else's\n",
		"/mem/big-2.md":  string(pl.Moves[0].Content),
	}
	for p, w := range want {
		if fs[p] != w {
			t.Errorf("%s:\n%q\nwant\n%q", p, fs[p], w)
		}
	}
	if len(fs) != len(want) {
		t.Errorf("files %v", fs)
	}
	// A replay of every step changes nothing.
	if err := fs.run(t, op.Steps); err != nil {
		t.Fatalf("replay: %v", err)
	}
	for p, w := range want {
		if fs[p] != w {
			t.Errorf("after replay %s changed", p)
		}
	}
}

func TestStepsRefuse(t *testing.T) {
	dir, fs, pl := tidyFixture(t)
	op, err := Tidy(dir, pl)
	if err != nil {
		t.Fatal(err)
	}
	// A file appeared under the topic file's name: never overwritten.
	fs["/mem/big-2.md"] = "written meanwhile\n"
	if err := fs.run(t, op.Steps[:1]); !errors.Is(err, ErrTopicFileExists) {
		t.Fatalf("err = %v, want ErrTopicFileExists", err)
	}
	if fs["/mem/big-2.md"] != "written meanwhile\n" {
		t.Fatal("an existing file was overwritten")
	}
	// The index step refuses while the topic file does not hold the section.
	before := fs["/mem/MEMORY.md"]
	if err := fs.run(t, op.Steps[1:]); !errors.Is(err, tidy.ErrNotCopied) {
		t.Fatalf("err = %v, want tidy.ErrNotCopied", err)
	}
	if fs["/mem/MEMORY.md"] != before {
		t.Fatal("the index changed")
	}

	// The section was edited before phase 1: nothing is created.
	dir, fs, pl = tidyFixture(t)
	op, _ = Tidy(dir, pl)
	fs["/mem/MEMORY.md"] = strings.Replace(fs["/mem/MEMORY.md"], "- big fact 7\n", "- big fact 7, edited\n", 1)
	if err := fs.run(t, op.Steps); !errors.Is(err, tidy.ErrChanged) {
		t.Fatalf("err = %v, want ErrChanged", err)
	}
	if _, ok := fs["/mem/big-2.md"]; ok {
		t.Fatal("a topic file was created from a changed section")
	}

	// A name from a forged step is refused before any path is built.
	bad := journal.Step{Phase: 2, Path: "/mem/MEMORY.md", Action: ActTidyIndex, Extra: `[{"hash":"x","file":"../../.bashrc.md","pointer":"- x"}]`}
	if _, _, err := Kinds.Apply(&bad, []byte(before), true, fs.read); err == nil || !strings.Contains(err.Error(), "not a topic file name") {
		t.Fatalf("forged name: err = %v", err)
	}
	badCreate := journal.Step{Phase: 1, Path: "/mem/.x.md", Action: ActTidyCreate, Extra: "x"}
	if _, _, err := Kinds.Apply(&badCreate, nil, false, fs.read); err == nil {
		t.Fatal("a dotfile was accepted as a topic file")
	}
}

func TestUndo(t *testing.T) {
	dir, fs, pl := tidyFixture(t)
	op, _ := Tidy(dir, pl)
	if err := fs.run(t, op.Steps[:1]); err != nil {
		t.Fatal(err)
	}
	s := op.Steps[0]
	cur, ok, _ := fs.read(s.Path)
	if _, keep, err := Kinds.Undo(&s, cur, ok, fs.read); err != nil || keep {
		t.Fatalf("the topic file tidy wrote must go: keep=%v", keep)
	}
	// One that was edited since is the user's now.
	edited := append(cur, "- added later\n"...)
	if next, keep, _ := Kinds.Undo(&s, edited, true, fs.read); !keep || string(next) != string(edited) {
		t.Fatal("an edited topic file was removed")
	}
	if next, keep, err := Kinds.Undo(&op.Steps[1], []byte("index\n"), true, fs.read); err != nil || !keep || string(next) != "index\n" {
		t.Fatal("the index step is not undone (phase 2 is never discarded)")
	}
}
