package command

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/intermem/intermem/pkg/catalog"
	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/project"
	"github.com/intermem/intermem/pkg/retrieve"
	"github.com/intermem/intermem/pkg/store"
)

// This file is what the read commands (search, get, provenance, sources)
// share: opening the catalog read-only through package retrieve, which
// intermem-mcp's tools use too, and the hints of its errors.

// readView runs fn over the project's catalog, read-only (see package
// retrieve): nothing is written, a busy store is a note on stderr unless
// needStore, a source that cannot be read at all a warning.
func readView(env *cli.Env, p *project.Project, needStore bool, fn func(v *retrieve.View) error) error {
	err := retrieve.Read(env, p, retrieve.Options{Wait: cliWait, NeedStore: needStore}, func(v *retrieve.View) error {
		for _, n := range v.Notes {
			fmt.Fprintf(env.Stderr, "intermem: note: %s\n", n)
		}
		for _, w := range v.Warnings {
			fmt.Fprintf(env.Stderr, "intermem: warning: %s\n", w)
		}
		return fn(v)
	})
	return retrieveError(p, err)
}

// retrieveError gives the errors of the read commands their hints.
func retrieveError(p *project.Project, err error) error {
	var ce *cli.Error
	switch {
	case err == nil, errors.As(err, &ce):
		return err
	case errors.Is(err, retrieve.ErrBusy):
		return cli.WithHint(err, "a hook or another intermem command is using it; try again in a moment")
	case errors.Is(err, retrieve.ErrConfig):
		return cli.WithHint(err, fmt.Sprintf("fix or remove %s: it is JSON like {\"sources\": {\"interfluence\": false}}, naming sources that exist (intermem sources lists them)", p.Path("config.json")))
	case errors.Is(err, catalog.ErrUnknownSource), errors.Is(err, catalog.ErrSwitchedOff):
		return filterError(err)
	case errors.Is(err, retrieve.ErrSourceOff):
		return cli.WithHint(err, fmt.Sprintf("switch the source back on in %s (\"sources\") to read its entries; intermem sources lists each source and whether it is on", p.Path("config.json")))
	case errors.Is(err, retrieve.ErrNotFound):
		return cli.WithHint(err, "ids are 16 hex digits, as intermem search prints them; an entry that was deleted long before intermem's first scan is not known")
	case errors.Is(err, retrieve.ErrNoTerms):
		return &cli.Error{Err: err, Code: 2, Hint: "search by words the entry would contain (a file, an error message, a tool)"}
	case errors.Is(err, store.ErrLocked), errors.Is(err, store.ErrCorrupt), errors.Is(err, store.ErrNewerSchema):
		return storeError(err)
	}
	return err
}

// sourceList is a repeatable --source flag; each value may also be a
// comma-separated list.
type sourceList []string

func (s *sourceList) String() string { return strings.Join(*s, ",") }

func (s *sourceList) Set(v string) error {
	for _, n := range strings.Split(v, ",") {
		if n = strings.TrimSpace(n); n != "" {
			*s = append(*s, n)
		}
	}
	return nil
}

// dateFlag is a --since/--until day: YYYY-MM-DD or an RFC 3339 time.
type dateFlag struct{ t time.Time }

func (d *dateFlag) String() string {
	if d.t.IsZero() {
		return ""
	}
	return d.t.Format(time.DateOnly)
}

func (d *dateFlag) Set(v string) error {
	v = strings.TrimSpace(v)
	for _, layout := range []string{time.DateOnly, time.RFC3339Nano} {
		if t, err := time.Parse(layout, v); err == nil {
			d.t = t.UTC()
			return nil
		}
	}
	return fmt.Errorf("%q is not a date (YYYY-MM-DD)", v)
}

// day formats a time as a day, "" for zero.
func day(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.DateOnly)
}

// stamp formats a time to the minute, "" for zero.
func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}
