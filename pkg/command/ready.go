package command

import (
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/catalog"
	"github.com/intermem/intermem/pkg/cite"
	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/loaded"
	"github.com/intermem/intermem/pkg/mdoc"
	"github.com/intermem/intermem/pkg/plan"
	"github.com/intermem/intermem/pkg/project"
	"github.com/intermem/intermem/pkg/stability"
	"github.com/intermem/intermem/pkg/store"
	"github.com/intermem/intermem/pkg/tier"
)

// loadedEnv is where a project-wide question about what Claude Code loads
// is asked from: a session started at the project root.
func loadedEnv(env *cli.Env, p *project.Project) loaded.Env {
	return loaded.Env{Root: p.Root, Cwd: p.Root, ConfigDir: project.ConfigDir(env), Home: env.Get("HOME")}
}

// loadedSet reads what Claude Code loads for a session at the root.
func loadedSet(env *cli.Env, p *project.Project) *loaded.Set[*mdoc.Doc] {
	return loaded.ReadAll(loadedEnv(env, p), nil)
}

// planInputs loads what a plan is judged against: the catalog and the
// store's promotions and rejections (tx may be nil: no store yet), the
// curated documents, what Claude Code loads, the layout. plan and status
// both start here, so they judge the same things the same way.
func planInputs(env *cli.Env, p *project.Project, tx *bolt.Tx, now time.Time, max int) (plan.Inputs, error) {
	ts, err := loadTargets(p)
	if err != nil {
		return plan.Inputs{}, err
	}
	in := plan.Inputs{
		Targets: ts, Checker: cite.NewChecker(p.Root), Max: max, Now: now,
		Promoted: map[string]bool{}, Rejected: map[string]bool{}, Screen: screenText,
		Loaded: loadedSet(env, p), Layout: tier.Load(env.Get, p.StateDir),
	}
	in.Catalog, err = catalog.LoadMemory(tx, p.MemoryDir, stability.Threshold(env.Get))
	if err != nil {
		return plan.Inputs{}, memoryError(p, err)
	}
	if tx == nil {
		return in, nil
	}
	if err := store.Each(tx, store.BucketPromoted, func(id string, _ *store.Promoted) error {
		in.Promoted[id] = true
		return nil
	}); err != nil {
		return plan.Inputs{}, err
	}
	err = store.Each(tx, store.BucketDecisions, func(id string, _ *store.Decision) error {
		in.Rejected[id] = true
		return nil
	})
	return in, err
}
