// Package sources is the list of every source intermem reads. Adding a
// source is its package under pkg/source/ and one line in Registry.
package sources

import (
	"github.com/intermem/intermem/pkg/source"
	"github.com/intermem/intermem/pkg/source/automemory"
	"github.com/intermem/intermem/pkg/source/clavain"
	"github.com/intermem/intermem/pkg/source/compound"
	"github.com/intermem/intermem/pkg/source/continuity"
	"github.com/intermem/intermem/pkg/source/instructions"
	"github.com/intermem/intermem/pkg/source/interfluence"
	"github.com/intermem/intermem/pkg/source/promoted"
	"github.com/intermem/intermem/pkg/source/written"
)

// Registry returns the registry of every built-in source.
func Registry() *source.Registry {
	r, err := source.NewRegistry(
		automemory.Source{},
		clavain.Source{},
		compound.Source{},
		continuity.Source{},
		instructions.Source{},
		interfluence.Source{},
		promoted.Source{},
		written.Source{},
	)
	if err != nil {
		panic(err) // a programming error, caught by the package's test
	}
	return r
}
