// Package lazyre is a regular expression compiled on first use. Every hook
// binary links the packages that hold most of intermem's patterns (redact,
// screen), and most runs never need most of them (a warm SessionStart
// redacts and screens nothing new): compiling them all at program start
// cost about a millisecond of every hook's few. The patterns are the
// program's own, so one that does not compile is a bug and panics on first
// use; the packages' tests compile every one (Get).
package lazyre

import (
	"regexp"
	"sync"
)

// Regexp is a pattern compiled the first time it is used.
type Regexp struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
}

// New returns expr, to be compiled on first use.
func New(expr string) *Regexp { return &Regexp{expr: expr} }

// Expr is the pattern as written.
func (l *Regexp) Expr() string { return l.expr }

// Get compiles the pattern once and returns it.
func (l *Regexp) Get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.expr) })
	return l.re
}

// MatchString is regexp.Regexp.MatchString.
func (l *Regexp) MatchString(s string) bool { return l.Get().MatchString(s) }

// FindStringIndex is regexp.Regexp.FindStringIndex.
func (l *Regexp) FindStringIndex(s string) []int { return l.Get().FindStringIndex(s) }

// FindStringSubmatchIndex is regexp.Regexp.FindStringSubmatchIndex.
func (l *Regexp) FindStringSubmatchIndex(s string) []int { return l.Get().FindStringSubmatchIndex(s) }

// FindAllStringIndex is regexp.Regexp.FindAllStringIndex.
func (l *Regexp) FindAllStringIndex(s string, n int) [][]int { return l.Get().FindAllStringIndex(s, n) }

// FindAllStringSubmatchIndex is regexp.Regexp.FindAllStringSubmatchIndex.
func (l *Regexp) FindAllStringSubmatchIndex(s string, n int) [][]int {
	return l.Get().FindAllStringSubmatchIndex(s, n)
}
