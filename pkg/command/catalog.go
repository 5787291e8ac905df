package command

import (
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/catalog"
	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/project"
	"github.com/intermem/intermem/pkg/source"
	"github.com/intermem/intermem/pkg/store"
)

// catalogConfig is the catalog's configuration for the project: its
// sources located from the project root, the memory directory and the
// user's directories, switched on and off by .intermem/config.json.
func catalogConfig(env *cli.Env, p *project.Project, now time.Time) (catalog.Config, error) {
	cfg, err := catalog.ProjectConfig(env, p, now)
	if err != nil {
		return catalog.Config{}, cli.WithHint(err, "fix .intermem/config.json (a JSON object; \"sources\" maps a source's name to false to switch it off), or remove it for the defaults")
	}
	return cfg, nil
}

// buildCatalog brings the catalog up to date in tx (nil: no store yet;
// read-only: held in memory, nothing written) and calls fn with it.
// Every command sees entries this way (package catalog).
func buildCatalog(env *cli.Env, p *project.Project, tx *bolt.Tx, now time.Time, fn func(c *catalog.Catalog) error) error {
	cfg, err := catalogConfig(env, p, now)
	if err != nil {
		return err
	}
	c, err := catalog.Build(store.Catalog(tx), cfg)
	if err != nil {
		return catalogError(err)
	}
	if err := fn(c); err != nil {
		return err
	}
	// A writer leaves the stored search index current, so that search and
	// intermem-mcp decode it instead of building it (catalog.Settle).
	if err := c.Settle(); err != nil {
		return err
	}
	if tx != nil && tx.Writable() {
		reportFresh(env, c.Fresh())
	}
	return nil
}

// reportFresh warns of the problems a writer's build found in the files it
// parsed. A problem is stored with the content that produced it, so the
// build that parses that content first — a command that writes, or the
// SessionEnd hook (its log) — is the only one to report it; a read-only
// build stores nothing and reports nothing (intermem sources lists every
// problem). At most maxFresh lines, then a count.
func reportFresh(env *cli.Env, fresh []source.Problem) {
	const maxFresh = 10
	for i, pr := range fresh {
		if i == maxFresh {
			fmt.Fprintf(env.Stderr, "intermem: warning: %d more %s in the sources: intermem sources lists them\n",
				len(fresh)-i, cli.Plural(len(fresh)-i, "problem", "problems"))
			break
		}
		loc := pr.Path
		if pr.Line > 0 {
			loc = fmt.Sprintf("%s:%d", pr.Path, pr.Line)
		}
		fmt.Fprintf(env.Stderr, "intermem: warning: %s: %s\n", loc, pr.Message)
	}
}

// readCatalog is buildCatalog for a command that writes nothing: the
// store opened read-only (none yet: the catalog of the files alone).
func readCatalog(env *cli.Env, p *project.Project, now time.Time, fn func(c *catalog.Catalog) error) error {
	return readCatalogTx(env, p, now, func(c *catalog.Catalog, _ *bolt.Tx) error { return fn(c) })
}

// readCatalogTx is readCatalog that also hands fn the read transaction
// (nil: no store yet), for the store's other records.
func readCatalogTx(env *cli.Env, p *project.Project, now time.Time, fn func(c *catalog.Catalog, tx *bolt.Tx) error) error {
	s, err := openRead(p)
	if err != nil {
		return err
	}
	if s == nil {
		return buildCatalog(env, p, nil, now, func(c *catalog.Catalog) error { return fn(c, nil) })
	}
	defer s.Close()
	return s.View(func(tx *bolt.Tx) error {
		return buildCatalog(env, p, tx, now, func(c *catalog.Catalog) error { return fn(c, tx) })
	})
}

// catalogError gives a catalog failure its hint.
func catalogError(err error) error {
	if errors.Is(err, catalog.ErrUnknownSource) {
		return cli.WithHint(err, "fix \"sources\" in .intermem/config.json: it switches sources off by name")
	}
	return fmt.Errorf("read the sources: %w", err)
}

// sourceFilter checks the names given to --source against the catalog:
// each must name a source that is on (filterError).
func sourceFilter(c *catalog.Catalog, names []string) error {
	if err := c.CheckSources(names); err != nil {
		return filterError(err)
	}
	return nil
}

// filterError gives a --source filter's refusal (catalog.CheckSources) its
// hint and exit status, the same in every command: a name that is no
// source is a usage error (exit 2); a source switched off is the project's
// choice, which the user may not remember (exit 1).
func filterError(err error) error {
	switch {
	case errors.Is(err, catalog.ErrSwitchedOff):
		return cli.WithHint(err, "switch it back on in .intermem/config.json (\"sources\"), or name another source")
	case errors.Is(err, catalog.ErrUnknownSource):
		return &cli.Error{Err: err, Code: 2, Hint: "name one of the sources the error lists; intermem sources shows each"}
	}
	return err
}
