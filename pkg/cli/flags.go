package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"reflect"
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
// whose usage (printed by --help, to stdout) is usage text followed by its
// flags (PrintFlags). Help asked for is a command's output, not an error:
// it goes to standard output, and the command exits 0 (cli.Report), so
// `intermem search --help | less` works; a usage error goes to standard
// error with exit status 2. Parse it with Parse, which words its errors.
func FlagSet(name, usage string, stdout io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stdout)
	fs.Usage = func() {
		out := fs.Output()
		fmt.Fprint(out, strings.TrimLeft(usage, "\n"))
		var hasFlags bool
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			fmt.Fprintln(out, "\nFlags:")
			PrintFlags(out, fs)
		}
	}
	return fs
}

// PrintFlags lists the flags of fs as the usage lines and the README spell
// them, not as the flag package does ("-limit int"):
//
//	--limit N
//	    show at most N results (default: 10)
//
// The value's name is the usage's back-quoted word ("show at most `N`
// results"), in capitals when it is a plain lower-case word (`dir` is
// DIR, as in "[--project DIR]"); a usage that starts with it and a colon
// names the values the flag takes ("`md|json`: one Markdown file per
// memory, or one JSON document"), and the list does not repeat them.
// Without one the value is named by its kind (N for a number), else
// VALUE. A boolean flag takes no value. The default is shown when it is
// not the value's zero.
func PrintFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		if rest, ok := strings.CutPrefix(f.Usage, "`"); ok {
			if i := strings.Index(rest, "`: "); i > 0 {
				name, usage = rest[:i], rest[i+len("`: "):]
			}
		}
		line := "  --" + f.Name
		if arg := argName(f, name); arg != "" {
			line += " " + arg
		}
		fmt.Fprintln(w, line)
		if !zeroDefault(f) {
			usage = strings.TrimSpace(usage + " (default: " + f.DefValue + ")")
		}
		if usage != "" {
			fmt.Fprintf(w, "      %s\n", strings.ReplaceAll(usage, "\n", "\n      "))
		}
	})
}

// argName is the name the flags list gives f's value: name is what
// flag.UnquoteUsage found, the back-quoted word or the kind it guessed.
func argName(f *flag.Flag, name string) string {
	if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
		return ""
	}
	if !strings.Contains(f.Usage, "`") {
		switch name {
		case "int", "uint":
			return "N"
		case "duration":
			return "DURATION"
		case "float":
			return "NUMBER"
		}
		return "VALUE"
	}
	if name != "" && strings.Trim(name, "abcdefghijklmnopqrstuvwxyz") == "" {
		return strings.ToUpper(name)
	}
	return name
}

// zeroDefault reports whether f's default is its value's zero (nothing
// worth showing), as the flag package judges it: the string of a new value
// of the same type.
func zeroDefault(f *flag.Flag) (zero bool) {
	if f.DefValue == "" {
		return true
	}
	defer func() {
		if recover() != nil { // a value whose String needs its fields set
			zero = false
		}
	}()
	t := reflect.TypeOf(f.Value)
	var z reflect.Value
	if t.Kind() == reflect.Pointer {
		z = reflect.New(t.Elem())
	} else {
		z = reflect.Zero(t)
	}
	v, ok := z.Interface().(flag.Value)
	return ok && f.DefValue == v.String()
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
