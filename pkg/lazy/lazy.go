// Package lazy holds what a package builds on first use — a table, a set of
// words, a replacer — declared so that the package has no initialisation.
//
// Every intermem process runs the initialisation of every package its binary
// links before it does anything, and each page that touches is a page fault
// (about 15 µs on a paravirtualised 2-vCPU machine; docs/proofs.md). A package-level
// map literal, a table built by a function call, a strings.NewReplacer or a
// sync.OnceValue (which allocates its closures) all run there, in every hook
// and every command, whether or not the run looks anything up. A Value or Set
// declared at package level as
//
//	var stopwords = lazy.NewSet("a", "an", "the")
//	var lookAlike = lazy.New(buildLookAlike)
//
// is laid out by the compiler (the call is inlined into a composite literal of
// constants) and built the first time Get or Has is called. The function given
// to New must be a named function: a function literal is a closure, which the
// package's initialisation would build. TestNoPackageInitialisation holds
// intermem's packages to this.
package lazy

import "sync"

// Value is a value built by a function the first time it is asked for. It
// must not be copied after first use.
type Value[T any] struct {
	build func() T
	once  sync.Once
	v     T
}

// New returns the value build returns, built on the first Get. build must be
// a named function (see the package comment).
func New[T any](build func() T) *Value[T] { return &Value[T]{build: build} }

// Get builds the value once and returns it.
func (l *Value[T]) Get() T {
	l.once.Do(func() { l.v = l.build() })
	return l.v
}

// Set is a set of strings, made into a map on its first lookup. It must not
// be copied after first use.
type Set struct {
	elems []string
	once  sync.Once
	m     map[string]struct{}
}

// NewSet returns the set of elems, to be built on the first Has.
func NewSet(elems ...string) *Set { return &Set{elems: elems} }

// Has reports whether x is in the set.
func (s *Set) Has(x string) bool {
	s.once.Do(func() {
		s.m = make(map[string]struct{}, len(s.elems))
		for _, e := range s.elems {
			s.m[e] = struct{}{}
		}
	})
	_, ok := s.m[x]
	return ok
}

// Elems is the set's elements as written, duplicates included.
func (s *Set) Elems() []string { return s.elems }
