package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"
)

// Flag errors have one rule for every command of every binary: a bad flag
// or a bad value is one "intermem: error:" line saying, in intermem's words,
// which flag and what was wrong with it (`--since: "yesterday" is not a date
// (YYYY-MM-DD)`), and a hint naming the command's --help: a usage error,
// exit status 2. The flag package's own report (its message, then the whole
// usage text) is never printed; --help alone prints the usage.
//
// A flag.Value written for intermem words its Set error to follow "--name: "
// (the value quoted, then what it should have been); the flag package's own
// values (bool, int, duration, …) are worded here by their kind.

// FlagSet returns a flag set that reports errors instead of exiting and
// whose usage (printed by --help, to w) is usage text followed by the
// defaults. Parse it with Parse, which words its errors.
func FlagSet(name, usage string, w io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(w)
	fs.Usage = func() {
		out := fs.Output()
		fmt.Fprint(out, strings.TrimLeft(usage, "\n"))
		var hasFlags bool
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			fmt.Fprintln(out, "\nFlags:")
			fs.PrintDefaults()
		}
	}
	return fs
}

// Parse parses args with fs, turning flag errors into usage errors (the
// rule above). Flags may follow positional arguments ("search foo --json"),
// since people type them that way and silently ignoring a flag was a defect
// of the tool this one replaces.
func Parse(fs *flag.FlagSet, args []string) ([]string, error) {
	out := fs.Output()
	fs.SetOutput(io.Discard) // the flag package prints its errors and the usage there
	var bad error
	restore := checkValues(fs, &bad)
	defer func() {
		restore()
		fs.SetOutput(out)
	}()
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				restore()
				fs.SetOutput(out)
				fs.Usage()
				return nil, err
			}
			if bad == nil {
				bad = flagError(err)
			}
			return nil, &Error{Err: bad, Code: 2, Hint: fmt.Sprintf("run %q for usage", fs.Name()+" --help")}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if rest[0] == "--" {
			return append(pos, rest[1:]...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// checkValues wraps every flag's value for the length of a parse, so that a
// value's Set error is caught with the flag's name and worded by its kind;
// restore puts the flag set's own values back (its usage names their kinds).
func checkValues(fs *flag.FlagSet, bad *error) (restore func()) {
	var flags []*flag.Flag
	var vals []flag.Value
	fs.VisitAll(func(f *flag.Flag) {
		flags = append(flags, f)
		vals = append(vals, f.Value)
		cv := checkedValue{Value: f.Value, name: f.Name, bad: bad}
		if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
			f.Value = checkedBool{cv}
		} else {
			f.Value = cv
		}
	})
	return func() {
		for i, f := range flags {
			f.Value = vals[i]
		}
	}
}

// checkedValue is a flag's value during a parse: Set records the first
// failure, worded.
type checkedValue struct {
	flag.Value
	name string
	bad  *error
}

func (c checkedValue) Set(s string) error {
	err := c.Value.Set(s)
	if err != nil && *c.bad == nil {
		*c.bad = fmt.Errorf("--%s: %s", c.name, valueProblem(c.Value, s, err))
	}
	return err
}

// checkedBool keeps a boolean flag boolean (no value needed).
type checkedBool struct{ checkedValue }

func (checkedBool) IsBoolFlag() bool { return true }

// valueProblem words why s is not a value of v: by the kind of the flag
// package's values, else v's own Set error.
func valueProblem(v flag.Value, s string, err error) string {
	g, ok := v.(flag.Getter)
	if !ok {
		return err.Error()
	}
	switch g.Get().(type) {
	case bool:
		return fmt.Sprintf("%q is not true or false (give the flag alone to set it)", s)
	case int, int64:
		return fmt.Sprintf("%q is not a whole number", s)
	case uint, uint64:
		return fmt.Sprintf("%q is not a whole number of 0 or more", s)
	case float64:
		return fmt.Sprintf("%q is not a number", s)
	case time.Duration:
		return fmt.Sprintf("%q is not a duration (e.g. 90s, 5m, 1h)", s)
	}
	return err.Error()
}

// flagError words the flag package's errors that are not a value's: an
// unknown flag, a flag without its value, bad syntax. Their texts are the
// flag package's, stable since Go 1; anything else is kept as it is.
func flagError(err error) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		return fmt.Errorf("unknown flag %s", dashes(name))
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		return fmt.Errorf("%s needs a value", dashes(name))
	}
	if arg, ok := strings.CutPrefix(msg, "bad flag syntax: "); ok {
		return fmt.Errorf("%q is not a flag", arg)
	}
	return err
}

// dashes gives a flag name as intermem's help spells it: --name.
func dashes(name string) string {
	return "--" + strings.TrimLeft(name, "-")
}
