package screen

import (
	"regexp"
	"sync"
)

// lazyRE compiles its pattern on first use. The SessionStart hook links this
// package and most sessions screen nothing new (what was screened is cached
// with the derived index): compiling every rule at program start would cost
// each of them about a millisecond for nothing. TestPatternsCompile compiles
// them all.
type lazyRE struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
}

func lazy(expr string) *lazyRE { return &lazyRE{expr: expr} }

func (l *lazyRE) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.expr) })
	return l.re
}

func (l *lazyRE) MatchString(s string) bool { return l.get().MatchString(s) }

func (l *lazyRE) FindStringSubmatchIndex(s string) []int { return l.get().FindStringSubmatchIndex(s) }

func (l *lazyRE) FindAllStringSubmatchIndex(s string, n int) [][]int {
	return l.get().FindAllStringSubmatchIndex(s, n)
}
