package inject_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/intermem/intermem/pkg/inject"
	"github.com/intermem/intermem/pkg/inject/benchgen"
	"github.com/intermem/intermem/pkg/store"
)

// benchGather measures the hook's work without process start: open the
// store read-only, gather a 1,000-entry project, render. warm reuses the
// derived-data index, as the hook does when the files did not change.
func benchGather(b *testing.B, warm bool) {
	now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	p, err := benchgen.Write(b.TempDir(), benchgen.Options{Now: now})
	if err != nil {
		b.Fatal(err)
	}
	env := inject.Env{Root: p.Root, MemoryDir: p.MemoryDir, Cwd: p.Root, Now: now, Budget: inject.DefaultBudget, Threshold: 3}
	ixPath := filepath.Join(p.Root, ".intermem", inject.IndexName)
	b.ReportAllocs()
	for b.Loop() {
		var ix *inject.Index
		if warm {
			ix = inject.LoadIndex(ixPath)
		}
		in, err := inject.GatherOpen(env, func() (*store.Store, error) {
			return store.Open(filepath.Join(p.Root, ".intermem", "intermem.db"), store.Options{ReadOnly: true, Timeout: 50 * time.Millisecond})
		}, ix)
		if err != nil {
			b.Fatal(err)
		}
		if warm {
			in.Redact, in.Screen = ix.Redact, ix.Screen
		}
		if res := inject.Render(in); res.Text == "" {
			b.Fatal("empty rendering")
		}
		if warm {
			if err := ix.Save(ixPath); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkGatherRender1000Cold(b *testing.B) { benchGather(b, false) }
func BenchmarkGatherRender1000Warm(b *testing.B) { benchGather(b, true) }
