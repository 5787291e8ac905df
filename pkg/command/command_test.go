package command

import (
	"bytes"
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/intermem/intermem/pkg/cli"
)

// TestSubcommandsInNameOrder: help lists the table as it is, and lookup
// takes the first command of a name.
func TestSubcommandsInNameOrder(t *testing.T) {
	names := make([]string, len(subcommands))
	for i, sc := range subcommands {
		names[i] = sc.name
		if sc.run == nil || sc.summary == "" {
			t.Errorf("command %q has no run or summary", sc.name)
		}
		if got, ok := lookup(sc.name); !ok || got.name != sc.name {
			t.Errorf("lookup(%q) = %q, %v", sc.name, got.name, ok)
		}
	}
	if !slices.IsSorted(names) || len(slices.Compact(slices.Clone(names))) != len(names) {
		t.Errorf("commands not in name order or repeated: %s", strings.Join(names, " "))
	}
	if _, ok := lookup("nosuch"); ok {
		t.Error("lookup found a command that is not there")
	}
}

// TestHelpIsOutput: --help of every command of intermem,
// intermem-synthesize and intermem-recover is the command's output (stdout,
// exit status 0, nothing on stderr), so it can be paged or grepped; its
// flags are listed as the usage lines spell them (--limit N, never the
// flag package's -limit int), each value named, and the list comes once.
func TestHelpIsOutput(t *testing.T) {
	type run struct {
		name string
		main func(context.Context, *cli.Env, []string) int
		args []string
	}
	var runs []run
	for _, sc := range subcommands {
		runs = append(runs,
			run{"intermem " + sc.name, Main, []string{sc.name, "--help"}},
			run{"intermem help " + sc.name, Main, []string{"help", sc.name}})
	}
	runs = append(runs,
		run{"intermem", Main, []string{"--help"}},
		run{"intermem-synthesize", SynthesizeMain, []string{"--help"}},
		run{"intermem-synthesize plan", SynthesizeMain, []string{"plan", "--help"}},
		run{"intermem-synthesize apply", SynthesizeMain, []string{"apply", "-h"}},
		run{"intermem-recover", RecoverMain, []string{"--help"}})
	goStyle := regexp.MustCompile(`(?m)^\s+-[a-z]`)
	unnamed := regexp.MustCompile(`(?m)^  --\S+ (VALUE|value|string|int)$`)
	for _, r := range runs {
		var stdout, stderr bytes.Buffer
		env := cli.New(nil, t.TempDir(), strings.NewReader(""), &stdout, &stderr)
		code := r.main(context.Background(), env, r.args)
		out := stdout.String()
		if code != 0 || stderr.Len() != 0 || !strings.Contains(out, "Usage:") {
			t.Errorf("%s: exit %d, stdout %.60q…, stderr %q; want the usage on stdout, exit 0", r.name, code, out, stderr.String())
			continue
		}
		if m := goStyle.FindString(out); m != "" {
			t.Errorf("%s: a flag listed the flag package's way: %q", r.name, m)
		}
		if m := unnamed.FindString(out); m != "" {
			t.Errorf("%s: a flag's value is not named: %q", r.name, m)
		}
		if n := strings.Count(out, "\nFlags:\n"); n > 1 {
			t.Errorf("%s: \"Flags:\" %d times", r.name, n)
		}
		text, _, _ := strings.Cut(out, "\nFlags:\n")
		if r.name == "intermem" {
			continue // the list of commands is a table, a command a line
		}
		for _, line := range strings.Split(text, "\n") {
			if utf8.RuneCountInString(line) > 104 {
				t.Errorf("%s: a line of %d characters: %q", r.name, utf8.RuneCountInString(line), line)
			}
		}
	}
}

// TestUsageErrorIsNotOutput: a usage error goes to stderr with exit
// status 2, and nothing reaches stdout.
func TestUsageErrorIsNotOutput(t *testing.T) {
	for _, args := range [][]string{{"search", "--bogus"}, {"nosuch"}, {}} {
		var stdout, stderr bytes.Buffer
		env := cli.New(nil, t.TempDir(), strings.NewReader(""), &stdout, &stderr)
		if code := Main(context.Background(), env, args); code != 2 || stdout.Len() != 0 || stderr.Len() == 0 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want a usage error on stderr, exit 2", args, code, stdout.String(), stderr.String())
		}
	}
}
