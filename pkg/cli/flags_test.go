package cli

import (
	"bytes"
	"errors"
	"flag"
	"testing"
)

// TestParseFlagErrors: every flag error is one worded error with exit
// status 2, the flag package prints nothing, and the flags keep their own
// values (the usage names their kinds) after a parse, failed or not.
func TestParseFlagErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--n", "x"}, `--n: "x" is not a whole number`},
		{[]string{"--u=-1"}, `--u: "-1" is not a whole number of 0 or more`},
		{[]string{"--f", "half"}, `--f: "half" is not a number`},
		{[]string{"--d", "soon"}, `--d: "soon" is not a duration (e.g. 90s, 5m, 1h)`},
		{[]string{"--b=perhaps"}, `--b: "perhaps" is not true or false (give the flag alone to set it)`},
		{[]string{"--own", "x"}, `--own: "x" is refused`},
		{[]string{"word", "--nope"}, `unknown flag --nope`},
		{[]string{"--n"}, `--n needs a value`},
		{[]string{"---n"}, `"---n" is not a flag`},
	}
	for _, c := range cases {
		var out bytes.Buffer
		fs := FlagSet("intermem x", "Usage: intermem x\n", &out)
		fs.Int("n", 1, "a `count`")
		fs.Uint("u", 0, "")
		fs.Float64("f", 0, "")
		fs.Duration("d", 0, "")
		fs.Bool("b", false, "")
		fs.Var(refusing{}, "own", "")
		_, err := Parse(fs, c.args)
		var ce *Error
		if !errors.As(err, &ce) || ce.Code != 2 {
			t.Errorf("%q: error %v, want a usage error", c.args, err)
			continue
		}
		if ce.Err.Error() != c.want || ce.Hint != `run "intermem x --help" for usage` {
			t.Errorf("%q: %q (hint %q), want %q", c.args, ce.Err, ce.Hint, c.want)
		}
		if out.Len() != 0 {
			t.Errorf("%q: printed %q", c.args, out.String())
		}
		if _, ok := fs.Lookup("n").Value.(flag.Getter).Get().(int); !ok || fs.Output() != &out {
			t.Errorf("%q: the flag set was not restored", c.args)
		}
	}
}

// TestParseHelp: --help prints the usage and the flags as the usage lines
// spell them (--name VALUE), each value named, defaults that are not the
// zero value shown.
func TestParseHelp(t *testing.T) {
	var out bytes.Buffer
	fs := FlagSet("intermem x", "Usage: intermem x\n", &out)
	fs.Int("n", 1, "a `count`")
	fs.Int("zero", 0, "a number, no name")
	fs.Bool("json", false, "print JSON")
	fs.Bool("on", true, "")
	fs.String("dir", "", "the `dir`ectory")
	fs.String("format", "md", "`md|json`: one file a memory, or one document")
	fs.String("spec", "", "numbers: `N=TEXT` (repeatable)")
	fs.String("plain", "", "a string\non two lines")
	fs.Var(refusing{}, "own", "")
	if _, err := Parse(fs, []string{"--help"}); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("error %v, want flag.ErrHelp", err)
	}
	want := `Usage: intermem x

Flags:
  --dir DIR
      the directory
  --format md|json
      one file a memory, or one document (default: md)
  --json
      print JSON
  --n COUNT
      a count (default: 1)
  --on
      (default: true)
  --own VALUE
  --plain VALUE
      a string
      on two lines
  --spec N=TEXT
      numbers: N=TEXT (repeatable)
  --zero N
      a number, no name
`
	if out.String() != want {
		t.Errorf("usage:\n%s\nwant:\n%s", out.String(), want)
	}
}

type refusing struct{}

func (refusing) String() string     { return "" }
func (refusing) Set(s string) error { return errors.New(`"` + s + `" is refused`) }
