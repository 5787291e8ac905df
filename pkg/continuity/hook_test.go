package continuity

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/hookio"
	"github.com/intermem/intermem/pkg/project"
	"github.com/intermem/intermem/pkg/store"
)

// TestCheckpointTurnReadsLittle: a checkpoint turn reads the head and the
// checkpoints (at most maxHookCheckpoints of the hooks', and those people
// saved) and writes one; it reads none of the store's large buckets. On a
// store of 20,000 entry records and as many file states, it makes fewer
// record accesses than there are checkpoints (each decoded once), and the
// checkpoints are pruned to maxHookCheckpoints.
func TestCheckpointTurnReadsLittle(t *testing.T) {
	root := t.TempDir()
	p := &project.Project{Root: root, MemoryDir: filepath.Join(root, "memory"), StateDir: filepath.Join(root, ".intermem")}
	if err := p.EnsureStateDir(); err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(p.Path("intermem.db"), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	const hookCheckpoints = maxHookCheckpoints + 50
	if err := s.Update(func(tx *bolt.Tx) error {
		for i := range 20000 {
			id := fmt.Sprintf("%016x", uint64(i)*0x9e3779b97f4a7c15)
			if err := store.PutSeen(tx, &store.Entry{ID: id, Preview: strings.Repeat("x", 300), Sessions: 3}); err != nil {
				return err
			}
			if err := store.Put(tx, store.BucketFiles, fmt.Sprintf("topic_%05d.md", i), &store.FileState{IDs: []string{id}}); err != nil {
				return err
			}
		}
		for i := range hookCheckpoints {
			c := store.Checkpoint{ID: fmt.Sprintf("cp-%s-%08x", at.Add(time.Duration(i)*time.Minute).Format("20060102T150405Z"), i),
				Kind: store.CheckpointAuto, Session: "s0", Time: at.Add(time.Duration(i) * time.Minute), Turn: i + 1,
				Scope: store.ScopeSession, Status: store.StatusValid}
			if err := store.PutCheckpoint(tx, &c); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	env := cli.New([]string{"HOME=" + filepath.Join(root, "home"), IntervalVar + "=1"}, root, strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{})
	h := &hookio.Hook{Name: "intermem-snapshot", Env: env, Project: p, Now: at.Add(24 * time.Hour),
		Input: hookio.Input{Event: "Stop", SessionID: "s1", Cwd: root, Raw: []byte(`{"last_assistant_message":"Done."}`)}}
	before := store.Accesses()
	if err := Checkpoint(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	n := store.Accesses() - before
	t.Logf("a checkpoint turn over %d checkpoints: %d record accesses", hookCheckpoints, n)
	if n > hookCheckpoints+20 {
		t.Errorf("a checkpoint turn made %d record accesses with %d checkpoints stored: it read more than the checkpoints", n, hookCheckpoints)
	}

	s, err = store.Open(p.Path("intermem.db"), store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.View(func(tx *bolt.Tx) error {
		cps, err := store.Checkpoints(tx)
		if err != nil {
			return err
		}
		if len(cps) != maxHookCheckpoints {
			t.Errorf("%d checkpoints after the turn, want %d (pruned)", len(cps), maxHookCheckpoints)
		}
		last := cps[len(cps)-1]
		if last.Session != "s1" || last.Kind != store.CheckpointAuto || last.Turn != 1 || last.Message != "Done." {
			t.Errorf("the turn's checkpoint: %+v", last)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
