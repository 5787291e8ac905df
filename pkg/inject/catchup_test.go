package inject

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/hookio"
)

// A session start that runs out of time keeps what it derived, so that the
// next one, given the same time, gets further and in the end finishes,
// with what a start that was never cut would have: here time is the number
// of entries a start may derive anew (memo hits are free), and every run
// starts from the memos the last one saved, as a new build's first
// session starts on a busy machine do.
func TestCutShortStartsConverge(t *testing.T) {
	dir, _, pr := benchProject(t)
	want, err := memFiles(nil, pr.MemoryDir, nil, NewIndex(), nil)
	if err != nil || want.cut {
		t.Fatalf("an uncut read: cut %v, %v", want.cut, err)
	}
	// 51 files of 20 × 36 facts, 30 one-memory files and MEMORY.md's
	// index: a budget of 150 new entries cuts the first start at the
	// fifth fact file and every later one a little further on.
	const budget = 150
	ixPath := filepath.Join(dir, IndexName)
	runs, read := 0, -1
	for {
		runs++
		if runs > 20 {
			t.Fatalf("still cut after %d starts", runs-1)
		}
		ix := LoadIndex(ixPath)
		start := len(ix.der)
		got, err := memFiles(nil, pr.MemoryDir, nil, ix, func() bool { return len(ix.der)-start >= budget })
		if err != nil {
			t.Fatal(err)
		}
		if err := ix.Save(ixPath); err != nil {
			t.Fatal(err)
		}
		if !got.cut {
			if !reflect.DeepEqual(got.files, want.files) {
				t.Fatalf("after %d starts, what was read from memos differs from an uncut read", runs)
			}
			break
		}
		if len(got.files) <= read {
			t.Fatalf("start %d read %d files, no more than the one before (%d)", runs, len(got.files), read)
		}
		if got.listed != len(want.files) {
			t.Fatalf("start %d listed %d files, want %d", runs, got.listed, len(want.files))
		}
		read = len(got.files)
	}
	// 720 facts and 30 memories (and the index's lines) over 150 a start.
	if runs < 5 || runs > 9 {
		t.Errorf("the memory was read whole at start %d, want the 5th to 9th", runs)
	}
}

// A session start stopped near its deadline answers with the last
// rendering, marked as cached, saves its memos and caches no rendering of
// its own; the next start, not cut, renders afresh.
func TestCutShortServesTheLastRendering(t *testing.T) {
	dir, now, pr := benchProject(t)
	home := filepath.Join(dir, "home")
	run := func() string {
		t.Helper()
		payload := `{"session_id":"s","cwd":"` + pr.Root + `","hook_event_name":"SessionStart","source":"startup"}`
		var out bytes.Buffer
		env := cli.New([]string{"HOME=" + home, "INTERMEM_MEMORY_DIR=" + pr.MemoryDir, "INTERMEM_NOW=" + now.Format(time.RFC3339)},
			pr.Root, strings.NewReader(payload), &out, &bytes.Buffer{})
		if code := hookio.Run(env, nil, HookOptions, Hook); code != 0 {
			t.Fatalf("exit %d", code)
		}
		return out.String()
	}
	state := filepath.Join(pr.Root, ".intermem")
	fresh := run()
	if !strings.Contains(fresh, "additionalContext") {
		t.Fatalf("the first start rendered nothing: %q", fresh)
	}
	// A new build: no memos, no rendering to reuse.
	for _, name := range []string{IndexName, RenderCacheName} {
		if err := os.Remove(filepath.Join(state, name)); err != nil {
			t.Fatal(err)
		}
	}
	old := lateness
	t.Cleanup(func() { lateness = old })
	calls := 0
	lateness = func(context.Context) (func() bool, func() bool) {
		return func() bool { calls++; return calls > 3 }, func() bool { return true }
	}
	cut := run()
	if !strings.Contains(cut, "(cached context from 2026-11-01 12:00 UTC: intermem could not read this project's memory in time; it goes on at the next session start, so this may be out of date)") {
		t.Fatalf("a cut start did not serve the last rendering, marked as cached:\n%s", cut)
	}
	if _, err := os.Stat(filepath.Join(state, RenderCacheName)); err == nil {
		t.Fatal("a cut start cached its answer as a rendering")
	}
	ix := LoadIndex(filepath.Join(state, IndexName))
	if len(ix.der) == 0 {
		t.Fatal("a cut start kept none of what it derived")
	}
	log, _ := os.ReadFile(filepath.Join(state, "log"))
	if !bytes.Contains(log, []byte("SessionStart: stopped near its deadline, having read 3 of 51 memory files; what it derived is kept for the next session start")) {
		t.Fatalf("the log does not say where the start stopped:\n%s", log)
	}
	lateness = old
	if again := run(); again != fresh {
		t.Fatalf("the start after a cut one differs from the first:\n--- first\n%s\n--- after\n%s", fresh, again)
	}
}
