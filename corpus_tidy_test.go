package intermem_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/command"
	"github.com/intermem/intermem/pkg/snapshot"
)

// overCapFolders are the corpus memory folders whose MEMORY.md is over
// Claude Code's load cap, counted outside intermem (wc -l; UTF-16 units
// with Python): 1000ssam's 249 lines. The others are at most 186 lines and
// 22,436 chars.
var overCapFolders = []string{"1000ssam__claude-config__memory_"}

// TestCorpusTidy runs intermem tidy --apply on every auto-memory folder of
// the corpus that is over the load cap, between two sessions of the
// snapshot hook, and measures: MEMORY.md's lines before and after; the
// entries whose bytes differ after the move, lost, or duplicated (all
// must be 0); and whether every entry that existed before the move has
// both sessions counted (INTERMEM_STABLE_SESSIONS=2 makes those stable).
// On the other folders tidy moves nothing. The figures are printed (go
// test -run TestCorpusTidy -v).
func TestCorpusTidy(t *testing.T) {
	folders := corpusFolders(t)
	names := make([]string, 0, len(folders))
	for f := range folders {
		names = append(names, f)
	}
	sort.Strings(names)
	var over []string
	for _, folder := range names {
		files := folders[folder]
		work := t.TempDir()
		proj, mem, home := filepath.Join(work, "proj"), filepath.Join(work, "mem"), filepath.Join(work, "home")
		for _, d := range []string{proj, mem, home} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for name, base := range files {
			b, err := os.ReadFile(filepath.Join(corpusMemory, name))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(mem, base), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		index, err := os.ReadFile(filepath.Join(mem, automem.IndexName))
		if err != nil || !automem.Load(index).Truncated {
			r := tidyRun(t, proj, home, mem, nil, func(env *cli.Env) int {
				return command.Main(context.Background(), env, []string{"tidy", "--project", proj, "--json"})
			})
			if n := gjson.Get(r, "moves.#").Int(); n != 0 {
				t.Errorf("%s: under the cap, yet tidy would move %d sections", folder, n)
			}
			continue
		}
		over = append(over, folder)

		before, pointersBefore := corpusEntries(t, mem)
		stop, err := os.ReadFile(filepath.Join("testdata", "payloads", "Stop.print-mode.json"))
		if err != nil {
			t.Fatal(err)
		}
		stop, _ = sjson.SetBytes(stop, "cwd", proj)
		tidyRun(t, proj, home, mem, stop, func(env *cli.Env) int { return snapshot.Main(env, nil) })
		rep := tidyRun(t, proj, home, mem, nil, func(env *cli.Env) int {
			return command.Main(context.Background(), env, []string{"tidy", "--project", proj, "--apply", "--json"})
		})
		stop, _ = sjson.SetBytes(stop, "session_id", "c6f94f26-0000-4000-8000-000000000002")
		tidyRun(t, proj, home, mem, stop, func(env *cli.Env) int { return snapshot.Main(env, nil) })
		status := tidyRun(t, proj, home, mem, nil, func(env *cli.Env) int {
			return command.Main(context.Background(), env, []string{"status", "--project", proj, "--json"})
		})

		after, _ := corpusEntries(t, mem)
		differ, lost, dup := 0, 0, 0
		for id, was := range before {
			now := after[id]
			switch {
			case len(now) == 0:
				lost++
				t.Errorf("%s: entry %s was lost", folder, id)
			case len(now) > len(was):
				dup++
				t.Errorf("%s: entry %s has %d copies, had %d", folder, id, len(now), len(was))
			}
			for i := range min(len(now), len(was)) {
				if !bytes.Equal(now[i], was[i]) {
					differ++
					t.Errorf("%s: entry %s bytes changed:\n%q\nwere\n%q", folder, id, now[i], was[i])
				}
			}
		}
		index2, err := os.ReadFile(filepath.Join(mem, automem.IndexName))
		if err != nil {
			t.Fatal(err)
		}
		linesBefore, linesAfter := bytes.Count(index, []byte("\n")), bytes.Count(index2, []byte("\n"))
		moves := int(gjson.Get(rep, "moves.#").Int())
		// Status counts entries as sources does, index lines pointing to
		// topic files apart.
		stable, entries, pointers := int(gjson.Get(status, "stable").Int()), int(gjson.Get(status, "entries").Int()), int(gjson.Get(status, "pointers").Int())
		t.Logf("%s: MEMORY.md %d → %d lines (%d → %d chars), %d sections moved into %d topic files; entries: %d before (%d pointers), %d differ, %d lost, %d duplicated; %d of them seen in both sessions (stable), %d entries now (%d new pointers)",
			folder, linesBefore, linesAfter, automem.Load(index).Chars, automem.Load(index2).Chars, moves, len(gjson.Get(rep, "topic_files").Array()),
			len(before), pointersBefore, differ, lost, dup, stable, entries, pointers-pointersBefore)
		if automem.Load(index2).Truncated {
			t.Errorf("%s: MEMORY.md is still over the cap after tidy", folder)
		}
		if stable != len(before)-pointersBefore || entries != stable {
			t.Errorf("%s: %d of %d entries seen in both sessions, want every one of the %d that existed before the move", folder, stable, entries, len(before)-pointersBefore)
		}
		if pointers-pointersBefore != moves {
			t.Errorf("%s: %d new pointers, want one per moved section (%d)", folder, pointers-pointersBefore, moves)
		}
	}
	if len(over) != len(overCapFolders) || len(over) > 0 && over[0] != overCapFolders[0] {
		t.Errorf("folders over the cap: %v, counted by hand: %v", over, overCapFolders)
	}
}

// corpusEntries maps every entry id of a memory directory to the bytes of
// its copies.
func corpusEntries(t *testing.T, mem string) (map[string][][]byte, int) {
	t.Helper()
	d, err := automem.Scan(mem)
	if err != nil {
		t.Fatal(err)
	}
	out, pointers := map[string][][]byte{}, map[string]bool{}
	for _, f := range d.Files {
		for _, e := range f.Entries {
			out[e.ID] = append(out[e.ID], f.Content[e.Start:e.End])
			if e.Kind == automem.Pointer {
				pointers[e.ID] = true
			}
		}
	}
	return out, len(pointers)
}

func tidyRun(t *testing.T, proj, home, mem string, stdin []byte, main func(*cli.Env) int) string {
	t.Helper()
	environ := []string{"HOME=" + home, "INTERMEM_MEMORY_DIR=" + mem, "INTERMEM_STABLE_SESSIONS=2",
		"INTERMEM_NOW=2026-11-01T09:00:00Z", "PATH=" + os.Getenv("PATH")}
	var out, errb bytes.Buffer
	env := cli.New(environ, proj, bytes.NewReader(stdin), &out, &errb)
	if code := main(env); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errb.String())
	}
	return out.String()
}
