package command

import (
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/catalog"
	"github.com/intermem/intermem/pkg/cite"
	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/loaded"
	"github.com/intermem/intermem/pkg/mdoc"
	"github.com/intermem/intermem/pkg/plan"
	"github.com/intermem/intermem/pkg/project"
	"github.com/intermem/intermem/pkg/source"
	"github.com/intermem/intermem/pkg/source/compound"
	"github.com/intermem/intermem/pkg/source/written"
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

// planInputs loads what a plan is judged against, from the catalog cat
// built in tx (nil: no store yet): auto-memory with its history (what a
// plan offers), the solution documents (what "documented in" means), the
// store's promotions and rejections, the curated documents, what Claude
// Code loads, the layout. plan and status both start here, so they judge
// the same things the same way. Everything returned outlives tx.
//
// The entries a plan offers are auto-memory's (cat.Memory) and the
// written memories (in.Written, plan.WrittenItem).
func planInputs(env *cli.Env, p *project.Project, cat *catalog.Catalog, tx *bolt.Tx, now time.Time, max int) (plan.Inputs, error) {
	ts, err := loadTargets(p)
	if err != nil {
		return plan.Inputs{}, err
	}
	in := plan.Inputs{
		Targets: ts, Checker: cite.NewChecker(p.Root), Max: max, Now: now, Screen: screenText,
		Loaded: loadedSet(env, p), Layout: tier.Load(env.Get, p.StateDir),
		Documents: plan.NewDocuments(solutions(cat)),
	}
	in.Catalog, err = cat.Memory(stability.Threshold(env.Get))
	if err != nil {
		return plan.Inputs{}, memoryError(p, err)
	}
	in.Written = writtenItems(cat)
	in.Promoted, in.Rejected, err = store.PlanDecisions(tx)
	return in, err
}

// writtenItems are the memories in the written set (the catalog's written
// source, switched off: none), as a plan judges them.
func writtenItems(cat *catalog.Catalog) []plan.Written {
	var out []plan.Written
	for _, e := range cat.Entries(written.Name) {
		out = append(out, plan.WrittenItem(e.Entry))
	}
	return out
}

// writtenNow maps the memories in the written set to what apply checks
// them against (plan.WrittenItem's entries), by id.
func writtenNow(cat *catalog.Catalog) map[string]automem.Entry {
	out := map[string]automem.Entry{}
	for _, w := range writtenItems(cat) {
		out[w.ID] = w.Entry
	}
	return out
}

// solutions are the catalog's solution documents (the compound source).
func solutions(cat *catalog.Catalog) []catalog.Entry {
	var out []catalog.Entry
	for _, e := range cat.Entries(compound.Name) {
		if e.Kind == source.Solution {
			out = append(out, e)
		}
	}
	return out
}

// recordedIn returns the confidence a plan or validate last recorded for
// an entry (store.Fact, what the SessionStart hook reads), negative for
// none (tx nil: no store yet).
func recordedIn(tx *bolt.Tx) func(id string) float64 {
	return func(id string) float64 {
		if tx == nil {
			return -1
		}
		if f, ok := store.Catalog(tx).Fact(id); ok {
			return f.Confidence
		}
		return -1
	}
}

// onDisk is plan.Exists over the project's files, each path stat'ed once.
func onDisk(root string) plan.Exists {
	seen := map[string]bool{}
	return func(p string) (bool, bool) {
		ok, done := seen[p]
		if !done {
			_, err := os.Stat(filepath.Join(root, filepath.FromSlash(p)))
			ok = err == nil
			seen[p] = ok
		}
		return ok, true
	}
}
