package redact

import (
	"regexp"
	"sync"
)

// lazyRegexp compiles its pattern on first use. Every hook binary links
// this package, and most runs never need most patterns (a warm SessionStart
// redacts nothing new): compiling them all at program start cost about a
// millisecond of every hook's few.
type lazyRegexp struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
}

func lazy(expr string) *lazyRegexp { return &lazyRegexp{expr: expr} }

func (l *lazyRegexp) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.expr) })
	return l.re
}

func (l *lazyRegexp) MatchString(s string) bool { return l.get().MatchString(s) }

func (l *lazyRegexp) FindStringIndex(s string) []int { return l.get().FindStringIndex(s) }

func (l *lazyRegexp) FindStringSubmatchIndex(s string) []int {
	return l.get().FindStringSubmatchIndex(s)
}

func (l *lazyRegexp) FindAllStringIndex(s string, n int) [][]int {
	return l.get().FindAllStringIndex(s, n)
}
